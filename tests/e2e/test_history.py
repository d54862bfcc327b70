"""Runs of some cases, the history and diff of a target, and the last-run lens, through the real
server as VS Code and Neovim drive it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from e2e.conftest import EDITORS, SERVER
from e2e.helpers import open_document, root, start


async def command(client: LanguageClient, name: str, argument: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(name, [argument]))


async def run_cases(client: LanguageClient, argument: dict[str, Any]) -> Any:
    """A run, and the one `aiEval/runComplete` it sends (before its answer: both come in order)."""
    completed: list[Any] = client.completed_runs  # type: ignore[attr-defined]
    before = len(completed)
    result = await command(client, "aiEval.runCases", argument)
    assert [note.run_id for note in completed[before:]] == [result["row"]["run_id"]]
    assert result["summary"] == completed[-1].summary  # the one line, as the server wrote it
    return result


async def test_a_run_of_some_cases_then_history_and_diff(client: LanguageClient) -> None:
    uri = (root(client) / "tone.cases.yaml").as_uri()
    subset = await run_cases(client, {"uri": uri, "caseIds": ["curt"]})
    assert subset["row"]["question_count"] == 1 and set(subset["verdicts"]) == {"curt"}
    whole = await run_cases(client, {"uri": uri})
    assert whole["row"]["question_count"] == 2
    # the run as a person reads it, in the server's words: what an editor lists of it
    date, *facts = [list(fact) for fact in client.completed_runs[-1].facts]  # type: ignore[attr-defined]
    assert date[0] == "date" and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", date[1])
    assert facts == [
        ["pass rate", "0.50 [0.09, 0.91]"],
        ["average", "2.50/5"],
        ["gate", "passed"],
        ["cases", "2"],
        ["errors", "0"],
        ["source", "editor"],
    ]

    history = await command(client, "aiEval.history", {"target": "support_tone", "limit": 2})
    assert [row["run_id"] for row in history["rows"]] == [whole["row"]["run_id"], subset["row"]["run_id"]]
    assert history["rows"][0] == whole["row"]
    # the diff a history view opens on: the latest run and the one before, which share `curt`
    assert history["compare"] == {"base": subset["row"]["run_id"], "head": whole["row"]["run_id"]}

    found = await command(client, "aiEval.diff", {"target": "support_tone"})
    assert (found["base"]["run_id"], found["head"]["run_id"]) == (
        subset["row"]["run_id"],
        whole["row"]["run_id"],
    )
    assert found["cases"] == [
        {"caseId": "polite", "base": None, "head": {"score": 5.0, "passed": True}},
        {"caseId": "curt", "base": {"score": 0.0, "passed": False}, "head": {"score": 0.0, "passed": False}},
    ]
    assert found["flipped"] == [] and found["mcnemar_p"] == 1.0 and found["sign_test_p"] == 1.0
    assert found["deltas"] == {"pass_rate": 0.5, "avg_score": 2.5}


async def test_unknown_case_ids_are_named(client: LanguageClient) -> None:
    uri = (root(client) / "tone.cases.yaml").as_uri()
    with pytest.raises(Exception, match="no case with id `polit`; its cases are `curt`, `polite`"):
        await command(client, "aiEval.runCases", {"uri": uri, "caseIds": ["polit"]})


async def test_a_diff_of_a_target_never_run_says_so(client: LanguageClient) -> None:
    with pytest.raises(Exception, match=r"`never_run` has 0 runs in .*results\.sqlite; a diff needs two"):
        await command(client, "aiEval.diff", {"target": "never_run"})


async def test_the_rubric_id_shows_its_last_run_and_it_follows_a_run(client: LanguageClient) -> None:
    uri = await open_document(client, "tone.rubric.yaml")
    cases_uri = (root(client) / "tone.cases.yaml").as_uri()
    await run_cases(client, {"uri": cases_uri, "caseIds": ["polite"]})
    refreshes: list[None] = client.lens_refreshes  # type: ignore[attr-defined]
    before = len(refreshes)
    whole = await run_cases(client, {"uri": cases_uri})
    workspace = client.capabilities.workspace
    if workspace and workspace.code_lens and workspace.code_lens.refresh_support:
        assert len(refreshes) == before + 1
    runs = len((await command(client, "aiEval.history", {"target": "support_tone"}))["rows"])
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(uri))
    )
    last = [lens for lens in lenses if lens.command and lens.command.title.startswith("last run")]
    assert [lens.command.title for lens in last if lens.command] == [
        f"last run: pass 0.50 [0.09-0.91], 2.5/5, {runs} runs"
    ]
    assert whole["row"]["pass_rate"] == 0.5
    (lens,) = last
    text = (root(client) / "tone.rubric.yaml").read_text()
    id_line = next(n for n, line in enumerate(text.splitlines()) if line.startswith("id:"))
    assert lens.range.start.line == id_line
    assert lens.command is not None and lens.command.command == "aiEval.history"
    assert list(lens.command.arguments or []) == [{"target": "support_tone", "uri": uri}]


async def test_a_cases_file_lists_its_cases_as_symbols(client: LanguageClient) -> None:
    uri = await open_document(client, "tone.cases.yaml")
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
    )
    found = [
        (s.name, s.detail, s.range.start.line) for s in symbols or [] if isinstance(s, types.DocumentSymbol)
    ]
    assert found == [("polite", "expect pass", 3), ("curt", "expect fail", 7)]


async def test_workspace_symbols_name_every_case_and_rubric_where_it_is(client: LanguageClient) -> None:
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    places = {
        (s.name, s.kind, s.location.uri.rsplit("/", 1)[-1], s.location.range.start.line)
        for s in found or []
        if isinstance(s, types.SymbolInformation)
    }
    assert {
        ("polite", types.SymbolKind.Event, "tone.cases.yaml", 3),
        ("curt", types.SymbolKind.Event, "tone.cases.yaml", 7),
        ("support_tone@1.0", types.SymbolKind.Module, "tone.rubric.yaml", 0),
    } <= places
    narrowed = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="CUR"))
    assert [s.name for s in narrowed or []] == ["curt"]


@pytest_lsp.fixture(params=EDITORS, config=SERVER)
async def showing_runs(request: pytest.FixtureRequest, lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    """A client that shows `aiEval/runComplete` itself, as ours do."""
    yield await start(lsp_client, request.param, [workspace], experimental={"aiEval": {"runComplete": True}})
    await lsp_client.shutdown_session()


def run_messages(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if m.message.startswith("support_tone: pass rate")]


async def test_one_notification_per_run(client: LanguageClient, showing_runs: LanguageClient) -> None:
    """A client that shows runs itself gets no message besides `aiEval/runComplete`; any other
    client gets the run's summary as a message, once."""
    for each in (client, showing_runs):
        before = len(run_messages(each))
        await run_cases(each, {"uri": (root(each) / "tone.cases.yaml").as_uri()})
        assert len(run_messages(each)) - before == (0 if each is showing_runs else 1)


async def test_a_run_with_no_case_in_common_with_the_run_before_notices_no_drop(
    client: LanguageClient,
) -> None:
    """`polite` alone (5/5), then `curt` alone (0/5): the runs share no case, so the editor's
    message of the second run tells no regression (their averages are of different cases)."""
    uri = (root(client) / "tone.cases.yaml").as_uri()
    await run_cases(client, {"uri": uri, "caseIds": ["polite"]})
    curt = await run_cases(client, {"uri": uri, "caseIds": ["curt"]})
    assert curt["row"]["avg_score"] == 0.0
    assert run_messages(client)[-1] == (
        "support_tone: pass rate 0.00 [0.00, 0.79], average 0.00/5, gate FAILED (pass_rate 0.00 < 0.5), "
        "1 case, 0 errors"
    )
