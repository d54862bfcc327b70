"""Text sync: the session keeps every YAML document the client opens, applies edits as editors
count lines, and has rubric and cases files analysed (at once when opened, debounced while typed)."""

from __future__ import annotations

from lsprotocol import types

from ai_eval_lsp.core.analysis import Edit
from ai_eval_lsp.server.server import DEBOUNCE_SECONDS, AiEvalServer
from ai_eval_lsp.server.session import path_of


def register(server: AiEvalServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AiEvalServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        if item.uri in ls.session.documents:  # opened twice: the second opening replaces the first
            ls.scheduler.forget(item.uri)
            ls.session.close(item.uri)
        path = path_of(item.uri)
        folder = ls.folders.home_of(path.resolve() if path else None, ls.session.settings)
        document = ls.session.open(item.uri, item.text, item.version, folder)
        ls.folders.announce(document)
        ls.scheduler.start(item.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AiEvalServer, params: types.DidChangeTextDocumentParams) -> None:
        document = ls.session.documents.get(params.text_document.uri)
        if document is None:
            return
        lines, encoding = document.lines, ls.encoding
        edits: list[Edit] = []
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                start = lines.offset(change.range.start.line, change.range.start.character, encoding)
                end = max(start, lines.offset(change.range.end.line, change.range.end.character, encoding))
            else:
                start, end = 0, len(lines.text)
            lines = lines.replace(start, end, change.text)
            edits.append(Edit(start, end - start, change.text))
        was = document.role
        ls.session.change(document, lines, params.text_document.version, edits)
        if ls.session.classify(document):
            ls.folders.announce(document, force=was is not None)
        ls.scheduler.edited(document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AiEvalServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.scheduler.forget(uri)
        document = ls.session.close(uri)
        if document is None or document.role is None:
            return
        ls.clear(uri)
        ls.publish(ls.session.documents_of(document.folder))  # its file on disk is the truth again
