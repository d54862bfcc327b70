"""Code lenses: "Run rubric" and "Run check" on a rubric, "Run cases" on a cases file."""

from __future__ import annotations

from lsprotocol import types

from ai_eval_lsp.server import names, query
from ai_eval_lsp.server.server import AiEvalServer
from ai_eval_lsp.server.session import OpenDocument


def code_lenses(document: OpenDocument) -> list[types.CodeLens]:
    top = types.Range(types.Position(0, 0), types.Position(0, 0))
    uri = document.uri
    if document.role == "cases":
        return [types.CodeLens(top, types.Command("Run cases", names.RUN_CASES, arguments=[{"uri": uri}]))]
    lenses = [types.CodeLens(top, types.Command("Run rubric", names.RUN_RUBRIC, arguments=[{"uri": uri}]))]
    for index, check in enumerate(query.checks_of(document)):
        where = types.Range(types.Position(check.line, 0), types.Position(check.line, 0))
        command = types.Command("Run check", names.RUN_CHECK, arguments=[{"uri": uri, "checkIndex": index}])
        lenses.append(types.CodeLens(where, command))
    return lenses


def register(server: AiEvalServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(ls: AiEvalServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        document = await query.current(ls, params.text_document.uri)
        return code_lenses(document) if document is not None else []
