"""`$/progress` for long work (a run, indexing a folder): created only where the client shows
progress, reported from any thread at most every `INTERVAL` seconds, and cancellable."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Protocol

from lsprotocol import types
from pygls.progress import Progress as ProgressSender

from ai_eval_lsp.server.loop.session import Session

INTERVAL = 0.2
"""Progress messages are throttled to this many seconds apart: a 2,000-case run sends ~10, not 2,000."""


class Reporting(Protocol):
    """What progress needs of the language server (`server.AiEvalServer`)."""

    @property
    def session(self) -> Session: ...
    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...
    @property
    def work_done_progress(self) -> ProgressSender: ...


class Progress:
    def __init__(
        self,
        server: Reporting,
        title: str,
        token: types.ProgressToken | None = None,
        on_cancel: Callable[[], object] | None = None,
    ) -> None:
        """`token`: the client's own work-done token, when its request carried one; `on_cancel`:
        called when the client cancels the progress."""
        self.server, self.title = server, title
        self.token: types.ProgressToken | None = token if token is not None else str(uuid.uuid4())
        self.own_token = token is None
        self.loop = asyncio.get_running_loop()
        self.on_cancel = on_cancel
        self._last = 0.0

    async def begin(self, cancellable: bool = True) -> None:
        token, window = self.token, self.server.client_capabilities.window
        if token is None:
            return
        if self.own_token:
            if not (window and window.work_done_progress):
                self.token = None  # the client shows no progress: report none
                return
            try:
                await self.server.work_done_progress.create_async(token)
            except Exception:
                self.token = None
                return
        self.server.session.progress_began(token, self)
        self.server.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(self.title, cancellable=cancellable, percentage=0)
        )

    def report(self, done: int, total: int, unit: str) -> None:
        """From any thread; sent at most every `INTERVAL` seconds, and always for the last item."""
        now = time.monotonic()
        if self.token is None or (now - self._last < INTERVAL and done < total):
            return
        self._last = now
        message = types.WorkDoneProgressReport(
            message=f"{done}/{total} {unit}", percentage=int(100 * done / max(total, 1))
        )
        self.loop.call_soon_threadsafe(self._send, message)

    def _send(self, message: types.WorkDoneProgressReport) -> None:
        if self.token is not None:
            self.server.work_done_progress.report(self.token, message)

    def cancel(self) -> None:
        """The client cancelled the progress (`window/workDoneProgress/cancel`)."""
        if self.on_cancel is not None:
            self.on_cancel()

    def end(self, message: str) -> None:
        if self.token is not None:
            self.server.session.progress_ended(self.token)
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.token = None
