"""The plugin registry: executors found through entry points, and the combined schema they make.

Each plugin is isolated: one that fails to import, to construct, or to give its definitions is
recorded as a problem of that plugin, and everything else is built without it.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from ai_eval_lsp.api import Services
from ai_eval_lsp.core.evaluate import Runner, claim
from ai_eval_lsp.core.executors import core_executors
from ai_eval_lsp.core.schema import (
    CORE,
    CombinedSchema,
    Contribution,
    Origin,
    combine,
    core_schema,
)

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


@dataclass(slots=True)
class Registry:
    plugins: list[Plugin]
    combined: CombinedSchema
    fragment_problems: list[str] = field(default_factory=list)
    services: Services = field(default_factory=Services)
    _dispatch_runners: list[Runner] | None = None

    @property
    def executors(self) -> list[Plugin]:
        """The plugins that loaded an executor, in dispatch order."""
        return [plugin for plugin in self.plugins if plugin.executor is not None]

    def problems_of(self, plugin: Plugin) -> list[str]:
        """A plugin's load problems and its ignored or malformed definitions."""
        spliced = [p.message for p in self.combined.problems if p.origin == plugin.origin]
        return plugin.problems + spliced

    def problems(self) -> list[str]:
        """Every load and splice problem, each naming its plugin or fragment."""
        found = [f"{p.origin} ({p.name} = {p.target}): {msg}" for p in self.plugins for msg in p.problems]
        return found + self.fragment_problems + [str(problem) for problem in self.combined.problems]

    def runners(self, timeout: float) -> list[Runner]:
        """Every executor in dispatch order: the core ones, then the plugins, isolated."""
        core = [
            Runner(executor, CORE.name, isolated=False) for executor in core_executors(self.services, timeout)
        ]
        return core + [Runner(p.executor, str(p.origin), isolated=True) for p in self.executors]

    def dispatch(self, check: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """Who runs a check: (`core` or the plugin, None); (None, None) when nobody claims it;
        (None, why) when nobody does and a plugin's `applies()` raised on the way."""
        if check.get("kind") == "composite":
            return CORE.name, None
        if self._dispatch_runners is None:
            self._dispatch_runners = self.runners(timeout=0)
        runner, error = claim(self._dispatch_runners, check)
        return (runner.name if runner else None), error


def discover(fragments: Sequence[Path] = (), group: str = EXECUTOR_GROUP) -> Registry:
    """Load every installed executor plugin and build the combined schema."""
    services = Services()
    plugins = [_load(entry, services) for entry in _sorted_entry_points(group)]
    contributions = [_contribution(plugin) for plugin in plugins]
    fragment_contributions, fragment_problems = _read_fragments(fragments)
    combined = combine(core_schema(), [*contributions, *fragment_contributions])
    for plugin in plugins:
        plugin.kinds = [kind for kind, origin in combined.origins.items() if origin == plugin.origin]
    return Registry(plugins, combined, fragment_problems, services)


def _sorted_entry_points(group: str) -> list[EntryPoint]:
    found = {(ep.dist.name if ep.dist else "", ep.name): ep for ep in entry_points(group=group)}
    return [found[key] for key in sorted(found, key=lambda key: (key[0].lower(), key[1]))]


def _load(entry: EntryPoint, services: Services) -> Plugin:
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


def _contribution(plugin: Plugin) -> Contribution:
    provider = getattr(plugin.executor, "check_schema_definitions", None)
    if plugin.executor is None or not callable(provider):
        return Contribution(plugin.origin, {})
    try:
        definitions = provider()
    except Exception as err:
        plugin.problems.append(f"check_schema_definitions() raised {type(err).__name__}: {err}")
        return Contribution(plugin.origin, {})
    if not isinstance(definitions, Mapping):
        plugin.problems.append(
            f"check_schema_definitions() must return a mapping of kind to schema, not {type(definitions).__name__}"
        )
        return Contribution(plugin.origin, {})
    return Contribution(plugin.origin, definitions)


def _read_fragments(paths: Iterable[Path]) -> tuple[list[Contribution], list[str]]:
    """Fragment files map kind names to definitions, as `check_schema_definitions()` does."""
    contributions, problems = [], []
    for path in paths:
        origin = Origin(f"schema fragment {path}")
        try:
            definitions = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as err:
            problems.append(f"{origin}: cannot be read: {err}")
            continue
        if not isinstance(definitions, dict):
            problems.append(f"{origin}: must hold a JSON object of kind names to definitions")
            continue
        contributions.append(Contribution(origin, definitions))
    return contributions, problems
