"""The plugin registry: the executors that run checks, and the combined schema their kinds make.

After the core executors come, in dispatch and splice order: Python plugins (entry points), the
PHP executors of the Drupal codebase (read statically, run by a PHP worker), then schema fragment
files (kinds no executor runs). Each is isolated: one that fails to load, to construct, to give
or to be read for its definitions is recorded as a problem naming it, and the rest are built
without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ai_eval_lsp.core.api import Services
from ai_eval_lsp.core.evaluate import Runner, claim
from ai_eval_lsp.core.executors import core_executors
from ai_eval_lsp.core.lints import Claim
from ai_eval_lsp.core.schema import (
    CORE,
    CombinedSchema,
    Contribution,
    Origin,
    combine,
    core_schema,
)
from ai_eval_lsp.disk.reading import read_json, why_not_read
from ai_eval_lsp.drupal.codebase import Codebase, DormantKind, PhpExecutor
from ai_eval_lsp.hosts.php import PhpCheckExecutor
from ai_eval_lsp.hosts.python import (
    EXECUTOR_GROUP,
    HostedExecutor,
    Plugin,
    PluginHost,
    load,
    sorted_entry_points,
)

if TYPE_CHECKING:
    from ai_eval_lsp.hosts.php import PhpWorker

AI_EVAL_MODULE = "ai_eval"

PHP_OFF = (
    "runs PHP, which is off here (`php.run` is false; VS Code turns it off in a workspace it does not trust)"
)


@dataclass(frozen=True, slots=True)
class PhpPlugin:
    """A Drupal module's executor, as the registry sees it."""

    executor: PhpExecutor
    origin: Origin
    claims: frozenset[str]
    """Every kind its class defines, readable or not: the checks it claims."""
    kinds: tuple[str, ...]
    """The kinds whose definition it gave the combined schema."""
    unavailable: str | None
    """Why it cannot run in the editor at all ("needs the Drupal service `@x`"), or None."""
    problems: tuple[str, ...]
    """Why its class or a definition could not be read, each naming module, class and place."""


@dataclass(slots=True)
class Registry:
    plugins: list[Plugin]
    combined: CombinedSchema
    fragment_problems: list[str] = field(default_factory=list)
    services: Services = field(default_factory=Services)
    php: list[PhpPlugin] = field(default_factory=list)
    codebase: Codebase | None = None
    schema_problems: list[str] = field(default_factory=list)
    """Why the site's own core schema could not be used."""
    fragments: list[tuple[Path, Origin]] = field(default_factory=list)
    """The schema fragment files that were read, in splice order."""
    dispatchers: tuple[Runner, ...] = ()
    """The executors dispatch asks, built once the registry is (`discover`): threads only read it."""

    @property
    def executors(self) -> list[Plugin]:
        """The Python plugins that loaded an executor, in dispatch order."""
        return [plugin for plugin in self.plugins if plugin.executor is not None]

    def problems_of(self, plugin: Plugin | PhpPlugin) -> list[str]:
        """A plugin's load or read problems and its ignored or malformed definitions."""
        return [*plugin.problems, *self.splice_problems(plugin.origin)]

    def splice_problems(self, origin: Origin) -> list[str]:
        """Why definitions `origin` gave were ignored or malformed."""
        return [p.message for p in self.combined.problems if p.origin == origin]

    def problems(self) -> list[str]:
        """Every load, read and splice problem, each naming its plugin, module or fragment."""
        found = [f"{p.origin} ({p.name} = {p.target}): {msg}" for p in self.plugins for msg in p.problems]
        found += [problem for php in self.php for problem in php.problems]
        found += self.schema_problems + self.fragment_problems
        return found + [str(problem) for problem in self.combined.problems]

    def notices(self) -> list[str]:
        """What the user is told once: what was found of the Drupal codebase."""
        return list(self.codebase.notices) if self.codebase is not None else []

    def runners(
        self, timeout: float, host: PluginHost | None = None, php: PhpWorker | None = None
    ) -> list[Runner]:
        """Every executor in dispatch order: the core ones, the Python plugins (run by `host`),
        the PHP executors (run by `php`). Each bounds its own time; without a host or worker,
        plugins claim checks but do not run them (for dispatch)."""
        core = [Runner(executor, CORE.name) for executor in core_executors(self.services, timeout)]
        python = [Runner(HostedExecutor(p, str(p.origin), host), str(p.origin)) for p in self.executors]
        drupal = [
            Runner(PhpCheckExecutor(p.executor, p.claims, php), str(p.origin), unavailable=p.unavailable)
            for p in self.php
        ]
        return core + python + drupal

    def kinds_of(self, origin: Origin) -> list[str]:
        """The kinds `origin` gave the combined schema, in `oneOf` order."""
        return [kind for kind, given_by in self.combined.origins.items() if given_by == origin]

    def core_schema_file(self) -> Path | None:
        """The site's own core schema when it is used, else None (the shipped copy is)."""
        codebase = self.codebase
        return codebase.ai_eval_schema if codebase is not None and not self.schema_problems else None

    def core_runs(self) -> list[tuple[str | None, list[str]]]:
        """The core kinds by who runs them: each core executor (its class), the evaluator
        (`composite`), and None for the kinds ai_eval knows but never executes."""
        executors = core_executors(self.services, timeout=0)
        by: dict[str | None, list[str]] = {type(executor).__name__: [] for executor in executors}
        by |= {"the evaluator": [], None: []}
        for kind in self.kinds_of(CORE):
            runner = next((e for e in executors if e.applies({"kind": kind})), None)
            if runner is not None:
                by[type(runner).__name__].append(kind)
            else:
                by["the evaluator" if kind == "composite" else None].append(kind)
        return [(who, kinds) for who, kinds in by.items() if kinds]

    def runs(self, kind: str) -> str:
        """Whether, and by whom (when another than who defines the kind), checks of a kind run."""
        claimed = self.dispatch({"kind": kind})
        if claimed.runner is None:
            return "not executed at run time: checks of this kind are skipped"
        by = "" if claimed.runner == str(self.combined.origins.get(kind)) else f" by {claimed.runner}"
        if claimed.skipped:
            return f"executed on the site{by}, but not in the editor: it {claimed.skipped}"
        return f"executed at run time{by}"

    def dispatch(self, check: Mapping[str, Any]) -> Claim:
        """Who runs a check, as a run would decide it, without running anything."""
        if check.get("kind") == "composite":
            return Claim(CORE.name)
        runner, error = claim(self.dispatchers, check)
        if runner is None:
            return Claim(None, error=error)
        return Claim(runner.name, skipped=runner.unavailable)


def discover(
    fragments: Sequence[Path] = (),
    group: str = EXECUTOR_GROUP,
    codebase: Codebase | None = None,
    php_run: bool = True,
    home: Path | None = None,
) -> Registry:
    """Load every installed executor plugin, take the Drupal codebase's executors, and build the
    combined schema over the core schema (the site's own, when the codebase holds ai_eval).
    Fragment files are read inside `home`, the project (`disk.reading`; default: each one's folder)."""
    services = Services()
    plugins = [load(entry, services) for entry in sorted_entry_points(group)]
    # ai_eval's own executors run the core kinds, which always run in Python (SPEC section 4).
    executors = [e for e in codebase.executors if e.module != AI_EVAL_MODULE] if codebase else []
    origins = [_php_origin(executor) for executor in executors]
    fragments_read, fragment_problems = _read_fragments(fragments, home)
    core, schema_problems = _core_schema(codebase)
    combined = combine(
        core,
        [
            *(_contribution(plugin) for plugin in plugins),
            *(
                _php_contribution(executor, origin)
                for executor, origin in zip(executors, origins, strict=True)
            ),
            *(contribution for _, contribution in fragments_read),
        ],
    )
    php = [
        _php_plugin(executor, origin, combined, php_run)
        for executor, origin in zip(executors, origins, strict=True)
    ]
    for dormant in codebase.dormant if codebase else ():
        combined.named.setdefault(dormant.kind, _dormant_reason(dormant, codebase))
    read = [(path, contribution.origin) for path, contribution in fragments_read]
    registry = Registry(plugins, combined, fragment_problems, services, php, codebase, schema_problems, read)
    for plugin in plugins:
        plugin.kinds = registry.kinds_of(plugin.origin)
    registry.dispatchers = tuple(registry.runners(timeout=0))
    return registry


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


def _php_origin(executor: PhpExecutor) -> Origin:
    """A module's executor as the origin of its kinds: its class, where it is written."""
    found = executor.class_file is not None and executor.class_line is not None
    return Origin(
        executor.class_name,
        module=executor.module,
        file=str(executor.class_file if found else executor.services_file),
        line=executor.class_line if found else executor.services_line,
    )


def _php_contribution(executor: PhpExecutor, origin: Origin) -> Contribution:
    readable = {d.kind: d.schema for d in executor.definitions if d.kind and d.unreadable is None}
    return Contribution(origin, readable)


def _php_plugin(executor: PhpExecutor, origin: Origin, combined: CombinedSchema, php_run: bool) -> PhpPlugin:
    """What the registry knows of a module's executor once the schema is built. A definition that
    cannot be read is a problem, and names its kind in unknown-kind messages, until a schema
    fragment declares that kind."""
    from ai_eval_lsp.hosts.php import unrunnable_reason  # only a Drupal codebase needs it

    problems = list(executor.problems)
    for definition in executor.definitions:
        kind = definition.kind
        if definition.unreadable is None or (kind and kind in combined.origins):
            continue
        if kind is None:
            problems.append(
                f"{origin}: checkSchemaDefinitions() cannot be read without running PHP: "
                f"{definition.unreadable}; declare its kinds in `schemaFragments`"
            )
            continue
        problems.append(
            f"{origin}: the definition of `{kind}` cannot be read without running PHP: "
            f"{definition.unreadable}; declare the kind in `schemaFragments` to check its checks"
        )
        combined.named.setdefault(
            kind,
            f"{origin} defines it, but its definition cannot be read without running PHP "
            f"({definition.unreadable}); declare the kind in `schemaFragments` to check it",
        )
    return PhpPlugin(
        executor,
        origin,
        frozenset(d.kind for d in executor.definitions if d.kind),
        tuple(kind for kind, owner in combined.origins.items() if owner == origin),
        unrunnable_reason(executor.arguments) or (None if php_run else PHP_OFF),
        tuple(problems),
    )


def _dormant_reason(dormant: DormantKind, codebase: Codebase | None) -> str:
    """Why a kind a module of the codebase defines is unknown on the site, and what to do."""
    if dormant.test_module:
        return (
            f"defined by test module `{dormant.module}` ({dormant.where}), which a site never "
            "enables (test modules run only in Drupal's tests); move the executor into a module "
            "the site enables"
        )
    export = codebase.installed_from if codebase is not None else None
    listed = f" ({os.path.relpath(export, codebase.folder)})" if export and codebase else ""
    return (
        f"defined by module `{dormant.module}` ({dormant.where}), which this site does not "
        f"enable{listed}: `drush pm:enable {dormant.module}`, then export the configuration"
    )


def _core_schema(codebase: Codebase | None) -> tuple[dict[str, Any], list[str]]:
    """The site's own `schema/rubric.schema.json` when the codebase holds ai_eval, else the
    shipped copy (SPEC section 4)."""
    path = codebase.ai_eval_schema if codebase is not None else None
    if codebase is None or path is None:
        return core_schema(), []
    try:
        schema = read_json(path, codebase.folder.resolve())
        branches = schema["properties"]["checks"]["items"]["oneOf"]
        if not isinstance(schema.get("$defs"), dict) or not isinstance(branches, list):
            raise ValueError("it has no `$defs` or no `checks.items.oneOf`")
    except (OSError, ValueError, KeyError, TypeError) as err:
        why = why_not_read(err) if isinstance(err, OSError) else str(err)
        return core_schema(), [
            f"the site's ai_eval schema {path} cannot be used ({why}); the shipped schema is used"
        ]
    return schema, []


def _read_fragments(
    paths: Iterable[Path], home: Path | None
) -> tuple[list[tuple[Path, Contribution]], list[str]]:
    """Fragment files map kind names to definitions, as `check_schema_definitions()` does."""
    contributions, problems = [], []
    for path in paths:
        origin = Origin(f"schema fragment {path}")
        try:
            definitions = read_json(path, home or path.parent.resolve())
        except OSError as err:
            problems.append(f"{origin}: {why_not_read(err)}")
            continue
        if not isinstance(definitions, dict):
            problems.append(f"{origin}: must hold a JSON object of kind names to definitions")
            continue
        contributions.append((path, Contribution(origin, definitions)))
    return contributions, problems
