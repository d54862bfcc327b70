"""A mistyped setting is said once when it appears, where the user sees it, with what was meant."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from e2e.conftest import EDITORS, SERVER
from e2e.helpers import start

MISTAKES = {"rubricGlob": ["evals/*.yaml"], "php": {"comand": "ddev exec php"}}
SAID = [
    "aiEval settings: unknown setting `rubricGlob`; did you mean `rubricGlobs`?",
    "aiEval settings: unknown setting `php.comand`; did you mean `php.command`?",
]


@pytest_lsp.fixture(params=EDITORS, config=SERVER)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    folders = [tmp_path / "one", tmp_path / "two"]
    for folder in folders:
        folder.mkdir()
    yield await start(lsp_client, request.param, folders, settings=MISTAKES)
    await lsp_client.shutdown_session()


def shown(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if m.message.startswith("aiEval settings")]


def logged(client: LanguageClient) -> list[str]:
    return [m.message for m in client.log_messages if m.message.startswith("aiEval settings")]


async def changed(client: LanguageClient, settings: dict[str, object], until: list[str]) -> None:
    """The editor's settings changed to `settings`; returns once the log holds `until`."""
    client.set_configuration({"runTimeoutSeconds": 5, **settings}, section="aiEval")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    for _ in range(200):
        if logged(client) == until:
            return
        await asyncio.sleep(0.05)
    assert logged(client) == until


async def test_a_mistyped_setting_is_said_once_when_it_appears_with_a_did_you_mean(
    client: LanguageClient,
) -> None:
    # read from the initialization options, for the server and for each of the two folders, and
    # again at every change: said once, in the log and as a message
    assert shown(client) == SAID and logged(client) == SAID
    assert all(m.type == types.MessageType.Warning for m in client.messages)
    other = "aiEval settings: unknown setting `rubricGlobz`; did you mean `rubricGlobs`?"
    await changed(client, MISTAKES, SAID)  # read again: nothing new
    await changed(client, {"rubricGlobz": ["evals/*.yaml"]}, [*SAID, other])  # fixed, another made
    await changed(client, MISTAKES, [*SAID, other, *SAID])  # made again: said again
    await asyncio.sleep(0.5)
    assert logged(client) == [*SAID, other, *SAID] and shown(client) == [*SAID, other, *SAID]
