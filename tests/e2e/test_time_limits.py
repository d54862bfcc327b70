"""`runTimeoutSeconds` from the editor's settings bounds a check the server runs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from e2e.conftest import EDITORS, SERVER
from e2e.helpers import open_document, start

SLOW = 'id: slow\nversion: "1.0"\nchecks:\n  - {id: backtracks, kind: regex, pattern: "(a+)+$"}\nscoring: {combine: all_pass}\n'


@pytest_lsp.fixture(params=EDITORS, config=SERVER)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "slow.rubric.yaml").write_text(SLOW)
    yield await start(lsp_client, request.param, [tmp_path], settings={"runTimeoutSeconds": 0.7})
    await lsp_client.shutdown_session()


async def test_the_settings_time_limit_stops_a_catastrophic_regex(client: LanguageClient) -> None:
    uri = await open_document(client, "slow.rubric.yaml", SLOW)
    started = time.monotonic()
    result: Any = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            "aiEval.runCheck", [{"uri": uri, "checkIndex": 0, "response": "a" * 50_000 + "b"}]
        )
    )
    assert time.monotonic() - started < 30  # bounded by 0.7 s, and not by the 10 s default
    outcome = result["outcome"]
    assert outcome["passed"] is False
    assert outcome["reason"].startswith("matching took longer than 0.7 s and was stopped")
