"""Code actions: quick fixes for diagnostics that carry one, the runs, and "Create cases file"."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ai_eval_lsp.core.index import check_name
from ai_eval_lsp.core.text import Encoding, units
from ai_eval_lsp.server.lsp import names
from ai_eval_lsp.server.lsp.convert import uri_of
from ai_eval_lsp.server.query import rubrics
from ai_eval_lsp.server.query.snapshots import DocumentSnapshot


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


def quick_fixes(
    document: DocumentSnapshot, diagnostic: types.Diagnostic, encoding: Encoding
) -> list[types.CodeAction]:
    """The fix a diagnostic's `data` describes; none when it carries nothing to act on."""
    uri = document.uri
    data: dict[str, Any] = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    line = document.lines.line(diagnostic.range.start.line)
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
        end = types.Position(diagnostic.range.start.line, units(line, encoding))
        text = "\n" + " " * indent + f"{data['field']}: "
        return [
            _replace(
                uri, types.Range(end, end), text, f"Add the required field `{data['field']}`", diagnostic
            )
        ]
    return []


def run_actions(document: DocumentSnapshot, line: int) -> list[types.CodeAction]:
    uri = document.uri
    if document.role == "cases":
        return [_command_action("Run cases", names.RUN_CASES, {"uri": uri})]
    actions = [
        _command_action(
            f"Run check `{check_name(i, c.value)}` on its cases",
            names.RUN_CHECK,
            {"uri": uri, "checkIndex": i},
        )
        for i, c in enumerate(rubrics.checks_of(document))
        if c.line <= line <= c.end_line
    ]
    actions.append(_command_action("Run rubric on its cases", names.RUN_RUBRIC, {"uri": uri}))
    create = create_cases_action(document)
    if create is not None:
        actions.append(create)
    return actions


def _command_action(title: str, command: str, argument: dict[str, Any]) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.Source,
        command=types.Command(title, command, arguments=[argument]),
    )


def create_cases_action(document: DocumentSnapshot) -> types.CodeAction | None:
    """ "Create cases file" where no cases file runs the rubric yet."""
    summary = rubrics.own_summary(document)
    if summary is None or summary.id is None or document.path is None or not document.indexed:
        return None
    if rubrics.cases_running(document.index, summary):
        return None
    # The project's own extension: Drupal writes `.yml`.
    target = document.path.with_name(
        f"{summary.id}.cases{'.yml' if document.path.suffix == '.yml' else '.yaml'}"
    )
    if target.exists():
        return None
    uri = uri_of(target)
    content = (
        f"rubric: {summary.id}\n"
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


def code_actions(document: DocumentSnapshot, params: types.CodeActionParams) -> list[types.CodeAction]:
    actions = [
        fix
        for diagnostic in params.context.diagnostics
        if diagnostic.source == names.SOURCE
        for fix in quick_fixes(document, diagnostic, document.client.encoding)
    ]
    actions += run_actions(document, params.range.start.line)
    only = params.context.only
    if only:  # the kinds the client asked for, and their subkinds (`source` takes `source.x`)
        actions = [
            a for a in actions if a.kind and any(a.kind == k or a.kind.startswith(f"{k}.") for k in only)
        ]
    return actions
