"""`ai-eval-lsp report`: one self-contained HTML file of every target's runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ai_eval_lsp.cli.common import (
    EXIT_CLEAN,
    EXIT_USAGE,
    Commands,
    Projects,
    database_option,
    from_store,
    root_option,
    with_examples,
)
from ai_eval_lsp.runs.render import count

NAME = "report"
EXAMPLES = ["report -o report.html"]


def add(commands: Commands) -> None:
    parser = commands.add_parser(
        NAME,
        parents=[root_option(), database_option()],
        help="write one self-contained HTML report of every target's runs",
    )
    parser.add_argument("-o", "--output", default="report.html", metavar="FILE", help="default: report.html")
    with_examples(parser, EXAMPLES).set_defaults(run=run)


def run(projects: Projects, args: argparse.Namespace) -> int:
    from ai_eval_lsp.runs.report import render_report, report_targets

    targets = from_store(projects, args, report_targets)
    if targets is None:
        return EXIT_USAGE
    report = render_report(targets)
    try:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)  # as `run --db` makes its folder
        Path(args.output).write_text(report, encoding="utf-8")
    except OSError as err:
        print(f"error: {args.output}: cannot be written: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {args.output}: {count(len(targets), 'target')}")
    return EXIT_CLEAN
