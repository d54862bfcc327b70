"""Kinds and their schema, in words: what hover and completion say of a kind and of a field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_eval_lsp.core.cursor import At
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.server.lsp.convert import uri_of
from ai_eval_lsp.server.query.snapshots import DocumentSnapshot


def kind_text(project: Project, kind: str) -> str | None:
    """A kind's title, description, origin and whether the runtime executes it."""
    registry = project.registry
    origin = registry.combined.origins.get(kind)
    if origin is None:
        return None
    definition = registry.combined.definition(kind)
    title = definition.get("title")
    parts = [f"**{title}** (`{kind}`)" if title else f"**`{kind}`**"]
    if definition.get("description"):
        parts.append(str(definition["description"]))
    validator = project.rules.validator
    own = [name for name in validator.properties(kind, ()) if name not in BASE_FIELDS]
    if own:
        parts.append(
            "Fields: "
            + "; ".join(f"`{name}` ({constraints(validator.annotations(kind, (name,)))})" for name in own)
            + "."
        )
    where = (
        f" ([{Path(origin.file).name}:{origin.line}]({uri_of(Path(origin.file))}#L{origin.line}))"
        if origin.file
        else ""
    )
    codebase = registry.codebase
    site = (
        f" (site `{codebase.site}` of {', '.join(codebase.sites)})"
        if origin.module and codebase is not None and len(codebase.sites) > 1
        else ""
    )
    parts.append(f"From {origin}{where}{site}; {project.registry.runs(kind)}.")
    return "\n\n".join(parts)


BASE_FIELDS = frozenset({"kind", "id", "description", "metadata"})
"""What every check has (`check_base`): a kind's hover lists only its own fields."""


def constraints(schema: dict[str, Any]) -> str:
    """What a field's schema asks of its value, in words: `integer, at least 0, default 20`."""
    said: list[str] = []
    if "const" in schema:
        said.append(f"always `{schema['const']}`")
    elif "enum" in schema:
        said.append("one of " + ", ".join(f"`{value}`" for value in schema["enum"]))
    elif isinstance(schema.get("type"), str):
        items = schema.get("items", {})
        of = (
            f" of {items['type']}s"
            if schema["type"] == "array" and isinstance(items, dict) and isinstance(items.get("type"), str)
            else ""
        )
        said.append(f"{schema['type']}{of}")
    for keyword, words in (
        ("minimum", "at least"),
        ("maximum", "at most"),
        ("minLength", "at least {} characters"),
        ("minItems", "at least {} items"),
    ):
        if keyword in schema:
            said.append(words.format(schema[keyword]) if "{}" in words else f"{words} {schema[keyword]}")
    if "default" in schema:
        said.append(f"default `{schema['default']}`")
    return ", ".join(said) or "any value"


def in_check(path: tuple[str | int, ...]) -> bool:
    return len(path) >= 2 and path[0] == "checks" and isinstance(path[1], int)


def field_schema(
    project: Project, document: DocumentSnapshot, path: tuple[str | int, ...], kind: Any
) -> dict[str, Any]:
    """The schema annotations of the field at `path`; inside a check, by that check's `kind`."""
    if document.role == "cases":
        return project.rules.cases_validator.annotations("", path)
    validator = project.rules.validator
    if len(path) >= 3 and in_check(path):
        return (
            validator.annotations(kind, path[2:]) if isinstance(kind, str) and kind in validator.kinds else {}
        )
    return validator.annotations("", path)


def check_kind(at: At) -> Any:
    """The `kind` of the check a cursor is in, if it is in one."""
    return at.item.get("kind") if in_check(at.path) and isinstance(at.item, dict) else None
