"""Pull diagnostics (LSP 3.17), for clients that ask rather than take what is pushed: each answer
carries a result id, and a document whose diagnostics did not change is answered "unchanged"."""

from __future__ import annotations

import json

from lsprotocol import types

from ai_eval_lsp.server import names, query
from ai_eval_lsp.server.pygls_adapter import Written
from ai_eval_lsp.server.server import AiEvalServer


def register(server: AiEvalServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier=names.SOURCE, inter_file_dependencies=True, workspace_diagnostics=False
        ),
    )
    async def pull(
        ls: AiEvalServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport | Written:
        document = await query.current_document(ls, params.text_document.uri)
        if document is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        items = query.diagnostics(ls, document)
        changed = ls.session.sent(document, items)  # a new result id when they changed
        result_id = str(document.result_id)
        if not changed and params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return items.within('{"items": ', f', "kind": "full", "resultId": {json.dumps(result_id)}}}')
