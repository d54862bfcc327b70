"""The language server: a thin layer, one module per feature, over the engine and evaluator."""

from __future__ import annotations

from ai_eval_lsp.server.server import AiEvalServer


def create_server() -> AiEvalServer:
    from ai_eval_lsp.server import (
        actions,
        commands,
        completion,
        diagnostics,
        documents,
        hover,
        lenses,
        navigation,
        onsave,
        siteruns,
        workspace,
    )

    server = AiEvalServer()
    for feature in (
        workspace,
        documents,
        diagnostics,
        commands,
        actions,
        lenses,
        hover,
        completion,
        navigation,
        onsave,
        siteruns,
    ):
        feature.register(server)
    return server
