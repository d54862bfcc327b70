"""The site's own runs through the real server (SPEC 3): a project whose site database is an
SQLite file; the first read fills the history and says nothing, each row the site inserts later
reaches the client once as `aiEval/runComplete` with `trigger: "site"` (a regression flagged),
while a file of the project is open; `aiEval.siteRuns`, `aiEval.history` and `aiEval.diff` show
them. The same against real MariaDB and PostgreSQL servers: tests/e2e/test_site_databases.py."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from site_db import RUBRIC, SqliteSite, drush_row, runner_row
from site_shapes import codebase

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
        "site run 3 of support_bot regressed: pass rate 0.00 [0.00, 0.20], average 1.50/5, gate failed, "
        "2 questions, 0 errors; average -2.50 against site run 2 (tolerance 0.5)"
    )
    await asyncio.sleep(3 * POLL)
    assert len(site_notes(showing)) == 1  # once
    assert not [m for m in showing.messages if "site run" in m.message]  # it shows runs itself
    # listed, each run carries what it was told with: its line, whether it regressed, its project
    listed = (await command(showing, "aiEval.siteRuns", {"target": "support_bot"}))["rows"]
    assert [(row["siteId"], row["regressed"], row["projectUri"]) for row in listed] == [
        (3, True, project.as_uri()),
        (2, False, project.as_uri()),
        (1, False, project.as_uri()),
    ]
    assert listed[0]["summary"] == note.summary and listed[0]["avg_score"] == note.avg_score
    assert (
        listed[0]["facts"]
        == [list(fact) for fact in note.facts]
        == [
            ["date", "2026-05-28 20:46 UTC"],
            ["pass rate", "0.00 [0.00, 0.20]"],
            ["average", "1.50/5"],
            ["gate", "failed"],
            ["questions", "2"],
            ["errors", "0"],
            ["source", "manual"],
        ]
    )
    assert listed[1]["summary"].endswith("; average -0.50 against site run 1")


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
    # the site's row passed both questions (pass rate 1.0): its verdicts, not the rubric's pass line
    assert found["cases"] == [
        {"caseId": "q17", "base": {"score": 4.0, "passed": True}, "head": {"score": 5.0, "passed": True}},
        {"caseId": "q1", "base": {"score": 4.0, "passed": True}, "head": None},
    ]
    assert found["flipped"] == []
    text = (
        await command(showing, "aiEval.render", {"what": "diff", "base": "site:latest", "head": "latest"})
    )["text"]
    assert text.splitlines()[0].startswith("refund_answer: site run 2 (")
    history = (await command(showing, "aiEval.render", {"what": "history", "target": "support_bot"}))["text"]
    assert history.splitlines()[2].startswith("site 2 ")


async def test_the_server_answers_a_site_question_s_verdict_from_its_row_tied_ones_unknown(
    showing: LanguageClient, site: SqliteSite
) -> None:
    """`aiEval.diff` and `aiEval.render` as the editors get them: each site question's verdict is
    the one its row implies; the questions tied at the row's line are `passed: null`, never
    flipped."""
    site.insert(
        runner_row("support_bot", {"q1": 5.0, "q2": 4.0, "q3": 4.0, "q4": 1.0}, run_id=3, pass_rate=0.5),
        runner_row("support_bot", {"q1": 0.0, "q2": 0.0, "q3": 4.0, "q4": 1.0}, run_id=4, pass_rate=0.25),
    )
    await command(showing, "aiEval.siteRuns", {})
    found = await command(
        showing, "aiEval.diff", {"base": "site:3", "head": "site:4", "target": "support_bot"}
    )
    assert [(case["caseId"], case["base"], case["head"]) for case in found["cases"]] == [
        ("q1", {"score": 5.0, "passed": True}, {"score": 0.0, "passed": False}),
        ("q2", {"score": 4.0, "passed": None}, {"score": 0.0, "passed": False}),
        ("q3", {"score": 4.0, "passed": None}, {"score": 4.0, "passed": True}),
        ("q4", {"score": 1.0, "passed": False}, {"score": 1.0, "passed": False}),
    ]
    assert found["flipped"] == ["q1"]
    argument = {"what": "diff", "base": "site:3", "head": "site:4", "target": "support_bot"}
    text = (await command(showing, "aiEval.render", {**argument, "format": "text"}))["text"]
    assert "q2    tied 4.00  fail 0.00  down" in text.splitlines() and text.splitlines()[-1].startswith(
        "tied: "
    )
    markdown = (await command(showing, "aiEval.render", {**argument, "format": "markdown"}))["text"]
    assert "| `q3` | tied 4.00 | pass 4.00 |  |" in markdown.splitlines()
    html = (await command(showing, "aiEval.render", {**argument, "format": "html"}))["text"]
    assert "q2    tied 4.00  fail 0.00  down" in html


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


async def test_a_client_that_does_not_show_runs_gets_a_regression_as_a_message_and_the_others_in_its_log(
    plain: LanguageClient, project: Path, site: SqliteSite
) -> None:
    await open_document(plain, project / "refund.rubric.yaml")
    await command(plain, "aiEval.siteRuns", {})
    site.insert(runner_row("support_bot", {"q17": 5.0}, run_id=3))  # +1.00
    await until(lambda: any("site run 3 of support_bot" in m.message for m in plain.log_messages), POLL + 10)
    site.insert(runner_row("support_bot", {"q17": 0.0}, run_id=4))  # -5.00
    await until(lambda: any("site run 4 of support_bot" in m.message for m in plain.messages), POLL + 10)
    await asyncio.sleep(3 * POLL)
    (shown,) = [m for m in plain.messages if "site run" in m.message]  # the regression, alone
    assert shown.type == types.MessageType.Warning
    assert shown.message.startswith("site run 4 of support_bot regressed: ")
    logged = [
        m.message for m in plain.log_messages if "site run 3 of" in m.message or "site run 4 of" in m.message
    ]
    assert logged == [
        f"{project}: site run 3 of support_bot: pass rate 1.00 [0.80, 1.00], average 5.00/5, gate passed, "
        "1 question, 0 errors; average +1.00 against site run 2"
    ]
    assert [(note.siteId, note.regressed) for note in site_notes(plain)] == [(3, False), (4, True)]
    assert [
        m.message for m in plain.log_messages if "site runs read" in m.message or "site run read" in m.message
    ] == [f"{project}: 2 site runs read from sqlite file {site.path}"]


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
    await until(lambda: any("site run 3 of" in m.message for m in plain.log_messages), POLL + 10)
    shown = [m.message for m in [*plain.messages, *plain.log_messages] if "site run 3 of" in m.message]
    assert len(shown) == 1 and all(
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
async def drupal(lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A Drupal codebase with no configuration export (a note says so), whose site has one run."""
    site = SqliteSite(tmp_path / "site.sqlite")
    site.insert(runner_row("support_bot", {"q17": 5.0}, run_id=1))
    root = site_project(tmp_path / "project", f"sqlite://localhost/{site.path}")
    codebase(root)
    client = await start(
        lsp_client, "visual_studio_code", [root], experimental={"aiEval": {"runComplete": True}}
    )
    client.project, client.site = root, site  # type: ignore[attr-defined]
    yield client
    await lsp_client.shutdown_session()


async def test_the_first_read_is_one_line_in_the_log_and_the_project_s_note_is_shown_once(
    drupal: LanguageClient,
) -> None:
    root: Path = drupal.project  # type: ignore[attr-defined]
    site: SqliteSite = drupal.site  # type: ignore[attr-defined]
    uri = (root / "refund.cases.yaml").as_uri()
    await command(drupal, "aiEval.siteRuns", {"uri": uri})
    await open_document(drupal, root / "refund.cases.yaml")
    site.insert(runner_row("support_bot", {"q17": 4.0}, run_id=2))
    await command(drupal, "aiEval.siteRuns", {"uri": uri})
    drupal.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await until(lambda: len(site_notes(drupal)) == 1, POLL + 10)
    await asyncio.sleep(3 * POLL)
    assert [m.message for m in drupal.log_messages if " read from " in m.message] == [
        f"{root}: 1 site run read from sqlite file {site.path}"
    ]
    notes = [m.message for m in drupal.messages if "core.extension.yml" in m.message]
    assert len(notes) == 1 and notes[0].startswith("AI Eval: no core.extension.yml found")


USER_CONFIG = Path(tempfile.mkdtemp(prefix="ai-eval-user-config-"))
"""XDG_CONFIG_HOME of the servers started with `WITH_USER_CONFIG`: where the user's own
`ai-eval-lsp/config.toml` is."""
WITH_USER_CONFIG = ClientServerConfig(
    server_command=SERVER.server_command, server_env={**os.environ, "XDG_CONFIG_HOME": str(USER_CONFIG)}
)


def user_config(url: str) -> None:
    (USER_CONFIG / "ai-eval-lsp").mkdir(exist_ok=True)
    (USER_CONFIG / "ai-eval-lsp" / "config.toml").write_text(f'[site]\ndatabase = "{url}"\n')


@pytest_lsp.fixture(config=WITH_USER_CONFIG)
async def untrusted_with_config(lsp_client: LanguageClient, project: Path, site: SqliteSite):  # type: ignore[no-untyped-def]
    """Restricted Mode, the repository's ai-eval.toml naming a site that is not there, the user's
    own config file naming the real one."""
    (project / "ai-eval.toml").write_text('site.database = "sqlite://localhost/not-this.sqlite"\n')
    user_config(f"sqlite://localhost/{site.path}")
    yield await start(lsp_client, "visual_studio_code", [project], settings={"workspaceTrusted": False})
    await lsp_client.shutdown_session()


async def test_the_user_s_own_config_file_names_the_site_in_an_untrusted_workspace_too(
    untrusted_with_config: LanguageClient,
) -> None:
    answer = await command(untrusted_with_config, "aiEval.siteRuns", {})
    assert "note" not in answer and [row["siteId"] for row in answer["rows"]] == [2, 1]


@pytest_lsp.fixture(config=WITH_USER_CONFIG)
async def configured_twice(lsp_client: LanguageClient, project: Path, site: SqliteSite):  # type: ignore[no-untyped-def]
    """The user's config file names a site that is not there; their editor's setting, the real one."""
    user_config("sqlite://localhost/not-this.sqlite")
    settings = {"site": {"database": f"sqlite://localhost/{site.path}"}}
    yield await start(lsp_client, "visual_studio_code", [project], settings=settings)
    await lsp_client.shutdown_session()


async def test_the_editor_s_own_setting_wins_over_the_user_s_config_file(
    configured_twice: LanguageClient,
) -> None:
    answer = await command(configured_twice, "aiEval.siteRuns", {})
    assert "note" not in answer and [row["siteId"] for row in answer["rows"]] == [2, 1]


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
