"""The language server: a pygls server holding the session; features live one per module."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
import traceback
from collections.abc import Generator, Iterable
from concurrent.futures import Future
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from ai_eval_lsp import __version__
from ai_eval_lsp.core.text import Encoding
from ai_eval_lsp.disk.settings import Settings
from ai_eval_lsp.runs.run import Cancellation
from ai_eval_lsp.server import query
from ai_eval_lsp.server.folders import Folders
from ai_eval_lsp.server.progress import Progress
from ai_eval_lsp.server.query import NotApplicable
from ai_eval_lsp.server.scheduler import Scheduler
from ai_eval_lsp.server.session import OpenDocument, Session

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = float(os.environ.get("AI_EVAL_LSP_DEBOUNCE_MS", "150")) / 1000
"""How long an edit waits for the next before it is checked (AI_EVAL_LSP_DEBOUNCE_MS)."""

REFRESH_DELAY = 0.1
"""How long a pulling client has to pull what it edited before it is asked to pull everything."""


class AiEvalProtocol(LanguageServerProtocol):
    """pygls's protocol with four corrections.

    - The session keeps the open documents, with lines as editors count them (`\\n`, `\\r\\n`,
      `\\r`); pygls's own copy splits lines with `str.splitlines()`, which also breaks at U+2028
      and friends, so incremental edits would drift. Text sync goes straight to the handlers.
    - pygls files the future of every notification under a fresh id and never lets it go (about
      2 MB per 1,000 edits); a finished handler's future is let go here.
    - `shutdown` cancels the pending futures while iterating over the table their callbacks
      shrink; here it iterates over a copy.
    - `$/cancelRequest` cancels a request's future, but for requests pygls answers through a
      builtin step (`workspace/executeCommand`) that is not the handler's task, which ran on; the
      handler's task is cancelled with it here.
    """

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._forward(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._forward(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._forward(types.TEXT_DOCUMENT_DID_CLOSE, params)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls's own, cancelling a copy of the pending futures (a cancelled future's callbacks,
        ours and pygls's, take it out of the table pygls would be iterating over), and as
        `$/cancelRequest` does: a run whose row is being stored finishes."""
        if (handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield handler, args, None
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                self._cancel(msg_id, future)
        self._shutdown = True

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        future = self._request_futures.get(msg_id)
        if future is not None:
            self._cancel(msg_id, future)
        else:
            super()._handle_cancel_notification(msg_id)

    def _cancel(self, msg_id: Any, future: Future[Any] | asyncio.Future[Any]) -> None:
        """A run asked to stop once its row is stored is complete: it refuses the cancel and is
        answered with its result (and announced), never -32800 after the fact."""
        cancellation = self._server.cancellations.get(msg_id)  # type: ignore[attr-defined]
        if cancellation is None or cancellation.cancel():
            future.cancel()

    def _forward(self, method: str, params: Any) -> None:
        handler = self.fm.features.get(method)
        if handler is not None:
            handler(params)

    def _execute_handler(
        self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(lambda done: self._let_go(msg_id, done))
            request = getattr(callback, "keywords", {}).get("result_future")
            if request is not None:
                request.add_done_callback(lambda answered: future.cancel() if answered.cancelled() else None)

    def _let_go(self, msg_id: Any, future: Future[Any] | asyncio.Future[Any]) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]


class AiEvalServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ai-eval-lsp", __version__, protocol_cls=AiEvalProtocol)
        self.session = Session()
        self.scheduler = Scheduler(self.session, self.committed)
        self.background: set[asyncio.Task[Any]] = set()
        self.progress_of: dict[types.ProgressToken, Progress] = {}
        """The progress under way, by token, so the client can cancel it."""
        self.folders = Folders(self)
        self.settings = Settings()
        """The client's settings outside any folder (and until a folder has its own)."""
        self.initial_problems: list[str] = []
        self.settings_problems_shown: set[str] = set()
        self._refresh: asyncio.TimerHandle | None = None
        self.cancellations: dict[Any, Cancellation] = {}
        """The cancellable work under way, by the id of the request that started it."""

    @property
    def encoding(self) -> Encoding:
        """The position encoding agreed with the client."""
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return {"utf-8": "utf-8", "utf-32": "utf-32"}.get(str(encoding), "utf-16")  # type: ignore[return-value]

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A failing handler is logged and, for requests, answered as an error; the server goes on.
        A cancelled request, or one naming nothing to act on, is answered but is no failure."""
        if isinstance(error, JsonRpcRequestCancelled | NotApplicable):
            return
        log.error("handler failed: %s", "".join(traceback.format_exception(error)))
        self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"ai-eval-lsp: {error}"))

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_log_message(types.LogMessageParams(kind, message))

    def spawn(self, work: Any) -> asyncio.Task[Any]:
        """Run a coroutine in the background, keeping it alive and its failure logged."""
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self.background.add(task)

        def finished(done: asyncio.Task[Any]) -> None:
            self.background.discard(done)
            if not done.cancelled() and done.exception() is not None:
                self.report_server_error(done.exception(), None)  # type: ignore[arg-type]

        task.add_done_callback(finished)
        return task

    def client_pulls_diagnostics(self) -> bool:
        text_document = self.client_capabilities.text_document
        return bool(text_document and text_document.diagnostic)

    def committed(self, document: OpenDocument, others_changed: bool) -> None:
        """After a commit: the document's diagnostics for its new version, and those of the other
        documents of its folder that the change altered."""
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
            items = query.diagnostics(self, document)
            if items != document.published or always:
                document.published = items
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(document.uri, items, document.version)
                )

    def _refresh_soon(self) -> None:
        """A moment from now (a client pulls a document it edits by itself, and the pull in flight
        then answers), ask the client to pull again if any document's diagnostics differ from what
        it last pulled."""
        if self._refresh is not None:
            return

        def refresh() -> None:
            self._refresh = None
            stale = any(
                doc.current and query.diagnostics(self, doc) != doc.published
                for doc in self.session.documents.values()
            )
            workspace = self.client_capabilities.workspace
            if stale and workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
                self.workspace_diagnostic_refresh(None)

        self._refresh = asyncio.get_running_loop().call_later(REFRESH_DELAY, refresh)

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
        """Serve over stdin and stdout, reading stdin on the event loop.

        pygls's own `start_io` reads each line through a thread pool; on a pipe (as every editor
        starts a server) asyncio reads it directly, which measured ~0.3 ms less per request.
        """
        if not stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode):
            self.start_io()
            return

        async def serve() -> None:
            reader = asyncio.StreamReader(limit=2**26)
            await asyncio.get_running_loop().connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer
            )
            self.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
            await run_async(stop, reader, self.protocol, log, self.report_server_error)

        self._stop_event = stop = threading.Event()
        try:
            asyncio.run(serve())
        except BrokenPipeError:
            log.error("the client closed the connection; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]
