"""A mistyped setting is said once, where the user sees it, with what was meant."""

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


def logged(client: LanguageClient) -> int:
    return sum(m.message.startswith("aiEval settings") for m in client.log_messages)


async def test_a_mistyped_setting_is_shown_once_with_a_did_you_mean(client: LanguageClient) -> None:
    # read for the server and for each of the two folders: shown once each, logged every time
    assert shown(client) == SAID
    assert all(m.type == types.MessageType.Warning for m in client.messages)
    before = logged(client)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    for _ in range(200):
        if logged(client) >= before + 3 * len(SAID):
            break
        await asyncio.sleep(0.05)
    assert logged(client) == before + 3 * len(SAID)
    assert shown(client) == SAID
