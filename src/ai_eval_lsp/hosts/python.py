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
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ai_eval_lsp.core.api import CheckOutcome, Services
from ai_eval_lsp.core.schema import Origin
from ai_eval_lsp.hosts.process import (
    CallError,
    Closing,
    Exited,
    Garbled,
    Host,
    Process,
    Refused,
    Timeout,
    Unsendable,
    serve_parent,
    start_child,
)

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINTS_LIMIT = 1 << 20
"""An `entry_points.txt` longer than this is not read through: `importlib.metadata` is asked."""

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
    if not may_declare(group):
        return []
    from importlib.metadata import entry_points

    found = {(ep.dist.name if ep.dist else "", ep.name): ep for ep in entry_points(group=group)}
    return [found[key] for key in sorted(found, key=lambda key: (key[0].lower(), key[1]))]


def may_declare(group: str) -> bool:
    """Whether an installed distribution may have entry points in `group`: no when the path's
    finder alone finds distributions, each folder on the path was listed, and no metadata folder's
    `entry_points.txt` names it. Reading them takes ~1 ms; importing `importlib.metadata` to ask
    took ~40 ms of every start, plugins or none."""
    from importlib.machinery import PathFinder

    if any(hasattr(finder, "find_distributions") for finder in sys.meta_path if finder is not PathFinder):
        return True
    for folder in sys.path:
        try:
            with os.scandir(folder or ".") as listed:
                names = [entry.name for entry in listed]
        except FileNotFoundError:
            continue
        except OSError:  # a zip file, or a folder not listed: it may hold some
            return True
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(folder or ".", name, "entry_points.txt"), "rb") as file:
                        declared = file.read(ENTRY_POINTS_LIMIT + 1)
                except OSError:  # none, or a metadata file (an .egg-info can be one)
                    continue
                if group.encode() in declared or len(declared) > ENTRY_POINTS_LIMIT:
                    return True
    return False


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


class PluginHost(Closing):
    """The Python plugins' executors of one run, in one child process (`hosts.process.Host`)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._host = Host(lambda: start_child("ai_eval_lsp.hosts.python"))
        self._loaded: set[tuple[str, str]] = set()
        self._child: Process | None = None

    @property
    def pid(self) -> int | None:
        return self._host.pid

    def execute(
        self, plugin: Plugin, name: str, check: Mapping[str, Any], response: str, context: Mapping[str, Any]
    ) -> CheckOutcome:
        """The plugin's outcome; a failure in the child (an exception, a wrong return type, an
        executor that does not finish in time) is a failed outcome with the cause."""
        key = [plugin.origin.distribution or plugin.name, plugin.name]
        try:
            if self._host.process is not self._child:  # a new child: nothing is loaded in it
                self._loaded.clear()
            if tuple(key) not in self._loaded:
                # Starting Python and importing the plugin do not count against the check.
                self._host.call("load", {"plugin": key}, START_SECONDS)
                self._loaded.add(tuple(key))  # type: ignore[arg-type]
                self._child = self._host.process
            params = {"plugin": key, "check": check, "response": response, "context": context}
            outcome = self._host.call("execute", params, self.timeout)
        except CallError as error:
            return CheckOutcome.of(check, False, f"{name} {error}")
        except Unsendable as err:
            return CheckOutcome.of(
                check, False, f"{name} cannot be given this check: it cannot be sent as JSON ({err})"
            )
        except Timeout:
            return CheckOutcome.of(
                check, False, f"{name} did not finish within {self.timeout:g} s (runTimeoutSeconds)"
            )
        except (Exited, Garbled) as err:
            cause = (err.cause if isinstance(err, Exited) else str(err)) or "no output"
            return CheckOutcome.of(check, False, f"{name} ended the process that ran it ({cause})")
        try:
            return CheckOutcome(**outcome)
        except TypeError:
            return CheckOutcome.of(check, False, f"{name} answered with a malformed outcome: {outcome!r}")

    def close(self) -> None:
        self._host.close()


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
    """Load and run plugins for the parent, until stdin closes (or the server is gone)."""
    from importlib.metadata import entry_points

    services = Services()
    entries = {
        (ep.dist.name if ep.dist else ep.name, ep.name): ep for ep in entry_points(group=EXECUTOR_GROUP)
    }
    loaded: dict[tuple[str, str], Plugin | None] = {}

    def plugin(params: Mapping[str, Any]) -> Any:
        distribution, name = params["plugin"]
        key = (distribution, name)
        if key not in loaded:
            entry = entries.get(key)
            loaded[key] = load(entry, services) if entry is not None else None
        found = loaded[key]
        if found is None:
            raise Refused("is no longer installed")
        if found.executor is None:
            raise Refused(found.problems[0])
        return found.executor

    def execute(params: Mapping[str, Any]) -> dict[str, Any]:
        return _execute(plugin(params), params)

    serve_parent({"load": lambda params: bool(plugin(params)), "execute": execute})


def _execute(executor: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    try:
        outcome = executor.execute(params["check"], params["response"], params["context"])
    except BaseException as err:  # reported as the check's failure, never raised
        if isinstance(err, KeyboardInterrupt):
            raise
        raise Refused(f"raised {type(err).__name__}: {err}") from None
    if not isinstance(outcome, CheckOutcome):
        raise Refused(f"returned {type(outcome).__name__}, not a CheckOutcome")
    return {
        "check_id": outcome.check_id,
        "kind": outcome.kind,
        "score": outcome.score,
        "passed": outcome.passed,
        "reason": outcome.reason,
    }


if __name__ == "__main__":
    main()
