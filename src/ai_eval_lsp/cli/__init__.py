"""The `ai-eval-lsp` command (SPEC section 5): `app.py` reads the command line and hands it to
one module per subcommand. Exit 0 clean, 1 errors, 2 usage or I/O."""

from ai_eval_lsp.cli.app import console, main

__all__ = ["console", "main"]
