"""The language server: a thin layer, one module per feature, over the engine and evaluator; every
method and command it answers is declared once, in `routes.py`."""

from __future__ import annotations

from ai_eval_lsp.server.loop.server import AiEvalServer


def create_server() -> AiEvalServer:
    from ai_eval_lsp.server import routes
    from ai_eval_lsp.server.loop import dispatch

    server = AiEvalServer(on_load=routes.ON_LOAD)
    dispatch.register(server, routes.METHODS, routes.COMMANDS)
    return server
