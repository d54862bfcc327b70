"""Watching processes from outside: whether they run, and what happens to a child whose parent is
killed outright (SIGKILL: no cleanup, no signal to a child in its own session)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def alive(pid: int | None) -> bool:
    """Whether a process runs (a zombie has finished running: it counts as gone)."""
    if pid is None:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_within(pids: tuple[int | None, ...], seconds: float) -> bool:
    """Whether every one of the processes has ended within `seconds`.

    A wrapper's child dies a few milliseconds after its group's SIGKILL, not at once.
    """
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def orphan(script: str, pid_file: Path) -> int:
    """Runs `script` in a Python process until a child it starts writes its pid to `pid_file`
    (AI_EVAL_TEST_PID_FILE), kills that process outright, and returns the orphaned child's pid."""
    parent = subprocess.Popen(
        [sys.executable, "-c", script], env={**os.environ, "AI_EVAL_TEST_PID_FILE": str(pid_file)}
    )
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert parent.poll() is None, "the parent ended before its child started"
            assert time.monotonic() < deadline, "the child did not start within 60 s"
            time.sleep(0.01)
        return int(pid_file.read_text())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()


def ends_alone(pid: int, seconds: float) -> bool:
    """Whether an orphan ends by itself within `seconds`; one that does not is killed, so a failing
    test leaves nothing running."""
    if gone_within((pid,), seconds):
        return True
    os.kill(pid, signal.SIGKILL)
    return False


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used so far (user and system). The `regex` module's time limit
    counts CPU time, which a busy machine stretches in the wall clock's time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def recording_php(folder: Path) -> tuple[Path, Path]:
    """A `php.command` that writes a line to a file each time it is started, then runs Debian's
    PHP: the file stays empty exactly when no PHP process was started through it."""
    calls = folder / "php-starts.log"
    calls.write_text("")
    command = folder / "recording-php"
    command.write_text(f'#!/bin/sh\necho started >> "{calls}"\nexec /usr/bin/php "$@"\n')
    command.chmod(0o755)
    return command, calls
