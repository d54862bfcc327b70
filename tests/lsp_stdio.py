"""A minimal synchronous LSP client over stdio, for driving servers we do not write (yaml-language-server)
and for the benchmarks."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any


class StdioClient:
    def __init__(
        self,
        command: Sequence[str],
        on_request: Callable[[str, Any], Any],
        env: dict[str, str] | None = None,
        timing: bool = False,
        stderr: IO[bytes] | int = subprocess.DEVNULL,
    ) -> None:
        """`timing`: a benchmark's client, whose own collector must not pause a timed exchange
        (its full collections over the documents and every message received took up to 100 ms):
        what it holds is set aside (`gc.freeze`, which costs nothing) before each message goes
        out. `stderr`: where the server's log goes."""
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env
        )
        self.received: list[bytes] = []
        """Every message's body as it came, byte for byte."""
        self.on_request = on_request
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        """Every notification received, kept (waiting for a reply drops what it passes over)."""
        self.next_id = 0
        self.timing = timing
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        while True:
            length = 0
            while True:
                line = self.process.stdout.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            body = self.process.stdout.read(length)
            self.received.append(body)
            message = json.loads(body)
            if "method" in message and "id" in message:  # a request from the server: answer it here
                self._send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": self.on_request(message["method"], message.get("params")),
                    }
                )
            else:
                if "method" in message:
                    self.notifications.append(message)
                self.messages.put(message)

    def _send(self, message: dict[str, Any]) -> None:
        if self.timing:
            gc.freeze()
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, folder: Path, capabilities: dict[str, Any], more: Sequence[Path] = ()) -> None:
        """The handshake, for a workspace of `folder` (and `more` folders)."""
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folder.as_uri(),
                "workspaceFolders": [{"uri": each.as_uri(), "name": each.name} for each in [folder, *more]],
                "capabilities": capabilities,
            },
        )
        self.notify("initialized", {})

    def open(self, path: Path, text: str) -> Callable[[float], dict[str, Any]]:
        """Open a document (version 1); a waiter for its diagnostics."""
        uri = path.as_uri()
        waiter = self.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
        )
        return waiter

    def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        reply = self.wait(lambda m: m.get("id") == self.next_id, timeout)
        return reply.get("result")

    def expect(self, matches: Callable[[dict[str, Any]], bool]) -> Callable[[float], dict[str, Any]]:
        """A waiter for the next matching notification from now on: one that arrives while a
        request waits for its reply (which drops what it passes over) is still found."""
        start = len(self.notifications)

        def waiter(timeout: float) -> dict[str, Any]:
            deadline = time.monotonic() + timeout
            while True:
                found = next((m for m in self.notifications[start:] if matches(m)), None)
                if found is not None:
                    return found
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise queue.Empty
                with contextlib.suppress(queue.Empty):
                    self.messages.get(timeout=min(remaining, 0.05))

        return waiter

    def wait(self, matches: Callable[[dict[str, Any]], bool], timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            if matches(message):
                return message

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()
