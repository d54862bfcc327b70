"""The workspace model: several folders, folders coming and going, which documents the server
takes (one classification for every client), and a server started with no folder at all."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from contract import ROLE_GLOBS, ROLE_TABLE
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from e2e.conftest import EDITORS, SERVER
from e2e.helpers import diagnostics, diagnostics_until, indexed, indexings, open_document, start

CLEAN_CHECKS = "checks:\n  - {kind: must_contain_any, values: [a]}\nscoring: {combine: all_pass}\n"


def rubric(rubric_id: str, composite: str | None = None) -> str:
    checks = (
        f"checks:\n  - {{kind: composite, rubric: {composite}}}\n"
        if composite
        else "checks:\n  - {kind: must_contain_any, values: [a]}\n"
    )
    return f'id: {rubric_id}\nversion: "1.0"\n{checks}scoring: {{combine: all_pass}}\n'


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("folders")
    first, second, third = base / "first", base / "second", base / "third"
    for folder in (first, second, third):
        (folder / ".git").mkdir(parents=True)
    (first / "alpha.rubric.yaml").write_text(rubric("alpha"))
    (first / "uses_alpha.rubric.yaml").write_text(rubric("uses_alpha", "alpha"))
    (second / "uses_alpha.rubric.yaml").write_text(
        rubric("uses_alpha", "alpha")
    )  # alpha is in the first only
    (third / "gamma.rubric.yaml").write_text(rubric("gamma"))
    (third / "uses_gamma.rubric.yaml").write_text(rubric("uses_gamma", "gamma"))
    for relative, (_, text) in ROLE_TABLE.items():
        (first / relative).parent.mkdir(parents=True, exist_ok=True)
        (first / relative).write_text(text)
    return {"first": first, "second": second, "third": third}


@pytest_lsp.fixture(params=EDITORS, config=SERVER, scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, folders: dict[str, Path]):  # type: ignore[no-untyped-def]
    settings = ROLE_GLOBS
    yield await start(lsp_client, request.param, [folders["first"], folders["second"]], settings)
    await lsp_client.shutdown_session()


async def test_each_folder_resolves_composites_against_its_own_rubrics(
    client: LanguageClient, folders: dict[str, Path]
) -> None:
    in_first = await open_document(client, folders["first"] / "uses_alpha.rubric.yaml")
    in_second = await open_document(client, folders["second"] / "uses_alpha.rubric.yaml")
    assert await diagnostics(client, in_first) == []
    (unresolved,) = await diagnostics(client, in_second)
    assert unresolved.code == "unresolved-rubric" and "there is no rubric `alpha`" in unresolved.message


@pytest.mark.parametrize("relative", sorted(ROLE_TABLE))
async def test_the_server_decides_what_a_file_is(
    client: LanguageClient, folders: dict[str, Path], relative: str
) -> None:
    role, text = ROLE_TABLE[relative]
    uri = await open_document(client, folders["first"] / relative)
    found = await diagnostics_until(client, uri, lambda _: uri in client.roles)  # type: ignore[attr-defined]
    assert client.roles[uri] == role  # type: ignore[attr-defined]
    if role is None:
        assert found == [] and await _completion(client, uri) == []
    elif role == "rubric" and "modeline" in text:
        assert await diagnostics(client, uri) == []  # checked: its rubric is clean


async def _completion(client: LanguageClient, uri: str) -> list[Any]:
    result = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(1, 2))
    )
    return list(result.items) if isinstance(result, types.CompletionList) else list(result or [])


async def test_folders_added_and_removed_while_running(
    client: LanguageClient, folders: dict[str, Path]
) -> None:
    third = folders["third"]
    uri = await open_document(client, third / "uses_gamma.rubric.yaml", rubric("uses_gamma", "gamma") + "")
    # Outside every folder: checked on its own (no workspace to resolve against, nothing walked).
    assert await diagnostics(client, uri) == []
    broken = rubric("uses_gamma", "nowhere")
    other = await open_document(client, third / "broken.rubric.yaml", broken.replace("uses_gamma", "broken"))
    assert await diagnostics(client, other) == []
    before = indexings(client)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(third.as_uri(), "third")], removed=[]
            )
        )
    )
    await indexed(client, before)
    # Now a folder of the workspace: `gamma` resolves from the walk, `nowhere` does not.
    assert await diagnostics_until(
        client, other, lambda found: [d.code for d in found] == ["unresolved-rubric"]
    )
    assert await diagnostics(client, uri) == []
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(third.as_uri(), "third")]
            )
        )
    )
    assert await diagnostics_until(client, other, lambda found: found == []) == []


@pytest_lsp.fixture(
    config=ClientServerConfig(["sh", "-c", f"cd / && exec {sys.executable} -m ai_eval_lsp serve"]),
    scope="module",
)
async def folderless(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    yield await start(lsp_client, "visual_studio_code", [])
    await lsp_client.shutdown_session()


async def test_a_server_started_in_the_root_folder_with_no_folder_answers(
    folderless: LanguageClient, tmp_path: Path
) -> None:
    """The editor opened no folder and the server's working folder is `/`: nothing is walked,
    and a rubric opened from anywhere is checked."""
    path = tmp_path / "alone.rubric.yaml"
    text = 'id: alone\nversion: "1.0"\nchecks:\n  - {kind: regex, patern: x}\nscoring: {combine: all_pass}\n'
    path.write_text(text)
    uri = await open_document(folderless, path)
    found = await diagnostics(folderless, uri)
    assert {d.code for d in found} == {"schema", "unknown-key"}
