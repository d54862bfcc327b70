"""Completion that works on half-typed YAML: keys of the mapping at the cursor (a check's kind
first, then only that kind's fields), kind values, enum values, booleans, rubric ids, check ids
as weight keys, and a snippet per kind for a whole new check."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ai_eval_lsp.core.context import Context, completion_context
from ai_eval_lsp.server.hover import kind_text
from ai_eval_lsp.server.server import AiEvalServer
from ai_eval_lsp.server.session import DocumentState, from_position


def _in_check(path: tuple[str | int, ...]) -> bool:
    return len(path) >= 2 and path[0] == "checks" and isinstance(path[1], int)


def kind_items(server: AiEvalServer) -> list[types.CompletionItem]:
    registry = server.session.require_project().registry
    items = []
    for order, (kind, origin) in enumerate(registry.combined.origins.items()):
        runner, _ = registry.dispatch({"kind": kind})
        items.append(
            types.CompletionItem(
                label=kind,
                kind=types.CompletionItemKind.EnumMember,
                detail=f"{origin}, {'executed' if runner else 'not executed'}",
                documentation=types.MarkupContent(types.MarkupKind.Markdown, kind_text(server, kind) or ""),
                sort_text=f"{0 if runner else 1}{order:03}",
            )
        )
    return items


def _required(server: AiEvalServer, kind: str) -> list[str]:
    definition = server.session.require_project().registry.combined.definition(kind)
    parts = [definition, *[p for p in definition.get("allOf", []) if isinstance(p, dict)]]
    return [name for part in parts for name in part.get("required", []) if name != "kind"]


def new_check_items(server: AiEvalServer, indent: int, snippets: bool) -> list[types.CompletionItem]:
    """A whole check of each kind, with its required fields to fill in."""
    items = []
    for kind in server.session.require_project().registry.combined.origins:
        fields = _required(server, kind)
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


def key_items(server: AiEvalServer, state: DocumentState, context: Context) -> list[types.CompletionItem]:
    project = server.session.require_project()
    validator = project.cases_validator if state.role == "cases" else project.rules.validator
    path = context.path
    names: list[str]
    if state.role == "rubric" and _in_check(path) and len(path) == 2:
        kind = context.siblings.get("kind")
        if not isinstance(kind, str) or kind not in validator.kinds:
            return [
                types.CompletionItem(
                    "kind", kind=types.CompletionItemKind.Property, insert_text="kind: ", sort_text="0"
                )
            ]
        names = validator.properties(kind, ())
    elif state.role == "rubric" and path == ("scoring", "weights"):
        analysis = state.analysis
        ids = analysis.summary.check_ids if analysis else ()
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
        schema = validator.annotations("", (*path, name)) if not _in_check(path) else {}
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


def value_items(server: AiEvalServer, state: DocumentState, context: Context) -> list[types.CompletionItem]:
    from ai_eval_lsp.server.hover import field_schema

    path = context.path
    if path[-1] == "kind" and _in_check(path):
        return kind_items(server)
    if path[-1] == "rubric":
        items = []
        for summary in server.session.index.by_path.values():
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
                            f"{summary.id}@{summary.version}",
                            kind=types.CompletionItemKind.Reference,
                            detail=summary.path,
                        )
                    )
        return items
    schema: dict[str, Any] = field_schema(server, state, path, context.siblings.get("kind"))
    values: list[Any] = list(schema.get("enum", []))
    if schema.get("type") == "boolean":
        values = [True, False]
    return [
        types.CompletionItem(
            str(v).lower() if isinstance(v, bool) else str(v), kind=types.CompletionItemKind.Value
        )
        for v in values
    ]


def register(server: AiEvalServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[":", " ", "-", "@"])
    )
    def completion(ls: AiEvalServer, params: types.CompletionParams) -> types.CompletionList | None:
        state = ls.state(params.text_document.uri)
        if state is None:
            return None
        document = ls.workspace.get_text_document(params.text_document.uri)
        lines = document.source.split("\n")
        line, column = from_position(params.position, lines, ls.workspace.position_codec)
        context = completion_context(document.source, line, column)
        if context is None:
            return types.CompletionList(is_incomplete=False, items=[])
        if context.is_value:
            items = value_items(ls, state, context)
        else:
            items = key_items(ls, state, context)
            if state.role == "rubric" and _in_check(context.path) and not context.siblings:
                completion_caps = (
                    ls.client_capabilities.text_document and ls.client_capabilities.text_document.completion
                )
                snippets = bool(
                    completion_caps
                    and completion_caps.completion_item
                    and completion_caps.completion_item.snippet_support
                )
                items += new_check_items(ls, column - len(context.partial), snippets)
        return types.CompletionList(is_incomplete=False, items=items)
