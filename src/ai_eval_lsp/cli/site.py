"""`ai-eval-lsp site pull [PATH]`: the Drupal site's new runs read into the results database, a
line per target."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from ai_eval_lsp.cli.common import (
    EXIT_CLEAN,
    EXIT_USAGE,
    Commands,
    Projects,
    database_option,
    root_option,
    with_examples,
)
from ai_eval_lsp.core.text import printable
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.render import count

NAME = "site"
EXAMPLES = [
    "site pull                                # the site's new runs into the results database",
    "site pull web --db /tmp/results.sqlite",
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
        help="read the site's new runs into the results database; a line per target",
    )
    pull.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="the project whose site is read (default: here)"
    )
    with_examples(pull, EXAMPLES)
    with_examples(parser, EXAMPLES).set_defaults(run=run)


def run(projects: Projects, args: argparse.Namespace) -> int:
    return pull_into(projects.of(Path(args.path)), args, quiet=False)


def pull_into(project: Project, args: argparse.Namespace, quiet: bool) -> int:
    """Read the project's site's new runs into the results database and say what came, a line
    per target (`quiet`: only trouble, as a warning, for a command that goes on)."""
    from ai_eval_lsp.drupal.site_address import AddressError, parse_url
    from ai_eval_lsp.runs.site import SiteError, SiteReader, announce, as_row, pull
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
        print(f"{trouble}: no site runs: {why}", file=sys.stderr)
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
    new = Counter(values[1] for values in pulled.stored)
    latest = {values[1]: values for values in pulled.stored}
    for target, runs in new.items():
        (run,) = announce(
            store, address.identity, [as_row(latest[target])], project.settings.site_regression_tolerance
        )
        print(f"{printable(target)}: {count(runs, 'new site run')}; latest: {run.summary}")
    if not pulled.stored:
        print(f"no new site runs in {address}")
    return EXIT_CLEAN
