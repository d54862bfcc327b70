"""The one child-process host: every child the product starts (the Python plugin host, the PHP
worker, the case workers) is a `Host` over a `Process`, with one start, deadline, kill and close
rule, and one JSON-RPC-shaped dialect.

**The dialect.** One JSON object a line; the child writes each after a `MARK` byte on its stdout,
and whatever else it writes there or on stderr is logged and kept as the `cause()` of a failure.
A request is `{"id", "method", "params"}`, its answer `{"id", "result"}` or `{"id", "error":
{"message", ...}}`; the child may ask the parent in the middle of a call (a request of its own,
answered the same way, as the PHP worker asks for the bridged services), and may say something
unasked (`{"method", "params"}` without an id, as PHP's version greeting).

**The rules.** A host starts its child at the first call; calls take turns; each is bounded by its
own deadline, and one that outlives it, or a child that sends something else or ends, has the
child killed (its whole process group) and the next call starts a new child. `close()` asks the
child to stop (EOF on stdin), waits at most `STOP_GRACE_SECONDS`, then kills it; a call running on
another thread meanwhile fails at once, so closing never extends a call's own deadline.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import math
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, Self

_LOG = logging.getLogger(__name__)

MARK = b"\x02"
_READ_SIZE = 1 << 16
_CAUSE_LINES = 3
STOP_GRACE_SECONDS = 2.0
PARENT_POLL_SECONDS = 1.0


class Timeout(Exception):
    pass


class Exited(Exception):
    """The process closed its stdout: it ended, or is ending. From a host's call: with its exit
    status and the last lines it wrote (the cause)."""

    def __init__(self, status: int | None = None, cause: str = "") -> None:
        super().__init__(cause)
        self.status, self.cause = status, cause


class Garbled(Exception):
    """The process sent something that is not a protocol message; it cannot be trusted further."""


class Closed(Exception):
    """The host was closed: before the call, or while it ran on another thread."""


class Unsendable(Exception):
    """The request cannot be written as JSON."""


class CallError(Exception):
    """The child answered with an error: `message`, and whatever else it said (`data`)."""

    def __init__(self, error: Any) -> None:
        data = error if isinstance(error, dict) else {"message": str(error)}
        super().__init__(str(data.get("message", "")))
        self.data: dict[str, Any] = data


Serve = Callable[[str, Any], Any]
"""The parent's answer to a request of the child (`method`, `params`): a result, or it raises."""


class Closing:
    """Closed by `with`, as each owner of a child process is."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class Host(Closing):
    """One child process serving calls, by the rules of this module. `start` makes a started
    `Process` (its greeting and setup done); `serve` answers the child's own requests."""

    def __init__(
        self, start: Callable[[], Process], serve: Serve | None = None, allow_nan: bool = True
    ) -> None:
        self._start = start
        self._serve = serve
        self._allow_nan = allow_nan
        self._lock = threading.Lock()
        self._process: Process | None = None
        self._ids = itertools.count(1)
        self._closed = False

    @property
    def process(self) -> Process | None:
        return self._process

    @property
    def pid(self) -> int | None:
        """The id of the child started (a wrapper's, when it runs one), None when none runs."""
        process = self._process
        return process.popen.pid if process is not None else None

    def started(self) -> Process:
        """The child, started if need be (the caller takes turns through `call` otherwise)."""
        with self._lock:
            return self._started()

    def call(self, method: str, params: Any, seconds: float) -> Any:
        """The child's result. Raises `CallError` (its error answer), `Unsendable`, `Timeout`,
        `Garbled` and `Exited` (the child is gone; the next call starts a new one), `Closed`, and
        whatever `start` raises."""
        with self._lock:
            process = self._started()
            request_id = next(self._ids)
            payload = self._encode({"id": request_id, "method": method, "params": params})
            deadline = time.monotonic() + seconds
            try:
                process.send(payload, deadline)
                while True:
                    message = process.receive(deadline)
                    if "method" in message and "id" in message:
                        process.send(self._encode(self._answer(message)), deadline)
                    elif message.get("id") in (request_id, None) and (
                        "result" in message or "error" in message
                    ):
                        break
                    else:
                        raise Garbled(f"{str(message)[:200]}, not the answer to request {request_id}")
            except (Timeout, Garbled):
                self.discard()
                raise
            except Exited:
                status = self.discard()
                if self._closed:
                    raise Closed from None
                raise Exited(status, process.cause()) from None
            if "error" in message:
                raise CallError(message["error"])
            return message.get("result")

    def discard(self) -> int:
        """Kill the child (after a failed call, or when it said it is done); returns its exit
        status. The next call starts a new one."""
        process, self._process = self._process, None
        return process.kill() if process is not None else 0

    def close(self) -> None:
        """Stop the child: a call running on another thread fails at once (its child killed),
        then EOF, a short grace, and a kill. Later calls raise `Closed`."""
        self._closed = True
        if not self._lock.acquire(blocking=False):
            running = self._process
            if running is not None:
                kill_group(running.popen)  # a signal only: the calling thread owns the pipes
            self._lock.acquire()
        try:
            process, self._process = self._process, None
            if process is not None:
                process.stop()
        finally:
            self._lock.release()

    def _started(self) -> Process:
        if self._closed:
            raise Closed
        if self._process is None:
            self._process = self._start()
            if self._closed:  # closed from another thread while it started
                self.discard()
                raise Closed
        return self._process

    def _answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        try:
            if self._serve is None:
                raise ValueError(f"nothing here answers `{request['method']}`")
            return {"id": request["id"], "result": self._serve(str(request["method"]), request.get("params"))}
        except Exception as err:  # told to the child, whose call fails with it
            return {"id": request["id"], "error": {"message": f"{type(err).__name__}: {err}"}}

    def _encode(self, message: Mapping[str, Any]) -> bytes:
        try:
            line = json.dumps(message, allow_nan=self._allow_nan, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError) as err:
            raise Unsendable(str(err)) from None
        return line.encode("ascii") + b"\n"


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
        deadline = time.monotonic() + STOP_GRACE_SECONDS
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
        if math.isinf(deadline):
            return self._selector.select(None)
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


class Refused(Exception):
    """In a child: the request is answered with this error, and the child goes on."""


def serve_parent(handlers: Mapping[str, Callable[[Any], Any]]) -> None:
    """In a child `start_child` started: answer the parent's requests with `handlers` (by method),
    one line each, until stdin closes. A handler that raises `Refused` answers with an error."""
    protocol = child_protocol()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        try:
            answer = {"id": request["id"], "result": handlers[request["method"]](request.get("params"))}
        except Refused as refused:
            answer = {"id": request["id"], "error": {"message": str(refused)}}
        protocol.write(MARK + json.dumps(answer).encode("utf-8") + b"\n")


def _exit_with_parent(parent: int) -> None:
    # The child runs in its own session, so a parent killed outright sends it no signal, and a
    # check stuck in a loop never reads the closed stdin: the orphan would run on for ever. It
    # leads its process group, so what it started goes with it.
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os.killpg(0, signal.SIGKILL)
