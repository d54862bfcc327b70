"""`ai-eval-lsp check PATH...`: problems of rubric and cases files, in text, JSON, GitHub or SARIF."""

from __future__ import annotations

import argparse
import os
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
    say,
    warn_of_problems,
    with_examples,
)
from ai_eval_lsp.cli.problems import FORMATS, FileNote, FileProblem, render
from ai_eval_lsp.core.analysis import Analysis
from ai_eval_lsp.core.index import Role
from ai_eval_lsp.core.problems import Severity
from ai_eval_lsp.core.text import printable
from ai_eval_lsp.disk.reading import Skipped

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
    # by project root, in the order given: each file, its role, and whether it was named
    targets: dict[Path, list[tuple[Path, Role, bool]]] = {}
    for name in args.paths:
        path = Path(name)
        if not path.exists():
            say(f"error: {name}: no such file or folder")
            return EXIT_USAGE
        if path.is_dir():
            walked = list(projects.walk(path))
            if not walked:
                print(
                    printable(f"warning: {name}: no rubric or cases files found in this folder"),
                    file=sys.stderr,
                )
            for project, file in walked:
                targets.setdefault(project.root, []).append((file.path, file.role, False))
            continue
        # A file named on the command line is checked, as a rubric unless it is a cases file; with
        # --skip-other-files only when the rules make it a rubric or cases file.
        project = projects.of(path)
        role = project.role(path)
        if role is None and args.skip_other_files:
            continue
        targets.setdefault(project.root, []).append((path, role or "rubric", True))
    if not targets and args.skip_other_files and args.format in ("text", "github"):
        return EXIT_CLEAN  # pre-commit passes every changed YAML file, and most YAML is not ours

    found: list[FileProblem] = []
    notes: dict[str, FileNote] = {}  # by absolute path: the walks name a file in two ways
    checked = 0
    for root, given in targets.items():
        files: dict[Path, Role] = {}  # a file named twice, or walked and named, is one
        named: set[Path] = set()
        for path, role, by_name in given:
            files.setdefault(path, role)
            if by_name:
                named.add(path)
        project = projects.loaded[root]
        warn_of_problems(project)
        analyses: dict[Path, Analysis] = {}
        skipped: list[Skipped] = []
        for path, role in files.items():
            try:
                analyses[path] = project.analyse(path, project.read(path), role)
            except OSError as err:
                notes[os.path.abspath(path)] = FileNote(
                    path.as_posix(), Skipped.of(path, err).why, path in named
                )
        rubrics = project.index(analyses, skipped=skipped).rubrics
        for unread in skipped:
            notes.setdefault(
                os.path.abspath(unread.path), FileNote(unread.path.as_posix(), unread.why, False)
            )
        for path in analyses:
            found.extend(FileProblem(path.as_posix(), p) for p in analyses[path].problems_in(rubrics))
        checked += len(analyses)

    for note in notes.values():
        print(note.line(), file=sys.stderr)
    output = render(found, args.format, checked, list(notes.values()))
    if output:
        print(output)
    if any(note.error for note in notes.values()):
        status = EXIT_USAGE  # a file named on the command line was not read: an I/O error
    else:
        status = EXIT_ERRORS if any(f.problem.severity == Severity.ERROR for f in found) else EXIT_CLEAN
    return finished(args, status)
