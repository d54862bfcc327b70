"""Hover: a field's title and description from the combined schema; on a kind, who runs it; on a
composite reference, the sub-rubric."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ai_eval_lsp.core.cursor import At, locate
from ai_eval_lsp.core.yamltree import Node
from ai_eval_lsp.server.server import AiEvalServer
from ai_eval_lsp.server.session import DocumentState, from_position, to_range


def kind_text(server: AiEvalServer, kind: str) -> str | None:
    """A kind's title, description, origin and whether the runtime executes it."""
    registry = server.session.require_project().registry
    origin = registry.combined.origins.get(kind)
    if origin is None:
        return None
    definition = registry.combined.definition(kind)
    runner, _ = registry.dispatch({"kind": kind})
    runs = (
        f"executed at run time by {runner}"
        if runner
        else "not executed at run time: checks of this kind are skipped"
    )
    description = str(definition.get("description", ""))
    return f"**{definition.get('title', kind)}** (`{kind}`)\n\n{description}\n\nFrom {origin}; {runs}."


def field_schema(
    server: AiEvalServer, state: DocumentState, path: tuple[str | int, ...], kind: Any
) -> dict[str, Any]:
    """The schema annotations of the field at `path`; inside a check, by that check's `kind`."""
    project = server.session.require_project()
    if state.role == "cases":
        return project.cases_validator.annotations("", path)
    validator = project.rules.validator
    if len(path) >= 3 and path[0] == "checks" and isinstance(path[1], int):
        return (
            validator.annotations(kind, path[2:]) if isinstance(kind, str) and kind in validator.kinds else {}
        )
    return validator.annotations("", path)


def check_kind(root: Node, path: tuple[str | int, ...]) -> Any:
    """The `kind` of the check a path leads into, if it does."""
    check = root.at(path[:2]) if len(path) >= 2 and path[0] == "checks" else None
    return check.value.get("kind") if check is not None and isinstance(check.value, dict) else None


def hover_text(server: AiEvalServer, state: DocumentState, at: At, root: Node) -> str | None:
    name = at.path[-1] if at.path else None
    if not at.on_key and name == "kind" and isinstance(at.node.value, str):
        return kind_text(server, at.node.value)
    if not at.on_key and name == "rubric" and isinstance(at.node.value, str):
        target = server.session.index.resolve(at.node.value)
        if target is None:
            return f"No rubric `{at.node.value}` in the workspace."
        checks = ", ".join(f"`{check}`" for check in target.check_ids) or "no named checks"
        return f"**{target.label or target.id}** (`{target.id}` version {target.version})\n\n{target.path}; checks: {checks}."
    schema = field_schema(server, state, at.path, check_kind(root, at.path))
    if not schema.get("description"):
        return None
    title = schema.get("title") or name
    default = f"\n\nDefault: `{schema['default']}`." if "default" in schema else ""
    return f"**{title}** (`{name}`)\n\n{schema['description']}{default}"


def register(server: AiEvalServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: AiEvalServer, params: types.HoverParams) -> types.Hover | None:
        state = ls.state(params.text_document.uri)
        root = state.root if state is not None else None
        if state is None or root is None:
            return None
        lines = state.lines
        line, column = from_position(params.position, lines, ls.workspace.position_codec)
        at = locate(root, line, column)
        if at is None:
            return None
        text = hover_text(ls, state, at, root)
        if text is None:
            return None
        where = at.key if at.on_key and at.key is not None else at.node
        return types.Hover(
            types.MarkupContent(types.MarkupKind.Markdown, text),
            to_range(where.span, lines, ls.workspace.position_codec),
        )
