"""The shipped example in an editor: the problems `check` prints are the diagnostics the editor
shows, and a run from the editor grades the cases as the command does."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from conftest import ROOT
from lsprotocol import types
from pytest_lsp import LanguageClient

from e2e.conftest import EDITORS, SERVER
from e2e.helpers import diagnostics, open_document, start

EXAMPLE = ROOT / "examples" / "drupal-site"
BROKEN = "broken/rubrics/escalation_draft.yaml"
CASES = "web/modules/custom/support_assistant/evals/refunds.cases.yaml"


@pytest_lsp.fixture(params=EDITORS, config=SERVER)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    site = tmp_path / "drupal-site"
    shutil.copytree(EXAMPLE, site, ignore=shutil.ignore_patterns(".ai_eval"))
    yield await start(lsp_client, request.param, [site])
    await lsp_client.shutdown_session()


def printed_by_check(site: Path) -> list[tuple[int, int, str, str]]:
    """(line, column, code, message) of each problem `ai-eval-lsp check broken` prints."""
    done = subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", "check", "broken"],
        cwd=site,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    found = []
    for line in done.stdout.splitlines()[:-1]:
        _, row, column, rest = line.split(":", 3)
        code, message = rest.strip().split(" ", 1)
        found.append((int(row), int(column), code, message))
    return found


async def test_the_broken_rubric_shows_in_the_editor_what_check_prints(client: LanguageClient) -> None:
    site = Path(client.workspace_root)  # type: ignore[attr-defined]
    uri = await open_document(client, site / BROKEN)
    shown = sorted(
        (d.range.start.line + 1, d.range.start.character + 1, str(d.code), d.message)
        for d in await diagnostics(client, uri)
    )
    assert shown == sorted(printed_by_check(site))
    assert len(shown) == 6


async def test_the_cases_run_from_the_editor_as_from_the_command_line(client: LanguageClient) -> None:
    site = Path(client.workspace_root)  # type: ignore[attr-defined]
    result: Any = await client.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.runCases", [{"uri": (site / CASES).as_uri()}])
    )
    row = result["row"]
    assert (row["pass_rate"], row["passed_gate"], row["error_count"]) == (0.6, 1, 0)
    verdicts = {case: verdict["passed"] for case, verdict in result["verdicts"].items()}
    assert verdicts == {case: expected == "pass" for case, expected in result["expected"].items()}
    assert result["verdicts"]["too_short"]["reason"].endswith("readable_length (4 words, minimum 12))")
