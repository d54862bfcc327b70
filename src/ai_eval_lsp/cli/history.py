"""`ai-eval-lsp history [TARGET]`: a target's runs, local and the site's, newest first; without a
target, every target and its latest run."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ai_eval_lsp.cli import site
from ai_eval_lsp.cli.common import (
    EXIT_CLEAN,
    EXIT_USAGE,
    Commands,
    Projects,
    database_option,
    from_store,
    positive,
    root_option,
    with_examples,
)
from ai_eval_lsp.core.text import printable
from ai_eval_lsp.runs.render import format_history, format_targets

if TYPE_CHECKING:
    from ai_eval_lsp.runs.store import ResultStore

NAME = "history"
EXAMPLES = [
    "history                                  # every target with runs, and its latest",
    "history support_reply --limit 5",
    "history support_bot --site               # the site's runs too, read from its database first",
]


def add(commands: Commands) -> None:
    parser = commands.add_parser(
        NAME,
        parents=[root_option(), database_option()],
        help="a target's stored runs, newest first (without a target: every target and its latest run)",
    )
    parser.add_argument(
        "target",
        nargs="?",
        metavar="TARGET",
        help="the rubric id the runs graded (default: list the targets)",
    )
    parser.add_argument("--limit", type=positive, default=None, metavar="N", help="the newest N runs only")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--site", action="store_true", help="read the Drupal site's new runs first (as `site pull` does)"
    )
    with_examples(parser, EXAMPLES).set_defaults(run=run)


def run(projects: Projects, args: argparse.Namespace) -> int:
    if args.site:
        site.pull_into(projects.here(), args, quiet=True)
    if args.target is None:
        return _targets(projects, args)

    def read(store: ResultStore) -> tuple[list[dict[str, Any]], list[str], Path]:
        rows = store.history(args.target, args.limit)
        return rows, [] if rows else store.targets(), store.path

    found = from_store(projects, args, read)
    if found is None:
        return EXIT_USAGE
    rows, known, path = found
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif not rows:
        listed = ", ".join(f"`{printable(t)}`" for t in known) or "none"
        print(
            f"error: no runs of `{printable(args.target)}` are stored in {path}; targets with runs: {listed}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    else:
        print(format_history(args.target, rows))
    return EXIT_CLEAN


def _targets(projects: Projects, args: argparse.Namespace) -> int:
    def read(store: ResultStore) -> list[tuple[str, dict[str, Any] | None, int]]:
        return [(target, *store.last_run(target)) for target in store.targets()]

    found = from_store(projects, args, read)
    if found is None:
        return EXIT_USAGE
    if args.format == "json":
        print(json.dumps([{"target": t, "runs": n, "latest": row} for t, row, n in found], indent=2))
    else:
        print(format_targets(found))
    return EXIT_CLEAN
