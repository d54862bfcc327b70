"""Analyses open documents off the event loop: after an edit, once the debounce has passed; at once
when a request needs the document as it is now. One analysis runs per opening of a document at a
time; each result is handed to the server on the loop, which commits it through the session and
publishes what changed. The scheduler decides; what is under way is the session's (`Analyses`)."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from ai_eval_lsp.core.analysis import Analysis, analyse, update
from ai_eval_lsp.core.yamltree import load_event_reader
from ai_eval_lsp.server.loop.off_loop import off_loop
from ai_eval_lsp.server.loop.session import AnalysisJob, OpenDocument, Session

log = logging.getLogger(__name__)

COLLECT_WHEN_IDLE = 2.0
"""How long after the last analysis landed the collector's full collection runs, and how often it
is asked for after (`serve` leaves it none of its own): one scans every analysis kept (~0.2 s with
a 10,000-check rubric open), which mid-typing was a keystroke's wait."""


def analysis_of(job: AnalysisJob) -> Analysis:
    """The worker threads' whole work: a pure function of the job. The last analysis is
    updated by the edits since (an edit inside one check or case costs that item alone)."""
    if job.previous is not None and job.previous.role == job.role:
        return update(job.previous, job.edits, job.rules, job.lines)
    return analyse(job.role, job.relative, job.text, job.rules)


class Scheduler:
    def __init__(
        self, session: Session, on_analysed: Callable[[OpenDocument, AnalysisJob, Analysis], None]
    ) -> None:
        """`on_analysed(document, job, analysis)` is called on the loop with each analysis done."""
        self.session = session
        self.analyses = session.analyses
        self.on_analysed = on_analysed
        # Two threads: a slow document (a 10 MB rubric) does not hold up the others.
        self.pool = ThreadPoolExecutor(2, thread_name_prefix="ai-eval analysis")

    def debounce(self, uri: str, delay: float) -> None:
        """Analyse a document `delay` seconds from now, unless it is edited again first."""
        self.analyses.later(uri, asyncio.get_running_loop().call_later(delay, self.start, uri))

    def start(self, uri: str) -> None:
        """Analyse the document's current version now, unless it is being analysed already (then
        the version after is started when that one is done)."""
        self.analyses.due(uri)
        document = self.session.documents.get(uri)
        if document is None or uri in self.analyses.running:
            return
        if document.current or document.role is None:
            self._wake(uri)
            return
        job = self.session.analysis_job(document)
        if job is None:
            return  # its folder's project is still loading: `restart` runs it once loaded
        self.analyses.began(document)
        future = asyncio.ensure_future(off_loop(partial(analysis_of, job), self.pool))
        future.add_done_callback(partial(self._done, document, job))

    def restart(self, uris: list[str]) -> None:
        """Analyse documents again (their project changed), now."""
        for uri in uris:
            self.start(uri)

    def _done(self, document: OpenDocument, job: AnalysisJob, future: asyncio.Future[Analysis]) -> None:
        uri = document.uri
        self.analyses.ended(document)
        if future.cancelled() or self.session.documents.get(uri) is not document:
            if uri in self.analyses.waiting:
                self.start(uri)  # a request waits on the document opened since
            return
        error = future.exception()
        if error is not None:
            log.error("analysing %s failed", uri, exc_info=error)
            self._wake(uri, error)
            return
        self.on_analysed(document, job, future.result())
        self._collect_when_idle()
        self.analyses.load_event_reader_once(
            lambda: asyncio.ensure_future(off_loop(load_event_reader, self.pool))
        )
        if document.current:
            self._wake(uri)
        elif uri not in self.analyses.timers:
            self.start(uri)  # its project changed meanwhile, or a request waits for a newer version

    def _collect_when_idle(self) -> None:
        """The collector's full collection, once no analysis has landed for a while and none runs
        (one would be scanned as it is built, and a request wait for both), when the young
        collections promoted objects since the last; asked again every while after, so that what
        runs and polls leave in cycles is freed while nothing is typed too."""

        def collect() -> None:
            if not self.analyses.running and gc.get_count()[2]:
                gc.collect()
            self._collect_when_idle()

        self.analyses.collect_later(asyncio.get_running_loop().call_later(COLLECT_WHEN_IDLE, collect))

    def _wake(self, uri: str, error: BaseException | None = None) -> None:
        for waiter in self.analyses.woken(uri):
            if not waiter.done():
                if error is None:
                    waiter.set_result(None)
                else:
                    waiter.set_exception(error)

    async def current(self, uri: str) -> OpenDocument | None:
        """The document with the analysis of its text as it is now, analysing it now if needed:
        what every request works on. None when it is not open."""
        document = self.session.documents.get(uri)
        while document is not None and document.role is not None and not document.current:
            await document.folder.ready.wait()
            waiter = self.analyses.wait(uri)
            self.start(uri)
            await waiter
            document = self.session.documents.get(uri)
        return document

    def forget(self, uri: str) -> None:
        """The document closed: nothing more is started for it (what runs is dropped when done)."""
        self.analyses.forget(uri)
        self._wake(uri)
