"""Projects in a repository, in the editor (SPEC section 4): the server opened on a monorepo whose
Drupal site is one folder down finds the site as its own project, as `check` does from the
monorepo root; and a request about run history made right after `initialize` waits for the
projects to load instead of failing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from conftest import monorepo, multisite, without_test_plugins
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from e2e.conftest import EDITORS
from e2e.helpers import capabilities, diagnostics, diagnostics_until, open_document, start

MODULE = "drupal/web/modules/custom/support_assistant"
BROKEN = "drupal/broken/rubrics/escalation_draft.yaml"
CONFIG = ClientServerConfig([sys.executable, "-m", "ai_eval_lsp", "serve"], server_env=without_test_plugins())


def check_json(where: Path, *args: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", "check", "--format", "json", *args],
        cwd=where,
        env=without_test_plugins(),
        capture_output=True,
        text=True,
        check=False,
    )
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


@pytest_lsp.fixture(params=EDITORS, config=CONFIG)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    yield await start(lsp_client, request.param, [monorepo(tmp_path)])
    await lsp_client.shutdown_session()


async def test_the_server_opened_on_a_monorepo_knows_the_site_one_folder_down(client: LanguageClient) -> None:
    repo = Path(client.workspace_root)  # type: ignore[attr-defined]
    clean = await open_document(client, repo / MODULE / "rubrics" / "refund_answer.yaml")
    assert await diagnostics(client, clean) == []  # word_count is the site's module's kind
    broken = await open_document(client, repo / BROKEN)
    shown = sorted(
        (d.range.start.line + 1, d.range.start.character + 1, str(d.code), d.message)
        for d in await diagnostics(client, broken)
    )
    printed = sorted((p["line"], p["column"], p["code"], p["message"]) for p in check_json(repo, BROKEN))
    assert shown == printed
    assert len(shown) == 6


@pytest_lsp.fixture(config=CONFIG)
async def early(lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    yield lsp_client
    await lsp_client.shutdown_session()


async def test_history_asked_right_after_initialize_waits_for_the_projects(
    early: LanguageClient, tmp_path: Path
) -> None:
    repo = monorepo(tmp_path)
    site = repo / "drupal"
    cases = site / "evals" / "tone.cases.yaml"
    cases.parent.mkdir()
    cases.write_text(
        'rubric: support_tone\ncases:\n  - {id: kind, question: {id: q}, response: "Sorry, happy to help."}\n'
    )
    ran = subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", "run", str(cases)],
        cwd=site,
        env=without_test_plugins(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "support_tone" in ran.stdout, ran.stderr
    early.set_configuration({}, section="aiEval")
    early.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    await early.initialize_session(
        types.InitializeParams(
            capabilities=capabilities("visual_studio_code"),
            workspace_folders=[types.WorkspaceFolder(repo.as_uri(), "repo")],
        )
    )
    history = await early.workspace_execute_command_async(
        types.ExecuteCommandParams("aiEval.history", [{"target": "support_tone"}])
    )
    assert [row["target_id"] for row in history["rows"]] == ["support_tone"]


async def test_rubrics_beside_the_site_use_its_kinds_when_the_settings_file_names_it(
    early: LanguageClient, tmp_path: Path
) -> None:
    """`evals/` beside `drupal/` belongs to the repository's project; its `ai-eval.toml` names the
    site, and the server reads it as the CLI does."""
    repo = monorepo(tmp_path)
    (repo / "ai-eval.toml").write_text('drupal.root = "drupal"\n')
    evals = repo / "evals"
    evals.mkdir()
    (evals / "length.rubric.yaml").write_text(
        'id: length\nversion: "1.0"\nchecks:\n  - {kind: word_count, min: 1, max: 200}\nscoring: {combine: all_pass}\n'
    )
    await start(early, "visual_studio_code", [repo])
    uri = await open_document(early, evals / "length.rubric.yaml")
    assert await diagnostics(early, uri) == []


async def test_hover_on_a_module_kind_names_the_site_read(early: LanguageClient, tmp_path: Path) -> None:
    site = multisite(tmp_path)
    (site / "ai-eval.toml").write_text('drupal.site = "beta"\n')
    await start(early, "neovim", [site])
    uri = await open_document(early, site / "uses_both.rubric.yaml")
    await diagnostics(early, uri)
    hover = await early.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(4, 12))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "module other_assistant" in hover.contents.value
    assert "(site `beta` of alpha, beta)" in hover.contents.value


RUBRIC = 'id: {id}\nversion: "1.0"\nchecks:\n  - {check}\nscoring: {{combine: all_pass}}\n'


async def test_a_marker_made_or_removed_below_makes_or_unmakes_a_project(
    early: LanguageClient, tmp_path: Path
) -> None:
    """A settings file created in `sub/` makes it a project of its own (its files no longer see the
    repository's rubrics); removed, `sub/` is the repository's again. Watched-file events only."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    (repo / "top.rubric.yaml").write_text(RUBRIC.format(id="top", check="{kind: regex, pattern: x}"))
    (repo / "sub" / "uses.rubric.yaml").write_text(
        RUBRIC.format(id="uses", check="{kind: composite, rubric: top}")
    )
    await start(early, "visual_studio_code", [repo])
    uri = await open_document(early, repo / "sub" / "uses.rubric.yaml")
    assert await diagnostics(early, uri) == []

    def changed(kind: types.FileChangeType) -> None:
        event = types.FileEvent((repo / "sub" / "ai-eval.toml").as_uri(), kind)
        early.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams([event]))

    (repo / "sub" / "ai-eval.toml").write_text("")
    changed(types.FileChangeType.Created)
    made = await diagnostics_until(early, uri, lambda found: bool(found))
    assert [d.code for d in made] == ["unresolved-rubric"]
    (repo / "sub" / "ai-eval.toml").unlink()
    changed(types.FileChangeType.Deleted)
    assert await diagnostics_until(early, uri, lambda found: found == []) == []
