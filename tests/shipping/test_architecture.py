"""The layers ARCHITECTURE.md draws, kept by import-linter's contracts in `pyproject.toml`: a
folder is a layer, imports point down only, no cycles, server features never import each other
(function-level and type-checking imports count); the server leaves its event loop one way; and
the editors show runs as the server renders them. The server's state rule is `test_routing.py`'s."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_the_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_pyglss_private_names_appear_in_its_adapter_only() -> None:
    """pygls's private attributes change without notice: only `server/lsp/pygls_adapter.py` may use
    them, each use guarded by a test named there."""
    from pygls.lsp.server import LanguageServer
    from pygls.protocol import LanguageServerProtocol

    private = {
        name
        for cls in (LanguageServer, LanguageServerProtocol)
        for name in dir(cls)
        if name.startswith("_") and not name.startswith("__")
    }
    private |= {"_request_futures", "_server", "_shutdown", "_stop_event", "_send_only_body"}
    source = ROOT / "src" / "ai_eval_lsp"
    found = {
        (path.relative_to(source).as_posix(), name)
        for path in source.rglob("*.py")
        if path.name != "pygls_adapter.py"
        for name in private
        if f".{name}" in (text := path.read_text()) or f"def {name}(" in text
    }
    assert found == set()
    adapter = (source / "server" / "lsp" / "pygls_adapter.py").read_text()
    assert "_request_futures" in adapter and "_execute_handler" in adapter


LEAVING_THE_LOOP = re.compile(r"\b(?:to_thread|run_in_executor|submit)\(|\bThread\(")


def test_the_server_leaves_the_event_loop_one_way() -> None:
    """Work that would hold the event loop is handed to `loop/off_loop.py`'s `off_loop`: no other
    module of the server starts a thread or gives an executor work itself (it may make a pool
    for `off_loop` to use, as the scheduler does)."""
    server = ROOT / "src" / "ai_eval_lsp" / "server"
    found = {
        (path.relative_to(server).as_posix(), match.group())
        for path in server.rglob("*.py")
        if path.name != "off_loop.py"
        for match in LEAVING_THE_LOOP.finditer(path.read_text(encoding="utf-8"))
    }
    assert found == set()
    assert "run_in_executor(" in (server / "loop" / "off_loop.py").read_text(encoding="utf-8")


CLIENT_SOURCES = ("vscode-extension/src/*.ts", "neovim/lua/ai_eval/*.lua")


def test_the_clients_show_runs_and_checks_in_the_servers_words() -> None:
    """The server renders what a run's cases got (`cases`: each one's state and lines) and what a
    check gave (`runCheck`'s `text`): the editors' code formats no score and reads no verdict."""
    computing = re.compile(r"toFixed|%[-\d.]*f|/5\b|verdicts|\.score\b|\.outcomes\b")
    sources = [path for pattern in CLIENT_SOURCES for path in sorted(ROOT.glob(pattern))]
    assert len(sources) > 10
    found = {
        (path.name, match.group())
        for path in sources
        for match in computing.finditer(path.read_text(encoding="utf-8"))
    }
    assert found == set()
