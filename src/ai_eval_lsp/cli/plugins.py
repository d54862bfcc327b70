"""`ai-eval-lsp plugins`: every executor (core, Python plugins, a Drupal codebase's PHP executors),
its kinds and load problems, and the schema fragments; in words, or as JSON."""

from __future__ import annotations

import argparse
import json

from ai_eval_lsp.cli.common import EXIT_CLEAN, Commands, Projects, root_option, with_examples
from ai_eval_lsp.project.listing import format_listing, listing

NAME = "plugins"
EXAMPLES = [
    "plugins                                  # what this project's rubrics can use",
    "plugins --root path/to/drupal --format json",
]


def add(commands: Commands) -> None:
    parser = commands.add_parser(
        NAME, parents=[root_option()], help="list executor plugins, their kinds and load problems"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    with_examples(parser, EXAMPLES).set_defaults(run=run)


def run(projects: Projects, args: argparse.Namespace) -> int:
    found = listing(projects.here())
    print(json.dumps(found, indent=2) if args.format == "json" else format_listing(found))
    return EXIT_CLEAN
