"""`ai-eval-lsp serve` answers over TCP too, and `python -m ai_eval_lsp serve` over stdio, with pipes
wide enough for big documents."""

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


def test_serve_over_stdio_widens_its_pipes_for_big_documents() -> None:
    """A 10 MB didOpen then crosses in ~11 reads of the event loop instead of ~170."""
    import fcntl

    server = subprocess.Popen(
        [sys.executable, "-m", "ai_eval_lsp", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        initialize = {"processId": None, "rootUri": None, "capabilities": {}}
        server.stdin.write(
            _message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
        )
        server.stdin.flush()
        header = server.stdout.readline()  # the reply: the server serves its pipes by now
        assert header.startswith(b"Content-Length:")
        for pipe in (server.stdin, server.stdout):
            assert fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ) == 1 << 20
    finally:
        server.kill()
        server.wait()
