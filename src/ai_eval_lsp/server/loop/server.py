"""The language server: a pygls server that owns the session, and acts for the handlers that
change it (`dispatch.Mutates`): it publishes diagnostics, sends to the client and spawns work."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import traceback
from collections.abc import Callable, Iterable
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pygls.lsp.server import LanguageServer

from ai_eval_lsp import __version__
from ai_eval_lsp.core.analysis import Analysis
from ai_eval_lsp.core.text import Encoding
from ai_eval_lsp.server.loop.project_folders import ProjectFolders
from ai_eval_lsp.server.loop.scheduler import Scheduler
from ai_eval_lsp.server.loop.session import AnalysisJob, OpenDocument, ProjectFolder, Session
from ai_eval_lsp.server.lsp.convert import NotApplicable
from ai_eval_lsp.server.lsp.pygls_adapter import AiEvalProtocol, Written, serve_stdio
from ai_eval_lsp.server.query.diagnostics import diagnostics_json
from ai_eval_lsp.server.query.snapshots import Client

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = float(os.environ.get("AI_EVAL_LSP_DEBOUNCE_MS", "150")) / 1000
"""How long an edit waits for the next before it is checked (AI_EVAL_LSP_DEBOUNCE_MS)."""

REFRESH_DELAY = 0.1
"""How long a pulling client has to pull what it edited before it is asked to pull everything."""


class AiEvalServer(LanguageServer):
    def __init__(self, on_load: Iterable[Callable[[AiEvalServer, ProjectFolder], None]] = ()) -> None:
        """`on_load`: what follows a project folder's (re)load (`routes.ON_LOAD`)."""
        super().__init__("ai-eval-lsp", __version__, protocol_cls=AiEvalProtocol)
        self.session = Session()
        self.scheduler = Scheduler(self.session, self.commit_and_publish)
        self.project_folders = ProjectFolders(
            self, tuple(functools.partial(follow, self) for follow in on_load)
        )

    @property
    def written(self) -> AiEvalProtocol:
        """The protocol, which sends messages whose JSON is written already."""
        assert isinstance(self.protocol, AiEvalProtocol)
        return self.protocol

    @property
    def encoding(self) -> Encoding:
        """The position encoding agreed with the client."""
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return {"utf-8": "utf-8", "utf-32": "utf-32"}.get(str(encoding), "utf-16")  # type: ignore[return-value]

    @property
    def client(self) -> Client:
        """What answers depend on of the client, for the snapshots reading handlers get."""
        completion = (
            self.client_capabilities.text_document and self.client_capabilities.text_document.completion
        )
        item = completion and completion.completion_item
        return Client(self.encoding, bool(item and item.snippet_support))

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A failing handler is logged and, for requests, answered as an error; the server goes on.
        A cancelled request, or one naming nothing to act on, is answered but is no failure."""
        if isinstance(error, JsonRpcRequestCancelled | NotApplicable):
            return
        log.error("handler failed: %s", "".join(traceback.format_exception(error)))
        self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"ai-eval-lsp: {error}"))

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_log_message(types.LogMessageParams(kind, message))

    def notify(self, method: str, params: Any) -> None:
        """Send one of our own notifications (`names`)."""
        self.protocol.notify(method, params)

    def spawn(self, work: Any) -> asyncio.Task[Any]:
        """Run a coroutine in the background, keeping it alive and its failure logged."""
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self.session.task_began(task)

        def finished(done: asyncio.Task[Any]) -> None:
            self.session.task_ended(done)
            if not done.cancelled() and done.exception() is not None:
                self.report_server_error(done.exception(), None)  # type: ignore[arg-type]

        task.add_done_callback(finished)
        return task

    def client_pulls_diagnostics(self) -> bool:
        text_document = self.client_capabilities.text_document
        return bool(text_document and text_document.diagnostic)

    def commit_and_publish(self, document: OpenDocument, job: AnalysisJob, analysis: Analysis) -> None:
        """An analysis done: committed, then the document's diagnostics for its new version, and
        those of the other documents of its folder that the change altered."""
        others_changed = self.session.commit(document, job, analysis)
        self.publish([document], always=True)
        if others_changed:
            self.publish(
                other for other in self.session.documents_of(document.folder) if other is not document
            )

    def publish(self, documents: Iterable[OpenDocument], always: bool = False) -> None:
        """Send the diagnostics of the documents whose diagnostics changed since last sent (or
        `always`: a document's own new version), each for the version it was computed for. A
        pulling client is asked to pull again instead, if it has not pulled them by then."""
        if self.client_pulls_diagnostics():
            self._refresh_soon()
            return
        for document in documents:
            if not document.current:
                continue  # its own commit publishes it
            items = self.diagnostics(document)
            if self.session.record_diagnostics(document, items) or always:
                params = items.within(
                    f'{{"uri": {json.dumps(document.uri)}, "diagnostics": ',
                    f', "version": {document.version}}}',
                )
                self.written.notify_written(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)

    def diagnostics(self, document: OpenDocument) -> Written:
        """Every problem of a document as LSP diagnostics (a JSON array), against its folder's
        index as it is now; a problem written before is not written again (`diagnostics_json`)."""
        view = self.session.document_snapshot(document, self.client)
        written, converted = diagnostics_json(view, self.session.problems(document), document.written)
        self.session.keep_written(document, converted)
        return written

    def _refresh_soon(self) -> None:
        """A moment from now (a client pulls a document it edits by itself, and the pull in flight
        then answers), ask the client to pull again if any document's diagnostics differ from what
        it last pulled."""
        if self.session.refresh is not None:
            return

        def refresh() -> None:
            self.session.refresh_due()
            stale = any(
                doc.current and self.diagnostics(doc) != doc.published
                for doc in self.session.documents.values()
            )
            workspace = self.client_capabilities.workspace
            if stale and workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
                self.workspace_diagnostic_refresh(None)

        self.session.refresh_later(asyncio.get_running_loop().call_later(REFRESH_DELAY, refresh))

    def client_shows_runs(self) -> bool:
        """Whether the client shows `aiEval/runComplete` itself (`experimental.aiEval.runComplete`,
        as our VS Code and Neovim clients declare): then a run sends no message of its own, so
        the user gets one notification per run, not two."""
        experimental = self.client_capabilities.experimental
        declared = experimental.get("aiEval") if isinstance(experimental, dict) else None
        return isinstance(declared, dict) and declared.get("runComplete") is True

    def refresh_lenses(self) -> None:
        """Ask the client for code lenses again (a run changed what the last-run lens says)."""
        workspace = self.client_capabilities.workspace
        if workspace and workspace.code_lens and workspace.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    def clear(self, uri: str) -> None:
        """A document closed, or no longer a rubric or cases file: it has no diagnostics."""
        if not self.client_pulls_diagnostics():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    def start_stdio(self) -> None:
        """Serve over stdin and stdout (see `pygls_adapter.serve_stdio`)."""
        serve_stdio(self, self.report_server_error)
