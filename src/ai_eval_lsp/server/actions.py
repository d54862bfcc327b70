"""Code actions and code lenses: quick fixes for diagnostics that carry one, and the runs."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ai_eval_lsp.core.workspace import check_name
from ai_eval_lsp.core.yamltree import Node
from ai_eval_lsp.server.commands import (
    RUN_CASES,
    RUN_CHECK,
    RUN_RUBRIC,
    CommandError,
    cases_files_for,
    rubric_of,
)
from ai_eval_lsp.server.diagnostics import SOURCE
from ai_eval_lsp.server.server import AiEvalServer
from ai_eval_lsp.server.session import DocumentState


def _replace(
    uri: str, where: types.Range, text: str, title: str, diagnostic: types.Diagnostic
) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=True,
        edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(where, text)]}),
    )


def quick_fixes(uri: str, lines: list[str], diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    """The fix a diagnostic's `data` describes; none when it carries nothing to act on."""
    data: dict[str, Any] = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    line = lines[diagnostic.range.start.line] if diagnostic.range.start.line < len(lines) else ""
    suggestions = data.get("suggestions") or []
    if diagnostic.code in ("unknown-key", "unknown-kind") and suggestions:
        old = data.get("key") or data.get("kind")
        return [
            _replace(
                uri, diagnostic.range, suggestions[0], f"Change `{old}` to `{suggestions[0]}`", diagnostic
            )
        ]
    if diagnostic.code == "schema" and "replacement" in data:
        return [
            _replace(
                uri,
                diagnostic.range,
                data["replacement"],
                f"Quote the version as {data['replacement']}",
                diagnostic,
            )
        ]
    if diagnostic.code == "unused-weight" and "{" not in line:
        whole_line = types.Range(
            types.Position(diagnostic.range.start.line, 0), types.Position(diagnostic.range.start.line + 1, 0)
        )
        return [_replace(uri, whole_line, "", f"Remove the weight `{data.get('weight')}`", diagnostic)]
    if diagnostic.code == "schema" and data.get("field") and data.get("kind") and "{" not in line:
        indent = diagnostic.range.start.character
        end = types.Position(diagnostic.range.start.line, len(line))
        text = "\n" + " " * indent + f"{data['field']}: "
        return [
            _replace(
                uri, types.Range(end, end), text, f"Add the required field `{data['field']}`", diagnostic
            )
        ]
    return []


def _checks(state: DocumentState) -> list[Node]:
    root = state.analysis.root if state.analysis else None
    checks = root.at(("checks",)) if root is not None else None
    return list(checks.items or []) if checks is not None else []


def run_actions(server: AiEvalServer, state: DocumentState, line: int) -> list[types.CodeAction]:
    uri = state.uri
    if state.role == "cases":
        return [_command_action("Run cases", RUN_CASES, {"uri": uri})]
    actions = [
        _command_action(
            f"Run check `{check_name(i, c.value)}` on its cases", RUN_CHECK, {"uri": uri, "checkIndex": i}
        )
        for i, c in enumerate(_checks(state))
        if c.line <= line <= c.end_line
    ]
    actions.append(_command_action("Run rubric on its cases", RUN_RUBRIC, {"uri": uri}))
    create = create_cases_action(server, state)
    if create is not None:
        actions.append(create)
    return actions


def _command_action(title: str, command: str, argument: dict[str, Any]) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.Source,
        command=types.Command(title, command, arguments=[argument]),
    )


def create_cases_action(server: AiEvalServer, state: DocumentState) -> types.CodeAction | None:
    """ "Create cases file" where no cases file references the rubric yet."""
    try:
        rubric = rubric_of(server, state.uri)
    except CommandError:
        return None
    if cases_files_for(server, rubric):
        return None
    target = state.path.with_name(f"{rubric.id}.cases.yaml")
    if target.exists():
        return None
    uri = target.as_uri()
    content = (
        f"rubric: {rubric.id}\n"
        "cases:\n"
        "  - id: first_case\n"
        '    question: {id: q1, input: ""}\n'
        '    response: ""\n'
        "    expect: pass\n"
    )
    edit = types.WorkspaceEdit(
        document_changes=[
            types.CreateFile(uri=uri, kind="create"),
            types.TextDocumentEdit(
                types.OptionalVersionedTextDocumentIdentifier(uri, None),
                [types.TextEdit(types.Range(types.Position(0, 0), types.Position(0, 0)), content)],
            ),
        ]
    )
    return types.CodeAction(
        title=f"Create cases file {target.name}", kind=types.CodeActionKind.Source, edit=edit
    )


def code_lenses(state: DocumentState) -> list[types.CodeLens]:
    top = types.Range(types.Position(0, 0), types.Position(0, 0))
    if state.role == "cases":
        return [types.CodeLens(top, types.Command("Run cases", RUN_CASES, arguments=[{"uri": state.uri}]))]
    lenses = [types.CodeLens(top, types.Command("Run rubric", RUN_RUBRIC, arguments=[{"uri": state.uri}]))]
    for index, check in enumerate(_checks(state)):
        where = types.Range(types.Position(check.line, 0), types.Position(check.line, 0))
        lenses.append(
            types.CodeLens(
                where,
                types.Command("Run check", RUN_CHECK, arguments=[{"uri": state.uri, "checkIndex": index}]),
            )
        )
    return lenses


def register(server: AiEvalServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Source]
        ),
    )
    def code_action(ls: AiEvalServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        state = ls.state(params.text_document.uri)
        if state is None:
            return []
        lines = state.lines
        actions = [
            fix
            for diagnostic in params.context.diagnostics
            if diagnostic.source == SOURCE
            for fix in quick_fixes(state.uri, lines, diagnostic)
        ]
        return actions + run_actions(ls, state, params.range.start.line)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: AiEvalServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        state = ls.state(params.text_document.uri)
        return code_lenses(state) if state is not None else []
