"""What the subcommands share: exit statuses, the parsers' shared options, each path's project,
and the results database a command reads."""

from __future__ import annotations

import argparse
import atexit
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from ai_eval_lsp.core.text import printable
from ai_eval_lsp.disk.files import FoundFile
from ai_eval_lsp.disk.roots import Root, project_root
from ai_eval_lsp.disk.settings import SettingsFileError
from ai_eval_lsp.project.project import Project

if TYPE_CHECKING:
    from ai_eval_lsp.runs.store import ResultStore

T = TypeVar("T")

EXIT_CLEAN, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2
EXIT_PIPE_CLOSED = 128 + 13  # SIGPIPE

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What a subcommand module adds its parser to."""


class UsageError(Exception):
    """What stops a command before it starts: said on stderr, exit 2."""


class Projects:
    """The project of each path a command is given: `--root` (one project holds everything),
    else the path's own project root (SPEC sections 4 and 5). Each is loaded once, and its setting
    problems are printed once."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.loaded: dict[Path, Project] = {}

    def of(self, path: Path) -> Project:
        root = Root(self.root.resolve(), marked=True) if self.root else project_root(path)
        if root.folder not in self.loaded:
            try:
                project = Project.load(
                    root.folder,
                    strict_settings=True,
                    rubrics_folder=root.rubrics_folder,
                    alone=self.root is not None,
                )
            except SettingsFileError as err:  # CI must not pass on defaults it was not given
                raise UsageError(str(err)) from None
            for problem in project.setting_problems:
                say(f"warning: {problem}")
            for notice in project.registry.notices():
                say(f"note: {notice}")
            self.loaded[root.folder] = project
        return self.loaded[root.folder]

    def walk(self, folder: Path) -> Iterator[tuple[Project, FoundFile]]:
        """The rubric and cases files below a folder, each with its own project: the walk of the
        folder's project leaves the projects nested in it to their own walks."""
        pending = [(self.of(folder), folder)]
        while pending:
            project, below = pending.pop(0)
            nested: list[Path] = []
            for found in project.walk(below, nested=nested):
                yield project, found
            pending += [(self.of(root), root) for root in nested]

    def here(self) -> Project:
        """The project of the current folder, for commands that name no path (never walked)."""
        return self.of(Path.cwd())


ROOT_HELP = (
    "the project folder: settings come from its ai-eval.toml or pyproject.toml [tool.ai-eval], "
    "and composite checks resolve to the rubrics under it (default: for each PATH, the nearest "
    "folder above it holding ai-eval.toml, pyproject.toml with [tool.ai-eval], composer.json or "
    ".git, else the PATH's own folder); PATH arguments stay relative to the current folder"
)


def root_option() -> argparse.ArgumentParser:
    """`--root` after the command too: `ai-eval-lsp check --root ws ws`."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--root", default=argparse.SUPPRESS, help=ROOT_HELP)
    return options


def database_option() -> argparse.ArgumentParser:
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--db",
        metavar="PATH",
        help="the results database (default: the project's resultsDatabase, .ai_eval/results.sqlite)",
    )
    return options


def finished(args: argparse.Namespace, code: int) -> int:
    """`code`, once a command is done. For the command itself (`args.exit_hard`), the process ends
    here without freeing what the command made: a 10 MB rubric's analysis is 1.5 million objects,
    which take 0.3 s to free (mypy ends the same way, `util.hard_exit`). What was registered to
    run at exit (a plugin's, logging's) runs first and the output is flushed; under a profiler or
    a tracer (coverage) the process ends as usual, so they can save what they measured."""
    if getattr(args, "exit_hard", False) and sys.getprofile() is None and sys.gettrace() is None:
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # a stream closed when the process started
                stream.flush()
        os._exit(code)
    return code


def with_examples(parser: argparse.ArgumentParser, examples: list[str]) -> argparse.ArgumentParser:
    """A command's `--help` ends with its examples (after `ai-eval-lsp `)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "examples:\n" + "\n".join(f"  ai-eval-lsp {line}" for line in examples)
    return parser


def positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return number


def say(line: str) -> None:
    """A line to stderr (a warning, a note, an error), its control characters escaped: what it
    quotes may come from a repository, a settings file or a site's rows (SPEC 6)."""
    print(printable(line), file=sys.stderr)


def from_store(projects: Projects, args: argparse.Namespace, read: Callable[[ResultStore], T]) -> T | None:
    """What `read` takes from the results database the command reads (--db, else the current
    project's); None, once the trouble is said, when there is none yet or it cannot be read. The
    rows it left out are said as warnings."""
    from ai_eval_lsp.runs.store import ResultStore, StoreError

    project = None if args.db else projects.here()
    path = Path(args.db) if project is None else project.results_database
    if not path.is_file():
        print(
            f"error: no results database at {path}: `ai-eval-lsp run CASES.yaml` stores runs there "
            "(name another with --db)",
            file=sys.stderr,
        )
        return None
    store = ResultStore(path, project.root if project else None)
    try:
        return read(store)
    except StoreError as err:
        say(f"error: {err}")
        return None
    finally:
        for note in store.skipped:
            say(f"warning: {note}")


def warn_of_problems(project: Project) -> None:
    """What the project's plugins and modules could not give, said before a command's output."""
    for problem in project.registry.problems():
        say(f"warning: {problem}")
