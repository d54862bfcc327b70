"""Navigation: definition of rubric references and weight keys, references and rename of a
rubric id across the workspace, and document symbols."""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from ai_eval_lsp.core.cursor import locate
from ai_eval_lsp.core.problems import Span
from ai_eval_lsp.core.workspace import RubricSummary
from ai_eval_lsp.core.yamltree import Node, parse
from ai_eval_lsp.server.server import AiEvalServer
from ai_eval_lsp.server.session import DocumentState, from_position, to_range


@dataclass(frozen=True, slots=True)
class Mention:
    """A place that names a rubric: its `id`, a composite `rubric:` or a cases file's `rubric:`."""

    path: str
    span: Span
    text: str


def _location(server: AiEvalServer, relative: str, span: Span) -> types.Location | None:
    text = server.session.text_of(relative)
    if text is None:
        return None
    return types.Location(
        server.session.uri_of(relative), to_range(span, text.split("\n"), server.workspace.position_codec)
    )


def mentions(server: AiEvalServer, target: RubricSummary) -> list[Mention]:
    """Every place of the workspace that names `target`: its id and every reference resolving to it."""
    index = server.session.index
    found = [Mention(target.path, target.id_span, str(target.id))] if target.id_span else []
    for summary in index.by_path.values():
        for ref in summary.composites:
            if index.resolve(ref.ref) == target:
                found.append(Mention(summary.path, ref.span, ref.ref))
    for relative, cases_ref in server.session.cases_refs.items():
        if index.resolve(cases_ref) == target:
            text = server.session.text_of(relative)
            root = parse(text).root if text is not None else None
            entry = root.get("rubric") if root is not None else None
            if entry is not None:
                found.append(Mention(relative, entry.value.span, cases_ref))
    return found


def _target_at(
    server: AiEvalServer, state: DocumentState, position: types.Position
) -> tuple[RubricSummary | None, tuple[str | int, ...]]:
    """The rubric named at a position (by its `id` or a `rubric:` reference), and the path there."""
    root = state.root
    line, column = from_position(position, state.lines, server.workspace.position_codec)
    at = locate(root, line, column) if root is not None else None
    if at is None:
        return None, ()
    if at.on_key or not isinstance(at.node.value, str):
        return None, at.path
    index = server.session.index
    if at.path and at.path[-1] == "rubric":
        return index.resolve(at.node.value), at.path
    if at.path == ("id",) and state.analysis is not None:
        return index.by_path.get(state.analysis.summary.path), at.path
    return None, at.path


def document_symbols(state: DocumentState, codec: PositionCodec) -> list[types.DocumentSymbol]:
    root = state.analysis.root if state.analysis else None
    if root is None or root.entries is None:
        return []
    lines = state.lines

    def symbol(
        name: str, detail: str, kind: types.SymbolKind, node: Node, children: list[types.DocumentSymbol]
    ) -> types.DocumentSymbol:
        where = to_range(node.span, lines, codec)
        return types.DocumentSymbol(
            name=name or "?", kind=kind, range=where, selection_range=where, detail=detail, children=children
        )

    checks = root.at(("checks",))
    children = []
    for index, check in enumerate(checks.items or [] if checks else []):
        value = check.value if isinstance(check.value, dict) else {}
        children.append(
            symbol(
                str(value.get("id") or f"checks[{index}]"),
                str(value.get("kind", "")),
                types.SymbolKind.Field,
                check,
                [],
            )
        )
    scoring = root.get("scoring")
    if scoring is not None:
        combine = scoring.value.value.get("combine") if isinstance(scoring.value.value, dict) else None
        children.append(symbol("scoring", str(combine or ""), types.SymbolKind.Object, scoring.value, []))
    summary = state.analysis.summary if state.analysis else None
    name = summary.id if summary and summary.id else "rubric"
    return [
        symbol(name, f"version {summary.version}" if summary else "", types.SymbolKind.Module, root, children)
    ]


def register(server: AiEvalServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: AiEvalServer, params: types.DefinitionParams) -> types.Location | None:
        state = ls.state(params.text_document.uri)
        if state is None:
            return None
        target, path = _target_at(ls, state, params.position)
        if target is not None and path and path[-1] == "rubric" and target.id_span is not None:
            return _location(ls, target.path, target.id_span)
        if len(path) == 3 and path[:2] == ("scoring", "weights") and state.analysis and state.analysis.root:
            checks = state.analysis.root.at(("checks",))
            for check in checks.items or [] if checks else []:
                entry = check.get("id")
                if entry is not None and entry.value.value == path[2]:
                    return _location(ls, state.analysis.path, entry.value.span)
        return None

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: AiEvalServer, params: types.ReferenceParams) -> list[types.Location]:
        state = ls.state(params.text_document.uri)
        target = _target_at(ls, state, params.position)[0] if state else None
        if target is None:
            return []
        found = mentions(ls, target)
        if not params.context.include_declaration:
            found = [m for m in found if (m.path, m.span) != (target.path, target.id_span)]
        return [loc for m in found if (loc := _location(ls, m.path, m.span)) is not None]

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    def rename(ls: AiEvalServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        state = ls.state(params.text_document.uri)
        target = _target_at(ls, state, params.position)[0] if state else None
        if target is None:
            return None
        changes: dict[str, list[types.TextEdit]] = {}
        for mention in mentions(ls, target):
            location = _location(ls, mention.path, mention.span)
            if location is None:
                continue
            _, at, version = mention.text.partition("@")
            changes.setdefault(location.uri, []).append(
                types.TextEdit(location.range, params.new_name + at + version)
            )
        return types.WorkspaceEdit(changes=changes)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(ls: AiEvalServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        state = ls.state(params.text_document.uri)
        return document_symbols(state, ls.workspace.position_codec) if state is not None else []
