"""`ai-eval-lsp schema`: the combined schema (core plus every plugin's and module's kinds), on
stdout, to a file, or into a JetBrains project with the mapping of its rubric files."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ai_eval_lsp.cli import jetbrains
from ai_eval_lsp.cli.common import (
    EXIT_CLEAN,
    EXIT_USAGE,
    Commands,
    Projects,
    root_option,
    warn_of_problems,
    with_examples,
)
from ai_eval_lsp.project.project import Project

NAME = "schema"
EXAMPLES = ["schema -o rubric.combined.json      # for yaml-language-server's yaml.schemas"]


def add(commands: Commands) -> None:
    parser = commands.add_parser(
        NAME, parents=[root_option()], help="print the combined schema (core plus plugin kinds)"
    )
    destination = parser.add_mutually_exclusive_group()
    destination.add_argument("-o", "--output", metavar="FILE", help="write it to FILE instead")
    destination.add_argument(
        "--jetbrains",
        action="store_true",
        help="write it to the project's .idea/ with a jsonSchemas.xml mapping the rubric files to it "
        "(PhpStorm and other JetBrains IDEs, no plugin needed)",
    )
    with_examples(parser, EXAMPLES).set_defaults(run=run)


def run(projects: Projects, args: argparse.Namespace) -> int:
    project = projects.here()
    warn_of_problems(project)
    text = json.dumps(project.registry.combined.schema, indent=2, ensure_ascii=False) + "\n"
    if args.jetbrains:
        return _for_jetbrains(project, text)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_CLEAN
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as err:
        print(f"error: {args.output}: cannot be written: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_CLEAN


def _for_jetbrains(project: Project, text: str) -> int:
    try:
        schema, mappings, count = jetbrains.write(project, text)
    except jetbrains.CannotWrite as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(
        f"wrote {project.relative(schema)}, and {project.relative(mappings)} mapping {count} rubric paths to it"
    )
    return EXIT_CLEAN
