"""The server keeps nothing per message it has handled: pygls files a future under a fresh id for
every notification and never lets it go (about 2 MB per 1,000 edits); ours lets go of it. What
editing leaves in cycles is freed once the server is idle.
The long measurement (RSS over 20,000 edits) is in bench/bench_lsp.py."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

import pytest
from server.inprocess import InProcess

from ai_eval_lsp.cli.serve import FULL_COLLECTIONS_NEVER
from ai_eval_lsp.server.loop import scheduler


async def test_a_thousand_edits_leave_no_bookkeeping_behind(tmp_path: Path) -> None:
    client = InProcess()
    await client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    client.notify("initialized", {})
    path = tmp_path / "edited.rubric.yaml"
    path.write_text(
        'id: edited\nversion: "1.0"\nchecks:\n  - {kind: regex, pattern: x}\nscoring: {combine: all_pass}\n'
    )
    uri = client.open(path)
    for _ in range(1000):
        client.change(uri, 0, 4, "x")
        await asyncio.sleep(0)
    documents = client.server.session.documents
    for _ in range(200):  # the last check lands
        if documents[uri].current:
            break
        await asyncio.sleep(0.05)
    assert documents[uri].current
    assert documents[uri].text.startswith("id: " + "x" * 1000 + "edited")
    assert client.protocol._request_futures == {}


class _Cycle:
    """An object that refers to itself: only the collector frees it."""

    def __init__(self) -> None:
        self.itself = self


async def _freed(freed: weakref.ref[_Cycle]) -> None:
    for _ in range(200):
        if freed() is None:
            break
        await asyncio.sleep(0.05)
    assert freed() is None


async def test_what_was_left_in_cycles_is_freed_once_the_server_is_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serve` leaves the collector no full collection of its own (one scanned every analysis kept
    and came mid-typing): the server runs one once no analysis has landed for a while, and again
    whenever it is due while nothing is typed."""
    armed_before = scheduler.COLLECT_WHEN_IDLE  # by another test's server, in this process
    monkeypatch.setattr(scheduler, "COLLECT_WHEN_IDLE", 0.3)
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, 50, FULL_COLLECTIONS_NEVER)
    try:
        client = InProcess()
        await client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        client.notify("initialized", {})
        path = tmp_path / "edited.rubric.yaml"
        path.write_text('id: edited\nversion: "1.0"\nchecks:\n  - {kind: regex, pattern: x}\n')
        uri = client.open(path)
        await client.settled()  # nothing lands after but what the edit below makes
        left = _Cycle()
        gc.collect(1)  # it lives on: into the oldest generation, which only a full collection scans
        freed = weakref.ref(left)
        del left
        client.change(uri, 0, 4, "x")
        document = client.server.session.documents[uri]
        for _ in range(200):
            if document.current:
                break
            await asyncio.sleep(0.01)
        assert document.current and freed() is not None  # typing: no full collection
        await _freed(freed)

        await asyncio.sleep(armed_before + 0.5)  # every collection an analysis asked for is done
        left = _Cycle()  # what a run or a poll leaves, with no analysis landing after it
        gc.collect(1)
        freed = weakref.ref(left)
        del left
        await _freed(freed)
    finally:
        gc.set_threshold(*thresholds)
