"""The combined rubric schema: the core schema plus the kinds contributed by plugins and fragments.

Splicing follows the seed's rules: a definition pins its kind with `const` and requires `kind`;
a kind that already exists is ignored (core stays canonical, the first contribution wins); every
ignored or malformed definition is reported with its origin's name.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
KIND_PATTERN = r"^[a-z][a-z0-9_]*$"
CONTRIBUTED = "$comment"
"""The keyword that says, in the exported combined schema, where a contributed kind comes from."""


@cache
def _core_text(name: str) -> str:
    return resources.files("ai_eval_lsp").joinpath("schema", name).read_text(encoding="utf-8")


def core_schema(name: str = "rubric.schema.json") -> dict[str, Any]:
    """A fresh copy of a static core schema shipped in the package."""
    return json.loads(_core_text(name))  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where kinds come from: the core, an installed Python plugin, a Drupal module's executor
    (`module`; `name` is then its class) or a schema fragment file."""

    name: str
    distribution: str | None = None
    version: str | None = None
    module: str | None = None
    file: str | None = None
    """The file that defines the kinds, with `line`: a PHP executor's class file."""
    line: int | None = None

    def __str__(self) -> str:
        if self.distribution:
            return f"plugin {self.distribution} {self.version or ''}".rstrip()
        if self.module:
            return f"module {self.module} ({self.name})"
        return self.name

    @property
    def source(self) -> str:
        """Which of the four sources of kinds this is: one of `SOURCES`."""
        if self.distribution:
            return "plugins"
        if self.module:
            return "Drupal modules"
        return "core" if self == CORE else "schema fragments"


CORE = Origin("core")
SOURCES = ("core", "plugins", "Drupal modules", "schema fragments")
"""Where kinds come from, in splice order, as the kinds line names them."""


@dataclass(frozen=True, slots=True)
class Contribution:
    """Kind definitions offered by one origin, unchecked."""

    origin: Origin
    definitions: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class SpliceProblem:
    origin: Origin
    message: str

    def __str__(self) -> str:
        return f"{self.origin}: {self.message}"


@dataclass(slots=True)
class CombinedSchema:
    schema: dict[str, Any]
    origins: dict[str, Origin]
    """Every kind, in `oneOf` order, with where it comes from."""
    problems: list[SpliceProblem] = field(default_factory=list)
    named: dict[str, str] = field(default_factory=dict)
    """Kinds an executor names without a definition to splice, with why: an unknown kind's
    message says so rather than "no such kind"."""

    def definition(self, kind: str) -> dict[str, Any]:
        return self.schema["$defs"][f"check_{kind}"]  # type: ignore[no-any-return]

    def kinds_line(self) -> str:
        """`23 kinds: 14 core, 1 from plugins, 8 from Drupal modules`: how many kinds each source
        gives, as `plugins` ends and an editor's status shows it."""
        counts = Counter(origin.source for origin in self.origins.values())
        parts = [
            f"{counts[source]} {'' if source == 'core' else 'from '}{source}"
            for source in SOURCES
            if counts[source]
        ]
        return f"{len(self.origins)} kinds: {', '.join(parts)}"

    def describe_kinds(self) -> str:
        """`a, b (core), c (plugin x 1.0)`: every kind, grouped by origin."""
        groups: dict[Origin, list[str]] = {}
        for kind, origin in self.origins.items():
            groups.setdefault(origin, []).append(kind)
        return "; ".join(f"{', '.join(kinds)} ({origin})" for origin, kinds in groups.items())


def combine(core: dict[str, Any], contributions: Iterable[Contribution]) -> CombinedSchema:
    """Splice each contribution's definitions into a copy of the core schema, in order."""
    schema = copy.deepcopy(core)
    defs: dict[str, Any] = schema["$defs"]
    branches: list[dict[str, str]] = schema["properties"]["checks"]["items"]["oneOf"]
    origins = {ref["$ref"].rsplit("/check_", 1)[1]: CORE for ref in branches}
    combined = CombinedSchema(schema, origins)
    for contribution in contributions:
        for kind, definition in contribution.definitions.items():
            error = _definition_error(kind, definition, combined)
            if error:
                combined.problems.append(SpliceProblem(contribution.origin, error))
                continue
            # Marked, so a reader of the exported schema sees whose kind it is.
            defs[f"check_{kind}"] = {**definition, CONTRIBUTED: f"ai-eval: from {contribution.origin}"}
            branches.append({"$ref": f"#/$defs/check_{kind}"})
            origins[kind] = contribution.origin
    return combined


def _definition_error(kind: object, definition: object, combined: CombinedSchema) -> str | None:
    import jsonschema_rs

    if not isinstance(kind, str) or not re.match(KIND_PATTERN, kind):
        return f"the kind {kind!r} is ignored: a kind is a snake_case name such as `word_count`"
    if kind in combined.origins:
        owner = combined.origins[kind]
        if owner == CORE:
            return f"the definition of `{kind}` is ignored: `{kind}` is a core kind, and core kinds cannot be redefined"
        return f"the definition of `{kind}` is ignored: {owner} already defines `{kind}`, and the first definition wins"
    if not isinstance(definition, dict):
        return f"the definition of `{kind}` is ignored: it must be a JSON Schema object, not {type(definition).__name__}"
    try:
        jsonschema_rs.meta.validate({"$schema": DRAFT_2020_12, **definition})
    except jsonschema_rs.ValidationError as err:
        where = "/".join(str(step) for step in err.instance_path) or "its root"
        message = str(err).splitlines()[0]
        return f"the definition of `{kind}` is ignored: it is not a valid JSON Schema ({message}, at {where})"
    parts = list(_all_of(definition))
    if not any(_kind_const(part) == kind for part in parts):
        return f"the definition of `{kind}` is ignored: it must pin the kind with `properties.kind.const: {kind}`"
    if not any("kind" in part.get("required", ()) for part in parts):
        return f"the definition of `{kind}` is ignored: it must list `kind` in `required`"
    trial = {**combined.schema["$defs"], f"check_{kind}": definition}
    try:
        compile_validator(trial, f"check_{kind}")
    except Exception as err:  # an unresolvable `$ref` or an unsupported keyword
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return f"the definition of `{kind}` is ignored: it cannot be compiled ({reason})"
    return None


def _all_of(schema: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    yield schema
    for part in schema.get("allOf", ()):
        if isinstance(part, Mapping):
            yield from _all_of(part)


def _kind_const(schema: Mapping[str, Any]) -> object:
    kind = schema.get("properties", {}).get("kind", {})
    return kind.get("const") if isinstance(kind, Mapping) else None


def compile_validator(defs: Mapping[str, Any], name: str) -> Any:
    """A jsonschema-rs validator for `$defs[name]`, resolving references against `defs`."""
    import jsonschema_rs

    return jsonschema_rs.validator_for({"$schema": DRAFT_2020_12, "$defs": defs, "$ref": f"#/$defs/{name}"})


def _parts_at(
    schema: Mapping[str, Any], path: Sequence[str | int], root: Mapping[str, Any]
) -> list[Mapping[str, Any]]:
    """Every subschema that applies to the value at `path`, through `$ref` and `allOf`."""
    current = list(_expand(schema, root))
    for step in path:
        following: list[Mapping[str, Any]] = []
        for part in current:
            sub = part.get("items") if isinstance(step, int) else part.get("properties", {}).get(step)
            if isinstance(sub, Mapping):
                following.extend(_expand(sub, root))
        current = following
    return current


def properties_at(schema: Mapping[str, Any], path: Sequence[str | int], root: Mapping[str, Any]) -> list[str]:
    """The property names a schema declares for the value at `path`."""
    names: dict[str, None] = {}
    for part in _parts_at(schema, path, root):
        names.update(dict.fromkeys(part.get("properties", {})))
    return list(names)


def property_schema(
    schema: Mapping[str, Any], path: Sequence[str | int], root: Mapping[str, Any]
) -> dict[str, Any]:
    """The annotations (title, description, enum, ...) the schema gives the value at `path`."""
    merged: dict[str, Any] = {}
    for part in _parts_at(schema, path, root) if path else []:
        merged = {**merged, **part}  # the kind's own part comes last and wins
    return merged


def _expand(
    schema: Mapping[str, Any], root: Mapping[str, Any], seen: frozenset[str] = frozenset()
) -> Iterable[Mapping[str, Any]]:
    for part in _all_of(schema):
        yield part
        ref = part.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref not in seen:
            target = root.get("$defs", {}).get(ref[len("#/$defs/") :])
            if isinstance(target, Mapping):
                yield from _expand(target, root, seen | {ref})
