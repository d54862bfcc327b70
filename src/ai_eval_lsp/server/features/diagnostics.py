"""Pull diagnostics (LSP 3.17), for clients that ask rather than take what is pushed: each answer
carries a result id, and a document whose diagnostics did not change is answered "unchanged".
A pull changes the session: it records what the client was answered
(`Session.record_diagnostics`), which the next pull's result id and the server's refresh compare
with."""

from __future__ import annotations

import json

from lsprotocol import types

from ai_eval_lsp.server.loop import take
from ai_eval_lsp.server.loop.server import AiEvalServer
from ai_eval_lsp.server.lsp.pygls_adapter import Written


async def pull(
    server: AiEvalServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport | Written:
    document = await take.current_document(server, params.text_document.uri)
    if document is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    items = server.diagnostics(document)
    changed = server.session.record_diagnostics(document, items)  # a new result id when they changed
    result_id = str(document.result_id)
    if not changed and params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return items.within('{"items": ', f', "kind": "full", "resultId": {json.dumps(result_id)}}}')
