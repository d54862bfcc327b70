"""A child process that answers JSON lines: read and written with deadlines, never blocking
forever, and killed as a whole process group. The PHP worker, the Python plugin host and the case
workers are three; the last two are Python children started by `start_child`, and each begins
with `child_protocol`.

The child writes each protocol message as one line after a `MARK` byte on its stdout; whatever
else it writes there or on stderr is logged and kept as the `cause()` of a failure.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from typing import Any, BinaryIO

_LOG = logging.getLogger(__name__)

MARK = b"\x02"
_READ_SIZE = 1 << 16
_CAUSE_LINES = 3
_STOP_GRACE_SECONDS = 2.0
PARENT_POLL_SECONDS = 1.0


class Timeout(Exception):
    pass


class Exited(Exception):
    """The process closed its stdout: it ended, or is ending."""


class Garbled(Exception):
    """The process sent something that is not a protocol message; it cannot be trusted further."""


class Process:
    """One child process and its pipes, read and written with deadlines, never blocking forever."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        assert popen.stdin and popen.stdout and popen.stderr
        self.popen = popen
        self.php_pid: int | None = None
        """The pid a PHP worker reports for itself (a wrapper's child, or a process in a container)."""
        self._stdin = popen.stdin.fileno()
        os.set_blocking(self._stdin, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(popen.stdout.fileno(), selectors.EVENT_READ, "stdout")
        self._selector.register(popen.stderr.fileno(), selectors.EVENT_READ, "stderr")
        self._stdout_open = True
        self._partial = {"stdout": bytearray(), "stderr": bytearray()}
        self._messages: deque[bytes] = deque()
        self._tail: deque[str] = deque(maxlen=_CAUSE_LINES)
        """The last lines written outside the protocol (stderr, stray stdout): a failure's cause."""
        # Kills the group if the worker is dropped without close(), and at interpreter exit.
        self._finalizer = weakref.finalize(self, kill_group, popen)

    def send(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        self._selector.register(self._stdin, selectors.EVENT_WRITE, "stdin")
        try:
            while view:
                for key, _ in self._wait(deadline):
                    if key.data != "stdin":
                        self._read(key)
                        continue
                    try:
                        written = os.write(self._stdin, view[:_READ_SIZE])
                    except BlockingIOError:
                        continue
                    except (BrokenPipeError, ConnectionResetError):
                        raise Exited from None
                    view = view[written:]
                if not self._stdout_open:
                    raise Exited
        finally:
            self._selector.unregister(self._stdin)

    def receive(self, deadline: float) -> dict[str, Any]:
        while not self._messages:
            if not self._stdout_open:
                raise Exited
            for key, _ in self._wait(deadline):
                self._read(key)
        line = self._messages.popleft()
        try:
            message = json.loads(line)
        except ValueError as err:
            raise Garbled(f"a line that is not JSON ({err}): {line[:200]!r}") from None
        if not isinstance(message, dict):
            raise Garbled(f"{line[:200]!r}, not a JSON object")
        return message

    def stop(self) -> int:
        """Ends the process: EOF on stdin first, so the child (even one in a container) can finish;
        then the whole group is killed, before the leader is reaped so its group id cannot
        have been reused. Returns the exit status."""
        assert self.popen.stdin is not None
        self.popen.stdin.close()
        deadline = time.monotonic() + _STOP_GRACE_SECONDS
        try:
            while self._stdout_open:
                for key, _ in self._wait(deadline):
                    self._read(key)
        except Timeout:
            pass
        return self.kill()

    def cause(self) -> str:
        """The last few lines the child wrote outside the protocol, on one line: why it failed."""
        return " / ".join(line.strip() for line in self._tail if line.strip())

    def kill(self) -> int:
        """Kills the whole process group at once and reaps the leader; returns its exit status."""
        self._finalizer.detach()
        kill_group(self.popen)
        self._selector.close()
        for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if pipe is not None:
                pipe.close()
        status = self.popen.returncode
        return -signal.SIGKILL if status is None else status

    def _wait(self, deadline: float) -> list[tuple[selectors.SelectorKey, int]]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Timeout
        return self._selector.select(remaining)

    def _read(self, key: selectors.SelectorKey) -> None:
        chunk = os.read(key.fd, _READ_SIZE)
        stream: str = key.data
        if not chunk:
            self._selector.unregister(key.fd)
            if stream == "stdout":
                self._stdout_open = False
            return
        partial = self._partial[stream]
        partial += chunk
        if b"\n" not in chunk:
            return
        *lines, rest = partial.split(b"\n")
        self._partial[stream] = bytearray(rest)
        for line in lines:
            stray, mark, message = line.rpartition(MARK) if stream == "stdout" else (line, b"", b"")
            if mark:
                self._messages.append(bytes(message))
            if stray:
                text = stray[:2000].decode("utf-8", "replace")
                self._tail.append(text)
                _LOG.info("child %s: %s", "stderr" if stream == "stderr" else "stdout (not protocol)", text)


def kill_group(popen: subprocess.Popen[bytes]) -> None:
    if popen.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(popen.pid, signal.SIGKILL)
        try:
            popen.wait(timeout=5)
        except subprocess.TimeoutExpired:  # uninterruptible sleep; the kernel reaps it later
            _LOG.warning("child process %d did not die within 5 s of SIGKILL", popen.pid)


def start_child(module: str) -> Process:
    """`python -P -m module <this pid>` in this environment (nothing of the current folder is
    imported), in a session of its own, so that its whole group can be killed."""
    popen = subprocess.Popen(
        [sys.executable, "-P", "-m", module, str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    return Process(popen)


def child_protocol() -> BinaryIO:
    """In a child `start_child` started: end with the parent, and take stdout for the protocol;
    whatever else the child prints (a plugin's `print`) goes to stderr, off the protocol."""
    parent = int(sys.argv[1]) if len(sys.argv) > 1 else os.getppid()
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return protocol


def _exit_with_parent(parent: int) -> None:
    # The child runs in its own session, so a parent killed outright sends it no signal, and a
    # check stuck in a loop never reads the closed stdin: the orphan would run on for ever. It
    # leads its process group, so what it started goes with it.
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os.killpg(0, signal.SIGKILL)
