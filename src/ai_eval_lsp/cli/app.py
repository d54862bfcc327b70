"""The command line read: the top-level parser, assembled from one module per subcommand, and
`main`, which runs the subcommand given with the project of each path."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType

from ai_eval_lsp import __version__
from ai_eval_lsp.cli import check, diff, history, plugins, report, run, schema, serve, site, startup
from ai_eval_lsp.cli.common import EXIT_PIPE_CLOSED, EXIT_USAGE, ROOT_HELP, Projects, UsageError, say
from ai_eval_lsp.core.blockyaml import COMPILED
from ai_eval_lsp.drupal.secrets import RedactingStream, redact

SUBCOMMANDS = (check, schema, run, history, diff, report, site, serve, plugins)
"""In the order `--help` lists them."""

EXAMPLES = {module.NAME: module.EXAMPLES for module in SUBCOMMANDS}
"""Each command's `--help` ends with these (after `ai-eval-lsp `)."""


def console() -> int:
    """The `ai-eval-lsp` command itself. The traceback of an unexpected error leaves with no
    secret of the process, as everything a command prints does (`redacted_output`)."""
    sys.excepthook = _redacted_traceback
    return main(exit_hard=True)


def _redacted_traceback(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    sys.stderr.write(redact("".join(traceback.format_exception(kind, error, trace))))


def main(argv: Sequence[str] | None = None, *, exit_hard: bool = False) -> int:
    """Run a command line. With `exit_hard`, a command that made a large analysis may end the
    process once its output is out (`common.finished`)."""
    arguments = parser()
    args = arguments.parse_args(argv)
    args.exit_hard = exit_hard
    if args.command is None:
        arguments.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command == serve.NAME:
        return serve.serve(args)
    if exit_hard:
        startup.started()
    with redacted_output():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    if args.root is not None and not Path(args.root).is_dir():
        say(f"error: --root {args.root} is not a folder")
        return EXIT_USAGE
    try:
        result: int = args.run(Projects(Path(args.root) if args.root else None), args)
        sys.stdout.flush()
    except UsageError as err:
        say(f"error: {err}")
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, with the status of a Unix tool that got
        # SIGPIPE, and send what Python flushes at exit nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE_CLOSED
    return result


@contextlib.contextmanager
def redacted_output() -> Iterator[None]:
    """A command's stdout and stderr with no secret of the process, for as long as it runs."""
    streams = sys.stdout, sys.stderr
    if sys.stdout is not None:  # None: closed when the process started
        sys.stdout = RedactingStream(sys.stdout)
    if sys.stderr is not None:
        sys.stderr = RedactingStream(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        sys.stdout, sys.stderr = streams


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="ai-eval-lsp",
        description="Validate ai_eval rubrics with the check kinds of the installed plugins.",
    )
    top.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__} (compiled: {'yes' if COMPILED else 'no'})",
    )
    top.add_argument("--root", default=None, help=ROOT_HELP)
    commands = top.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.add(commands)
    top.formatter_class = argparse.RawDescriptionHelpFormatter
    top.epilog = (
        "examples:\n"
        + "\n".join(f"  ai-eval-lsp {EXAMPLES[name][0]}" for name in ("check", "run", "diff"))
        + "\n\n`ai-eval-lsp COMMAND --help` shows a command's options and more examples."
    )
    return top
