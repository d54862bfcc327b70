"""Stopping a child process (`Process.stop`, hosts/process.py): EOF first and a grace period to
end by itself, then its whole group killed, for a caller that still holds the process (so no
weak-reference backstop kills it instead)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ai_eval_lsp.hosts import process as process_module
from ai_eval_lsp.hosts.process import MARK, Process, kill_group

GRACE = 1.0
"""The grace period in these tests (`STOP_GRACE_SECONDS` is longer: the same rule, slower)."""

AFTER_EOF = """
import sys, time
sys.stdout.buffer.write(MARK + b"{}\\n")
sys.stdout.flush()
sys.stdin.read()
"""
"""A child that says it is ready, then reads stdin to its EOF; what follows is what it does then."""


def started(after_eof: str) -> Process:
    script = f"MARK = {MARK!r}\n{AFTER_EOF}{after_eof}"
    popen = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    child = Process(popen)
    assert child.receive(time.monotonic() + 30) == {}
    return child


@pytest.fixture(autouse=True)
def grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_module, "STOP_GRACE_SECONDS", GRACE)


def test_a_child_that_ignores_eof_is_killed_once_the_grace_period_is_over() -> None:
    child = started("time.sleep(60)\n")
    try:
        began = time.monotonic()
        status = child.stop()
        took = time.monotonic() - began
        assert child.popen.poll() == status == -signal.SIGKILL
        assert GRACE <= took < GRACE + 10
    finally:
        kill_group(child.popen)


def test_a_child_that_ends_within_the_grace_period_ends_by_itself(tmp_path: Path) -> None:
    done = tmp_path / "done"
    child = started(f"time.sleep({GRACE / 5})\nopen({str(done)!r}, 'w').close()\nsys.exit(3)\n")
    try:
        assert child.stop() == 3
        assert done.exists()
    finally:
        kill_group(child.popen)
