"""Completion that works on half-typed YAML: keys of the mapping at the cursor (a check's kind
first, then only that kind's fields), kind values, enum values, booleans, rubric ids, check ids
as weight keys, and a snippet per kind for a whole new check."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ai_eval_lsp.core.context import Context, completion_context
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.server.query import kinds, positions, rubrics, snapshots
from ai_eval_lsp.server.query.kinds import in_check
from ai_eval_lsp.server.query.snapshots import DocumentSnapshot


def kind_items(project: Project) -> list[types.CompletionItem]:
    registry = project.registry
    items = []
    for order, (kind, origin) in enumerate(registry.combined.origins.items()):
        claimed = registry.dispatch({"kind": kind})
        executed = claimed.runner is not None and not claimed.skipped
        items.append(
            types.CompletionItem(
                label=kind,
                kind=types.CompletionItemKind.EnumMember,
                detail=f"{origin}, {'executed' if executed else 'not executed in the editor'}",
                documentation=types.MarkupContent(
                    types.MarkupKind.Markdown, kinds.kind_text(project, kind) or ""
                ),
                sort_text=f"{0 if executed else 1}{order:03}",
            )
        )
    return items


def _required(project: Project, kind: str) -> list[str]:
    definition = project.registry.combined.definition(kind)
    parts = [definition, *[p for p in definition.get("allOf", []) if isinstance(p, dict)]]
    return [name for part in parts for name in part.get("required", []) if name != "kind"]


def new_check_items(project: Project, indent: int, snippets: bool) -> list[types.CompletionItem]:
    """A whole check of each kind, with its required fields to fill in."""
    items = []
    for kind in project.registry.combined.origins:
        fields = _required(project, kind)
        lines = [f"kind: {kind}"] + [
            f"{' ' * indent}{name}: " + (f"${index + 1}" if snippets else "")
            for index, name in enumerate(fields)
        ]
        items.append(
            types.CompletionItem(
                label=f"new {kind} check",
                kind=types.CompletionItemKind.Snippet,
                detail="with its required fields" if fields else "no required fields",
                insert_text="\n".join(lines),
                insert_text_format=types.InsertTextFormat.Snippet
                if snippets
                else types.InsertTextFormat.PlainText,
                sort_text=f"9{kind}",
            )
        )
    return items


def key_items(project: Project, document: DocumentSnapshot, context: Context) -> list[types.CompletionItem]:
    rules = project.rules
    validator = rules.cases_validator if document.role == "cases" else rules.validator
    path = context.path
    names: list[str]
    if document.role == "rubric" and in_check(path) and len(path) == 2:
        kind = context.siblings.get("kind")
        if not isinstance(kind, str) or kind not in validator.kinds:
            return [
                types.CompletionItem(
                    "kind", kind=types.CompletionItemKind.Property, insert_text="kind: ", sort_text="0"
                )
            ]
        names = validator.properties(kind, ())
    elif document.role == "rubric" and path == ("scoring", "weights"):
        summary = rubrics.own_summary(document)  # the last analysis: a moment old while typing
        ids = summary.check_ids if summary else ()
        return [
            types.CompletionItem(
                i, kind=types.CompletionItemKind.Reference, insert_text=f"{i}: ", detail="check id"
            )
            for i in ids
            if i not in context.siblings
        ]
    else:
        names = validator.properties("", path)
    items = []
    for order, name in enumerate(n for n in names if n not in context.siblings):
        schema = validator.annotations("", (*path, name)) if not in_check(path) else {}
        items.append(
            types.CompletionItem(
                name,
                kind=types.CompletionItemKind.Property,
                insert_text=f"{name}: ",
                detail=schema.get("title"),
                documentation=schema.get("description"),
                sort_text=f"{'0' if name == 'kind' else '1'}{order:03}",
            )
        )
    return items


def value_items(project: Project, document: DocumentSnapshot, context: Context) -> list[types.CompletionItem]:
    path = context.path
    if path[-1] == "kind" and in_check(path):
        return kind_items(project)
    if path[-1] == "rubric":
        items = []
        for summary in document.index.rubrics.by_path.values():
            if summary.id:
                items.append(
                    types.CompletionItem(
                        summary.id,
                        kind=types.CompletionItemKind.Reference,
                        detail=summary.label or summary.path,
                    )
                )
                if summary.version:
                    items.append(
                        types.CompletionItem(
                            summary.name,
                            kind=types.CompletionItemKind.Reference,
                            detail=summary.path,
                        )
                    )
        return items
    schema: dict[str, Any] = kinds.field_schema(project, document, path, context.siblings.get("kind"))
    values: list[Any] = list(schema.get("enum", []))
    if schema.get("type") == "boolean":
        values = [True, False]
    return [
        types.CompletionItem(
            str(v).lower() if isinstance(v, bool) else str(v), kind=types.CompletionItemKind.Value
        )
        for v in values
    ]


def completion(document: DocumentSnapshot, params: types.CompletionParams) -> types.CompletionList | None:
    """Completion from the text as typed, with the last analysis (a moment old while typing)."""
    if document.role is None:
        return None
    project = snapshots.project_of(document)
    line, column = positions.from_position(document, params.position)
    context = completion_context(document.lines, line, column, whole=False)
    if context is None:  # the YAML around the cursor is broken: the item's last good reading
        before = positions.before_broken_item(document, line, column)
        context = (
            completion_context(before.lines, before.line, before.column, whole=False)
            if before is not None
            else completion_context(document.lines, line, column)
        )
    if context is None:
        return types.CompletionList(is_incomplete=False, items=[])
    if context.is_value:
        items = value_items(project, document, context)
    else:
        items = key_items(project, document, context)
        if document.role == "rubric" and in_check(context.path) and not context.siblings:
            items += new_check_items(project, column - len(context.partial), document.client.snippets)
    return types.CompletionList(is_incomplete=False, items=items)
