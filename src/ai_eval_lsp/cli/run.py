"""`ai-eval-lsp run CASES...`: cases files run, each one row stored; with `--watch`, run again
after each change that affects them."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ai_eval_lsp.cli.common import (
    EXIT_CLEAN,
    EXIT_ERRORS,
    EXIT_USAGE,
    Commands,
    Projects,
    database_option,
    root_option,
    say,
    warn_of_problems,
    with_examples,
)
from ai_eval_lsp.cli.problems import FileProblem, text_line
from ai_eval_lsp.core.problems import Problem
from ai_eval_lsp.disk.reading import Skipped
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.render import format_run, format_runs_markdown, run_json

if TYPE_CHECKING:
    from ai_eval_lsp.runs.run import RunResult

NAME = "run"
EXAMPLES = [
    "run evals/refunds.cases.yaml",
    "run evals/refunds.cases.yaml -v          # every case, the passing ones too",
    "run evals/*.cases.yaml --watch           # then again after each change that affects them",
    "run evals/*.cases.yaml --format json --db /tmp/results.sqlite",
    'run evals/*.cases.yaml --format markdown >> "$GITHUB_STEP_SUMMARY"',
]


def add(commands: Commands) -> None:
    parser = commands.add_parser(
        NAME,
        parents=[root_option(), database_option()],
        help="run cases files: grade every case, store one result row per file",
    )
    parser.add_argument("paths", nargs="+", metavar="CASES")
    parser.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="markdown: a table of the rows, the cases that failed, and each run's diff to the run "
        "before (for a pull request or a CI job summary)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="text: every case, not only those that failed, errored or missed their `expect`",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="then re-run the cases files a change affects (to a rubric, a cases file or an executor "
        "source) until Ctrl+C, printing each run's line and what changed; needs ai-eval-lsp[watch]",
    )
    with_examples(parser, EXAMPLES).set_defaults(run=run)


def run(projects: Projects, args: argparse.Namespace) -> int:
    told: set[Skipped] = set()  # a file not read is said once a command
    if args.watch:
        from ai_eval_lsp.cli.watch import watch

        last = watch(
            args.paths,
            lambda: Projects(projects.root),
            lambda project, name: _run_one(project, name, args, told),
        )
        return EXIT_USAGE if last is None else _run_status(last)
    done: list[tuple[str, RunResult | str]] = []
    for name in args.paths:
        project = projects.of(Path(name))
        warn_of_problems(project)
        result = _run_one(project, name, args, told)
        done.append((name, result))
        if args.format == "text" and not isinstance(result, str):
            print(format_run(name, result, every_case=args.verbose))
    results = [(name, result) for name, result in done if not isinstance(result, str)]
    if args.format == "json":
        print(json.dumps([run_json(name, result) for name, result in results], indent=2, ensure_ascii=False))
    elif args.format == "markdown":
        print(format_runs_markdown(results, [(name, why) for name, why in done if isinstance(why, str)]))
    return _run_status(done)


def _run_one(project: Project, name: str, args: argparse.Namespace, told: set[Skipped]) -> RunResult | str:
    """A run of one cases file; why it could not run, once said on stderr (the others still run),
    as are the project's files that were not read (once a command)."""
    from ai_eval_lsp.runs.run import RunError, RunOptions, run_cases

    skipped: list[Skipped] = []
    options = RunOptions(
        "cli",
        Path(args.db) if args.db else None,
        _progress(name),
        cases_errors=_warn_of(name),
        skipped=skipped,
    )
    try:
        return run_cases(project, Path(name), options)
    except RunError as err:
        say(f"error: {err}")
        return str(err)
    finally:
        for note in skipped:
            if note not in told:
                told.add(note)
                say(f"warning: {note.path}: {note.why}")


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
