"""Editing sessions as users have them: the real debounce, requests right after keystrokes, text
that editors and YAML count differently, huge documents, and runs that are cancelled."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import LanguageClient

from e2e.conftest import EDITORS, SERVER
from e2e.helpers import (
    completion_labels,
    diagnostics,
    diagnostics_until,
    edit,
    hover_text,
    open_document,
    pulls,
    start,
)

RUBRIC_A = 'id: a\nversion: "1.0"\nchecks:\n  - {id: polite, kind: must_contain_any, values: [sorry]}\nscoring: {combine: all_pass}\n'
RUBRIC_B = 'id: b\nversion: "1.0"\nchecks:\n  - {id: inner, kind: composite, rubric: a}\nscoring: {combine: all_pass}\n'


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("editing")
    (root / ".git").mkdir()
    many = "".join(
        f"  - id: case{n}\n    question: {{id: q{n}, input: x, expected: {{reference: 'Sorry, the refund arrives in five days.'}}}}\n"
        f"    response: 'Sorry about that: your refund arrives within five days, case {n}.'\n"
        for n in range(2000)
    )
    (root / "slow.rubric.yaml").write_text(
        'id: slow\nversion: "1.0"\nchecks:\n  - {id: close, kind: target_match, source: expected.reference, mode: chrf}\n'
        "scoring: {combine: all_pass}\n"
    )
    (root / "slow.cases.yaml").write_text(f"rubric: slow\ncases:\n{many}")
    return root


@pytest_lsp.fixture(params=EDITORS, config=SERVER, scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    yield await start(lsp_client, request.param, [workspace])
    await lsp_client.shutdown_session()


def uri(client: LanguageClient, name: str) -> str:
    return (client.workspace_root / name).as_uri()  # type: ignore[attr-defined,no-any-return]


async def test_renaming_a_rubric_while_the_editor_asks_for_symbols_and_lenses(client: LanguageClient) -> None:
    """The editor asks for symbols and code lenses within the debounce after every edit; the
    rubric that names the renamed one still learns it is gone."""
    a = await open_document(client, "a.rubric.yaml", RUBRIC_A)
    b = await open_document(client, "b.rubric.yaml", RUBRIC_B)
    assert await diagnostics(client, a) == []
    assert await diagnostics(client, b) == []
    edit(client, a, 2, (0, 5), (0, 5), "2")  # `id: a` becomes `id: a2`, one keystroke
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(a))
    )
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(a)))
    assert symbols[0].name == "a2" and len(lenses) == 2  # type: ignore[union-attr]
    found = await diagnostics_until(client, b, lambda found: found)
    assert [(d.code, d.range.start.line) for d in found] == [("unresolved-rubric", 3)]
    assert "there is no rubric `a`" in found[0].message


async def test_a_sub_rubric_left_unreadable_is_named_where_it_is_used(client: LanguageClient) -> None:
    """A `]` deleted in the sub-rubric: the composite that uses it says which file declares the id
    and where that file's YAML fails, and points there; typing the `]` back clears it."""
    line = "  - {id: polite, kind: must_contain_any, values: [sorry]}"
    sub = await open_document(client, "sub.rubric.yaml", RUBRIC_A.replace("id: a", "id: sub"))
    uses_sub = RUBRIC_B.replace("id: b", "id: uses_sub").replace("rubric: a", "rubric: sub")
    uses = await open_document(client, "uses_sub.rubric.yaml", uses_sub)
    assert await diagnostics(client, uses) == []
    bracket, opened = line.index("]"), line.index("[")  # the list's closing bracket is deleted
    edit(client, sub, 2, (3, bracket), (3, bracket + 1), "")
    found = await diagnostics_until(client, uses, lambda found: found)
    assert [(d.code, d.message) for d in found] == [
        (
            "unresolved-rubric",
            "composite check `sub`: sub.rubric.yaml declares `id: sub` (line 1) but cannot be read: "
            f"yaml-syntax at 4:{opened + 1}; fix its YAML",
        )
    ]
    (where,) = found[0].related_information or []
    assert (where.location.uri, where.location.range.start) == (sub, types.Position(3, opened))
    assert (
        where.message
        == "cannot be read: YAML syntax error: this `[` is never closed: add `]` where the list ends"
    )
    edit(client, sub, 3, (3, bracket), (3, bracket), "]")
    assert await diagnostics_until(client, uses, lambda found: not found) == []


async def test_a_request_right_after_an_edit_sees_the_edit(client: LanguageClient) -> None:
    text = 'id: fresh\nversion: "1.0"\nchecks:\n  - {id: one, kind: must_contain_any, values: [a]}\nscoring: {combine: all_pass}\n'
    doc = await open_document(client, "fresh.rubric.yaml", text)
    await diagnostics(client, doc)
    edit(client, doc, 2, (3, 0), (3, 0), "  - {id: two, kind: regex, pattern: x}\n")
    assert "**Pattern**" in await hover_text(client, doc, 3, 31)
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(doc))
    )
    assert [c.name for c in symbols[0].children][:2] == ["two", "one"]  # type: ignore[union-attr]


async def test_completion_right_after_a_keystroke(client: LanguageClient) -> None:
    text = 'id: typing\nversion: "1.0"\nchecks:\n  - id: one\n    kind: regex\n    \nscoring: {combine: all_pass}\n'
    doc = await open_document(client, "typing.rubric.yaml", text)
    await diagnostics(client, doc)
    edit(client, doc, 2, (5, 4), (5, 4), "pa")
    assert "pattern" in await completion_labels(client, doc, 5, 6)


async def test_hover_right_after_a_keystroke_reads_the_check_as_typed(client: LanguageClient) -> None:
    """Asked within the debounce, hover reads the edited check as it is now: its new kind's field."""
    text = 'id: hovering\nversion: "1.0"\nchecks:\n  - id: one\n    kind: regex\n    values: [sorry]\nscoring: {combine: all_pass}\n'
    doc = await open_document(client, "hovering.rubric.yaml", text)
    await diagnostics(client, doc)
    edit(client, doc, 2, (4, 10), (4, 15), "must_contain_any")
    hover = await hover_text(client, doc, 5, 6)
    assert hover.startswith("**Values** (`values`)") and "to look for in the response" in hover


async def test_completion_and_hover_right_after_a_keystroke_that_breaks_the_yaml(
    client: LanguageClient,
) -> None:
    """One more space before a key inside a check leaves the YAML unreadable: completion and hover
    answer from that check's last good reading, where the text has it now."""
    text = (
        'id: spaced\nversion: "1.0"\nchecks:\n  - id: one\n    kind: regex\n    pattern: x\n'
        "  - id: two\n    kind: must_contain_any\n    values: [a]\nscoring: {combine: all_pass}\n"
    )
    doc = await open_document(client, "spaced.rubric.yaml", text)
    await diagnostics(client, doc)
    edit(client, doc, 2, (5, 4), (5, 4), " ")
    labels = await completion_labels(client, doc, 5, 5)
    assert "must_match" in labels and "values" not in labels  # a regex check's fields
    edit(client, doc, 3, (5, 4), (5, 5), "")
    await diagnostics(client, doc, 3)  # its last good reading: the YAML as it was
    edit(client, doc, 4, (5, 4), (5, 4), " ")
    assert (await hover_text(client, doc, 5, 7)).startswith("**Pattern** (`pattern`)")
    # Once the broken text is analysed too (its syntax error reported), and typed on.
    assert [d.code for d in await diagnostics(client, doc, 4)] == ["yaml-syntax"]
    edit(client, doc, 5, (5, 5), (5, 5), "x")
    assert "must_match" in await completion_labels(client, doc, 5, 6)
    assert (await hover_text(client, doc, 5, 8)).startswith("**Pattern** (`pattern`)")


LINE_BREAKS_TO_YAML_11 = ["\u2028", "\u2029", "\x85"]


@pytest.mark.parametrize("char", LINE_BREAKS_TO_YAML_11, ids=["LS", "PS", "NEL"])
async def test_characters_only_yaml_1_1_breaks_lines_at_keep_every_position(
    client: LanguageClient, char: str
) -> None:
    text = (
        f'id: seps{ord(char)}\nversion: "1.0"\ndescription: "one{char}two{char}three"\nchecks:\n'
        f"  - {{kind: regex, patern: x}}\nscoring: {{combine: all_pass}}\n"
    )
    doc = await open_document(client, f"seps{ord(char)}.rubric.yaml", text)
    found = await diagnostics(client, doc)
    assert {(d.code, d.range.start.line) for d in found} == {("unknown-key", 4), ("schema", 4)}
    # An incremental edit after such a character lands where the editor put it.
    edit(client, doc, 2, (4, 18), (4, 24), "pattern")
    assert await diagnostics_until(client, doc, lambda found: not found) == []


async def test_lone_carriage_returns_end_lines(client: LanguageClient) -> None:
    text = (
        'id: old_mac\rversion: "1.0"\rchecks:\r  - {kind: regex, patern: x}\rscoring: {combine: all_pass}\r'
    )
    doc = await open_document(client, "old_mac.rubric.yaml", text)
    found = await diagnostics(client, doc)
    key = next(d for d in found if d.code == "unknown-key")
    assert (key.range.start.line, key.range.start.character) == (3, 18)


@pytest.mark.parametrize(
    ("long_line", "offered"),
    [
        ("-".join(["a"] * 30_000), ["label"]),  # a top-level key being typed: the missing ones
        ("- " * 30_000, []),
        (f"label: {'-'.join(['a'] * 30_000)}", []),
    ],
    ids=["bare-token", "dashes", "value"],
)
async def test_completion_on_a_very_long_hyphenated_line_answers(
    client: LanguageClient, long_line: str, offered: list[str]
) -> None:
    text = f'id: long\nversion: "1.0"\n{long_line}\nchecks:\n  - kind: regex\n    pattern: x\nscoring: {{combine: all_pass}}\n'
    doc = await open_document(client, "long.rubric.yaml", text)
    labels = await asyncio.wait_for(completion_labels(client, doc, 2, len(long_line)), 10)
    assert set(offered) <= set(labels)
    assert not {"id", "checks", "scoring"} & set(labels)  # those the rubric has
    if not offered:
        assert labels == []


async def test_a_huge_broken_document_never_blocks_other_requests(client: LanguageClient) -> None:
    checks = "".join(f"  - {{id: c{n}, kind: must_contain_any, values: [word{n}]}}\n" for n in range(40_000))
    text = f'id: huge\nversion: "1.0"\nchecks:\n{checks}  - {{id: broken, kind: regex, pattern: [x\nscoring: {{combine: all_pass}}\n'
    small = await open_document(client, "small.rubric.yaml", RUBRIC_A.replace("id: a", "id: small"))
    await diagnostics(client, small)
    huge = await open_document(client, "huge.rubric.yaml", text)
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(small), types.Position(3, 43))
        ),
        5,
    )
    assert hover is not None
    found = await asyncio.wait_for(diagnostics(client, huge), 120)
    assert [(d.code, d.range.start.line) for d in found] == [("yaml-syntax", 40_003)]  # the `[` never closed


async def test_pulled_diagnostics_that_did_not_change_are_answered_unchanged(client: LanguageClient) -> None:
    if not pulls(client):
        pytest.skip("this editor takes pushed diagnostics")
    doc = await open_document(client, "stable.rubric.yaml", RUBRIC_A.replace("id: a", "id: stable"))
    first = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(doc))
    )
    assert isinstance(first, types.RelatedFullDocumentDiagnosticReport) and first.result_id
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(doc), previous_result_id=first.result_id)
    )
    assert (
        isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)
        and again.result_id == first.result_id
    )


def rows(client: LanguageClient) -> list[Any]:
    database = client.workspace_root / ".ai_eval" / "results.sqlite"  # type: ignore[attr-defined]
    if not database.exists():
        return []
    with sqlite3.connect(database) as connection:
        return connection.execute("SELECT target_id FROM ai_eval_result").fetchall()


async def run_then_cancel(client: LanguageClient, cancel: Any) -> None:
    """Start a long run, cancel it the way `cancel` does, and check it is answered -32800."""
    announced = len(client.completed_runs)  # type: ignore[attr-defined]
    before = rows(client)
    request = asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams("aiEval.runCases", [{"uri": uri(client, "slow.cases.yaml")}]),
            msg_id="long-run",
        )
    )
    await _until(lambda: _run_progress(client) is not None)
    token = _run_progress(client)
    await cancel(token)
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(request, 60)
    # Its progress ends as cancelled: the run stopped there (it would end with its summary had it gone on).
    reports = client.progress_reports[token]
    await _until(lambda: isinstance(reports[-1], types.WorkDoneProgressEnd))
    assert reports[-1].message == "cancelled"  # type: ignore[union-attr]
    # A run that finishes afterwards is the only one stored and announced: the cancelled one is not.
    short = (
        'rubric: slow\ncases:\n  - {id: one, question: {id: q, expected: {reference: "x"}}, response: "x"}\n'
    )
    (client.workspace_root / "short.cases.yaml").write_text(short)  # type: ignore[attr-defined]
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.runCases", [{"uri": uri(client, "short.cases.yaml")}])
    )
    completions = client.completed_runs  # type: ignore[attr-defined]
    await asyncio.wait_for(_until(lambda: len(completions) > announced), 10)
    assert [c.question_count for c in completions[announced:]] == [1]
    assert rows(client) == [*before, ("slow",)]


async def _until(condition: Any, timeout: float = 30) -> None:
    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


async def test_cancelling_a_run_request_stores_and_sends_nothing(client: LanguageClient) -> None:
    async def cancel_request(token: Any) -> None:
        client.protocol.notify("$/cancelRequest", types.CancelParams(id="long-run"))

    await run_then_cancel(client, cancel_request)


async def test_cancelling_a_runs_progress_stores_and_sends_nothing(client: LanguageClient) -> None:
    async def cancel_progress(token: Any) -> None:
        client.protocol.notify(
            types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token)
        )

    await run_then_cancel(client, cancel_progress)


def _run_progress(client: LanguageClient) -> Any:
    """The token of the progress of the run of slow.cases.yaml under way, once it has reported."""
    for token, reports in client.progress_reports.items():
        begin = reports[0] if reports else None
        running = not any(isinstance(r, types.WorkDoneProgressEnd) for r in reports)
        if (
            isinstance(begin, types.WorkDoneProgressBegin)
            and begin.title == "Run cases slow.cases.yaml"
            and running
        ):
            return token if len(reports) > 1 else None
    return None


async def test_a_long_run_reports_progress_a_few_times_not_per_case(client: LanguageClient) -> None:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.runCases", [{"uri": uri(client, "slow.cases.yaml")}])
    )
    assert result["row"]["question_count"] == 2000
    (reports,) = [
        reports
        for reports in client.progress_reports.values()
        if reports
        and isinstance(reports[0], types.WorkDoneProgressBegin)
        and reports[0].title == "Run cases slow.cases.yaml"
        and isinstance(reports[-1], types.WorkDoneProgressEnd)
        and "2000 cases" in (reports[-1].message or "")
    ]
    assert 2 <= len(reports) < 100
    assert reports[-2].message == "2000/2000 cases"  # type: ignore[union-attr]
