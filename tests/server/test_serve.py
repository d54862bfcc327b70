"""`ai-eval-lsp serve` answers over TCP too, and `python -m ai_eval_lsp serve` over stdio."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time


def _message(payload: dict[str, object]) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _read(stream: socket.socket) -> dict[str, object]:
    data = b""
    while b"\r\n\r\n" not in data:
        data += stream.recv(1)
    length = int(data.split(b"Content-Length:")[1].split(b"\r\n")[0])
    body = b""
    while len(body) < length:
        body += stream.recv(length - len(body))
    return json.loads(body)  # type: ignore[no-any-return]


def test_serve_over_tcp() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "ai_eval_lsp", "serve", "--tcp", "--port", str(port)],
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                assert time.monotonic() < deadline, "the server never listened"
                time.sleep(0.2)
        with connection:
            connection.sendall(
                _message(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {"processId": None, "rootUri": None, "capabilities": {}},
                    }
                )
            )
            reply = _read(connection)
            assert reply["id"] == 1
            assert reply["result"]["serverInfo"]["name"] == "ai-eval-lsp"  # type: ignore[index]
            assert reply["result"]["capabilities"]["executeCommandProvider"]["commands"]  # type: ignore[index]
    finally:
        server.kill()
        server.wait()
