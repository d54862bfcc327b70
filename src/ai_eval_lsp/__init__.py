"""ai-eval-lsp: editor tooling and an evaluator for ai_eval rubrics.

The public plugin API (SPEC section 4) is importable from here.
"""

from importlib.metadata import PackageNotFoundError, version

from ai_eval_lsp.core.api import CheckExecutor, CheckOutcome, CheckSchemaProvider, Services

try:
    __version__ = version("ai-eval-lsp")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["CheckExecutor", "CheckOutcome", "CheckSchemaProvider", "Services", "__version__"]
