"""A Drupal codebase as its developers have it: PHP executors in installed modules, no Python
plugin for their kinds (the server runs without the test plugins), the site's own core schema.
The real server over stdio, with VS Code's and Neovim's capabilities and the default debounce."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from conftest import FIXTURES, without_test_plugins
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from sacrebleu.metrics.chrf import CHRF

from e2e.conftest import EDITORS
from e2e.helpers import (
    PULLING_VS_CODE,
    completion_labels,
    diagnostics,
    diagnostics_until,
    edit,
    open_document,
    start,
)

SITE = FIXTURES / "drupal" / "site"
MODULE = "web/modules/custom/my_eval_extras"
SEED_RUBRIC = f"{MODULE}/rubrics/summary_shape.rubric.yaml"
REFERENCE = "Sorry, your refund arrives in five days."
RESPONSE = "Sorry about that: your refund arrives within five days."


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the fixture site (runs store results in it, a test edits a services file)."""
    root = tmp_path_factory.mktemp("drupal") / "site"
    shutil.copytree(SITE, root)
    rubrics = root / MODULE / "rubrics"
    (rubrics / "mixed.rubric.yaml").write_text(
        'id: mixed\nversion: "1.0"\nchecks:\n'
        "  - {id: length, kind: word_count, min: 3, max: 50}\n"
        "  - {id: close, kind: similar_to, source: expected.reference, threshold: 0.4}\n"
        "  - {id: entity, kind: entity_exists, entity_type: node}\n"
        "  - {id: polite, kind: must_contain_any, values: [sorry]}\n"
        "scoring: {combine: weighted_avg}\n"
    )
    (rubrics / "mixed.cases.yaml").write_text(
        "rubric: mixed\ncases:\n"
        f'  - id: good\n    question: {{id: q1, expected: {{reference: "{REFERENCE}"}}}}\n    response: "{RESPONSE}"\n'
        '  - id: short\n    question: {id: q2, expected: {reference: "x"}}\n    response: "No."\n'
    )
    return root


def server_config(cache: Path) -> ClientServerConfig:
    environment = {**without_test_plugins(), "XDG_CACHE_HOME": str(cache)}
    return ClientServerConfig([sys.executable, "-m", "ai_eval_lsp", "serve"], server_env=environment)


CACHE = Path(__file__).parent / ".discovery-cache"


@pytest_lsp.fixture(params=[*EDITORS, PULLING_VS_CODE], config=server_config(CACHE), scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    yield await start(lsp_client, request.param, [workspace])
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module", autouse=True)
def fresh_cache() -> Any:
    shutil.rmtree(CACHE, ignore_errors=True)
    yield
    shutil.rmtree(CACHE, ignore_errors=True)


def path(client: LanguageClient, relative: str) -> Path:
    return client.workspace_root / relative  # type: ignore[attr-defined,no-any-return]


async def test_the_seed_rubric_is_clean_with_no_python_plugin(client: LanguageClient) -> None:
    uri = await open_document(client, path(client, SEED_RUBRIC))
    assert await diagnostics(client, uri) == []
    assert client.roles[uri] == "rubric"  # type: ignore[attr-defined]


async def test_a_php_kinds_schema_is_enforced_with_exact_ranges(client: LanguageClient) -> None:
    text = 'id: shape\nversion: "1.0"\nchecks:\n  - {kind: word_count, min: -1, maxx: 3}\nscoring: {combine: all_pass}\n'
    uri = await open_document(client, path(client, f"{MODULE}/rubrics/shape.rubric.yaml"), text)
    found = {d.code: d for d in await diagnostics(client, uri)}
    assert set(found) == {"schema", "unknown-key"}
    line = text.split("\n")[3]
    at, key = line.index("-1"), line.index("maxx")
    assert found["schema"].range == types.Range(types.Position(3, at), types.Position(3, at + 2))
    assert found["schema"].message == "word_count check: `min` must be at least 0, not -1"
    assert found["unknown-key"].range == types.Range(types.Position(3, key), types.Position(3, key + 4))
    assert "did you mean `max`" in found["unknown-key"].message


async def test_php_kinds_complete_and_hover_names_their_module_and_class(client: LanguageClient) -> None:
    text = 'id: typing\nversion: "1.0"\nchecks:\n  - kind: \nscoring: {combine: all_pass}\n'
    uri = await open_document(client, path(client, f"{MODULE}/rubrics/typing.rubric.yaml"), text)
    await diagnostics(client, uri)
    labels = await completion_labels(client, uri, 3, 10)
    assert {"word_count", "similar_to", "keyword_density", "reading_level", "entity_exists"} <= set(labels)
    assert not {"unused_kind", "probe_fixture"} & set(labels)  # not installed; a test module
    hover = await client.text_document_hover_async(
        types.HoverParams(
            types.TextDocumentIdentifier(await open_document(client, path(client, SEED_RUBRIC))),
            types.Position(4, 12),
        )
    )
    assert hover is not None
    text = hover.contents.value  # type: ignore[union-attr]
    assert "module my_eval_extras (Drupal\\my_eval_extras\\CheckExecutor\\WordCountExecutor)" in text
    assert f"(file://{path(client, MODULE)}/src/CheckExecutor/WordCountExecutor.php#L18)" in text


async def test_a_php_kind_that_cannot_run_in_the_editor_is_information(client: LanguageClient) -> None:
    uri = await open_document(client, path(client, f"{MODULE}/rubrics/mixed.rubric.yaml"))
    (found,) = await diagnostics(client, uri)
    assert found.code == "not-executed" and found.severity == types.DiagnosticSeverity.Information
    assert found.range.start.line == 5
    assert "needs the Drupal service `@entity_type.manager`" in found.message


async def test_the_sites_own_core_schema_is_used(client: LanguageClient) -> None:
    text = 'id: vocab\nversion: "1.0"\nchecks:\n  - {kind: site_vocabulary, terms: [refund]}\n  - {kind: must_contain_any, values: [a]}\nscoring: {combine: all_pass}\n'
    uri = await open_document(client, path(client, f"{MODULE}/rubrics/vocab.rubric.yaml"), text)
    (found,) = await diagnostics(client, uri)
    assert (found.code, found.range.start.line) == ("not-executed", 3)


async def test_a_run_goes_through_the_php_worker(client: LanguageClient) -> None:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            "aiEval.runCases", [{"uri": path(client, f"{MODULE}/rubrics/mixed.cases.yaml").as_uri()}]
        )
    )
    good = result["verdicts"]["good"]
    outcomes = {o["checkId"]: o for o in good["outcomes"]}
    assert outcomes["length"] == {
        "checkId": "length",
        "kind": "word_count",
        "score": 1.0,
        "passed": True,
        "reason": "9 words, within range",
    }
    expected = CHRF().sentence_score(RESPONSE, [REFERENCE]).score / 100
    assert outcomes["close"]["score"] == pytest.approx(expected, abs=1e-12)
    assert good["skipped"] == ["entity"]
    assert "entity (entity_exists, needs the Drupal service `@entity_type.manager`)" in good["reason"]
    assert result["verdicts"]["short"]["passed"] is False
    assert result["row"]["question_count"] == 2 and result["row"]["error_count"] == 0


async def test_a_services_file_edit_is_seen_without_a_restart(client: LanguageClient) -> None:
    uri = await open_document(client, path(client, SEED_RUBRIC))
    assert await diagnostics(client, uri) == []
    services = path(client, f"{MODULE}/my_eval_extras.services.yml")
    original = services.read_text()
    services.write_text(original.replace("ai_eval.check_executor", "some.other_tag"))
    refreshed = client.diagnostic_refresh_count
    notify_changed(client, services)
    if refreshes(client):  # a pulling client is asked to pull again
        await until(lambda: client.diagnostic_refresh_count > refreshed)
    found = await diagnostics_until(client, uri, lambda found: found)
    assert [(d.code, d.range.start.line) for d in found] == [("unknown-kind", 4)]
    services.write_text(original)
    notify_changed(client, services)
    assert await diagnostics_until(client, uri, lambda found: not found) == []


def refreshes(client: LanguageClient) -> bool:
    workspace = client.capabilities.workspace
    return bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)


async def until(condition: Any, timeout: float = 20) -> None:
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the condition was never met")


def notify_changed(client: LanguageClient, changed: Path) -> None:
    """What the editor's file watcher sends (the server registered it, or the client watches)."""
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams([types.FileEvent(changed.as_uri(), types.FileChangeType.Changed)])
    )


async def test_typing_in_a_drupal_rubric_keeps_php_kinds_known(client: LanguageClient) -> None:
    uri = await open_document(
        client,
        path(client, f"{MODULE}/rubrics/keystrokes.rubric.yaml"),
        'id: keys\nversion: "1.0"\nchecks:\n  - {kind: keyword_density, keyword: refund, min: 0.01}\nscoring: {combine: all_pass}\n',
    )
    assert await diagnostics(client, uri) == []
    edit(client, uri, 2, (3, 50), (3, 54), "0.02")
    assert await diagnostics(client, uri, 2) == []
