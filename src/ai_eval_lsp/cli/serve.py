"""`ai-eval-lsp serve`: the language server, over stdio or TCP."""

from __future__ import annotations

import argparse
import sys

from ai_eval_lsp.cli.common import EXIT_CLEAN, Commands, with_examples

NAME = "serve"

FULL_COLLECTIONS_NEVER = 1 << 30
"""The collector's third threshold: no full collection of its own (the server runs them idle)."""
EXAMPLES = [
    "serve                                    # stdio, as editors start it",
    "serve --tcp --port 2087",
]


def add(commands: Commands) -> None:
    parser = commands.add_parser(NAME, help="start the language server (stdio by default)")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin and stdout (the default)")
    parser.add_argument("--tcp", action="store_true", help="listen on a TCP port instead")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2087)
    with_examples(parser, EXAMPLES).set_defaults(run=None)


def serve(args: argparse.Namespace) -> int:
    import gc
    import logging

    import attr._make
    import cattrs.gen

    from ai_eval_lsp.cli import startup

    startup.cache_generated_code(attr._make, cattrs.gen)  # lsprotocol's classes, pygls's converters

    from ai_eval_lsp.drupal.secrets import RedactingStream
    from ai_eval_lsp.server import create_server

    # The log, and any traceback a thread prints, leave with no secret of the process (stdout is
    # the client's: each message is redacted as it is sent).
    sys.stderr = RedactingStream(sys.stderr)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)  # it logs every message at INFO
    server = create_server()
    # Each version of a large rubric is ~100k objects, and the default collector thresholds
    # scanned them again and again mid-edit (measured: p95 latency); collect the young less often,
    # and everything only once the server is idle (`scheduler.COLLECT_WHEN_IDLE`): a full
    # collection scans every analysis kept (~0.2 s a 10,000-check rubric), and one came mid-typing.
    gc.set_threshold(100_000, 50, FULL_COLLECTIONS_NEVER)
    startup.started()
    # The event loop reads messages and answers requests while analyses run in threads: at
    # Python's 5 ms switch interval, each wake-up would wait up to 5 ms for the interpreter (a
    # hover while a 10 MB rubric is analysed: docs/performance.md). Threads hand it over in 0.5 ms.
    sys.setswitchinterval(0.0005)
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_stdio()
    return EXIT_CLEAN
