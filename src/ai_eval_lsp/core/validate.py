"""Schema validation with the check's `kind` as discriminator.

The top level is validated with `checks.items` left open, and each check against its own kind's
definition only, so a problem names the field and kind at fault instead of "does not match any of
the oneOf branches". Because every kind's definition pins its kind with `const`, a document gets
no schema problem exactly when the combined schema accepts it.

Two engines give the same violations: jsonschema-rs on the fast path, python-jsonschema as the
reference. Both are normalised to `Violation`, and messages are built from that alone.
"""

from __future__ import annotations

import ast
import copy
import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ai_eval_lsp.core.problems import Problem
from ai_eval_lsp.core.refs import VERSION_PATTERN, is_version
from ai_eval_lsp.core.schema import (
    DRAFT_2020_12,
    CombinedSchema,
    compile_validator,
    core_schema,
    properties_at,
    property_schema,
)
from ai_eval_lsp.core.yamltree import Node

Engine = Literal["fast", "reference"]
Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Violation:
    keyword: str
    path: Path
    detail: tuple[Any, ...] = ()


_CASE = "[case]"
"""The validator key of a cases file's item (no kind is spelt so)."""
_UNKNOWN_KEY_KEYWORDS = frozenset({"unevaluatedProperties", "additionalProperties"})
_RS_KEYWORDS = {"oneOfNotValid": "oneOf", "oneOfMultipleValid": "oneOf", "falseSchema": "false"}


def _instance_path(path: Any, instance: Any) -> tuple[str | int, ...]:
    """jsonschema-rs gives a mapping's numeric key (`0:`) as a number, like a list index: the
    instance says which it is."""
    steps: list[str | int] = []
    for step in path:
        if isinstance(instance, Mapping):
            step = str(step)
            instance = instance.get(step)
        elif isinstance(instance, list) and isinstance(step, int) and 0 <= step < len(instance):
            instance = instance[step]
        else:
            instance = None
        steps.append(step)
    return tuple(steps)


def _rs_violation(error: Any, instance: Any) -> Violation:
    kind = error.kind
    keyword = _RS_KEYWORDS.get(kind.name, kind.name)
    fields = kind.as_dict()
    detail: tuple[Any, ...]
    if keyword == "required":
        detail = (fields["property"],)
    elif keyword == "propertyNames":
        detail = (fields["error"].instance,)
    elif keyword in _UNKNOWN_KEY_KEYWORDS:
        detail = tuple(sorted(fields["unexpected"]))
    elif keyword == "type":
        detail = tuple(sorted(fields["types"]))
    elif keyword == "enum":
        detail = tuple(fields["options"])
    elif keyword == "const":
        detail = (fields["expected_value"],)
    elif "limit" in fields:
        detail = (fields["limit"],)
    elif keyword == "pattern":
        detail = (fields["pattern"],)
    else:
        detail = ()
    return Violation(keyword, _instance_path(error.instance_path, instance), detail)


def _py_violation(error: Any) -> Violation:
    keyword = error.validator
    value = error.validator_value
    detail: tuple[Any, ...]
    if "propertyNames" in error.absolute_schema_path:  # reported on the key, at the object's path
        return Violation("propertyNames", tuple(error.absolute_path), (error.instance,))
    if keyword == "required":
        detail = (ast.literal_eval(error.message.rsplit(" is a required property", 1)[0]),)
    elif keyword in _UNKNOWN_KEY_KEYWORDS:
        listed = error.message[error.message.index("(") + 1 : error.message.rindex(" w")]
        detail = tuple(sorted(ast.literal_eval(f"({listed},)")))
    elif keyword == "type":
        detail = tuple(sorted([value] if isinstance(value, str) else value))
    elif keyword == "enum":
        detail = tuple(value)
    elif keyword in ("const", "pattern") or (isinstance(value, int | float) and not isinstance(value, bool)):
        detail = (value,)
    else:
        detail = ()
    return Violation(keyword, tuple(error.absolute_path), detail)


class SchemaValidator:
    """Validates a document's data; for a rubric, one kind definition per check."""

    def __init__(
        self,
        schema: dict[str, Any],
        engine: Engine = "fast",
        combined: CombinedSchema | None = None,
        subject: str = "rubric",
        container: str | None = None,
    ) -> None:
        self.combined = combined
        self.subject = subject
        self.engine = engine
        self.container = container
        """The top-level list whose items are validated one by one (`checks`, `cases`)."""
        self._top_schema = schema
        self._open_top = schema
        if container is not None:
            # The top level is validated with the items left open, and each item on its own, so
            # an edit inside one item revalidates that item alone (`core/items.py`).
            self._open_top = copy.deepcopy(schema)
            self._open_top["properties"][container]["items"] = True
        self._validators: dict[str, Callable[[Any], list[Violation]]] = {}
        self._annotations: dict[tuple[str, tuple[str | int, ...]], dict[str, Any]] = {}

    @classmethod
    def for_rubrics(cls, combined: CombinedSchema, engine: Engine = "fast") -> SchemaValidator:
        top = copy.deepcopy(combined.schema)
        top["properties"]["checks"]["items"] = True
        return cls(top, engine, combined, container="checks")

    @classmethod
    def for_cases(cls, engine: Engine = "fast") -> SchemaValidator:
        return cls(core_schema("cases.schema.json"), engine, subject="cases file", container="cases")

    @property
    def top_schema(self) -> dict[str, Any]:
        """The schema the top level is validated against (for a rubric, `checks.items` open)."""
        return self._top_schema

    @property
    def kinds(self) -> Mapping[str, Any]:
        return self.combined.origins if self.combined else {}

    def top_violations(self, data: Any) -> list[Violation]:
        return self._validator("")(data)

    def check_violations(self, kind: str, check: Any) -> list[Violation]:
        return self._validator(kind)(check)

    def case_violations(self, case: Any) -> list[Violation]:
        """A cases file's case against the schema of `cases` items; paths from the case."""
        return self._validator(_CASE)(case)

    def _validator(self, kind: str) -> Callable[[Any], list[Violation]]:
        found = self._validators.get(kind)
        if found is None:
            found = self._validators[kind] = self._compile(kind)
        return found

    def _compile(self, kind: str) -> Callable[[Any], list[Violation]]:
        """The validator of the top level (""), of a check's kind, or of a cases file's case
        (`_CASE`)."""
        defs = self._top_schema.get("$defs", {})
        whole: dict[str, Any] | None = None
        if not kind:
            whole = self._open_top
        elif kind == _CASE and self.container is not None:
            whole = {
                "$schema": DRAFT_2020_12,
                "$defs": defs,
                **self._top_schema["properties"][self.container]["items"],
            }
        if self.engine == "reference":
            import jsonschema

            schema = whole or {"$schema": DRAFT_2020_12, "$defs": defs, "$ref": f"#/$defs/check_{kind}"}
            reference = jsonschema.Draft202012Validator(schema)
            return lambda data: [_py_violation(e) for e in reference.iter_errors(data)]
        if whole is None:
            fast = compile_validator(defs, f"check_{kind}")
        else:
            import jsonschema_rs

            fast = jsonschema_rs.validator_for(whole)
        return lambda data: (
            [] if fast.is_valid(data) else [_rs_violation(e, data) for e in fast.iter_errors(data)]
        )

    def annotations(self, kind: str, path: tuple[str | int, ...]) -> dict[str, Any]:
        """The title, description, enum, default, ... the schema gives the field at `path` of the
        top level or of a check of `kind`; cached, for hover and completion."""
        key = (kind, path)
        found = self._annotations.get(key)
        if found is None:
            start = self.combined.definition(kind) if kind and self.combined else self._top_schema
            found = self._annotations[key] = property_schema(start, path, self._top_schema)
        return found

    def properties(self, kind: str, path: Sequence[str | int]) -> list[str]:
        """Field names the schema declares at `path` of the top level or of a check of `kind`."""
        start = self.combined.definition(kind) if kind and self.combined else self._top_schema
        return properties_at(start, path, self._top_schema)

    def validate(self, root: Node, text: str) -> list[Problem]:
        """Every schema problem of a parsed document, at the range of the key or value at fault."""
        problems = self.top_problems(root, text)
        for index, item in enumerate(self.items_of(root)):
            problems.extend(self.item_problems(index, item, text))
        return problems

    def top_problems(self, root: Node, text: str) -> list[Problem]:
        """The schema problems of the top level, its items left open."""
        return self._located(root, "", self.top_violations(root.value), text)

    def items_of(self, root: Node) -> list[Node]:
        """The items validated one by one: a rubric's checks, a cases file's cases."""
        container = root.at((self.container,)) if self.container is not None else None
        if not isinstance(root.value, dict) or container is None or container.items is None:
            return []
        return container.items

    def item_problems(self, index: int, item: Node, text: str) -> list[Problem]:
        """The schema problems of one check or case."""
        if self.combined is not None:
            return self._validate_check(index, item, text)
        assert self.container is not None
        found = self.case_violations(item.value)
        where = (self.container, index)
        violations = [Violation(v.keyword, (*where, *v.path), v.detail) for v in found]
        return self._located(item, "", violations, text, len(where))

    def _validate_check(self, index: int, check: Node, text: str) -> list[Problem]:
        assert self.combined is not None
        if check.entries is None:
            return [
                Problem(
                    "schema",
                    f"checks[{index}] must be a mapping with a `kind`, not {_a(check.value)}",
                    check.span,
                )
            ]
        entry = check.entries.get("kind")
        if entry is None:
            return [
                Problem(
                    "schema",
                    f"checks[{index}] has no `kind`: every check needs one; the kinds are {self.combined.describe_kinds()}",
                    check.head(),
                    {"field": "kind"},
                )
            ]
        kind = entry.value.value
        if not isinstance(kind, str) or kind not in self.kinds:
            return [self._unknown_kind(kind, entry.value)]
        return self._located(check, kind, self.check_violations(kind, check.value), text)

    def _unknown_kind(self, kind: Any, node: Node) -> Problem:
        assert self.combined is not None
        if not isinstance(kind, str):
            return Problem(
                "unknown-kind",
                f"`kind` must be the name of a check kind, not {_a(kind)}; the kinds are {self.combined.describe_kinds()}",
                node.span,
            )
        if kind in self.combined.named:
            return Problem(
                "unknown-kind",
                f"unknown check kind `{kind}`: {self.combined.named[kind]}",
                node.span,
                {"kind": kind},
            )
        close = difflib.get_close_matches(kind, list(self.kinds), n=3, cutoff=0.6)
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        return Problem(
            "unknown-kind",
            f"unknown check kind `{kind}`{hint}; the kinds are {self.combined.describe_kinds()}. "
            "A kind from a plugin or a Drupal module is known only where it is installed",
            node.span,
            {"kind": kind, "suggestions": close},
        )

    def _located(
        self, node: Node, kind: str, violations: list[Violation], text: str, steps: int = 0
    ) -> list[Problem]:
        """Turn violations of one validated value into problems; `kind` is "" at the top level.
        `steps`: how many steps of the violations' paths lead to `node` (a case's are 2)."""
        problems: list[Problem] = []
        for number, violation in enumerate(violations):
            target = node.at(violation.path[steps:]) or node
            if violation.keyword in _UNKNOWN_KEY_KEYWORDS:
                # A rule failed inside an object makes every field its schema declares there
                # "unevaluated": that echo of the failure is dropped. (`additionalProperties`
                # reads only its own schema's `properties`: it is never an echo.)
                depth = len(violation.path)
                echo = violation.keyword == "unevaluatedProperties" and any(
                    other.path[:depth] == violation.path for n, other in enumerate(violations) if n != number
                )
                problems.extend(self._unknown_keys(violation, target, kind, violation.path, echo))
            else:
                problems.append(_message(violation, target, kind, violation.path, text, self.subject))
        return problems

    def _unknown_keys(
        self, violation: Violation, target: Node, kind: str, path: Path, echo: bool
    ) -> Iterable[Problem]:
        known = self.properties(kind, path)
        owner = _owner(kind, path) if kind or path else f"a {self.subject}"
        for key in violation.detail:
            entry = target.get(key)
            span = entry.key.span if entry else target.head()
            if key in known:
                if not echo:  # no failure made it unevaluated: the schema really forbids it here
                    yield Problem(
                        "schema", f"{_prefix(kind)}`{key}` is not allowed here by the schema of {owner}", span
                    )
                continue
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = (
                f" (did you mean `{close[0]}`?)"
                if close
                else f"; the fields of {owner} are {_listing(known)}"
            )
            yield Problem(
                "unknown-key",
                f"{_prefix(kind)}`{key}` is not a field of {owner}{hint}",
                span,
                {"key": key, "suggestions": close},
            )


def _prefix(kind: str) -> str:
    return f"{kind} check: " if kind else ""


def _owner(kind: str, path: Path) -> str:
    names = [step for step in path if isinstance(step, str)]
    if names and isinstance(path[-1], int):
        return f"an item of `{names[-1]}`"
    if names:
        return f"`{names[-1]}`" if kind or len(names) > 1 else names[-1]
    return kind


def _field(kind: str, path: Path, subject: str) -> str:
    if not path:
        return "the check" if kind else f"the {subject}"
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return f"`{text}`"


def _listing(names: Iterable[Any]) -> str:
    return ", ".join(f"`{name}`" for name in names)


_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "null": "empty (null)",
}

_PATTERN_HINTS = {
    "^[imsxu]*$": "flags are any of `i`, `m`, `s`, `x` and `u`",
    "^[a-z][a-z0-9_]*$": "snake_case: lowercase letters, digits and `_`, starting with a letter",
    VERSION_PATTERN: "a version such as `1.0`, `1.2.3` or `2.0.0-beta`",
}


def _a(value: Any) -> str:
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a mapping"


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:37] + "..."


def _message(violation: Violation, target: Node, kind: str, path: Path, text: str, subject: str) -> Problem:
    keyword, detail, value = violation.keyword, violation.detail, target.value
    prefix, name = _prefix(kind), _field(kind, path, subject)
    span = target.span if keyword != "required" else target.head()
    data: dict[str, Any] = {}
    if keyword == "propertyNames":
        entry = target.get(detail[0])
        span = entry.key.span if entry else span
    if keyword == "required":
        field = detail[0]
        where = "" if not path else f" in {name}"
        message = f"{prefix}missing required field `{field}`{where}"
        data = {"field": field, "kind": kind}
    elif keyword == "propertyNames":
        message = f"{prefix}{name} cannot have the key `{_show(detail[0])}`: it breaks the schema's `propertyNames` rule"
    elif keyword == "type":
        wanted = " or ".join(_TYPE_NAMES.get(t, t) for t in detail)
        message = f"{prefix}{name} must be {wanted}, not {_a(value)}"
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if path == ("version",) and subject == "rubric" and not kind and numeric:
            source = text[target.start_index : target.end_index]
            written = source if is_version(source) else f"{source}.0" if source.isdigit() else None
            if written is None:
                message += f': YAML reads `{source}` as a number; write a quoted version such as "1.0"'
            else:
                message += f': YAML reads `{source}` as a number; quote it as "{written}"'
                data = {"replacement": f'"{written}"'}
    elif keyword == "enum":
        options = [str(option) for option in detail]
        close = difflib.get_close_matches(str(value), options, n=1, cutoff=0.6)
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        message = f"{prefix}{name} must be one of {_listing(options)}, not `{_show(value)}`{hint}"
        data = {"suggestions": close}
    elif keyword == "const":
        message = f"{prefix}{name} must be `{_show(detail[0])}`"
    elif keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bound = {
            "minimum": "at least",
            "maximum": "at most",
            "exclusiveMinimum": "more than",
            "exclusiveMaximum": "less than",
        }[keyword]
        message = f"{prefix}{name} must be {bound} {detail[0]}, not {_show(value)}"
    elif keyword in ("minItems", "maxItems"):
        bound = "at least" if keyword == "minItems" else "at most"
        message = f"{prefix}{name} must have {bound} {detail[0]} item{'s' if detail[0] != 1 else ''}"
    elif keyword in ("minLength", "maxLength"):
        bound = "at least" if keyword == "minLength" else "at most"
        message = f"{prefix}{name} must be {bound} {detail[0]} character{'s' if detail[0] != 1 else ''} long"
    elif keyword == "uniqueItems":
        repeated = next((item for i, item in enumerate(value) if item in value[:i]), None)
        message = f"{prefix}{name} lists `{_show(repeated)}` more than once; each item must be unique"
    elif keyword == "pattern":
        explained = _PATTERN_HINTS.get(detail[0])
        message = f"{prefix}{name} `{_show(value)}` does not match `{detail[0]}`" + (
            f" ({explained})" if explained else ""
        )
    else:
        message = f"{prefix}{name} is not valid: it breaks the schema's `{keyword}` rule"
    return Problem("schema", message, span, data)
