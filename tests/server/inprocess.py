"""The language server in this process (`create_server`), spoken to in JSON-RPC messages as an
editor sends them, on the test's event loop; what it writes is read back. For tests that look at
the session after what a client does, or run handlers beside the loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ai_eval_lsp.server import create_server
from ai_eval_lsp.server.loop.server import AiEvalServer

WAIT = 30.0
"""How long a request or a wait may take before its test fails."""


class InProcess:
    """A client of a server in this process: messages go in by `handle_message`, as read from a
    stream; those the server writes are read back from its writer, which this is."""

    def __init__(self) -> None:
        self.server: AiEvalServer = create_server()
        self.protocol = self.server.protocol
        self.protocol.set_writer(self)
        self.buffer = b""
        self.answers: dict[int, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.asked = 0
        self.versions: dict[str, int] = {}

    # --- what the server writes ------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:
            header, rest = self.buffer.split(b"\r\n\r\n", 1)
            length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            if len(rest) < length:
                return
            self.buffer = rest[length:]
            self.arrived(json.loads(rest[:length]))

    def close(self) -> None:
        pass

    def arrived(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:  # the server asks: an editor with nothing to say
            reply = {"id": message["id"], "result": None}
            asyncio.get_running_loop().call_soon(self.send, reply)
        elif "id" in message:
            self.answers[message["id"]] = message
        else:
            self.notifications.append(message)

    # --- what the client sends -------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.protocol.handle_message(self.protocol.structure_message({"jsonrpc": "2.0", **message}))

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        """The server's answer: its `result`, or its `error`."""
        self.asked += 1
        number = self.asked
        self.send({"id": number, "method": method, "params": params})
        async with asyncio.timeout(WAIT):
            while number not in self.answers:
                await asyncio.sleep(0.005)
        return self.answers.pop(number)

    async def start(self, folder: Path) -> None:
        """Initialized with one workspace folder, once its projects are loaded and indexed."""
        await self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": {},
                "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name}],
            },
        )
        self.notify("initialized", {})
        await self.settled()

    async def settled(self) -> None:
        """Every project folder loaded and indexed, every open document analysed as it is now."""
        session, scheduler = self.server.session, self.server.scheduler
        async with asyncio.timeout(WAIT):
            while not all(f.ready.is_set() and f.indexed.is_set() for f in session.folders.values()):
                await asyncio.sleep(0.01)
            for uri in list(session.documents):
                await scheduler.current(uri)

    def open(self, path: Path) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        item = {"uri": uri, "languageId": "yaml", "version": 1, "text": path.read_text()}
        self.notify("textDocument/didOpen", {"textDocument": item})
        return uri

    def change(self, uri: str, line: int, character: int, text: str) -> None:
        """One keystroke (or paste) at a position, as editors send it."""
        self.versions[uri] += 1
        where = {"line": line, "character": character}
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": [{"range": {"start": where, "end": where}, "text": text}],
            },
        )
