"""`ai-eval-lsp diff [BASE [HEAD]]`: two runs of one target (or a local run and the site's run it
mirrors) compared case by case, in text, JSON or markdown."""

from __future__ import annotations

import argparse
import json

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
from ai_eval_lsp.runs.render import format_diff, format_diff_markdown

NAME = "diff"
EXAMPLES = [
    "diff                                     # the target run last: its latest run against the one before",
    "diff --target support_tone",
    "diff 12 15 --format markdown             # runs 12 and 15, as a pull-request comment",
    "diff site:latest latest                  # the site's latest run against yours, question by question",
]


def add(commands: Commands) -> None:
    parser = commands.add_parser(
        NAME,
        parents=[root_option(), database_option()],
        help="compare two runs of one target case by case (default: its latest and the one before)",
    )
    named = "a run id, latest, previous, site:ID (the site's run ID) or site:latest"
    parser.add_argument("base", nargs="?", metavar="BASE_RUN", help=f"the older run: {named}")
    parser.add_argument("head", nargs="?", metavar="HEAD_RUN", help="the newer run (default: the latest)")
    parser.add_argument(
        "--target", metavar="ID", help="the rubric id or site target (default: the target run last)"
    )
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    with_examples(parser, EXAMPLES).set_defaults(run=run)


def run(projects: Projects, args: argparse.Namespace) -> int:
    comparison = from_store(projects, args, lambda store: store.diff(args.base, args.head, args.target))
    if comparison is None:
        return EXIT_USAGE
    if args.format == "json":
        print(json.dumps(comparison.to_json(), indent=2, ensure_ascii=False))
    else:
        print(format_diff_markdown(comparison) if args.format == "markdown" else format_diff(comparison))
    return EXIT_CLEAN
