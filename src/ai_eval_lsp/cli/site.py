"""`ai-eval-lsp site pull [PATH]`: the Drupal site's new runs read into the results database, a
line per new run, oldest first; with `--fail-on-regression`, a CI gate on them."""

from __future__ import annotations

import argparse
import json
import os
import sys
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
    with_examples,
)
from ai_eval_lsp.cli.problems import annotation
from ai_eval_lsp.core.compare import run_label
from ai_eval_lsp.core.text import printable
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.render import count

if TYPE_CHECKING:
    from ai_eval_lsp.runs.site import SiteRun

NAME = "site"
EXAMPLES = [
    "site pull                                # the site's new runs into the results database",
    "site pull web --db /tmp/results.sqlite",
    "site pull --fail-on-regression           # in CI: exit 1 when a new run regressed",
]

SITE_DATABASE_VARIABLE = "AI_EVAL_SITE_DATABASE"
"""The site's database URL for `site pull` and `history --site`, over the project's settings: how
CI is given it from a secret, so it is never written in a file."""


def add(commands: Commands) -> None:
    parser = commands.add_parser(NAME, help="the Drupal site's own runs, read from its database")
    site_commands = parser.add_subparsers(dest="site_command", metavar="SITE_COMMAND", required=True)
    pull = site_commands.add_parser(
        "pull",
        parents=[root_option(), database_option()],
        help="read the site's new runs into the results database; a line per new run, oldest first",
    )
    pull.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="the project whose site is read (default: here)"
    )
    pull.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a new run regressed: its average fell more than site.regressionTolerance "
        "below its target's site run before (exit 2 when the site cannot be read)",
    )
    pull.add_argument(
        "--format",
        choices=("text", "json", "github"),
        default="text",
        help="json: the new runs, each its row with `summary` and `regressed`; github: the text, "
        "each regression a workflow annotation instead of its line",
    )
    with_examples(pull, EXAMPLES)
    with_examples(parser, EXAMPLES).set_defaults(run=run)


def run(projects: Projects, args: argparse.Namespace) -> int:
    return pull_into(projects.of(Path(args.path)), args, quiet=False)


def pull_into(project: Project, args: argparse.Namespace, quiet: bool) -> int:
    """Read the project's site's new runs into the results database and say what came, a line
    per new run (`quiet`: only trouble, as a warning, for a command that goes on)."""
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
        why = note or "the project is no Drupal codebase and names no site.database"
        say(f"{trouble}: no site runs: {why}")
        return EXIT_USAGE
    store = ResultStore(Path(args.db)) if args.db else ResultStore(project.results_database, project.root)
    reader = SiteReader(address)
    try:
        pulled = pull(store, reader)
        runs = (
            []
            if quiet
            else announce(store, address.identity, pulled.rows, project.settings.site_regression_tolerance)
        )
    except (SiteError, StoreError) as err:
        say(f"{trouble}: {err}")
        return EXIT_USAGE
    finally:
        reader.close()
    for skipped in pulled.skipped:
        say(f"warning: {skipped}")
    if quiet:
        return EXIT_CLEAN
    _print(runs, args, f"no new site runs in {address}")
    fell = sum(1 for each in runs if each.regressed)
    if fell and args.fail_on_regression:
        print(f"error: {count(fell, 'new site run')} regressed (--fail-on-regression)", file=sys.stderr)
        return EXIT_ERRORS
    return EXIT_CLEAN


def _print(runs: list[SiteRun], args: argparse.Namespace, nothing: str) -> None:
    """The new runs, oldest first, in the format asked for."""
    if args.format == "json":
        found = [{**each.row, "summary": each.summary, "regressed": each.regressed} for each in runs]
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return
    level = "error" if args.fail_on_regression else "warning"
    for each in runs:
        if each.regressed and args.format == "github":
            title = f"ai-eval-lsp: {run_label(each.row)} of {printable(each.row['target_id'])} regressed"
            print(annotation(level, each.summary, title=title))
        else:
            print(each.summary)
    if not runs:
        print(nothing)
