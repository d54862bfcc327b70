"""The public plugin API (SPEC section 4), importable as `ai_eval_lsp.api` and from `ai_eval_lsp`
itself; it is defined with the engine, in `core/api.py`."""

from ai_eval_lsp.core.api import CheckExecutor, CheckOutcome, CheckSchemaProvider, Services

__all__ = ["CheckExecutor", "CheckOutcome", "CheckSchemaProvider", "Services"]
