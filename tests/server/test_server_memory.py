"""The server keeps nothing per message it has handled: pygls files a future under a fresh id for
every notification and never lets it go (about 2 MB per 1,000 edits); ours lets go of it.
The long measurement (RSS over 20,000 edits) is in bench/bench_lsp.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

from server.inprocess import InProcess


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
