"""A repository's files are untrusted input in the editor too (SPEC 6): the server's walk ends past
a FIFO and a link to a device named like rubrics, never reads a link to a file outside the
project, says each once, and publishes diagnostics; a settings file built to exhaust memory, or a
FIFO where Drupal looks for settings.local.php, holds nothing either; and in a workspace the
editor does not trust, no settings file is read at all."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from conftest import without_test_plugins
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from site_shapes import DEFAULT_SETTINGS_TOP, LOCAL_INCLUDE, codebase, write

from e2e.conftest import EDITORS
from e2e.helpers import diagnostics, open_document, start

TOKEN = "ghp_R3alLooking7okenThatMustNeverBeShown0"
TONE = 'id: tone\nversion: "1.0"\nchecks:\n  - {kind: must_contain_any, values: [a]}\nscoring: {combine: all_pass}\n'
USES = (
    'id: uses\nversion: "1.0"\nchecks:\n  - {kind: composite, rubric: tone}\nscoring: {combine: all_pass}\n'
)
CASES = "rubric: tone\ncases:\n  - {id: a, response: 'a'}\n"
CONFIG = ClientServerConfig([sys.executable, "-m", "ai_eval_lsp", "serve"], server_env=without_test_plugins())
DOUBLING = "$s = 'xxxxxxxx';\n" + "$s .= $s;\n" * 40
OUTSIDE = "not read: it is outside the project (a symbolic link or `..` leads out of it), and only files inside the project are read"
FIFO = "not read: it is a named pipe (FIFO), not a regular file, and only regular files are read"


def hostile(tmp_path: Path) -> Path:
    """A Drupal repository whose rubrics folder holds a FIFO, a link to /dev/zero, a link to a
    secret outside it and a link within it; whose settings.php doubles a string 40 times; and
    whose settings.local.php is a FIFO."""
    repo = tmp_path / "repo"
    codebase(repo)
    (repo / ".git").mkdir()
    (repo / "rubrics").mkdir()
    (repo / "shared").mkdir()
    (tmp_path / "runner.env").write_text(f"GITHUB_TOKEN: {TOKEN}\n")
    os.mkfifo(repo / "rubrics" / "pipe.yaml")
    (repo / "rubrics" / "zero.yaml").symlink_to("/dev/zero")
    (repo / "rubrics" / "leak.yaml").symlink_to(tmp_path / "runner.env")
    (repo / "shared" / "tone.yml").write_text(TONE)
    (repo / "rubrics" / "tone.yaml").symlink_to("../shared/tone.yml")
    (repo / "tone.cases.yaml").write_text(CASES)
    (repo / "uses.rubric.yaml").write_text(USES)
    os.mkfifo(repo / "pipe.cases.yaml")
    settings = DEFAULT_SETTINGS_TOP + DOUBLING + "$settings['config_sync_directory'] = $s;\n" + LOCAL_INCLUDE
    write(repo, {"web/sites/default/settings.php": settings})
    os.mkfifo(repo / "web/sites/default/settings.local.php")
    return repo


@pytest_lsp.fixture(params=EDITORS, config=CONFIG)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    yield await start(lsp_client, request.param, [hostile(tmp_path)])
    await lsp_client.shutdown_session()


def everything_said(client: LanguageClient) -> str:
    """Every message, log line and diagnostic the client was sent."""
    said = [m.message for m in client.log_messages] + [m.message for m in client.messages]
    said += [d.message for found in client.diagnostics.values() for d in found]
    return "\n".join(said)


async def test_the_walk_skips_what_it_may_not_read_says_so_once_and_shows_no_file_outside(
    client: LanguageClient, capfd: pytest.CaptureFixture[str]
) -> None:
    repo = Path(client.workspace_root)  # type: ignore[attr-defined]
    uses = await open_document(client, repo / "uses.rubric.yaml")
    assert await diagnostics(client, uses) == []  # `tone`, a link within the project, was read
    shown = [m.message for m in client.messages]
    for note in (
        f"rubrics/leak.yaml: {OUTSIDE}",
        f"rubrics/zero.yaml: {OUTSIDE}",
        f"rubrics/pipe.yaml: {FIFO}",
    ):
        assert shown.count(f"AI Eval: {note}") == 1
        assert any(m.message == f"{repo}: {note}" for m in client.log_messages)
    assert any("settings.local.php: not read: it is a named pipe" in message for message in shown)

    # a run of a FIFO is refused at once, naming it; a run whose index meets them runs
    with pytest.raises(Exception, match=r"pipe\.cases\.yaml: not read: it is a named pipe"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams("aiEval.runCases", [{"uri": (repo / "pipe.cases.yaml").as_uri()}])
        )
    ran: Any = await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.runCases", [{"uri": (repo / "tone.cases.yaml").as_uri()}])
    )
    assert ran["row"]["target_id"] == "tone"

    out, err = capfd.readouterr()  # the server's stderr log, which pytest-lsp forwards
    assert TOKEN not in everything_said(client) + out + err


@pytest_lsp.fixture(config=CONFIG)
async def untrusted(lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    yield await start(
        lsp_client, "visual_studio_code", [hostile(tmp_path)], settings={"workspaceTrusted": False}
    )
    await lsp_client.shutdown_session()


async def test_an_untrusted_workspace_reads_no_settings_file(untrusted: LanguageClient) -> None:
    repo = Path(untrusted.workspace_root)  # type: ignore[attr-defined]
    uses = await open_document(untrusted, repo / "uses.rubric.yaml")
    assert await diagnostics(untrusted, uses) == []
    said = everything_said(untrusted)
    assert "settings.local.php" not in said  # never looked at, so never refused
    assert (
        "settings.php, which may name another, is not read in a workspace the editor does not trust" in said
    )
    assert TOKEN not in said


DEEP = "[" * 100_000
"""Nested past Python's stack: `initialize` answered -32603 with a traceback."""
NESTED = "cannot be read: it is nested too deeply to be read"
BROKEN = 'id: tone\nversion: "1.0"\nchecks:\n  - {kind: regexp}\nscoring: {combine: all_pass}\n'


def nested(tmp_path: Path) -> Path:
    """A Drupal repository whose composer.json, pyproject.toml and site schema nest past any
    parser, and whose settings.php includes a file whose name holds a NUL."""
    repo = tmp_path / "repo"
    codebase(repo)
    (repo / ".git").mkdir()
    write(
        repo,
        {
            "composer.json": DEEP,
            "pyproject.toml": "[tool.ai-eval]\nx = " + DEEP + "]" * 100_000,
            "web/modules/contrib/ai_eval/schema/rubric.schema.json": DEEP,
            "web/sites/default/settings.php": DEFAULT_SETTINGS_TOP
            + 'include __DIR__ . "/settings.local\\0.php";\n',
            "tone.rubric.yaml": BROKEN,
        },
    )
    return repo


@pytest_lsp.fixture(config=CONFIG)
async def deep(lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    yield await start(lsp_client, "visual_studio_code", [nested(tmp_path)])
    await lsp_client.shutdown_session()


async def test_files_nested_past_any_parser_are_logged_and_the_diagnostics_published(
    deep: LanguageClient,
) -> None:
    repo = Path(deep.workspace_root)  # type: ignore[attr-defined]
    tone = await open_document(deep, repo / "tone.rubric.yaml")
    (problem,) = await diagnostics(deep, tone)
    assert problem.code == "unknown-kind"
    logged = [m.message for m in deep.log_messages]
    assert f"{repo}: {repo / 'pyproject.toml'}: {NESTED}" in logged
    schema = repo / "web/modules/contrib/ai_eval/schema/rubric.schema.json"
    assert (
        f"{repo}: the site's ai_eval schema {schema} cannot be used ({NESTED}); the shipped schema is used"
        in logged
    )
    assert f"AI Eval: composer.json: {NESTED}" in [m.message for m in deep.messages]
    assert "Traceback" not in everything_said(deep)
