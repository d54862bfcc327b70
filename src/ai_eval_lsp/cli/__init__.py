"""The `ai-eval-lsp` command (SPEC section 5): `app.py` reads the command line and hands it to
one module per subcommand. Exit 0 clean, 1 errors, 2 usage or I/O."""

from __future__ import annotations

from collections.abc import Sequence

from ai_eval_lsp.cli import startup


def console() -> int:
    """The `ai-eval-lsp` command itself, started as `startup` says before anything else loads."""
    startup.begin()
    from ai_eval_lsp.cli import app

    return app.console()


def main(argv: Sequence[str] | None = None, *, exit_hard: bool = False) -> int:
    """Run a command line in this process (`app.main`)."""
    from ai_eval_lsp.cli import app

    return app.main(argv, exit_hard=exit_hard)


__all__ = ["console", "main"]
