"""The site's own runs through the real server (SPEC 3): a project whose site database is an
SQLite file; the first read fills the history and says nothing, each row the site inserts later
reaches the client once as `aiEval/runComplete` with `trigger: "site"` (a regression flagged),
while a file of the project is open; `aiEval.siteRuns`, `aiEval.history` and `aiEval.diff` show
them. The same against real MariaDB and PostgreSQL servers: tests/e2e/test_site_databases.py."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient
from site_db import RUBRIC, SqliteSite, drush_row, runner_row

from e2e.conftest import EDITORS, SERVER
from e2e.helpers import diagnostics, open_document, start

POLL = 0.5
CASES = """\
rubric: refund_answer
site_target: support_bot
cases:
  - id: refund_late
    question: {id: q17}
    response: "Sorry, it is on its way."
"""


def site_project(root: Path, database: str, poll: float = POLL) -> Path:
    root.mkdir(parents=True)
    (root / "ai-eval.toml").write_text(f'site.database = "{database}"\nsite.pollSeconds = {poll}\n')
    (root / "refund.rubric.yaml").write_text(RUBRIC)
    (root / "refund.cases.yaml").write_text(CASES)
    return root


@pytest.fixture
def site(tmp_path: Path) -> SqliteSite:
    found = SqliteSite(tmp_path / "site.sqlite")
    found.insert(
        runner_row("support_bot", {"q17": 5.0, "q1": 4.0}, run_id=1, timestamp=1_780_000_000),
        drush_row("support_bot", {"q17": 4.0, "q1": 4.0}, timestamp=1_780_000_600),
    )
    return found


@pytest.fixture
def project(tmp_path: Path, site: SqliteSite) -> Path:
    return site_project(tmp_path / "project", f"sqlite://localhost/{site.path}")


@pytest_lsp.fixture(params=EDITORS, config=SERVER)
async def showing(request: pytest.FixtureRequest, lsp_client: LanguageClient, project: Path):  # type: ignore[no-untyped-def]
    """A client that shows runs itself, as ours declare."""
    yield await start(lsp_client, request.param, [project], experimental={"aiEval": {"runComplete": True}})
    await lsp_client.shutdown_session()


async def command(client: LanguageClient, name: str, argument: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(name, [argument]))


def site_notes(client: LanguageClient) -> list[Any]:
    return [note for note in client.completed_runs if note.trigger == "site"]  # type: ignore[attr-defined]


async def until(condition: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "it never came"
        await asyncio.sleep(0.05)


async def test_a_row_the_site_inserts_reaches_the_client_once_and_a_regression_is_flagged(
    showing: LanguageClient, project: Path, site: SqliteSite
) -> None:
    await open_document(showing, project / "refund.rubric.yaml")
    history = await command(showing, "aiEval.siteRuns", {"target": "support_bot"})
    assert [row["siteId"] for row in history["rows"]] == [2, 1]  # the first read filled the history
    assert site_notes(showing) == []  # and told nothing
    site.insert(runner_row("support_bot", {"q17": 1.0, "q1": 2.0}, run_id=2, timestamp=1_780_001_200))
    await until(lambda: len(site_notes(showing)) == 1, POLL + 10)
    (note,) = site_notes(showing)
    assert (note.siteId, note.target_id, note.run_id, note.regressed) == (3, "support_bot", 2, True)
    assert note.summary == (
        "site run 3 of support_bot: pass rate 0.00 [0.00, 0.20], average 1.50/5, gate failed, 2 questions, "
        "0 errors; average -2.50 against site run 2"
    )
    await asyncio.sleep(3 * POLL)
    assert len(site_notes(showing)) == 1  # once
    assert not [m for m in showing.messages if "site run" in m.message]  # it shows runs itself


async def test_nothing_is_read_while_no_file_of_the_project_is_open(
    showing: LanguageClient, project: Path, site: SqliteSite
) -> None:
    await command(showing, "aiEval.siteRuns", {})  # the first read is done
    site.insert(drush_row("support_bot", {"q17": 5.0}))
    await asyncio.sleep(4 * POLL)
    assert site_notes(showing) == []
    uri = await open_document(showing, project / "refund.cases.yaml")
    await until(lambda: len(site_notes(showing)) == 1, POLL + 10)
    showing.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))


async def test_site_runs_answer_from_the_store_and_diff_against_the_local_run(
    showing: LanguageClient, project: Path
) -> None:
    rows = (await command(showing, "aiEval.siteRuns", {"target": "support_bot", "limit": 1}))["rows"]
    assert [(row["siteId"], row["run_id"], row["source"], row["duration"]) for row in rows] == [
        (2, None, "drush", 12.34)
    ]
    cases_uri = (project / "refund.cases.yaml").as_uri()
    await command(showing, "aiEval.runCases", {"uri": cases_uri})
    found = await command(showing, "aiEval.diff", {"base": "site:latest", "head": "latest"})
    assert found["cases"] == [
        {"caseId": "q17", "base": {"score": 4.0, "passed": False}, "head": {"score": 5.0, "passed": True}},
        {"caseId": "q1", "base": {"score": 4.0, "passed": False}, "head": None},
    ]
    text = (
        await command(showing, "aiEval.render", {"what": "diff", "base": "site:latest", "head": "latest"})
    )["text"]
    assert text.splitlines()[0].startswith("refund_answer: site run 2 (")
    history = (await command(showing, "aiEval.render", {"what": "history", "target": "support_bot"}))["text"]
    assert history.splitlines()[2].startswith("site 2 ")


async def test_a_site_target_s_history_names_its_runs_and_opens_on_its_latest_two(
    showing: LanguageClient, project: Path
) -> None:
    """What an editor's history view of a site target gets from the project's folder: the runs to
    pick by name, and the diff of the latest two site runs, which share their questions."""
    await command(showing, "aiEval.siteRuns", {})  # the first read done: the history holds the site's runs
    history = await command(showing, "aiEval.history", {"target": "support_bot", "uri": project.as_uri()})
    assert [row["siteId"] for row in history["rows"]] == [2, 1]
    assert history["runs"] == [
        {"name": "site:2", "label": "site run 2"},
        {"name": "site:1", "label": "site run 1"},
    ]
    assert history["compare"] == {"base": "site:1", "head": "site:2"}
    text = (await command(showing, "aiEval.render", {"what": "diff", **history["compare"]}))["text"]
    assert text.splitlines()[0].startswith("support_bot: site run 1 (") and "-> site run 2 (" in text


@pytest_lsp.fixture(params=EDITORS, config=SERVER)
async def plain(request: pytest.FixtureRequest, lsp_client: LanguageClient, project: Path):  # type: ignore[no-untyped-def]
    """A client that does not show runs itself (Emacs's eglot, Helix, ...)."""
    yield await start(lsp_client, request.param, [project])
    await lsp_client.shutdown_session()


async def test_a_client_that_does_not_show_runs_gets_the_line_as_a_message(
    plain: LanguageClient, project: Path, site: SqliteSite
) -> None:
    await open_document(plain, project / "refund.rubric.yaml")
    await command(plain, "aiEval.siteRuns", {})
    site.insert(runner_row("support_bot", {"q17": 0.0}, run_id=3))
    await until(lambda: any("site run 3 of support_bot" in m.message for m in plain.messages), POLL + 10)
    (shown,) = [m for m in plain.messages if "site run 3 of support_bot" in m.message]
    assert shown.type == types.MessageType.Warning  # it regressed


async def test_a_row_s_target_can_neither_colour_nor_forge_a_line_of_the_notification_or_log(
    plain: LanguageClient, project: Path, site: SqliteSite
) -> None:
    await open_document(plain, project / "refund.rubric.yaml")
    await command(plain, "aiEval.siteRuns", {})
    site.insert(
        runner_row(
            "\x1b[31m\n  injected: site run 999 of support_bot: pass rate 1.00", {"q17": 5.0}, run_id=3
        )
    )
    await until(lambda: any("site run 3 of" in m.message for m in plain.messages), POLL + 10)
    shown = [m.message for m in [*plain.messages, *plain.log_messages] if "site run 3 of" in m.message]
    assert len(shown) == 2 and all(
        "site run 3 of \\x1b[31m\\n  injected: site run 999 of support_bot: pass rate 1.00: pass rate 1.00"
        in message
        and message.isprintable()
        for message in shown
    )


async def test_a_site_that_cannot_be_read_is_said_once_and_read_again_once_back(
    showing: LanguageClient, project: Path, site: SqliteSite
) -> None:
    await open_document(showing, project / "refund.rubric.yaml")
    await command(showing, "aiEval.siteRuns", {})
    moved = site.path.with_name("away.sqlite")
    site.path.rename(moved)
    answer = await command(showing, "aiEval.siteRuns", {})
    assert (
        answer["note"] == f"cannot read the site's runs from sqlite file {site.path}: there is no such file"
    )
    assert [row["siteId"] for row in answer["rows"]] == [2, 1]  # what was read stays
    await asyncio.sleep(3 * POLL)
    told = [m.message for m in showing.messages if "cannot read the site's runs" in m.message]
    assert told == [f"AI Eval: {answer['note']}; tried again every {POLL:g} s"]
    moved.rename(site.path)
    site.insert(drush_row("support_bot", {"q17": 5.0}))
    await until(lambda: len(site_notes(showing)) == 1, POLL + 10)


@pytest_lsp.fixture(config=SERVER)
async def untrusted(lsp_client: LanguageClient, project: Path):  # type: ignore[no-untyped-def]
    """VS Code in Restricted Mode: the repository's own settings file may not name a database."""
    yield await start(lsp_client, "visual_studio_code", [project], settings={"workspaceTrusted": False})
    await lsp_client.shutdown_session()


async def test_an_untrusted_workspace_reads_no_site_its_files_name(
    untrusted: LanguageClient, site: SqliteSite
) -> None:
    answer = await command(untrusted, "aiEval.siteRuns", {})
    assert answer == {"rows": [], "note": "no project names a site database: give `site.database`"}


@pytest_lsp.fixture(config=SERVER)
async def malformed(lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A project whose `site.database` no URL parser reads (urlsplit: `Invalid IPv6 URL`)."""
    root = site_project(tmp_path / "project", "mysql://reader:Kx7-Secret@[::1/shop")
    client = await start(lsp_client, "visual_studio_code", [root])
    client.project = root  # type: ignore[attr-defined]
    yield client
    await lsp_client.shutdown_session()


async def test_a_malformed_site_database_is_one_note_and_the_project_works(malformed: LanguageClient) -> None:
    root: Path = malformed.project  # type: ignore[attr-defined]
    uri = await open_document(
        malformed, root / "refund.rubric.yaml", RUBRIC.replace("sorry", "sory"), version=1
    )
    malformed.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(RUBRIC.replace("must_contain_any", "regexp"))],
        )
    )
    assert [d.code for d in await diagnostics(malformed, uri, version=2)] == ["unknown-kind"]
    why = "the setting `site.database`: the host's IPv6 address has no closing `]` (write it as [::1])"
    assert await command(malformed, "aiEval.siteRuns", {}) == {"rows": [], "note": why}
    assert f"{root}: {why}" in [m.message for m in malformed.log_messages]
    assert not [m for m in [*malformed.log_messages, *malformed.messages] if "Kx7" in m.message]


class Trickle:
    """A TCP server that accepts a connection and sends a byte every second, never a whole
    greeting: a database client waits on it as long as it stays up, each read within its limit."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connected = threading.Event()
        self.ended = threading.Event()
        """Set when the client that connected went away."""
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        connection, _ = self.listener.accept()
        self.connected.set()
        with connection:
            while not self.stop.wait(1.0):
                try:
                    connection.sendall(b"\x00")
                except OSError:
                    self.ended.set()
                    return

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


@pytest_lsp.fixture(config=SERVER)
async def held(lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A project whose site database accepts the connection and never finishes answering."""
    trickle = Trickle()
    root = site_project(tmp_path / "project", f"mysql://reader:pw@127.0.0.1:{trickle.port}/shop")
    client = await start(
        lsp_client, "visual_studio_code", [root], experimental={"aiEval": {"runComplete": True}}
    )
    client.trickle, client.project, client.ended = trickle, root, False  # type: ignore[attr-defined]
    yield client
    if not client.ended:  # type: ignore[attr-defined]
        await lsp_client.shutdown_session()
    trickle.close()


async def test_a_site_that_never_answers_holds_neither_typing_nor_the_server_s_exit(
    held: LanguageClient,
) -> None:
    trickle: Trickle = held.trickle  # type: ignore[attr-defined]
    root: Path = held.project  # type: ignore[attr-defined]
    assert await asyncio.to_thread(trickle.connected.wait, 30)  # the first read is under way, and stays
    uri = await open_document(held, root / "refund.rubric.yaml", RUBRIC.replace("sorry", "sory"), version=1)
    held.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [
                types.TextDocumentContentChangeWholeDocument(
                    RUBRIC.replace("kind: must_contain_any", "kind: regexp")
                )
            ],
        )
    )
    found = await diagnostics(held, uri, version=2)
    assert [d.code for d in found] == ["unknown-kind"]
    assert not trickle.ended.is_set()  # answered while the site still held the read
    began = time.monotonic()
    await held.shutdown_session()  # shutdown, exit, and the process ending
    held.ended = True  # type: ignore[attr-defined]
    assert time.monotonic() - began < 30  # the trickle would hold a read for as long as it runs
