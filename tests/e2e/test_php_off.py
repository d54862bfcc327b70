"""`php.run: false` where a Drupal developer meets it in the editor: the shipped example site,
the real server over stdio, the setting from the editor's settings, from the project's
`ai-eval.toml`, or forced by the VS Code extension in a workspace VS Code does not trust (over a
repository's own file that turns PHP on). The PHP checks are skipped with SPEC section 4's
reason and never fail, the editor shows and hovers why, and no PHP process starts, whichever way
a run is asked for; the same site with `php.run: true` starts the recording `php.command`."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from conftest import ROOT, without_test_plugins
from example_site import CASES, RUBRIC, SKIPPED, content_outcomes, copy_example, many_cases
from lsprotocol import types
from processes import recording_php
from pytest_lsp import ClientServerConfig, LanguageClient

from ai_eval_lsp.project.registry import PHP_OFF
from ai_eval_lsp.runs.workers import PARALLEL_FROM, workers_for
from e2e.helpers import diagnostics, open_document, start

KIND = types.Position(15, 12)
"""On `word_count` in the rubric's `readable_length` check."""
EXTENSION = ROOT / "vscode-extension"
QUESTION = {"id": "q", "expected": {"reference": "Refunds are paid within 5 business days."}}
RESPONSE = "Sorry! Refunds are paid to your card within 5 business days of the return."


def vscode_configuration_answer(value: dict[str, Any], trusted: bool, into: Path) -> Any:
    """What the VS Code extension answers the server's `workspace/configuration` for `aiEval`
    with, given VS Code's value of the section: the extension's own code, bundled as it is now."""
    bundle = into / "settings.mjs"
    esbuild = EXTENSION / "node_modules" / ".bin" / "esbuild"
    subprocess.run(
        [
            esbuild,
            EXTENSION / "src" / "settings.ts",
            "--format=esm",
            f"--outfile={bundle}",
            "--log-level=warning",
        ],
        check=True,
        timeout=60,
    )
    script = (
        f"import {{ configurationAnswer }} from {json.dumps(bundle.as_uri())};"
        "const [value, trusted] = JSON.parse(process.argv[1]);"
        "console.log(JSON.stringify(configurationAnswer('aiEval', value, trusted)));"
    )
    answer = subprocess.run(
        ["node", "--input-type=module", "-e", script, json.dumps([value, trusted])],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(answer.stdout)


def example_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A fresh copy of the example site (one per server: a settings file in it counts for all),
    and beside it a recording PHP: the command and its record of starts."""
    here = tmp_path_factory.mktemp("php-off")
    return copy_example(here / "site"), *recording_php(here)


SERVER = ClientServerConfig([sys.executable, "-m", "ai_eval_lsp", "serve"], server_env=without_test_plugins())


@pytest_lsp.fixture(
    params=[
        ("visual_studio_code", "settings"),
        ("neovim", "settings"),
        ("visual_studio_code", "ai-eval.toml"),
        ("visual_studio_code", "untrusted workspace"),
    ],
    ids=lambda param: " ".join(param),
    config=SERVER,
    scope="module",
)
async def client(  # type: ignore[no-untyped-def]
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory
):
    """A server whose PHP is off: by the user's setting, by the project's `ai-eval.toml`, or by
    an untrusted workspace in VS Code, where both the user's settings and the repository's own
    `ai-eval.toml` say `php.run: true`."""
    editor, why = request.param
    site, command, starts = example_site(tmp_path_factory)
    settings: Any = {"runOnSave": "affected"}
    if why == "settings":
        settings["php"] = {"run": False, "command": [str(command)]}
    else:
        run = str(why != "ai-eval.toml").lower()
        (site / "ai-eval.toml").write_text(f'[php]\ncommand = ["{command}"]\nrun = {run}\n')
    if why == "untrusted workspace":
        settings = vscode_configuration_answer({**settings, "php": {"run": True}}, False, starts.parent)
    lsp_client.php_starts = starts  # type: ignore[attr-defined]
    yield await start(lsp_client, editor, [site], settings=settings)
    await lsp_client.shutdown_session()


def php_starts(client: LanguageClient) -> list[str]:
    return client.php_starts.read_text().splitlines()  # type: ignore[attr-defined,no-any-return]


def uri_of(client: LanguageClient, relative: str) -> str:
    return (client.workspace_root / relative).as_uri()  # type: ignore[attr-defined,no-any-return]


async def execute(client: LanguageClient, command: str, argument: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command, [argument]))


async def test_the_php_kind_is_not_executed_information_and_its_hover_says_why(
    client: LanguageClient,
) -> None:
    uri = await open_document(client, client.workspace_root / RUBRIC)  # type: ignore[attr-defined]
    (found,) = await diagnostics(client, uri)
    assert (found.code, found.severity, found.range.start) == (
        "not-executed",
        types.DiagnosticSeverity.Information,
        types.Position(15, 10),
    )
    assert f"but not in ai-eval-lsp's runs: it {PHP_OFF}" in found.message
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), KIND))
    assert hover is not None
    assert f"executed on the site, but not in the editor: it {PHP_OFF}" in hover.contents.value  # type: ignore[union-attr]
    assert php_starts(client) == []


async def test_the_run_cases_lens_skips_the_php_checks_and_starts_no_php(client: LanguageClient) -> None:
    uri = await open_document(client, client.workspace_root / CASES)  # type: ignore[attr-defined]
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(uri))
    )
    (lens,) = [lens for lens in lenses or [] if lens.command and lens.command.title == "Run cases"]
    assert lens.command is not None and lens.command.arguments is not None
    (argument,) = lens.command.arguments
    result = await execute(client, lens.command.command, argument)
    contents = content_outcomes(result)
    assert len(contents) == 5
    assert all(SKIPPED in outcome["reason"] and "raised" not in outcome["reason"] for outcome in contents)
    assert (result["row"]["pass_rate"], result["row"]["passed_gate"]) == (0.8, 1)
    assert php_starts(client) == []


async def test_a_run_large_enough_for_case_workers_skips_them_too(client: LanguageClient) -> None:
    """Case workers load the project again, from the settings the editor gave, not from disk."""
    copies = 2 * PARALLEL_FROM // 5
    if workers_for(5 * copies) < 2:
        pytest.skip("one usable core: a run this large stays in the server's process")
    many = many_cases(client.workspace_root, copies)  # type: ignore[attr-defined]
    result = await execute(client, "aiEval.runCases", {"uri": many.as_uri()})
    reasons = [outcome["reason"] for outcome in content_outcomes(result)]
    assert len(reasons) == 5 * copies and all(SKIPPED in reason for reason in reasons)
    assert php_starts(client) == []


async def test_run_rubric_and_run_check_skip_the_php_check(client: LanguageClient) -> None:
    uri = uri_of(client, RUBRIC)
    run = await execute(client, "aiEval.runRubric", {"uri": uri, "response": RESPONSE, "question": QUESTION})
    verdict = run["verdict"]
    assert verdict["skipped"] == ["readable_length"]
    assert f"readable_length (word_count, {PHP_OFF})" in verdict["reason"]
    assert [outcome["checkId"] for outcome in verdict["outcomes"]] == ["gives_timeline", "close_to_policy"]
    check = await execute(
        client, "aiEval.runCheck", {"uri": uri, "checkIndex": 2, "response": RESPONSE, "question": QUESTION}
    )
    assert check["outcome"] is None
    assert check["text"] == f"skipped (word_count, {PHP_OFF})"
    assert php_starts(client) == []


@pytest_lsp.fixture(config=SERVER, scope="module")
async def php_on(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The control: the same site and `php.command`, in a trusted workspace with PHP on."""
    site, command, starts = example_site(tmp_path_factory)
    value = {"php": {"run": True, "command": [str(command)]}}
    settings = vscode_configuration_answer(value, True, starts.parent)
    lsp_client.php_starts = starts  # type: ignore[attr-defined]
    yield await start(lsp_client, "visual_studio_code", [site], settings=settings)
    await lsp_client.shutdown_session()


async def test_with_php_on_every_run_starts_the_php_command(php_on: LanguageClient) -> None:
    uri = await open_document(php_on, php_on.workspace_root / RUBRIC)  # type: ignore[attr-defined]
    assert await diagnostics(php_on, uri) == []
    assert php_starts(php_on) == []  # diagnostics never run PHP
    cases = await execute(php_on, "aiEval.runCases", {"uri": uri_of(php_on, CASES)})
    assert cases["verdicts"]["too_short"]["passed"] is False
    assert len(php_starts(php_on)) == 1
    run = await execute(php_on, "aiEval.runRubric", {"uri": uri, "response": RESPONSE, "question": QUESTION})
    assert run["verdict"]["skipped"] == []
    check = await execute(
        php_on, "aiEval.runCheck", {"uri": uri, "checkIndex": 2, "response": RESPONSE, "question": QUESTION}
    )
    assert check["outcome"]["reason"] == "14 words, within range"
    assert len(php_starts(php_on)) == 3  # one PHP worker a run


async def test_a_run_on_save_skips_the_php_checks_and_starts_no_php(client: LanguageClient) -> None:
    """The cases file saved (`runOnSave: "affected"`): an ordinary run, PHP still off."""
    before = len(client.completed_runs)  # type: ignore[attr-defined]
    uri = uri_of(client, CASES)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri, "yaml", 1, (client.workspace_root / CASES).read_text())  # type: ignore[attr-defined]
        )
    )
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    for _ in range(600):
        saved = [c for c in client.completed_runs[before:] if c.trigger == "save"]  # type: ignore[attr-defined]
        if saved:
            break
        await asyncio.sleep(0.05)
    assert saved, "no run on save completed"
    assert saved[0].question_count == 5 and saved[0].error_count == 0
    assert php_starts(client) == []


@pytest_lsp.fixture(params=[True, False], ids=["trusted", "untrusted"], config=SERVER)
async def stored_by(  # type: ignore[no-untyped-def]
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path
):
    """VS Code over a site whose own `ai-eval.toml` sends results elsewhere."""
    site = copy_example(tmp_path / "site")
    elsewhere = tmp_path / "elsewhere" / "results.sqlite"
    (site / "ai-eval.toml").write_text(f'resultsDatabase = "{elsewhere}"\n')
    settings = vscode_configuration_answer({}, request.param, tmp_path)
    lsp_client.elsewhere, lsp_client.trusted = elsewhere, request.param  # type: ignore[attr-defined]
    yield await start(lsp_client, "visual_studio_code", [site], settings=settings)
    await lsp_client.shutdown_session()


async def test_an_untrusted_repository_cannot_choose_where_runs_are_stored(stored_by: LanguageClient) -> None:
    """Restricted Mode ignores the workspace's `resultsDatabase`; the repository's own settings
    file is the workspace's too."""
    await execute(stored_by, "aiEval.runCases", {"uri": uri_of(stored_by, CASES)})
    elsewhere: Path = stored_by.elsewhere  # type: ignore[attr-defined]
    default = stored_by.workspace_root / ".ai_eval" / "results.sqlite"  # type: ignore[attr-defined]
    trusted: bool = stored_by.trusted  # type: ignore[attr-defined]
    assert (elsewhere.exists(), default.exists()) == (trusted, not trusted)
