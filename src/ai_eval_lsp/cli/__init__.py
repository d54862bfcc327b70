"""The `ai-eval-lsp` command (SPEC section 5). Exit 0 clean, 1 errors, 2 usage or I/O."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ai_eval_lsp import __version__
from ai_eval_lsp.cli import jetbrains
from ai_eval_lsp.cli.problems import FORMATS, FileProblem, render, text_line
from ai_eval_lsp.core.analysis import Analysis
from ai_eval_lsp.core.problems import Problem, Severity
from ai_eval_lsp.core.workspace import Role
from ai_eval_lsp.disk.files import Found
from ai_eval_lsp.disk.roots import Root, project_root
from ai_eval_lsp.disk.settings import SettingsFileError
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.project.registry import PhpPlugin
from ai_eval_lsp.runs.render import (
    count,
    format_diff,
    format_diff_markdown,
    format_history,
    format_run,
    format_runs_markdown,
    format_targets,
    run_json,
)

if TYPE_CHECKING:
    from ai_eval_lsp.drupal.codebase import Codebase
    from ai_eval_lsp.runs.run import RunResult
    from ai_eval_lsp.runs.store import ResultStore

T = TypeVar("T")

EXIT_CLEAN, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2
EXIT_PIPE_CLOSED = 128 + 13  # SIGPIPE

EXAMPLES = {
    "check": [
        "check web/modules/custom/my_module       # a folder: its rubric and cases files",
        "check rubrics/tone.yaml --format github  # problems as GitHub Actions annotations",
        "check . --format sarif                   # for code scanning (upload-sarif)",
    ],
    "schema": ["schema -o rubric.combined.json      # for yaml-language-server's yaml.schemas"],
    "run": [
        "run evals/refunds.cases.yaml",
        "run evals/*.cases.yaml --watch           # then again after each change that affects them",
        "run evals/*.cases.yaml --format json --db /tmp/results.sqlite",
        'run evals/*.cases.yaml --format markdown >> "$GITHUB_STEP_SUMMARY"',
    ],
    "history": [
        "history                                  # every target with runs, and its latest",
        "history support_reply --limit 5",
        "history support_bot --site               # the site's runs too, read from its database first",
    ],
    "diff": [
        "diff                                     # the target run last: its latest run against the one before",
        "diff --target support_tone",
        "diff 12 15 --format markdown             # runs 12 and 15, as a pull-request comment",
        "diff site:latest latest                  # the site's latest run against yours, question by question",
    ],
    "site": [
        "site pull                                # the site's new runs into the results database",
        "site pull web --db /tmp/results.sqlite",
    ],
    "report": ["report -o report.html"],
    "serve": [
        "serve                                    # stdio, as editors start it",
        "serve --tcp --port 2087",
    ],
    "plugins": [
        "plugins                                  # what this project's rubrics can use",
        "plugins --root path/to/drupal --format json",
    ],
}
"""Each command's `--help` ends with these (after `ai-eval-lsp `)."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command == "serve":
        return _serve(args)
    if args.root is not None and not Path(args.root).is_dir():
        print(f"error: --root {args.root} is not a folder", file=sys.stderr)
        return EXIT_USAGE
    try:
        result: int = args.run(Projects(Path(args.root) if args.root else None), args)
        sys.stdout.flush()
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, with the status of a Unix tool that got
        # SIGPIPE, and send what Python flushes at exit nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE_CLOSED
    return result


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
                print(f"warning: {problem}", file=sys.stderr)
            for notice in project.registry.notices():
                print(f"note: {notice}", file=sys.stderr)
            self.loaded[root.folder] = project
        return self.loaded[root.folder]

    def walk(self, folder: Path) -> Iterator[tuple[Project, Found]]:
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ai-eval-lsp",
        description="Validate ai_eval rubrics with the check kinds of the installed plugins.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    root_help = (
        "the project folder: settings come from its ai-eval.toml or pyproject.toml [tool.ai-eval], "
        "and composite checks resolve to the rubrics under it (default: for each PATH, the nearest "
        "folder above it holding ai-eval.toml, pyproject.toml with [tool.ai-eval], composer.json or "
        ".git, else the PATH's own folder); PATH arguments stay relative to the current folder"
    )
    parser.add_argument("--root", default=None, help=root_help)
    # --root is accepted after the command too: `ai-eval-lsp check --root ws ws`.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", default=argparse.SUPPRESS, help=root_help)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser(
        "check", parents=[common], help="validate rubric and cases files; folders are walked"
    )
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument("--format", choices=FORMATS, default="text")
    check.add_argument(
        "--skip-other-files",
        action="store_true",
        help="files named on the command line that the rules do not make rubric or cases files are "
        "skipped, as a folder walk skips them, instead of being checked as rubrics (for pre-commit, "
        "which passes every changed YAML file)",
    )
    check.set_defaults(run=_check)

    schema = commands.add_parser(
        "schema", parents=[common], help="print the combined schema (core plus plugin kinds)"
    )
    destination = schema.add_mutually_exclusive_group()
    destination.add_argument("-o", "--output", metavar="FILE", help="write it to FILE instead")
    destination.add_argument(
        "--jetbrains",
        action="store_true",
        help="write it to the project's .idea/ with a jsonSchemas.xml mapping the rubric files to it "
        "(PhpStorm and other JetBrains IDEs, no plugin needed)",
    )
    schema.set_defaults(run=_schema)

    database = argparse.ArgumentParser(add_help=False)
    database.add_argument(
        "--db",
        metavar="PATH",
        help="the results database (default: the project's resultsDatabase, .ai_eval/results.sqlite)",
    )
    run = commands.add_parser(
        "run",
        parents=[common, database],
        help="run cases files: grade every case, store one result row per file",
    )
    run.add_argument("paths", nargs="+", metavar="CASES")
    run.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="markdown: a table of the rows, the cases that failed, and each run's diff to the run "
        "before (for a pull request or a CI job summary)",
    )
    run.add_argument(
        "--watch",
        action="store_true",
        help="then re-run the cases files a change affects (to a rubric, a cases file or an executor "
        "source) until Ctrl+C, printing each run's line and what changed; needs ai-eval-lsp[watch]",
    )
    run.set_defaults(run=_run)

    history = commands.add_parser(
        "history",
        parents=[common, database],
        help="a target's stored runs, newest first (without a target: every target and its latest run)",
    )
    history.add_argument(
        "target",
        nargs="?",
        metavar="TARGET",
        help="the rubric id the runs graded (default: list the targets)",
    )
    history.add_argument("--limit", type=_positive, default=None, metavar="N", help="the newest N runs only")
    history.add_argument("--format", choices=("text", "json"), default="text")
    history.add_argument(
        "--site", action="store_true", help="read the Drupal site's new runs first (as `site pull` does)"
    )
    history.set_defaults(run=_history)

    diff = commands.add_parser(
        "diff",
        parents=[common, database],
        help="compare two runs of one target case by case (default: its latest and the one before)",
    )
    named = "a run id, latest, previous, site:ID (the site's run ID) or site:latest"
    diff.add_argument("base", nargs="?", metavar="BASE_RUN", help=f"the older run: {named}")
    diff.add_argument("head", nargs="?", metavar="HEAD_RUN", help="the newer run (default: the latest)")
    diff.add_argument(
        "--target", metavar="ID", help="the rubric id or site target (default: the target run last)"
    )
    diff.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    diff.set_defaults(run=_diff)

    report = commands.add_parser(
        "report",
        parents=[common, database],
        help="write one self-contained HTML report of every target's runs",
    )
    report.add_argument("-o", "--output", default="report.html", metavar="FILE", help="default: report.html")
    report.set_defaults(run=_report)

    site = commands.add_parser("site", help="the Drupal site's own runs, read from its database")
    site_commands = site.add_subparsers(dest="site_command", metavar="SITE_COMMAND", required=True)
    pull = site_commands.add_parser(
        "pull",
        parents=[common, database],
        help="read the site's new runs into the results database; a line per target",
    )
    pull.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="the project whose site is read (default: here)"
    )
    pull.formatter_class = argparse.RawDescriptionHelpFormatter
    pull.epilog = "examples:\n" + "\n".join(f"  ai-eval-lsp {line}" for line in EXAMPLES["site"])
    site.set_defaults(run=_site_pull)

    serve = commands.add_parser("serve", help="start the language server (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="talk over stdin and stdout (the default)")
    serve.add_argument("--tcp", action="store_true", help="listen on a TCP port instead")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=2087)
    serve.set_defaults(run=None)

    plugins = commands.add_parser(
        "plugins", parents=[common], help="list executor plugins, their kinds and load problems"
    )
    plugins.add_argument("--format", choices=("text", "json"), default="text")
    plugins.set_defaults(run=_plugins)

    for name, command in commands.choices.items():
        command.formatter_class = argparse.RawDescriptionHelpFormatter
        command.epilog = "examples:\n" + "\n".join(f"  ai-eval-lsp {line}" for line in EXAMPLES[name])
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (
        "examples:\n"
        + "\n".join(f"  ai-eval-lsp {EXAMPLES[name][0]}" for name in ("check", "run", "diff"))
        + "\n\n`ai-eval-lsp COMMAND --help` shows a command's options and more examples."
    )
    return parser


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return number


def _check(projects: Projects, args: argparse.Namespace) -> int:
    targets: dict[Path, list[tuple[Path, Role]]] = {}  # by project root, in the order given
    for name in args.paths:
        path = Path(name)
        if not path.exists():
            print(f"error: {name}: no such file or folder", file=sys.stderr)
            return EXIT_USAGE
        if path.is_dir():
            walked = list(projects.walk(path))
            if not walked:
                print(f"warning: {name}: no rubric or cases files found in this folder", file=sys.stderr)
            for project, file in walked:
                targets.setdefault(project.root, []).append((file.path, file.role))
            continue
        # A file named on the command line is checked, as a rubric unless it is a cases file; with
        # --skip-other-files only when the rules make it a rubric or cases file.
        project = projects.of(path)
        role = project.role(path)
        if role is None and args.skip_other_files:
            continue
        targets.setdefault(project.root, []).append((path, role or "rubric"))
    if not targets and args.skip_other_files and args.format in ("text", "github"):
        return EXIT_CLEAN  # pre-commit passes every changed YAML file, and most YAML is not ours

    found: list[FileProblem] = []
    checked = 0
    for root, given in targets.items():
        files = list(dict.fromkeys(given))  # a file named twice, or walked and named, is one
        project = projects.loaded[root]
        for problem in project.registry.problems():
            print(f"warning: {problem}", file=sys.stderr)
        analyses: dict[Path, Analysis] = {}
        for path, role in files:
            try:
                analyses[path] = project.analyse(path, path.read_bytes(), role)
            except OSError as err:
                print(f"error: {path}: cannot be read: {err.strerror}", file=sys.stderr)
                return EXIT_USAGE
        rubrics = project.index(analyses).rubrics
        for path, _ in files:
            found.extend(FileProblem(path.as_posix(), p) for p in analyses[path].problems_in(rubrics))
        checked += len(files)

    output = render(found, args.format, checked)
    if output:
        print(output)
    return EXIT_ERRORS if any(f.problem.severity == Severity.ERROR for f in found) else EXIT_CLEAN


def _serve(args: argparse.Namespace) -> int:
    import gc
    import logging

    from ai_eval_lsp.server import create_server

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)  # it logs every message at INFO
    server = create_server()
    # Each version of a large rubric is ~100k objects, and the default collector thresholds
    # scanned them again and again mid-edit (measured: p95 latency); collect less often instead.
    gc.freeze()
    gc.set_threshold(100_000, 50, 50)
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_stdio()
    return EXIT_CLEAN


def _run(projects: Projects, args: argparse.Namespace) -> int:
    if args.watch:
        from ai_eval_lsp.cli.watch import watch

        last = watch(
            args.paths, lambda: Projects(projects.root), lambda project, name: _run_one(project, name, args)
        )
        return EXIT_USAGE if last is None else _run_status(last)
    done: list[tuple[str, RunResult | str]] = []
    for name in args.paths:
        project = projects.of(Path(name))
        for problem in project.registry.problems():
            print(f"warning: {problem}", file=sys.stderr)
        result = _run_one(project, name, args)
        done.append((name, result))
        if args.format == "text" and not isinstance(result, str):
            print(format_run(name, result))
    results = [(name, result) for name, result in done if not isinstance(result, str)]
    if args.format == "json":
        print(json.dumps([run_json(name, result) for name, result in results], indent=2, ensure_ascii=False))
    elif args.format == "markdown":
        print(format_runs_markdown(results, [(name, why) for name, why in done if isinstance(why, str)]))
    return _run_status(done)


def _run_one(project: Project, name: str, args: argparse.Namespace) -> RunResult | str:
    """A run of one cases file; why it could not run, once said on stderr (the others still run)."""
    from ai_eval_lsp.runs.run import RunError, RunOptions, run_cases

    try:
        options = RunOptions(
            "cli", Path(args.db) if args.db else None, _progress(name), cases_errors=_warn_of(name)
        )
        return run_cases(project, Path(name), options)
    except RunError as err:
        print(f"error: {err}", file=sys.stderr)
        return str(err)


def _run_status(done: Sequence[tuple[str, RunResult | str]]) -> int:
    if any(isinstance(result, str) for _, result in done):
        return EXIT_USAGE
    return EXIT_CLEAN if all(result.ok for _, result in done if not isinstance(result, str)) else EXIT_ERRORS


def _warn_of(name: str) -> Callable[[list[Problem]], None]:
    """How `run` says a cases file's own errors, as `check` prints them, before the run goes on
    (each case that cannot be graded errors, a mistyped `expect` fails)."""

    def warn(problems: list[Problem]) -> None:
        for problem in problems:
            print(f"warning: {text_line(FileProblem(str(Path(name)), problem))}", file=sys.stderr)

    return warn


def _from_store(projects: Projects, args: argparse.Namespace, read: Callable[[ResultStore], T]) -> T | None:
    """What `read` takes from the results database the command reads (--db, else the current
    project's); None, once the trouble is said, when there is none yet or it cannot be read."""
    from ai_eval_lsp.runs.store import ResultStore, StoreError

    path = Path(args.db) if args.db else projects.here().results_database
    if not path.is_file():
        print(
            f"error: no results database at {path}: `ai-eval-lsp run CASES.yaml` stores runs there "
            "(name another with --db)",
            file=sys.stderr,
        )
        return None
    try:
        return read(ResultStore(path))
    except StoreError as err:
        print(f"error: {err}", file=sys.stderr)
        return None


def _targets(projects: Projects, args: argparse.Namespace) -> int:
    def read(store: ResultStore) -> list[tuple[str, dict[str, Any] | None, int]]:
        return [(target, *store.last_run(target)) for target in store.targets()]

    found = _from_store(projects, args, read)
    if found is None:
        return EXIT_USAGE
    if args.format == "json":
        print(json.dumps([{"target": t, "runs": n, "latest": row} for t, row, n in found], indent=2))
    else:
        print(format_targets(found))
    return EXIT_CLEAN


def _history(projects: Projects, args: argparse.Namespace) -> int:
    if args.site:
        _pull(projects.here(), args, quiet=True)
    if args.target is None:
        return _targets(projects, args)

    def read(store: ResultStore) -> tuple[list[dict[str, Any]], list[str], Path]:
        rows = store.history(args.target, args.limit)
        return rows, [] if rows else store.targets(), store.path

    found = _from_store(projects, args, read)
    if found is None:
        return EXIT_USAGE
    rows, known, path = found
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif not rows:
        listed = ", ".join(f"`{t}`" for t in known) or "none"
        print(
            f"error: no runs of `{args.target}` are stored in {path}; targets with runs: {listed}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    else:
        print(format_history(args.target, rows))
    return EXIT_CLEAN


def _diff(projects: Projects, args: argparse.Namespace) -> int:
    comparison = _from_store(projects, args, lambda store: store.diff(args.base, args.head, args.target))
    if comparison is None:
        return EXIT_USAGE
    if args.format == "json":
        print(json.dumps(comparison.to_json(), indent=2, ensure_ascii=False))
    else:
        print(format_diff_markdown(comparison) if args.format == "markdown" else format_diff(comparison))
    return EXIT_CLEAN


SITE_DATABASE_VARIABLE = "AI_EVAL_SITE_DATABASE"
"""The site's database URL for `site pull` and `history --site`, over the project's settings: how
CI is given it from a secret, so it is never written in a file."""


def _site_pull(projects: Projects, args: argparse.Namespace) -> int:
    return _pull(projects.of(Path(args.path)), args, quiet=False)


def _pull(project: Project, args: argparse.Namespace, quiet: bool) -> int:
    """Read the project's site's new runs into the results database and say what came, a line
    per target (`quiet`: only trouble, as a warning, for a command that goes on)."""
    from ai_eval_lsp.drupal.site_address import AddressError, parse_url
    from ai_eval_lsp.runs.site import SiteError, SiteReader, announce, pull
    from ai_eval_lsp.runs.store import ResultStore, StoreError

    trouble = "warning" if quiet else "error"
    address, note = project.site, project.site_note
    given = os.environ.get(SITE_DATABASE_VARIABLE)
    if given:
        try:
            address, note = parse_url(given, project.root, f"${SITE_DATABASE_VARIABLE}"), None
        except AddressError as err:
            address, note = None, str(err)
    if address is None:
        print(
            f"{trouble}: no site runs: {note or 'the project is no Drupal codebase and names no site.database'}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    store = ResultStore(Path(args.db) if args.db else project.results_database)
    reader = SiteReader(address)
    try:
        pulled = pull(store, reader)
    except (SiteError, StoreError) as err:
        print(f"{trouble}: {err}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        reader.close()
    for skipped in pulled.skipped:
        print(f"warning: {skipped}", file=sys.stderr)
    if quiet:
        return EXIT_CLEAN
    by_target: dict[str, list[dict[str, Any]]] = {}
    for row in pulled.rows:
        by_target.setdefault(row["target_id"], []).append(row)
    for target, rows in by_target.items():
        latest = announce(store, address.identity, rows[-1:])[0]
        print(f"{target}: {count(len(rows), 'new site run')}; latest: {latest.summary}")
    if not pulled.rows:
        print(f"no new site runs in {address}")
    return EXIT_CLEAN


def _report(projects: Projects, args: argparse.Namespace) -> int:
    from ai_eval_lsp.runs.report import render_report, report_targets

    targets = _from_store(projects, args, report_targets)
    if targets is None:
        return EXIT_USAGE
    try:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)  # as `run --db` makes its folder
        Path(args.output).write_text(render_report(targets), encoding="utf-8")
    except OSError as err:
        print(f"error: {args.output}: cannot be written: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {args.output}: {len(targets)} target{'s' * (len(targets) != 1)}")
    return EXIT_CLEAN


def _progress(name: str) -> Callable[[int, int], None]:
    """Progress on stderr for runs that take more than a second, at most once a second."""
    started = last = time.monotonic()

    def report(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - started > 1 and (now - last >= 1 or done == total):
            last = now
            print(f"{name}: {done}/{total} cases", file=sys.stderr, flush=True)

    return report


def _schema(projects: Projects, args: argparse.Namespace) -> int:
    project = projects.here()
    for problem in project.registry.problems():
        print(f"warning: {problem}", file=sys.stderr)
    text = json.dumps(project.registry.combined.schema, indent=2, ensure_ascii=False) + "\n"
    if args.jetbrains:
        return _schema_for_jetbrains(project, text)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_CLEAN
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as err:
        print(f"error: {args.output}: cannot be written: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_CLEAN


def _schema_for_jetbrains(project: Project, text: str) -> int:
    try:
        schema, mappings, count = jetbrains.write(project, text)
    except jetbrains.CannotWrite as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(
        f"wrote {project.relative(schema)}, and {project.relative(mappings)} mapping {count} rubric paths to it"
    )
    return EXIT_CLEAN


def _plugins(projects: Projects, args: argparse.Namespace) -> int:
    project = projects.here()
    registry = project.registry
    schema_file = registry.core_schema_file()
    core: dict[str, Any] = {
        "schema": project.relative(schema_file) if schema_file else None,
        "kinds": [{"runBy": who, "kinds": kinds} for who, kinds in registry.core_runs()],
    }
    rows = [
        {
            "name": plugin.name,
            "target": plugin.target,
            "distribution": plugin.origin.distribution,
            "version": plugin.origin.version,
            "kinds": plugin.kinds,
            "loaded": plugin.executor is not None,
            "problems": registry.problems_of(plugin),
        }
        for plugin in registry.plugins
    ]
    runtime = _php_runtime(project)
    php = [_php_row(project, plugin, runtime) for plugin in registry.php]
    fragments: list[dict[str, Any]] = [
        {
            "file": project.relative(path),
            "kinds": [{"kind": kind, "runs": registry.runs(kind)} for kind in registry.kinds_of(origin)],
            "problems": registry.splice_problems(origin),
        }
        for path, origin in registry.fragments
    ]
    if args.format == "json":
        report = {
            "core": core,
            "plugins": rows,
            "php": php,
            "phpRuntime": runtime,
            "fragments": fragments,
            "site": codebase.site if (codebase := registry.codebase) else None,
            "notices": registry.notices(),
            "problems": registry.problems(),
        }
        print(json.dumps(report, indent=2))
        return EXIT_CLEAN
    where = f"the site's {core['schema']}" if core["schema"] else f"the copy ai-eval-lsp {__version__} ships"
    print(f"ai_eval core kinds, run in Python (schema: {where})")
    for runner in core["kinds"]:
        print(f"  {runner['runBy'] or 'not executed at run time'}: {', '.join(runner['kinds'])}")
    print()
    if not registry.plugins:
        print("No executor plugins installed in this Python (entry point group ai_eval.check_executors).")
    for plugin in registry.plugins:
        state = "loaded" if plugin.executor is not None else "FAILED"
        kinds = ", ".join(plugin.kinds) or "no kinds"
        origin = plugin.origin
        print(
            f"{origin.distribution} {origin.version}  {plugin.name} = {plugin.target}  [{state}]  kinds: {kinds}"
        )
        for problem in registry.problems_of(plugin):
            print(f"    problem: {problem}")
    codebase = registry.codebase
    if codebase is None:
        print(f"No Drupal codebase in {project.root} (name another with --root DIR, or `drupal.root`).")
    else:
        print(f"\nDrupal codebase {codebase.root}{_site_read(codebase)}: {count(len(php), 'PHP executor')}")
    if runtime is not None:
        print(f"  PHP: {runtime.get('version') or runtime['unavailable']}")
    for row in php:
        print(f"  module {row['module']}  {row['class']}  {row['file']}:{row['line']}")
        kinds = ", ".join(
            f"{k['kind']} (read{'' if k['spliced'] else ', but another defines it first'})"
            if k["read"]
            else f"{k['kind']} (not read: {k['why']})"
            for k in row["kinds"]
        )
        print(f"      kinds: {kinds or 'none'}")
        runs = "yes, through PHP" if row["runsInEditor"] else f"no: it {row['why']}"
        print(f"      runs in ai-eval-lsp's runs: {runs}")
        for problem in row["problems"]:
            print(f"      problem: {problem}")
    if fragments:
        print("\nSchema fragments (`schemaFragments`): kinds to validate, whoever runs them")
    for fragment in fragments:
        print(f"  {fragment['file']}")
        for kind in fragment["kinds"]:
            print(f"      {kind['kind']}: {kind['runs']}")
        for problem in fragment["problems"]:
            print(f"      problem: {problem}")
    for problem in registry.fragment_problems + registry.schema_problems:
        print(f"problem: {problem}")
    print(f"\n{registry.combined.kinds_line()}")
    return EXIT_CLEAN


def _site_read(codebase: Codebase) -> str:
    """Which site of a multisite codebase was read; nothing for a codebase of one site."""
    if len(codebase.sites) < 2:
        return ""
    return f", site {codebase.site} (of {', '.join(codebase.sites)})"


def _php_runtime(project: Project) -> dict[str, str] | None:
    """The PHP that runs module executors: its version, or why there is none (None: no executor
    would run in PHP). Starting it is what a run does; nothing of the workspace is run."""
    from ai_eval_lsp.hosts.php import PhpUnavailable

    worker = project.php_worker()
    if worker is None:
        return None
    shown = " ".join(project.settings.php_command)
    with worker:
        try:
            return {"command": shown, "version": f"`{shown}` runs PHP {worker.version()}"}
        except PhpUnavailable as err:
            return {"command": shown, "unavailable": f"{err}; module executors are skipped in runs"}


def _php_row(project: Project, plugin: PhpPlugin, runtime: dict[str, str] | None) -> dict[str, Any]:
    """A PHP executor as `plugins` shows it: where it is, its kinds, and whether it runs here
    (not when it needs what ai-eval-lsp cannot give, nor when no PHP starts)."""
    why = plugin.unavailable
    if why is None and runtime is not None and "unavailable" in runtime:
        why = f"needs PHP, and {runtime['unavailable'].split('; ')[0]}"
    origin = plugin.origin
    return {
        "module": origin.module,
        "service": plugin.executor.service_id,
        "class": origin.name,
        "file": project.relative(Path(origin.file)) if origin.file else None,
        "line": origin.line,
        "kinds": [
            {
                "kind": d.kind,
                "read": d.unreadable is None,
                "spliced": d.kind in plugin.kinds,
                "why": d.unreadable,
            }
            for d in plugin.executor.definitions
        ],
        "runsInEditor": why is None,
        "why": why,
        "problems": project.registry.problems_of(plugin),
    }
