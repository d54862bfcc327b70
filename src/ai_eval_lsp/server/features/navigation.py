"""Navigation: definition of rubric references and weight keys, references and rename of a
rubric id across the workspace folder, document symbols, and workspace symbols (rubrics and
cases). Other files are placed from their summaries, never read from disk."""

from __future__ import annotations

from lsprotocol import types

from ai_eval_lsp.core.index import CasesSummary, case_name
from ai_eval_lsp.core.problems import Span
from ai_eval_lsp.core.refs import format_ref, parse_ref
from ai_eval_lsp.server.query import positions, rubrics
from ai_eval_lsp.server.query.snapshots import DocumentSnapshot, WorkspaceSnapshot


def document_symbols(
    document: DocumentSnapshot, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol]:
    """A rubric's checks and scoring; a cases file's cases, named as runs name them (what an
    editor's test explorer lists)."""
    analysis = document.analysis
    root = analysis.tree if analysis is not None else None  # its top level is where the text has it
    if analysis is None or root is None or root.entries is None:
        return []
    summary = analysis.summary

    def symbol(
        name: str, detail: str, kind: types.SymbolKind, span: Span, children: list[types.DocumentSymbol]
    ) -> types.DocumentSymbol:
        where = positions.to_range(document, span)
        return types.DocumentSymbol(
            name=name or "?", kind=kind, range=where, selection_range=where, detail=detail, children=children
        )

    if isinstance(summary, CasesSummary):
        return [
            symbol(case_name(number, case.value), _expect(case.value), types.SymbolKind.Event, case.span, [])
            for number, case in enumerate(analysis.listed())
        ]
    children = []
    for index, check in enumerate(analysis.listed()):
        value = check.value if isinstance(check.value, dict) else {}
        name = str(value.get("id") or f"checks[{index}]")
        children.append(symbol(name, str(value.get("kind", "")), types.SymbolKind.Field, check.span, []))
    scoring = root.get("scoring")
    if scoring is not None:
        combine = scoring.value.value.get("combine") if isinstance(scoring.value.value, dict) else None
        children.append(
            symbol("scoring", str(combine or ""), types.SymbolKind.Object, scoring.value.span, [])
        )
    detail = f"version {summary.version}" if summary.version else ""
    return [symbol(summary.id or "rubric", detail, types.SymbolKind.Module, root.span, children)]


def _expect(case: object) -> str:
    expect = case.get("expect") if isinstance(case, dict) else None
    return f"expect {expect}" if isinstance(expect, str) else ""


def workspace_symbols(
    workspace: WorkspaceSnapshot, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation]:
    """Every rubric (at its id) and every case of every cases file (at its head) whose name holds
    the query, ignoring case: what a test explorer lists, and what "go to symbol" finds."""
    wanted = params.query.casefold()
    found = []
    for folder in workspace.folders:
        index = folder.index
        for rubric in index.rubrics.by_path.values():
            if rubric.id is not None and rubric.id_span is not None and wanted in rubric.id.casefold():
                place = positions.location(workspace, folder.root, index, rubric.path, rubric.id_span)
                found.append(
                    types.SymbolInformation(
                        location=place,
                        name=rubric.name,
                        kind=types.SymbolKind.Module,
                        container_name=rubric.path,
                    )
                )
        for cases in index.cases.by_path.values():
            found += [
                types.SymbolInformation(
                    location=positions.location(workspace, folder.root, index, cases.path, case.head),
                    name=case.label,
                    kind=types.SymbolKind.Event,
                    container_name=cases.path,
                )
                for case in cases.cases
                if wanted in case.label.casefold()
            ]
    return found


def definition(document: DocumentSnapshot, params: types.DefinitionParams) -> types.Location | None:
    target, path = rubrics.rubric_named_at(document, params.position)
    if target is not None and path and path[-1] == "rubric" and target.id_span is not None:
        return positions.location(document, document.root, document.index, target.path, target.id_span)
    analysis = document.analysis
    if len(path) == 3 and path[:2] == ("scoring", "weights") and analysis is not None:
        for number, check in enumerate(rubrics.checks_of(document)):
            if isinstance(check.value, dict) and check.value.get("id") == path[2]:
                placed = analysis.item(number)
                entry = placed.get("id") if placed is not None else None
                if entry is not None:
                    return types.Location(document.uri, positions.to_range(document, entry.value.span))
    return None


def references(document: DocumentSnapshot, params: types.ReferenceParams) -> list[types.Location]:
    """Every place of the document's folder that names the rubric at the cursor (taken once the
    whole folder is as the editor has it: `take.settled`)."""
    target = rubrics.rubric_named_at(document, params.position)[0]
    if target is None:
        return []
    found = rubrics.mentions(document.index, target)
    if not params.context.include_declaration:
        found = [m for m in found if (m.path, m.span) != (target.path, target.id_span)]
    return [positions.location(document, document.root, document.index, m.path, m.span) for m in found]


def rename(document: DocumentSnapshot, params: types.RenameParams) -> types.WorkspaceEdit | None:
    """The rubric at the cursor renamed in every file that names it, where it is now (taken once
    the whole folder is as the editor has it: `take.settled`)."""
    target = rubrics.rubric_named_at(document, params.position)[0]
    if target is None:
        return None
    changes: dict[str, list[types.TextEdit]] = {}
    for mention in rubrics.mentions(document.index, target):
        location = positions.location(document, document.root, document.index, mention.path, mention.span)
        pinned = parse_ref(mention.text).version
        changes.setdefault(location.uri, []).append(
            types.TextEdit(location.range, format_ref(params.new_name, pinned))
        )
    return types.WorkspaceEdit(changes=changes)
