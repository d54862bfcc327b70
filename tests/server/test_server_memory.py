"""The server keeps nothing per message it has handled: pygls files a future under a fresh id for
every notification and never lets it go (about 2 MB per 1,000 edits); ours lets go of it.
The long measurement (RSS over 20,000 edits) is in bench/bench_lsp.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ai_eval_lsp.server import create_server


class Discard:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


async def test_a_thousand_edits_leave_no_bookkeeping_behind(tmp_path: Path) -> None:
    server = create_server()
    protocol = server.protocol
    protocol.set_writer(Discard())

    def receive(message: dict[str, Any]) -> None:
        protocol.handle_message(
            protocol.structure_message(json.loads(json.dumps({"jsonrpc": "2.0", **message})))
        )

    receive(
        {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}}
    )
    receive({"method": "initialized", "params": {}})
    uri = (tmp_path / "edited.rubric.yaml").as_uri()
    text = (
        'id: edited\nversion: "1.0"\nchecks:\n  - {kind: regex, pattern: x}\nscoring: {combine: all_pass}\n'
    )
    receive(
        {
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
        }
    )
    for version in range(2, 1002):
        change = {
            "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 4}},
            "text": "x",
        }
        receive(
            {
                "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
            }
        )
        await asyncio.sleep(0)
    for _ in range(200):  # the last check lands
        if server.session.documents[uri].current:
            break
        await asyncio.sleep(0.05)
    assert server.session.documents[uri].current
    assert server.session.documents[uri].text.startswith("id: " + "x" * 1000 + "edited")
    assert protocol._request_futures == {}
