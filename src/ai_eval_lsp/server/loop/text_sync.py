"""Text sync: the session keeps every YAML document the client opens, applies edits as editors
count lines, and has rubric and cases files analysed (at once when opened, debounced while typed)."""

from __future__ import annotations

from lsprotocol import types

from ai_eval_lsp.core.analysis import Edit
from ai_eval_lsp.server.loop.server import DEBOUNCE_SECONDS, AiEvalServer
from ai_eval_lsp.server.lsp.convert import path_of


def did_open(server: AiEvalServer, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    if item.uri in server.session.documents:  # opened twice: the second opening replaces the first
        server.scheduler.forget(item.uri)
        server.session.close(item.uri)
    path = path_of(item.uri)
    folder = server.project_folders.home_of(path.resolve() if path else None, server.session.settings)
    document = server.session.open(item.uri, item.text, item.version, folder)
    server.project_folders.announce(document)
    server.scheduler.start(item.uri)


def did_change(server: AiEvalServer, params: types.DidChangeTextDocumentParams) -> None:
    document = server.session.documents.get(params.text_document.uri)
    if document is None:
        return
    lines, encoding = document.lines, server.encoding
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
    server.session.change(document, lines, params.text_document.version, edits)
    if server.session.classify(document):
        server.project_folders.announce(document, force=was is not None)
    server.scheduler.debounce(document.uri, DEBOUNCE_SECONDS)


def did_close(server: AiEvalServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    server.scheduler.forget(uri)
    document = server.session.close(uri)
    if document is None or document.role is None:
        return
    server.clear(uri)
    server.publish(server.session.documents_of(document.folder))  # its file on disk is the truth again
