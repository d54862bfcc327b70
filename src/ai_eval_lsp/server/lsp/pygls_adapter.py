"""The one place that reaches into pygls's private internals: where pygls 2 offers no public hook
for what the server needs. Each use is guarded by a test that fails if pygls's behaviour changes,
named beside it; nothing else in the server touches a private pygls name (a test greps for them).

- Text sync goes straight to the handlers: the session keeps the documents, with lines as editors
  count them (`\\n`, `\\r\\n`, `\\r`); pygls's own copy splits lines with `str.splitlines()`,
  which also breaks at U+2028 and friends, so incremental edits would drift
  (guard: `tests/e2e/test_editing.py`, the U+2028 edits).
- pygls files the future of every notification under a fresh id and never lets it go (about
  2 MB per 1,000 edits); a finished handler's future is let go here (`_request_futures`,
  `_execute_handler`; guard: `tests/server/test_server_memory.py`).
- `shutdown` cancels the pending futures while iterating over the table their callbacks shrink;
  here it iterates over a copy (guard: every e2e test's shutdown with a run under way,
  `tests/e2e/test_editing.py::test_cancelling_a_run_request_stores_and_sends_nothing`).
- `$/cancelRequest` cancels a request's future, but for requests pygls answers through a builtin
  step (`workspace/executeCommand`) that is not the handler's task, which ran on; the handler's task
  is cancelled with it here, and a run whose row is being stored refuses the cancel
  (`_handle_cancel_notification`; guard: the same test, and
  `tests/e2e/test_editing.py::test_cancelling_a_runs_progress_stores_and_sends_nothing`).
- Messages whose JSON is written already (`Written`: diagnostics, each converted and written once
  while it does not change) are framed and written as pygls frames its own (`_send_data`), with
  no conversion of the whole message (guard: every e2e test reads diagnostics); every other
  message is serialized as pygls does, then redacted (`_send_data`; guard:
  `tests/e2e/test_site_databases.py`, the password in no channel).
- Serving stdio on the event loop (`pygls.io_.run_async`, `StdoutWriter`): pygls's own `start_io`
  reads each line through a thread pool; on a pipe asyncio reads it directly, ~0.3 ms less per
  request (guard: every e2e test runs over a pipe).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import sys
import threading
from collections.abc import Callable, Generator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from ai_eval_lsp.drupal.secrets import redact_json

log = logging.getLogger(__name__)

PIPE_BYTES = 1 << 20
"""What the stdio pipes are widened to: Linux's default limit for a process (64 KB otherwise)."""


@dataclass(frozen=True, slots=True)
class Written:
    """A value as JSON text already (ASCII: `json.dumps`'s default), in parts sent one after the
    other as they are: a 10 MB rubric's diagnostics are one part of ~13 MB, never copied into a
    message."""

    parts: tuple[str, ...]

    def within(self, before: str, after: str) -> Written:
        """This value between two more parts (a message around it)."""
        return Written((before, *self.parts, after))


class AiEvalProtocol(LanguageServerProtocol):
    """pygls's protocol with four corrections, and messages whose JSON is written already.

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
        cancellation = self._server.session.requests.get(msg_id)  # type: ignore[attr-defined]
        if cancellation is None or cancellation.cancel():
            future.cancel()

    def notify_written(self, method: str, params: Written) -> None:
        """A notification whose params' JSON is written already."""
        self._write(params.within(f'{{"method": {json.dumps(method)}, "params": ', ', "jsonrpc": "2.0"}'))

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is None and isinstance(result, Written):
            self._result_types.pop(msg_id, None)
            self._write(result.within(f'{{"id": {json.dumps(msg_id)}, "result": ', ', "jsonrpc": "2.0"}'))
            return
        super()._send_response(msg_id, result, error)

    def _send_data(self, data: Any) -> None:
        """Every other message, serialized as pygls does, with the secrets the process holds
        taken out of its string values (SPEC 6, "Secrets never leave")."""
        if not data:
            return
        try:
            self._write(Written((redact_json(json.dumps(data, default=self._serialize_message)),)))
        except BrokenPipeError:
            log.exception("the client's end of the connection is closed")
            raise
        except Exception:
            log.exception("a message could not be sent")

    def _write(self, message: Written) -> None:
        """Send one message, framed as pygls frames its own. A `Written`'s parts hold no secret:
        each diagnostic is redacted as it is written (`query/diagnostics.py`), once."""
        if self.writer is None:
            log.error("no transport to send a message on")
            return
        if self._include_headers:
            length = sum(map(len, message.parts))  # ASCII: as many bytes as characters
            header = f"Content-Length: {length}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            self.writer.write(header.encode(self.CHARSET))
        for part in message.parts:  # stdio's and TCP's writers: synchronous
            self.writer.write(part.encode(self.CHARSET))

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


def serve_stdio(server: LanguageServer, report_error: Callable[[Exception, Any], None]) -> None:
    """Serve over stdin and stdout, reading stdin on the event loop (on a pipe; pygls's own loop
    otherwise)."""
    if not stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode):
        server.start_io()
        return
    if sys.platform == "linux":  # a 10 MB message crosses a pipe in ~11 reads, not ~170
        import fcntl

        for stream in (sys.stdin, sys.stdout):
            with contextlib.suppress(OSError):  # not a pipe, or a system limit below PIPE_BYTES
                fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)

    async def serve() -> None:
        reader = asyncio.StreamReader(limit=2**26)
        await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer
        )
        server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
        await run_async(stop, reader, server.protocol, log, report_error)

    server._stop_event = stop = threading.Event()
    try:
        asyncio.run(serve())
    except BrokenPipeError:
        log.error("the client closed the connection; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
