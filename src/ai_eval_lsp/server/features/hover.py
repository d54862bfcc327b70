"""Hover: a field's title and description from the combined schema; on a kind, who runs it; on a
composite reference, the sub-rubric."""

from __future__ import annotations

from lsprotocol import types

from ai_eval_lsp.core.cursor import At
from ai_eval_lsp.core.lints import missing_rubric
from ai_eval_lsp.server.query import kinds, positions, snapshots
from ai_eval_lsp.server.query.snapshots import Cursor, DocumentSnapshot


def hover_text(document: DocumentSnapshot, at: At) -> str | None:
    project = snapshots.project_of(document)
    name = at.path[-1] if at.path else None
    if not at.on_key and name == "kind" and isinstance(at.node.value, str):
        return kinds.kind_text(project, at.node.value)
    if not at.on_key and name == "rubric" and isinstance(at.node.value, str):
        target = document.index.rubrics.resolve(at.node.value)
        if target is None:
            reason = missing_rubric(at.node.value, document.index.rubrics)
            return f"{reason[0].upper()}{reason[1:]}."
        checks = ", ".join(f"`{check}`" for check in target.check_ids) or "no named checks"
        return f"**{target.label or target.id}** (`{target.id}` version {target.version})\n\n{target.path}; checks: {checks}."
    schema = kinds.field_schema(project, document, at.path, kinds.check_kind(at))
    if not schema:
        return None
    title = schema.get("title") or name
    if not schema.get("description"):  # a module's field without words: say what it takes
        return f"**{title}** (`{name}`): {kinds.constraints(schema)}."
    default = f"\n\nDefault: `{schema['default']}`." if "default" in schema else ""
    return f"**{title}** (`{name}`)\n\n{schema['description']}{default}"


def hover(cursor: Cursor, params: types.HoverParams) -> types.Hover | None:
    document, at = cursor.document, cursor.at
    if at is None:
        return None
    text = hover_text(document, at)
    if text is None:
        return None
    where = at.key if at.on_key and at.key is not None else at.node
    return types.Hover(
        types.MarkupContent(types.MarkupKind.Markdown, text), positions.to_range(document, where.span)
    )
