"""Runs on save (SPEC section 3, `runOnSave`), what `aiEval/runComplete` says of a run (`trigger`,
`summary`, `change`) and `aiEval.render`, through the real server as an editor drives it."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from conftest import FIXTURES, without_test_plugins
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from ai_eval_lsp.cli import main
from e2e.conftest import SERVER
from e2e.helpers import open_document, root, start

SCORING = "scoring: {combine: all_pass}\n"
FILES = {
    "leaf.rubric.yaml": 'id: leaf\nversion: "1.0"\nchecks:\n  - {id: sorry, kind: must_contain_any, values: [sorry]}\n'
    + SCORING,
    "middle.rubric.yaml": 'id: middle\nversion: "1.0"\nchecks:\n  - {id: leaf, kind: composite, rubric: leaf}\n'
    + SCORING,
    "other.rubric.yaml": 'id: other\nversion: "1.0"\nchecks:\n  - {id: thanks, kind: must_contain_any, values: [thanks]}\n'
    + SCORING,
    "leaf.cases.yaml": (
        "rubric: leaf\ncases:\n  - {id: polite, response: 'Sorry, it is late.'}\n  - {id: curt, response: 'No.'}\n"
    ),
    "more.cases.yaml": "rubric: leaf\ncases:\n  - {id: more, response: 'sorry'}\n",
    "middle.cases.yaml": "rubric: middle\ncases:\n  - {id: via_middle, response: 'sorry'}\n",
    "other.cases.yaml": "rubric: other\ncases:\n  - {id: thanked, response: 'thanks'}\n",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def session(settings: dict[str, Any], experimental: dict[str, Any] | None = None) -> Any:
    @pytest_lsp.fixture(config=SERVER)
    async def started(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
        yield await start(lsp_client, "neovim", [workspace], settings, experimental)
        await lsp_client.shutdown_session()

    return started


affected = session({"runOnSave": "affected"})
off = session({"runOnSave": "off"})
affected_showing_runs = session({"runOnSave": "affected"}, {"aiEval": {"runComplete": True}})


def completed(client: LanguageClient, trigger: str | None = None) -> list[Any]:
    return [c for c in client.completed_runs if trigger is None or c.trigger == trigger]  # type: ignore[attr-defined]


def cases_file(params: Any) -> str:
    return json.loads(params.config_json)["cases_file"]  # type: ignore[no-any-return]


async def until(condition: Any, timeout: float = 60) -> None:
    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


async def save(client: LanguageClient, name: str, text: str | None = None, version: int = 1) -> str:
    """Open a file (with `text` when given: the editor's unsaved text) and save it."""
    uri = await open_document(client, name, text, version)
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    return uri


async def run_cases(client: LanguageClient, name: str) -> Any:
    before = len(completed(client))
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.runCases", [{"uri": (root(client) / name).as_uri()}])
    )
    await until(lambda: len(completed(client)) > before)
    return completed(client)[before]


async def settle(client: LanguageClient) -> None:
    """Let the server finish what a save started: a request answered after it, and a moment for
    a run that would (wrongly) follow."""
    await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    await asyncio.sleep(1)


async def test_saving_a_rubric_runs_exactly_the_cases_files_that_reach_it(affected: LanguageClient) -> None:
    await save(affected, "leaf.rubric.yaml")
    await until(lambda: len(completed(affected, "save")) >= 3)
    await settle(affected)
    assert sorted(cases_file(c) for c in completed(affected)) == [
        "leaf.cases.yaml",
        "middle.cases.yaml",
        "more.cases.yaml",
    ]
    await save(affected, "other.cases.yaml")
    await until(lambda: len(completed(affected, "save")) >= 4)
    await settle(affected)
    assert [cases_file(c) for c in completed(affected)[3:]] == ["other.cases.yaml"]


async def test_a_saved_file_that_is_broken_runs_nothing(affected: LanguageClient) -> None:
    await save(affected, "leaf.rubric.yaml", FILES["leaf.rubric.yaml"].replace("checks:", "checks: ["))
    await save(affected, "leaf.cases.yaml", "rubric: leaf\ncases: [{id: x, response: y, bogus: 1}]\n")
    await settle(affected)
    assert completed(affected) == []


async def test_run_on_save_off_runs_nothing(off: LanguageClient) -> None:
    await save(off, "leaf.rubric.yaml")
    await save(off, "leaf.cases.yaml")
    await settle(off)
    assert completed(off) == []
    assert not [m.message for m in off.messages if "runOnSave" in m.message]  # a setting it knows


async def test_run_complete_says_what_flipped_against_the_same_cases_files_run_before(
    affected: LanguageClient, capsys: pytest.CaptureFixture[str]
) -> None:
    first = await run_cases(affected, "leaf.cases.yaml")
    assert (first.trigger, getattr(first, "change", None)) == ("command", None)
    assert first.summary == (
        "leaf: pass rate 0.50 [0.09, 0.91], average 2.50/5, gate passed, 2 cases, 0 errors"
    )
    other_file = await run_cases(affected, "more.cases.yaml")  # the same rubric, another file
    assert getattr(other_file, "change", None) is None
    shown = len(affected.messages)

    # The editor's text, saved: `polite` now fails; compared with leaf.cases.yaml's run, not more's.
    broken = FILES["leaf.cases.yaml"].replace("Sorry, it is late.", "It is late.")
    await save(affected, "leaf.cases.yaml", broken)
    await until(lambda: len(completed(affected, "save")) == 1)
    (flipped,) = completed(affected, "save")
    assert flipped.change.base.run_id == first.run_id
    assert flipped.change.flipped == ["polite"] and flipped.nowFailing == ["polite"]
    assert flipped.summary == "leaf: 1 case now fails: polite"
    # What a client needs to show the cases run (VS Code's Testing view, Neovim's quickfix list).
    assert flipped.casesUri == (root(affected) / "leaf.cases.yaml").as_uri()
    assert (flipped.verdicts.polite.passed, flipped.verdicts.curt.passed) == (False, False)
    assert (flipped.cases.polite.state, [m.text for m in flipped.cases.polite.messages]) == (
        "failed",
        ["fail 0.00/5  all_pass: 0 of 1 checks passed | failed: sorry (none of the values found)"],
    )
    # A client that does not show runs itself gets the flip as a message, once.
    await until(lambda: len(affected.messages) > shown)
    assert [m.message for m in affected.messages[shown:]] == ["leaf: 1 case now fails: polite"]

    # Saved again unchanged: nothing flipped, so nothing is shown, while the run is announced.
    affected.text_document_did_save(
        types.DidSaveTextDocumentParams(
            types.TextDocumentIdentifier((root(affected) / "leaf.cases.yaml").as_uri())
        )
    )
    await until(lambda: len(completed(affected, "save")) == 2)
    again = completed(affected, "save")[1]
    assert again.change.flipped == again.nowFailing == [] and again.summary.startswith(
        "leaf: pass rate 0.00 "
    )
    await settle(affected)
    assert len(affected.messages) == shown + 1

    # What the clients show of the store is the CLI's, word for word.
    database = str(root(affected) / ".ai_eval" / "results.sqlite")
    for what, form, cli in [
        ("history", "text", ["history", "leaf"]),
        ("diff", "text", ["diff", "--target", "leaf"]),
        ("diff", "markdown", ["diff", "--target", "leaf", "--format", "markdown"]),
    ]:
        rendered = await affected.workspace_execute_command_async(
            types.ExecuteCommandParams("aiEval.render", [{"what": what, "target": "leaf", "format": form}])
        )
        capsys.readouterr()
        assert main([*cli, "--db", database]) == 0
        assert rendered["text"] + "\n" == capsys.readouterr().out
    kinds = await affected.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.render", [{"what": "kinds"}])
    )
    capsys.readouterr()
    assert main(["--root", str(root(affected)), "plugins"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == kinds["text"]  # the line `plugins` ends with
    report: Any = await affected.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.render", [{"what": "report", "format": "html"}])
    )
    assert main(["report", "--db", database, "-o", str(root(affected) / "report.html")]) == 0
    assert report["text"] == (root(affected) / "report.html").read_text()
    assert report["text"].count("<svg") == 1  # leaf's trend, drawn by the server
    for wrong, said in [
        ({"what": "report", "format": "text"}, "the report is HTML only, not text"),
        ({"what": "trend", "format": "html"}, "`what` is one of history, diff, report"),
        ({"what": "history", "format": "text"}, "a history needs its `target`"),
    ]:
        with pytest.raises(Exception, match=said):
            await affected.workspace_execute_command_async(
                types.ExecuteCommandParams("aiEval.render", [wrong])
            )


async def test_a_client_that_shows_runs_gets_no_message_for_a_flip(
    affected_showing_runs: LanguageClient,
) -> None:
    client = affected_showing_runs
    await run_cases(client, "leaf.cases.yaml")
    shown = len(client.messages)
    await save(client, "leaf.cases.yaml", FILES["leaf.cases.yaml"].replace("Sorry", "Well"))
    await until(lambda: len(completed(client, "save")) == 1)
    assert completed(client, "save")[0].summary == "leaf: 1 case now fails: polite"
    await settle(client)
    assert len(client.messages) == shown


SLOW_CASES = "rubric: slow\ncases:\n" + "".join(
    f"  - id: case{n}\n    question: {{id: q{n}, expected: {{reference: 'Sorry, the refund arrives in five days.'}}}}\n"
    f"    response: 'Sorry about that: your refund arrives within five days, case {n}.'\n"
    for n in range(2000)
)


def stored(client: LanguageClient) -> list[tuple[str, str]]:
    with sqlite3.connect(root(client) / ".ai_eval" / "results.sqlite") as connection:
        found = connection.execute("SELECT target_id, config_json FROM ai_eval_result").fetchall()
    return [(target, json.loads(config)["cases_file"]) for target, config in found]


def on_save_progress(client: LanguageClient) -> list[list[Any]]:
    return [
        reports
        for reports in client.progress_reports.values()
        if reports
        and isinstance(reports[0], types.WorkDoneProgressBegin)
        and reports[0].title == "Run cases slow.cases.yaml (on save)"
    ]


async def test_a_second_save_cancels_the_on_save_run_under_way(affected: LanguageClient) -> None:
    (root(affected) / "slow.rubric.yaml").write_text(
        'id: slow\nversion: "1.0"\nchecks:\n  - {id: close, kind: target_match, source: expected.reference, mode: chrf}\n'
        + SCORING
    )
    await save(affected, "slow.cases.yaml", SLOW_CASES)
    await until(lambda: bool(on_save_progress(affected)) and len(on_save_progress(affected)[0]) > 1)
    affected.text_document_did_save(
        types.DidSaveTextDocumentParams(
            types.TextDocumentIdentifier((root(affected) / "slow.cases.yaml").as_uri())
        )
    )
    await until(lambda: len(completed(affected)) == 1)
    first, second = on_save_progress(affected)
    assert isinstance(first[-1], types.WorkDoneProgressEnd) and first[-1].message == "cancelled"
    assert isinstance(second[-1], types.WorkDoneProgressEnd) and second[-1].message != "cancelled"
    await settle(affected)
    assert len(completed(affected)) == 1
    assert stored(affected) == [("slow", "slow.cases.yaml")]  # the cancelled run left no row


DRUPAL_MODULE = "web/modules/custom/my_eval_extras"


@pytest.fixture
def untrusted(tmp_path: Path) -> Path:
    """The Drupal fixture site, whose module runs `word_count` in PHP, with a cases file of it."""
    site = tmp_path / "site"
    shutil.copytree(FIXTURES / "drupal" / "site", site)
    rubrics = site / DRUPAL_MODULE / "rubrics"
    (rubrics / "length.rubric.yaml").write_text(
        'id: length\nversion: "1.0"\nchecks:\n  - {id: words, kind: word_count, min: 3}\n'
        "  - {id: polite, kind: must_contain_any, values: [sorry]}\n" + SCORING
    )
    (rubrics / "length.cases.yaml").write_text(
        "rubric: length\ncases:\n  - {id: short, response: 'Sorry.'}\n"
    )
    return site


@pytest_lsp.fixture(
    config=ClientServerConfig(
        [sys.executable, "-m", "ai_eval_lsp", "serve"], server_env=without_test_plugins()
    )
)
async def php_off(lsp_client: LanguageClient, untrusted: Path):  # type: ignore[no-untyped-def]
    """As VS Code starts the server in a workspace it does not trust: `php.run` is false."""
    yield await start(lsp_client, "neovim", [untrusted], {"runOnSave": "affected", "php": {"run": False}})
    await lsp_client.shutdown_session()


async def test_a_save_where_php_may_not_run_runs_without_php(php_off: LanguageClient) -> None:
    await save(php_off, f"{DRUPAL_MODULE}/rubrics/length.cases.yaml")
    await until(lambda: len(completed(php_off, "save")) == 1)
    (saved,) = completed(php_off, "save")
    verdict = saved.verdicts.short
    assert verdict.skipped == ["words"] and "`php.run` is false" in verdict.reason  # PHP never ran
    assert verdict.passed is True  # graded by the check that could run
