"""The real server over stdio, as VS Code and Neovim drive it (their recorded capabilities)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from contract import CURSOR_RUBRIC, RESULT_ROW_FIELDS
from lsprotocol import types
from pytest_lsp import LanguageClient

from e2e.helpers import (
    completion_labels,
    current_diagnostics,
    diagnostics,
    diagnostics_until,
    open_document,
    pulls,
    root,
)

BROKEN = 'id: broken\nversion: "1.0"\nchecks:\n  - {kind: regex, description: "naïve 😀", patern: x}\nscoring: {combine: all_pass}\n'


async def test_exact_diagnostics_in_utf16(client: LanguageClient) -> None:
    uri = await open_document(client, "broken.rubric.yaml", BROKEN)
    found = await diagnostics(client, uri)
    by_code = {d.code: d for d in found}
    assert set(by_code) == {"unknown-key", "schema"}
    key = by_code["unknown-key"]
    line = BROKEN.split("\n")[3]
    # in the negotiated encoding: in UTF-16 the emoji counts two units, in UTF-8 four, "ï" two
    encoding = client.position_encoding  # type: ignore[attr-defined]
    width = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding]
    start = (
        len(
            line[: line.index("patern")].encode(
                encoding.replace("utf-16", "utf-16-le").replace("utf-32", "utf-32-le")
            )
        )
        // width
    )
    assert key.range == types.Range(types.Position(3, start), types.Position(3, start + 6))
    assert key.source == "ai-eval"
    assert key.message == "regex check: `patern` is not a field of regex (did you mean `pattern`?)"
    assert key.severity == types.DiagnosticSeverity.Error


async def test_a_plugin_kind_is_accepted(client: LanguageClient) -> None:
    uri = await open_document(client, "tone.rubric.yaml")
    assert await diagnostics(client, uri) == []


@pytest.mark.parametrize(
    ("line", "character", "expected", "absent"),
    [
        (
            5,
            4,
            ["pattern", "flags", "must_match", "description"],
            ["id", "kind", "values"],
        ),  # empty line in a check
        (6, 10, ["regex", "word_count", "must_contain_any"], []),  # kind value, plugin kinds included
        (7, 4, ["kind", "new regex check", "new word_count check"], ["pattern"]),  # after `- `
        (8, 19, ["pattern", "flags"], ["kind"]),  # flow style
        (10, 11, ["all_pass", "weighted_avg", "median"], []),  # enum value
        (12, 4, ["a"], []),  # check ids as weight keys
        (13, 0, ["label", "description", "applicable_bundles"], ["id", "checks"]),  # zero indent at the end
    ],
)
async def test_completion_table(
    client: LanguageClient, line: int, character: int, expected: list[str], absent: list[str]
) -> None:
    uri = await open_document(client, "completing.rubric.yaml", CURSOR_RUBRIC)
    await diagnostics(client, uri)
    labels = await completion_labels(client, uri, line, character)
    assert set(expected) <= set(labels), labels
    assert not set(absent) & set(labels), labels


async def test_hover(client: LanguageClient) -> None:
    uri = await open_document(client, "tone.rubric.yaml")
    await diagnostics(client, uri)
    on_key = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(6, 6))
    )
    assert on_key is not None and "**Values**" in on_key.contents.value  # type: ignore[union-attr]
    on_kind = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(8, 12))
    )
    assert on_kind is not None
    text = on_kind.contents.value  # type: ignore[union-attr]
    assert (
        "word_count" in text
        and "plugin ai-eval-test-wordcount 0.3.0" in text
        and "executed at run time" in text
    )


async def test_definition_references_and_rename(client: LanguageClient) -> None:
    uri = await open_document(client, "composite.rubric.yaml")
    await diagnostics(client, uri)
    target = (root(client) / "tone.rubric.yaml").as_uri()
    found = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), types.Position(5, 14))
    )
    assert isinstance(found, types.Location) and found.uri == target and found.range.start.line == 0
    weight = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), types.Position(9, 5))
    )
    assert isinstance(weight, types.Location) and weight.uri == uri and weight.range.start.line == 3
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            context=types.ReferenceContext(include_declaration=True),
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(5, 14),
        )
    )
    assert {(r.uri.rsplit("/", 1)[1], r.range.start.line) for r in refs} == {
        ("tone.rubric.yaml", 0),
        ("composite.rubric.yaml", 5),
        ("tone.cases.yaml", 0),
    }
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(5, 14),
            new_name="courtesy",
        )
    )
    assert edit is not None and edit.changes is not None
    assert sorted(e.new_text for edits in edit.changes.values() for e in edits) == ["courtesy"] * 3


async def test_run_cases_reports_progress_and_run_complete(client: LanguageClient) -> None:
    uri = (root(client) / "tone.cases.yaml").as_uri()
    completed: list[Any] = client.completed_runs  # type: ignore[attr-defined]
    before = len(completed)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.runCases", [{"uri": uri}])
    )
    (notification,) = completed[before:]  # once, and before the answer: messages arrive in order
    row: Any = result["row"]
    fields = RESULT_ROW_FIELDS
    assert set(row) == fields
    assert {name: getattr(notification, name) for name in fields} == row
    assert row["source"] == "editor" and row["question_count"] == 2 and row["pass_rate"] == 0.5
    assert result["verdicts"]["polite"]["passed"] is True and result["verdicts"]["curt"]["passed"] is False
    window = client.capabilities.window
    if window and window.work_done_progress:
        reports = [r for token_reports in client.progress_reports.values() for r in token_reports]
        assert any(isinstance(r, types.WorkDoneProgressEnd) for r in reports)


async def test_run_check_with_a_response(client: LanguageClient) -> None:
    uri = await open_document(client, "tone.rubric.yaml")
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            "aiEval.runCheck", [{"uri": uri, "checkId": "apologises", "response": "So sorry!"}]
        )
    )
    assert result["outcome"] == {
        "checkId": "apologises",
        "kind": "must_contain_any",
        "score": 1.0,
        "passed": True,
        "reason": 'found "sorry"',
    }
    assert result["text"] == 'pass 5.00/5  found "sorry"'


async def test_run_check_without_a_response_runs_it_on_each_case(client: LanguageClient) -> None:
    uri = await open_document(client, "tone.rubric.yaml")
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.runCheck", [{"uri": uri, "checkId": "apologises"}])
    )
    assert [(case["caseId"], case["outcome"]["passed"]) for case in result["cases"]] == [
        ("polite", True),
        ("curt", False),
    ]
    assert result["text"].splitlines() == [
        'tone.cases.yaml polite: pass 5.00/5  found "sorry"',
        "tone.cases.yaml curt: fail 0.00/5  none of the values found",
    ]


async def test_run_check_says_which_checks_there_are_not(client: LanguageClient) -> None:
    uri = await open_document(client, "tone.rubric.yaml")
    for arguments, message in (
        ({"checkIndex": 99}, "has no check at position 99"),
        ({"checkId": "nope"}, "has no check with id 'nope'"),
    ):
        with pytest.raises(Exception, match=message):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams("aiEval.runCheck", [{"uri": uri, "response": "x", **arguments}])
            )


async def test_run_check_says_what_is_wrong_with_its_question(client: LanguageClient) -> None:
    uri = await open_document(client, "tone.rubric.yaml")
    arguments = {"uri": uri, "checkId": "apologises", "response": "So sorry!", "question": "q1"}
    with pytest.raises(Exception, match="`question` must be a mapping"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams("aiEval.runCheck", [arguments])
        )


async def test_the_server_keeps_serving_after_a_handler_fails(client: LanguageClient) -> None:
    with pytest.raises(Exception, match=r"cannot be read|not a cases file"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                "aiEval.runCases", [{"uri": (root(client) / "missing.cases.yaml").as_uri()}]
            )
        )
    schema = await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.exportSchema", [{}])
    )
    assert "check_word_count" in schema["$defs"]


async def announced(client: LanguageClient, uri: str) -> None:
    while uri not in client.roles:  # type: ignore[attr-defined]
        await asyncio.sleep(0.01)


async def test_other_yaml_gets_nothing(client: LanguageClient) -> None:
    uri = await open_document(
        client, "docker-compose.yaml", "services:\n  web: {image: nginx, kind: regexp}\n"
    )
    # The server's word on its role comes once it has read it: from then on, it never reports on it.
    await asyncio.wait_for(announced(client, uri), 10)
    assert client.roles[uri] is None  # type: ignore[attr-defined]
    if pulls(client):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
        )
        assert list(report.items) == []
    else:
        assert uri not in client.diagnostics
    assert await completion_labels(client, uri, 1, 2) == []


async def test_the_file_watcher_is_registered(client: LanguageClient) -> None:
    methods = [r.method for r in client.registrations]  # type: ignore[attr-defined]
    watched = client.capabilities.workspace and client.capabilities.workspace.did_change_watched_files
    assert (types.WORKSPACE_DID_CHANGE_WATCHED_FILES in methods) == bool(
        watched and watched.dynamic_registration
    )


async def test_cross_file_problems_follow_the_other_file(client: LanguageClient) -> None:
    text = 'id: umbrella\nversion: "1.0"\nchecks:\n  - {kind: composite, rubric: late_arrival}\nscoring: {combine: all_pass}\n'
    uri = await open_document(client, "umbrella.rubric.yaml", text)
    assert [d.code for d in await diagnostics(client, uri)] == ["unresolved-rubric"]
    other = 'id: late_arrival\nversion: "1.0"\nchecks:\n  - {kind: must_contain_any, values: [a]}\nscoring: {combine: all_pass}\n'
    await open_document(client, "late.rubric.yaml", other)
    for _ in range(100):  # the umbrella's diagnostics are refreshed (pushed again, or pulled anew)
        await asyncio.sleep(0.05)
        current = await current_diagnostics(client, uri)
        if not current:
            break
    assert current == []


async def test_reload_plugins_reports_kinds_and_problems(client: LanguageClient) -> None:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.reloadPlugins", [{}])
    )
    assert result["kinds"]["word_count"] == "plugin ai-eval-test-wordcount 0.3.0"
    assert result["kinds"]["regex"] == "core"
    assert any("this plugin cannot be imported" in problem for problem in result["problems"])


async def test_hover_on_a_composite_reference_and_symbols(client: LanguageClient) -> None:
    uri = await open_document(client, "composite.rubric.yaml")
    await diagnostics(client, uri)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(5, 14))
    )
    assert hover is not None
    text = hover.contents.value  # type: ignore[union-attr]
    assert "**Support tone**" in text and "version 1.0" in text and "`apologises`, `length`" in text
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
    )
    (rubric,) = symbols
    assert rubric.name == "escalation"  # type: ignore[union-attr]
    assert [(c.name, c.detail) for c in rubric.children] == [("tone", "composite"), ("scoring", "all_pass")]  # type: ignore[union-attr]


async def test_completion_in_a_cases_file(client: LanguageClient) -> None:
    uri = await open_document(client, "new.cases.yaml", "rubric: \ncases: []\n")
    await diagnostics(client, uri)
    labels = await completion_labels(client, uri, 0, 8)
    assert {"support_tone", "support_tone@1.0", "escalation"} <= set(labels)


async def test_run_rubric_with_a_response_and_on_its_cases(client: LanguageClient) -> None:
    uri = await open_document(client, "tone.rubric.yaml")
    completed: list[Any] = client.completed_runs  # type: ignore[attr-defined]
    before = len(completed)
    one = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            "aiEval.runRubric", [{"uri": uri, "response": "So sorry, the refund is coming."}]
        )
    )
    # each run's runComplete comes once, before its answer (messages arrive in order)
    assert [note.run_id for note in completed[before:]] == [one["row"]["run_id"]]
    assert one["verdict"]["passed"] is True and one["row"]["question_count"] == 1
    assert [o["checkId"] for o in one["verdict"]["outcomes"]] == ["apologises", "length"]
    every = await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.runRubric", [{"uri": uri}])
    )
    (run,) = every["runs"]
    assert [note.run_id for note in completed[before:]] == [one["row"]["run_id"], run["row"]["run_id"]]
    assert run["casesUri"].endswith("/tone.cases.yaml") and run["row"]["question_count"] == 2
    assert set(run["verdicts"]) == {"polite", "curt"}
    # each case as the editors show it, in the server's words (`ai-eval-lsp run`'s): `curt` fails,
    # as its `expect: fail` says, so it passes and still says why
    assert run["cases"] == {
        "polite": {"state": "passed", "messages": []},
        "curt": {
            "state": "passed",
            "messages": [
                {
                    "text": "fail 0.00/5  all_pass: 0 of 2 checks passed | failed: "
                    "apologises (none of the values found); length (1 words, minimum 3)"
                }
            ],
        },
    }


async def test_create_cases_file_where_none_names_the_rubric(client: LanguageClient) -> None:
    text = 'id: lonely\nversion: "1.0"\nchecks:\n  - {kind: must_contain_any, values: [a]}\nscoring: {combine: all_pass}\n'
    uri = await open_document(client, "lonely.rubric.yaml", text)
    await diagnostics(client, uri)
    here = types.Range(types.Position(0, 0), types.Position(0, 0))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri), here, types.CodeActionContext([]))
    )
    create = next(
        a
        for a in actions
        if isinstance(a, types.CodeAction) and a.title == "Create cases file lonely.cases.yaml"
    )
    changes = create.edit.document_changes  # type: ignore[union-attr]
    assert isinstance(changes[0], types.CreateFile) and changes[0].uri.endswith("/lonely.cases.yaml")  # type: ignore[index]
    assert changes[1].edits[0].new_text.startswith("rubric: lonely\ncases:\n")  # type: ignore[index,union-attr]
    covered = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier((root(client) / "tone.rubric.yaml").as_uri()),
            here,
            types.CodeActionContext([]),
        )
    )
    assert not any(
        isinstance(a, types.CodeAction) and a.title.startswith("Create cases file") for a in covered
    )


async def test_a_cycle_carries_its_chain_as_related_information(client: LanguageClient) -> None:
    first = 'id: ping\nversion: "1.0"\nchecks:\n  - {kind: composite, rubric: pong}\nscoring: {combine: all_pass}\n'
    second = 'id: pong\nversion: "1.0"\nchecks:\n  - {kind: composite, rubric: ping}\nscoring: {combine: all_pass}\n'
    await open_document(client, "pong.rubric.yaml", second)
    uri = await open_document(client, "ping.rubric.yaml", first)
    # The two are analysed at once: ping's first diagnostics may come before pong's analysis is
    # committed (pong unresolved); pong's commit then republishes them, the cycle found.
    (problem,) = await diagnostics_until(
        client, uri, lambda found: [d.code for d in found] == ["composite-cycle"]
    )
    assert "ping → pong → ping" in problem.message
    assert [info.location.uri.rsplit("/", 1)[1] for info in problem.related_information or []] == [
        "pong.rubric.yaml",
        "ping.rubric.yaml",
    ]


async def test_code_actions_of_the_kinds_asked_for_only(client: LanguageClient) -> None:
    text = (
        'id: typo2\nversion: "1.0"\nchecks:\n  - {kind: regexp, pattern: x}\nscoring: {combine: all_pass}\n'
    )
    uri = await open_document(client, "typo2.rubric.yaml", text)
    (problem,) = await diagnostics(client, uri)
    every = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), problem.range, types.CodeActionContext([problem])
        )
    )
    assert {a.kind for a in every if isinstance(a, types.CodeAction)} == {
        types.CodeActionKind.QuickFix,
        types.CodeActionKind.Source,
    }
    fixes = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri),
            problem.range,
            types.CodeActionContext([problem], only=[types.CodeActionKind.QuickFix]),
        )
    )
    assert [a.title for a in fixes if isinstance(a, types.CodeAction)] == ["Change `regexp` to `regex`"]
