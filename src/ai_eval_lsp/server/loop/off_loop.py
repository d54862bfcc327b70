"""Leaving the event loop, the one way the server does: work that would hold the loop (loading a
project, a walk, an analysis, a run, a read of the results store or of a site) is handed to
`off_loop`, which runs it on another thread and awaits its result on the loop.

On which threads is the caller's choice: the loop's own pool by default (the server's exit waits
for its threads, so a run that has begun storing its row finishes storing it), a pool of the
caller's (the scheduler's two analysis threads), or `DAEMON`, a daemon thread per call, for work
that may never end (a site's database that does not answer): it holds neither the loop nor the
interpreter's exit."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


async def off_loop(work: Callable[[], T], threads: Executor | None = None) -> T:
    """`work()` on a thread of `threads` (None: the loop's own pool), in the caller's context, as
    `asyncio.to_thread` runs it; its result or its exception, awaited on the loop."""
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(threads, context.run, work)


class DaemonThreads(Executor):
    """A daemon thread per piece of work: none is waited for at exit, and none waits for another
    (a read that never ends holds up no other)."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(result)

        threading.Thread(target=run, name="ai-eval daemon", daemon=True).start()
        return future


DAEMON = DaemonThreads()
"""Threads for work that may never end (`DaemonThreads`); it keeps nothing."""
