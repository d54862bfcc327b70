"""ai-eval-lsp: editor tooling and an evaluator for ai_eval rubrics.

The public plugin API (SPEC section 4) is importable from here.
"""

import os
import sys

from ai_eval_lsp.core.api import CheckExecutor, CheckOutcome, CheckSchemaProvider, Services


def _installed_version() -> str:
    """The version of the installed distribution, from its metadata folder's name as installers
    write it (`ai_eval_lsp-0.1.0.dist-info`): importing `importlib.metadata` to read it took ~40 ms
    of every start. Asked of `importlib.metadata` when no such folder is on the path."""
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith("ai_eval_lsp-") and name.endswith(".dist-info"):
                return name.removeprefix("ai_eval_lsp-").removesuffix(".dist-info")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ai-eval-lsp")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


__version__ = _installed_version()

__all__ = ["CheckExecutor", "CheckOutcome", "CheckSchemaProvider", "Services", "__version__"]
