"""Diagnostics, pushed (debounced, off the event loop, never for a stale version) or pulled."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from lsprotocol import types
from pygls.workspace import TextDocument

from ai_eval_lsp.core.problems import Problem
from ai_eval_lsp.server.server import DEBOUNCE_SECONDS, AiEvalServer
from ai_eval_lsp.server.session import DocumentState, to_range

SOURCE = "ai-eval"


def to_diagnostic(problem: Problem, lines: list[str], server: AiEvalServer) -> types.Diagnostic:
    codec = server.workspace.position_codec
    related = []
    for other in problem.related:
        text = server.session.text_of(other.path)
        if text is not None:
            location = types.Location(
                server.session.uri_of(other.path), to_range(other.span, text.split("\n"), codec)
            )
            related.append(types.DiagnosticRelatedInformation(location, other.message))
    return types.Diagnostic(
        range=to_range(problem.span, lines, codec),
        message=problem.message,
        severity=types.DiagnosticSeverity(int(problem.severity)),
        code=problem.code,
        source=SOURCE,
        data=problem.data or None,
        related_information=related or None,
    )


def diagnostics_of(server: AiEvalServer, state: DocumentState) -> list[types.Diagnostic]:
    lines = state.lines
    return [to_diagnostic(problem, lines, server) for problem in server.session.problems(state)]


async def check(server: AiEvalServer, document: TextDocument) -> DocumentState | None:
    """Analyse off the loop, then commit on it unless the document moved on meanwhile."""
    version = document.version
    state = await asyncio.to_thread(server.session.analyse, document)
    if state is None or server.workspace.get_text_document(document.uri).version != version:
        return None
    if server.session.commit(state):
        refresh_others(server, state.uri)
    return state


def publish(server: AiEvalServer, state: DocumentState) -> None:
    if server.client_pulls_diagnostics():
        return
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(state.uri, diagnostics_of(server, state), state.version)
    )


def refresh_pulled(server: AiEvalServer) -> None:
    """Ask a pulling client to pull again, where it accepts being asked."""
    workspace = server.client_capabilities.workspace
    if (
        server.client_pulls_diagnostics()
        and workspace
        and workspace.diagnostics
        and workspace.diagnostics.refresh_support
    ):
        server.workspace_diagnostic_refresh(None)


def refresh_others(server: AiEvalServer, changed_uri: str | None = None) -> None:
    """Another file's identity or references changed: cross-file problems may have too."""
    if server.client_pulls_diagnostics():
        refresh_pulled(server)
        return
    for uri, state in list(server.session.documents.items()):
        if uri != changed_uri:
            publish(server, state)


def schedule(server: AiEvalServer, uri: str, delay: float = DEBOUNCE_SECONDS) -> None:
    """Check a document after `delay`; a newer edit cancels the older check."""
    previous = server.pending.pop(uri, None)
    if previous is not None:
        previous.cancel()

    async def run() -> None:
        await asyncio.sleep(delay)
        document = server.workspace.get_text_document(uri)
        state = await check(server, document)
        if state is not None:
            publish(server, state)

    server.pending[uri] = asyncio.ensure_future(run())


def schedule_all(server: AiEvalServer, uris: Iterable[str]) -> None:
    for uri in uris:
        schedule(server, uri, 0)


def register(server: AiEvalServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AiEvalServer, params: types.DidOpenTextDocumentParams) -> None:
        schedule(ls, params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AiEvalServer, params: types.DidChangeTextDocumentParams) -> None:
        schedule(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AiEvalServer, params: types.DidSaveTextDocumentParams) -> None:
        schedule(ls, params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AiEvalServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        pending = ls.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        ls.session.close(uri)
        if not ls.client_pulls_diagnostics():
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False),
    )
    async def pull(
        ls: AiEvalServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        document = ls.workspace.get_text_document(params.text_document.uri)
        state = await check(ls, document) or ls.session.documents.get(document.uri)
        items = diagnostics_of(ls, state) if state is not None else []
        return types.RelatedFullDocumentDiagnosticReport(items=items)
