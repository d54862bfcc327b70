"""Navigation: definition of rubric references and weight keys, references and rename of a
rubric id across the workspace folder, and document symbols. Other files are placed from their
summaries, never read from disk."""

from __future__ import annotations

from lsprotocol import types

from ai_eval_lsp.core.workspace import RubricSummary
from ai_eval_lsp.core.yamltree import Node
from ai_eval_lsp.server import query
from ai_eval_lsp.server.server import AiEvalServer
from ai_eval_lsp.server.session import OpenDocument


def document_symbols(server: AiEvalServer, document: OpenDocument) -> list[types.DocumentSymbol]:
    summary = query.own_summary(document)
    root = document.analysis.root if document.analysis else None
    if summary is None or root is None or root.entries is None:
        return []

    def symbol(
        name: str, detail: str, kind: types.SymbolKind, node: Node, children: list[types.DocumentSymbol]
    ) -> types.DocumentSymbol:
        where = query.to_range(server, document, node.span)
        return types.DocumentSymbol(
            name=name or "?", kind=kind, range=where, selection_range=where, detail=detail, children=children
        )

    checks = root.at(("checks",))
    children = []
    for index, check in enumerate(checks.items or [] if checks else []):
        value = check.value if isinstance(check.value, dict) else {}
        name = str(value.get("id") or f"checks[{index}]")
        children.append(symbol(name, str(value.get("kind", "")), types.SymbolKind.Field, check, []))
    scoring = root.get("scoring")
    if scoring is not None:
        combine = scoring.value.value.get("combine") if isinstance(scoring.value.value, dict) else None
        children.append(symbol("scoring", str(combine or ""), types.SymbolKind.Object, scoring.value, []))
    detail = f"version {summary.version}" if summary.version else ""
    return [symbol(summary.id or "rubric", detail, types.SymbolKind.Module, root, children)]


async def _rubric_across_folder(
    server: AiEvalServer, uri: str, position: types.Position
) -> tuple[OpenDocument, RubricSummary] | None:
    """The rubric named at a position, once its whole folder is as the editor has it now: a
    rename must reach every file that names it, where it is now."""
    document = await query.settled(server, uri)
    if document is None:
        return None
    target = query.rubric_named_at(server, document, position)[0]
    return (document, target) if target is not None else None


def register(server: AiEvalServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: AiEvalServer, params: types.DefinitionParams) -> types.Location | None:
        document = await query.current(ls, params.text_document.uri)
        if document is None:
            return None
        target, path = query.rubric_named_at(ls, document, params.position)
        folder = document.folder
        if target is not None and path and path[-1] == "rubric" and target.id_span is not None:
            return query.location(ls, folder, target.path, target.id_span)
        root = document.analysis.root if document.analysis else None
        if len(path) == 3 and path[:2] == ("scoring", "weights") and root is not None:
            checks = root.at(("checks",))
            for check in checks.items or [] if checks else []:
                entry = check.get("id")
                if entry is not None and entry.value.value == path[2]:
                    return types.Location(document.uri, query.to_range(ls, document, entry.value.span))
        return None

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: AiEvalServer, params: types.ReferenceParams) -> list[types.Location]:
        named = await _rubric_across_folder(ls, params.text_document.uri, params.position)
        if named is None:
            return []
        document, target = named
        found = query.mentions(document.folder, target)
        if not params.context.include_declaration:
            found = [m for m in found if (m.path, m.span) != (target.path, target.id_span)]
        return [query.location(ls, document.folder, m.path, m.span) for m in found]

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    async def rename(ls: AiEvalServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        named = await _rubric_across_folder(ls, params.text_document.uri, params.position)
        if named is None:
            return None
        document, target = named
        changes: dict[str, list[types.TextEdit]] = {}
        for mention in query.mentions(document.folder, target):
            location = query.location(ls, document.folder, mention.path, mention.span)
            _, at, version = mention.text.partition("@")
            changes.setdefault(location.uri, []).append(
                types.TextEdit(location.range, params.new_name + at + version)
            )
        return types.WorkspaceEdit(changes=changes)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def symbols(ls: AiEvalServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        document = await query.current(ls, params.text_document.uri)
        return document_symbols(ls, document) if document is not None else []
