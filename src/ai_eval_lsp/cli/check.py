"""`ai-eval-lsp check PATH...`: problems of rubric and cases files, in text, JSON, GitHub or SARIF."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ai_eval_lsp.cli.common import (
    EXIT_CLEAN,
    EXIT_ERRORS,
    EXIT_USAGE,
    Commands,
    Projects,
    finished,
    root_option,
    warn_of_problems,
    with_examples,
)
from ai_eval_lsp.cli.problems import FORMATS, FileProblem, render
from ai_eval_lsp.core.analysis import Analysis
from ai_eval_lsp.core.problems import Severity
from ai_eval_lsp.core.workspace import Role

NAME = "check"
EXAMPLES = [
    "check web/modules/custom/my_module       # a folder: its rubric and cases files",
    "check rubrics/tone.yaml --format github  # problems as GitHub Actions annotations",
    "check . --format sarif                   # for code scanning (upload-sarif)",
]


def add(commands: Commands) -> None:
    parser = commands.add_parser(
        NAME, parents=[root_option()], help="validate rubric and cases files; folders are walked"
    )
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--skip-other-files",
        action="store_true",
        help="files named on the command line that the rules do not make rubric or cases files are "
        "skipped, as a folder walk skips them, instead of being checked as rubrics (for pre-commit, "
        "which passes every changed YAML file)",
    )
    with_examples(parser, EXAMPLES).set_defaults(run=run)


def run(projects: Projects, args: argparse.Namespace) -> int:
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
        warn_of_problems(project)
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
    return finished(
        args, EXIT_ERRORS if any(f.problem.severity == Severity.ERROR for f in found) else EXIT_CLEAN
    )
