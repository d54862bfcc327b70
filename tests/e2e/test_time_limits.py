"""`runTimeoutSeconds` from the editor's settings bounds a check the server runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from processes import cpu_seconds
from pytest_lsp import LanguageClient

from e2e.conftest import EDITORS, SERVER
from e2e.helpers import open_document, start

SLOW = 'id: slow\nversion: "1.0"\nchecks:\n  - {id: backtracks, kind: regex, pattern: "(a+)+$"}\nscoring: {combine: all_pass}\n'
LIMIT = 0.7


@pytest_lsp.fixture(params=EDITORS, config=SERVER)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "slow.rubric.yaml").write_text(SLOW)
    yield await start(lsp_client, request.param, [tmp_path], settings={"runTimeoutSeconds": LIMIT})
    await lsp_client.shutdown_session()


async def run_check(client: LanguageClient, uri: str, response: str) -> tuple[Any, float]:
    """The check's outcome for a response, and the CPU time the server spent on the command."""
    server = client._server  # pygls's handle on the server process it started
    assert server is not None
    started = cpu_seconds(server.pid)
    result: Any = await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.runCheck", [{"uri": uri, "checkIndex": 0, "response": response}])
    )
    return result["outcome"], cpu_seconds(server.pid) - started


async def test_the_settings_time_limit_stops_a_catastrophic_regex(client: LanguageClient) -> None:
    uri = await open_document(client, "slow.rubric.yaml", SLOW)
    await run_check(client, uri, "b")  # the document analysed, the command's path warm
    _, command = await run_check(client, uri, "b")
    outcome, slow = await run_check(client, uri, "a" * 50_000 + "b")
    assert outcome["passed"] is False
    assert outcome["reason"].startswith(f"matching took longer than {LIMIT:g} s and was stopped")
    # The search itself ended within a generous multiple of the limit, not the several times the
    # limit of a wrong bound.
    assert slow - command < 5 * LIMIT
