"""`ai-eval-lsp serve` answers over TCP too, and `python -m ai_eval_lsp serve` over stdio, with pipes
wide enough for big documents; its first diagnostics wait for no module only runs need, and the
code generated at its start is kept for the next."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lsp_stdio import StdioClient
from rubrics import TONE


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


RUNS_ONLY = {
    "pymysql",
    "pg8000",
    "sacrebleu",
    "numpy",
    "tree_sitter",
    "tree_sitter_php",
    "jsonschema",
    "ruamel",
}
"""What only runs, a site's database, a Drupal codebase's PHP or a document libyaml rejects need:
the database drivers, chrF, tree-sitter's PHP grammar, the reference validator and parser."""


def _answer(method: str, params: Any) -> Any:
    return [{}] * len(params["items"]) if method == "workspace/configuration" else None


def _small_project(folder: Path) -> Path:
    (folder / ".git").mkdir()
    (folder / "tone.rubric.yaml").write_text(TONE)
    rubric = folder / "small.rubric.yaml"
    rubric.write_text(
        'id: small\nversion: "1.0"\nchecks:\n  - {id: polite, kind: must_contain_any, values: [please]}\n'
        "  - {id: tone, kind: composite, rubric: tone}\n  - {id: chrf, kind: target_match, source: "
        "expected.reference, mode: chrf, threshold: 0.5}\nscoring: {combine: all_pass}\n"
    )
    return rubric


def test_the_first_diagnostics_wait_for_no_module_only_runs_need(tmp_path: Path) -> None:
    """Every module the server has imported when it publishes its first diagnostics (`-X
    importtime` names each as it is imported) is one they need: none that only runs need."""
    rubric = _small_project(tmp_path)
    log = tmp_path / "imports.log"
    with log.open("wb") as stderr:
        client = StdioClient(
            [sys.executable, "-X", "importtime", "-m", "ai_eval_lsp", "serve"], _answer, stderr=stderr
        )
        try:
            client.initialize(tmp_path, {"workspace": {"configuration": True}})
            published = client.open(rubric, rubric.read_text())(60)
            imported = {
                line.rsplit("|", 1)[-1].strip()
                for line in log.read_text().splitlines()
                if line.startswith("import time:")
            }
        finally:
            client.close()
    assert published["params"]["diagnostics"] == []
    assert "ai_eval_lsp.core.analysis.document" in imported  # what the diagnostics are made by
    assert {name for name in imported if name.split(".")[0] in RUNS_ONLY} == set()


def _capabilities(folder: Path, cache: Path) -> dict[str, Any]:
    """The server's answer to `initialize`, the server started with its caches in `cache` and its
    bytecode written."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    client = StdioClient(
        [sys.executable, "-m", "ai_eval_lsp", "serve"], _answer, env={**env, "XDG_CACHE_HOME": str(cache)}
    )
    try:
        answer = client.request(
            "initialize", {"processId": None, "rootUri": folder.as_uri(), "capabilities": {}}
        )
        client.notify("initialized", {})
    finally:
        client.close()
    return answer  # type: ignore[no-any-return]


def test_the_code_generated_at_start_is_kept_for_the_next_and_a_broken_cache_is_ignored(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    first = _capabilities(tmp_path, cache)
    (kept,) = (cache / "ai-eval-lsp" / "code").glob("*.marshal")
    written, size = kept.stat().st_mtime_ns, kept.stat().st_size
    assert _capabilities(tmp_path, cache) == first
    assert kept.stat().st_mtime_ns == written  # nothing compiled again: nothing to add
    kept.write_bytes(kept.read_bytes()[: kept.stat().st_size // 2])  # cut short
    assert _capabilities(tmp_path, cache) == first
    assert kept.stat().st_mtime_ns != written and kept.stat().st_size > size // 2  # written whole again
