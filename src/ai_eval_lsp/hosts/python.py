"""Python plugin executors, run in a child process so that `runTimeoutSeconds` really stops them:
Python cannot stop a thread, so an executor that never returns would run on for ever beside the
server. One host serves a run; it starts a child (`python -P -m ai_eval_lsp.hosts.python`, the same
environment) at the first plugin check, and a check that outlives the limit has the child killed
and fails with a timeout reason; the next check starts a new child.

The plugin's `applies()` still runs in the server's own process (dispatch decides there, and
diagnostics never run a check); only `execute()` goes to the child.
"""

from __future__ import annotations

import inspect
import json
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from ai_eval_lsp.core.api import CheckOutcome, Services
from ai_eval_lsp.core.schema import Origin
from ai_eval_lsp.hosts.process import MARK, Exited, Garbled, Process, Timeout, child_protocol, start_child

START_SECONDS = 60.0
"""How long the child may take to start and import a plugin, apart from the check's own time."""


EXECUTOR_GROUP = "ai_eval.check_executors"


@dataclass(slots=True)
class Plugin:
    """One entry point of the executor group, loaded or not."""

    name: str
    target: str
    origin: Origin
    executor: Any = None
    kinds: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def sorted_entry_points(group: str) -> list[EntryPoint]:
    found = {(ep.dist.name if ep.dist else "", ep.name): ep for ep in entry_points(group=group)}
    return [found[key] for key in sorted(found, key=lambda key: (key[0].lower(), key[1]))]


def load(entry: EntryPoint, services: Services) -> Plugin:
    """One entry point's executor, loaded and constructed; a failure is recorded, never raised."""
    dist = entry.dist
    origin = Origin(entry.name, dist.name if dist else entry.name, dist.version if dist else None)
    plugin = Plugin(entry.name, entry.value, origin)
    try:
        loaded = entry.load()
        executor = _construct(loaded, services) if inspect.isclass(loaded) else loaded
    except BaseException as err:  # a plugin may even call sys.exit() on import
        if isinstance(err, KeyboardInterrupt):
            raise
        plugin.problems.append(f"failed to load: {type(err).__name__}: {err}")
        return plugin
    missing = [name for name in ("applies", "execute") if not callable(getattr(executor, name, None))]
    if missing:
        plugin.problems.append(
            f"is not a check executor: {type(executor).__name__} has no {' or '.join(missing)}() method"
        )
        return plugin
    plugin.executor = executor
    return plugin


def _construct(cls: type, services: Services) -> Any:
    """Construct with one `services` argument when the class takes one, else with none."""
    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    if parameters and parameters[0].default is inspect.Parameter.empty:
        return cls(services)
    return cls()


class PluginHost:
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._lock = threading.Lock()
        self._process: Process | None = None
        self._loaded: set[tuple[str, str]] = set()

    def __enter__(self) -> PluginHost:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self._process.popen.pid if self._process is not None else None

    def execute(
        self, plugin: Plugin, name: str, check: Mapping[str, Any], response: str, context: Mapping[str, Any]
    ) -> CheckOutcome:
        """The plugin's outcome; a failure in the child (an exception, a wrong return type, an
        executor that does not finish in time) is a failed outcome with the cause."""
        key = (plugin.origin.distribution or plugin.name, plugin.name)
        with self._lock:
            try:
                if self._process is None or key not in self._loaded:
                    # Starting Python and importing the plugin do not count against the check.
                    answer = self._call({"op": "load", "plugin": key}, START_SECONDS)
                    if "error" in answer:
                        return CheckOutcome.of(check, False, f"{name} {answer['error']}")
                    self._loaded.add(key)
                request = {
                    "op": "execute",
                    "plugin": key,
                    "check": check,
                    "response": response,
                    "context": context,
                }
                answer = self._call(request, self.timeout)
            except _Unsendable as err:
                return CheckOutcome.of(
                    check, False, f"{name} cannot be given this check: it cannot be sent as JSON ({err})"
                )
            except Timeout:
                self._stop()
                return CheckOutcome.of(
                    check, False, f"{name} did not finish within {self.timeout:g} s (runTimeoutSeconds)"
                )
            except (Exited, Garbled) as err:
                cause = self._stop() or str(err) or "no output"
                return CheckOutcome.of(check, False, f"{name} ended the process that ran it ({cause})")
        if "error" in answer:
            return CheckOutcome.of(check, False, f"{name} {answer['error']}")
        outcome = answer.get("outcome")
        try:
            return (
                CheckOutcome(**outcome)
                if isinstance(outcome, dict)
                else CheckOutcome.of(check, False, f"{name} sent no outcome")
            )
        except TypeError:
            return CheckOutcome.of(check, False, f"{name} answered with a malformed outcome: {outcome!r}")

    def _call(self, request: dict[str, Any], seconds: float) -> dict[str, Any]:
        try:
            payload = json.dumps(request).encode("utf-8") + b"\n"
        except (TypeError, ValueError) as err:
            raise _Unsendable(str(err)) from None
        process = self._process = self._process or start_child("ai_eval_lsp.hosts.python")
        deadline = time.monotonic() + seconds
        process.send(payload, deadline)
        return process.receive(deadline)

    def close(self) -> None:
        with self._lock:
            if self._process is not None:
                self._process.stop()
                self._process = None

    def _stop(self) -> str:
        """Kill the child after a failed call; returns the last lines it wrote (the cause)."""
        process, self._process = self._process, None
        self._loaded.clear()
        if process is None:
            return ""
        process.kill()
        return process.cause()


class _Unsendable(Exception):
    """A check or question that JSON cannot carry."""


class HostedExecutor:
    """A Python plugin's executor as a run sees it: `applies()` in this process, `execute()` in
    the run's plugin host. Without a host (diagnostics), it only answers `applies()`."""

    def __init__(self, plugin: Plugin, name: str, host: PluginHost | None) -> None:
        self.plugin, self.name, self.host = plugin, name, host

    def applies(self, check: Mapping[str, Any]) -> bool:
        return bool(self.plugin.executor.applies(check))

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> CheckOutcome:
        if self.host is None:
            raise RuntimeError("a plugin's check runs only through a run's plugin host")
        return self.host.execute(self.plugin, self.name, check, response, context)


# --- the child ------------------------------------------------------------------------------------


def main() -> None:
    """Answer execute requests, one JSON line each, until stdin closes (or the server is gone)."""
    protocol = child_protocol()
    services = Services()
    entries = {
        (ep.dist.name if ep.dist else ep.name, ep.name): ep for ep in entry_points(group=EXECUTOR_GROUP)
    }
    loaded: dict[tuple[str, str], Plugin | None] = {}
    for line in sys.stdin.buffer:
        request = json.loads(line)
        distribution, name = request["plugin"]
        key = (distribution, name)
        if key not in loaded:
            entry = entries.get(key)
            loaded[key] = load(entry, services) if entry is not None else None
        plugin = loaded[key]
        answer: dict[str, Any] = {}
        if plugin is None:
            answer["error"] = "is no longer installed"
        elif plugin.executor is None:
            answer["error"] = plugin.problems[0]
        elif request["op"] == "execute":
            answer = _execute(plugin.executor, request)
        protocol.write(MARK + json.dumps(answer).encode("utf-8") + b"\n")


def _execute(executor: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    try:
        outcome = executor.execute(request["check"], request["response"], request["context"])
    except BaseException as err:  # reported as the check's failure, never raised
        if isinstance(err, KeyboardInterrupt):
            raise
        return {"error": f"raised {type(err).__name__}: {err}"}
    if not isinstance(outcome, CheckOutcome):
        return {"error": f"returned {type(outcome).__name__}, not a CheckOutcome"}
    return {
        "outcome": {
            "check_id": outcome.check_id,
            "kind": outcome.kind,
            "score": outcome.score,
            "passed": outcome.passed,
            "reason": outcome.reason,
        }
    }


if __name__ == "__main__":
    main()
