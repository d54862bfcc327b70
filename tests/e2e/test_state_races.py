"""Races in the server's state model, as an editor meets them: a document closed and opened again
while it is analysed, plugins reloaded during a folder's first walk, references right after an
edit in another document, nested workspace folders, and a folder removed while it loads or walks.
Each test starts its own server (the races are about what happens right after a start or a
folder change), with the default settings and the real 150 ms debounce."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient

from e2e.conftest import EDITORS, SERVER
from e2e.helpers import (
    PULLING_VS_CODE,
    change,
    current_diagnostics,
    diagnostics,
    diagnostics_until,
    edit,
    open_document,
    pulls,
    start,
)

TIMEOUT = 30
"""Every wait is bounded: a request that hangs fails its test instead of blocking the suite."""

BIG_FOLDER_FILES = 2000
"""Enough rubrics that a folder's walk is still under way when the client reacts to its start."""


def rubric(rubric_id: str, composite: str | None = None) -> str:
    """A clean rubric; with `composite`, its one check names that rubric (at line 5, column 12)."""
    check = (
        f"  - id: sub\n    kind: composite\n    rubric: {composite}\n"
        if composite
        else "  - id: c1\n    kind: must_contain_any\n    values: [a]\n"
    )
    return f'id: {rubric_id}\nversion: "1.0"\nchecks:\n{check}scoring: {{combine: all_pass}}\n'


def cases(rubric_id: str) -> str:
    """A cases file running a rubric (named at line 0, column 8)."""
    return (
        f'rubric: {rubric_id}\ncases:\n  - id: one\n    question: {{id: q1, input: x}}\n    response: "a"\n'
    )


def big_rubric(rubric_id: str, broken: bool) -> str:
    """A rubric of a few hundred checks (so its check takes a while), with a misspelt field in its
    first check when `broken`."""
    first = "  - {kind: regex, patern: x}\n" if broken else "  - {kind: regex, pattern: x}\n"
    many = "".join(f"  - {{id: c{n}, kind: must_contain_any, values: [a, b]}}\n" for n in range(400))
    return f'id: {rubric_id}\nversion: "1.0"\nchecks:\n{first}{many}scoring: {{combine: all_pass}}\n'


BROKEN_CODES = {"schema", "unknown-key"}
"""What `patern` in a regex check is reported as."""


def codes(found: Sequence[types.Diagnostic]) -> list[Any]:
    return sorted(str(d.code) for d in found)


def folder(base: Path, name: str, files: dict[str, str]) -> Path:
    root = base / name
    (root / ".git").mkdir(parents=True)
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of a couple of thousand rubrics, `r7` among them, named by a composite and a cases
    file; another cases file names a rubric that exists nowhere. Tests only read it."""
    files = {f"d{n % 40}/r{n}.rubric.yaml": rubric(f"r{n}") for n in range(BIG_FOLDER_FILES)}
    files["uses_r7.rubric.yaml"] = rubric("uses_r7", "r7")
    files["present.cases.yaml"] = cases("r7")
    files["missing.cases.yaml"] = cases("nowhere")
    return folder(tmp_path_factory.mktemp("big"), "big", files)


@pytest_lsp.fixture(params=EDITORS, config=SERVER)
async def fresh(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    """A server of its own for each test, started by the test (`start`) with the folders it needs."""
    lsp_client.editor = request.param  # type: ignore[attr-defined]
    yield lsp_client
    if not getattr(lsp_client, "shut_down", False):
        await lsp_client.shutdown_session()


@pytest_lsp.fixture(params=[*EDITORS, PULLING_VS_CODE], config=SERVER)
async def any_client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    """As `fresh`, with a client that pulls diagnostics too."""
    lsp_client.editor = request.param  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()


# --- waiting and asking ----------------------------------------------------------------------------


async def until(condition: Callable[[], object], timeout: float = TIMEOUT) -> None:
    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


def walks(client: LanguageClient, name: str) -> tuple[int, int]:
    """How many walks of the folder named `name` have begun, and how many of them have ended."""
    begun = ended = 0
    for reports in list(client.progress_reports.values()):
        if any(
            isinstance(r, types.WorkDoneProgressBegin) and r.title == f"Indexing rubrics in {name}"
            for r in reports
        ):
            begun += 1
            ended += any(isinstance(r, types.WorkDoneProgressEnd) for r in reports)
    return begun, ended


def record_publishes(client: LanguageClient) -> list[tuple[str, int | None, list[Any]]]:
    """Every `textDocument/publishDiagnostics` from now on: (uri, version, codes), in order."""
    seen: list[tuple[str, int | None, list[Any]]] = []
    features = client.protocol.fm.features
    previous = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def published(params: types.PublishDiagnosticsParams) -> None:
        seen.append((params.uri, params.version, codes(params.diagnostics)))
        previous(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = published
    return seen


def folders_changed(
    client: LanguageClient, added: list[Path] | None = None, removed: list[Path] | None = None
) -> None:
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(f.as_uri(), f.name) for f in added or []],
                removed=[types.WorkspaceFolder(f.as_uri(), f.name) for f in removed or []],
            )
        )
    )


def close(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))


def references(client: LanguageClient, uri: str, line: int, character: int) -> asyncio.Future[Any]:
    return asyncio.ensure_future(
        client.text_document_references_async(
            types.ReferenceParams(
                context=types.ReferenceContext(include_declaration=True),
                text_document=types.TextDocumentIdentifier(uri),
                position=types.Position(line, character),
            )
        )
    )


def hover(client: LanguageClient, uri: str, line: int, character: int) -> asyncio.Future[Any]:
    return asyncio.ensure_future(
        client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, character))
        )
    )


async def answer(request: asyncio.Future[Any]) -> Any:
    return await asyncio.wait_for(request, TIMEOUT)


def places(found: list[types.Location] | None, base: Path) -> set[tuple[str, int]]:
    """Locations as (path relative to `base`, line)."""
    return {
        (
            Path(to_fs_path(location.uri) or location.uri).relative_to(base).as_posix(),
            location.range.start.line,
        )
        for location in found or []
    }


async def outline_name(client: LanguageClient, uri: str) -> str:
    """The rubric id the editor's outline shows: what the server's analysis of the document says."""
    symbols = await answer(
        asyncio.ensure_future(
            client.text_document_document_symbol_async(
                types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
            )
        )
    )
    assert symbols, "no outline"
    return str(symbols[0].name)


# --- B1: a document closed and opened again while it is analysed --------------------------------------


async def reopened(client: LanguageClient, tmp_path: Path, first: str, then: str) -> tuple[str, list[Any]]:
    """Open a document with `first`, then (same tick: its check is under way) close it and open it
    again, version 1 again as editors do, with `then`. The pushes after the close are returned."""
    root = folder(tmp_path, "reopen", {})
    await start(client, client.editor, [root])  # type: ignore[attr-defined]
    seen = record_publishes(client)
    path = root / "doc.rubric.yaml"
    uri = await open_document(client, path, first)
    close(client, uri)
    await open_document(client, path, then)
    await outline_name(client, uri)  # answered once the reopened document is checked (and pushed)
    mine = [entry for entry in seen if entry[0] == uri]
    cleared = max((i for i, entry in enumerate(mine) if entry[1] is None), default=-1)
    return uri, mine[cleared + 1 :]


async def drained(client: LanguageClient, uri: str) -> None:
    """Return once an analysis the server started before now has finished (and its result been
    committed or dropped). Analyses run two at a time, first come first served: two documents of
    four times `big_rubric`'s size, opened now and checked, have kept one thread busy with eight
    times the work of any earlier analysis, which therefore ended before they did."""
    base = Path(to_fs_path(uri) or uri).parent
    barrier = big_rubric("barrier", broken=True).replace(
        "scoring:",
        "".join(f"  - {{id: d{n}, kind: must_contain_any, values: [a, b]}}\n" for n in range(1200))
        + "scoring:",
    )
    opened = [await open_document(client, base / f"drain{n}.rubric.yaml", barrier) for n in (1, 2)]
    for each in opened:
        assert set(codes(await asyncio.wait_for(diagnostics(client, each), TIMEOUT))) >= BROKEN_CODES
        close(client, each)


async def test_a_result_for_a_closed_document_never_reaches_its_reopening(
    any_client: LanguageClient, tmp_path: Path
) -> None:
    client = any_client
    uri, after_close = await reopened(
        client, tmp_path, big_rubric("first", broken=True), big_rubric("second", broken=False)
    )
    assert await outline_name(client, uri) == "second"
    assert await current_diagnostics(client, uri) == []  # pushed last, or pulled now
    if not pulls(client):
        assert client.diagnostic_versions[uri] == 1  # type: ignore[attr-defined]
        assert after_close and all(found == [] for _, _, found in after_close), after_close
    await drained(client, uri)  # a late result for the closed document would have landed
    assert await current_diagnostics(client, uri) == []


async def test_a_reopened_document_gets_its_own_problems(any_client: LanguageClient, tmp_path: Path) -> None:
    client = any_client
    uri, after_close = await reopened(
        client, tmp_path, big_rubric("first", broken=False), big_rubric("second", broken=True)
    )
    assert await outline_name(client, uri) == "second"
    assert set(codes(await current_diagnostics(client, uri))) == BROKEN_CODES
    if not pulls(client):
        assert after_close and set(after_close[-1][2]) == BROKEN_CODES, after_close
        assert all(set(found) == BROKEN_CODES for _, _, found in after_close), after_close
    await drained(client, uri)
    assert set(codes(await current_diagnostics(client, uri))) == BROKEN_CODES


async def test_a_result_for_an_older_version_is_not_shown_for_the_newer(
    any_client: LanguageClient, tmp_path: Path
) -> None:
    client = any_client
    root = folder(tmp_path, "versions", {})
    await start(client, client.editor, [root])  # type: ignore[attr-defined]
    seen = record_publishes(client)
    uri = await open_document(client, root / "doc.rubric.yaml", big_rubric("first", broken=True))
    await change(client, uri, 2, big_rubric("second", broken=False))
    assert await outline_name(client, uri) == "second"
    assert await asyncio.wait_for(diagnostics(client, uri, 2), TIMEOUT) == []
    # Nothing was ever pushed for version 2 but its own (clean) problems.
    assert all(found == [] for where, version, found in seen if where == uri and version == 2), seen


async def test_a_document_opened_twice_is_checked_as_last_opened(
    any_client: LanguageClient, tmp_path: Path
) -> None:
    """An editor that sends `didOpen` again without `didClose` (a protocol slip some clients make
    when a file is reloaded): the second text is the one checked."""
    client = any_client
    root = folder(tmp_path, "twice", {})
    await start(client, client.editor, [root])  # type: ignore[attr-defined]
    path = root / "doc.rubric.yaml"
    uri = await open_document(client, path, big_rubric("first", broken=True))
    await open_document(client, path, big_rubric("second", broken=False), version=2)
    assert await diagnostics(client, uri, 2) == []  # pushed (or pulled) without being asked for more
    assert await outline_name(client, uri) == "second"


# --- B3: plugins reloaded while the folder's first walk is under way -------------------------------------


def reload_plugins(client: LanguageClient) -> asyncio.Future[Any]:
    return asyncio.ensure_future(
        client.workspace_execute_command_async(types.ExecuteCommandParams("aiEval.reloadPlugins", [{}]))
    )


async def test_reloading_plugins_during_the_first_walk_keeps_the_index(
    fresh: LanguageClient, big: Path
) -> None:
    client = fresh
    starting = asyncio.ensure_future(start(client, client.editor, [big]))  # type: ignore[attr-defined]
    # Right after `initialize` is answered (before or while the folder is loaded) ...
    await until(lambda: getattr(client, "workspace_root", None) is not None or starting.done())
    reloads = [reload_plugins(client)]
    # ... and again once the walk has begun (a couple of thousand files: it is still walking).
    await until(lambda: walks(client, "big")[0] > 0 or starting.done())
    reloads.append(reload_plugins(client))
    await asyncio.wait_for(starting, TIMEOUT)
    for reload in reloads:
        assert (await answer(reload))["kinds"]["regex"] == "core"
    # The index is whole: a cases file naming a rubric on disk is clean, one naming none is not.
    missing = await open_document(client, big / "missing.cases.yaml")
    present = await open_document(client, big / "present.cases.yaml")
    found = await diagnostics_until(client, missing, lambda found: found)
    assert codes(found) == ["unresolved-rubric"] and "`nowhere`" in found[0].message
    assert await asyncio.wait_for(diagnostics(client, present), TIMEOUT) == []
    # And references reach the files the walk found.
    r7 = await open_document(client, big / "d7" / "r7.rubric.yaml")
    assert places(await answer(references(client, r7, 0, 4)), big) == {
        ("d7/r7.rubric.yaml", 0),
        ("uses_r7.rubric.yaml", 5),
        ("present.cases.yaml", 0),
    }


# --- B5: references and rename right after an edit in another document ------------------------------------


async def test_references_and_rename_right_after_an_edit_elsewhere_see_it(
    fresh: LanguageClient, tmp_path: Path
) -> None:
    client = fresh
    root = folder(
        tmp_path,
        "refs",
        {
            "a.rubric.yaml": rubric("a"),
            "c.rubric.yaml": rubric("c"),
            "b.rubric.yaml": rubric("b", "c"),
            "runs.cases.yaml": cases("c"),
        },
    )
    await start(client, client.editor, [root])  # type: ignore[attr-defined]
    a = await open_document(client, root / "a.rubric.yaml")
    b = await open_document(client, root / "b.rubric.yaml")
    runs = await open_document(client, root / "runs.cases.yaml")
    for uri in (a, b, runs):
        assert await asyncio.wait_for(diagnostics(client, uri), TIMEOUT) == []
    # One keystroke each (`c` becomes `a`), and at once (within the debounce) references on `a`.
    edit(client, b, 2, (5, 12), (5, 13), "a")
    edit(client, runs, 2, (0, 8), (0, 9), "a")
    expected = {("a.rubric.yaml", 0), ("b.rubric.yaml", 5), ("runs.cases.yaml", 0)}
    assert places(await answer(references(client, a, 0, 4)), root) == expected
    assert await asyncio.wait_for(diagnostics(client, b, 2), TIMEOUT) == []
    # B's reference taken back (`a` becomes `c` again), and at once a rename of `a`: B is left alone.
    edit(client, b, 3, (5, 12), (5, 13), "c")
    renamed = await answer(
        asyncio.ensure_future(
            client.text_document_rename_async(
                types.RenameParams(types.TextDocumentIdentifier(a), types.Position(0, 4), "alpha")
            )
        )
    )
    assert renamed is not None and renamed.changes is not None
    assert {
        (Path(to_fs_path(uri) or uri).name, e.range.start.line, e.new_text)
        for uri, edits in renamed.changes.items()
        for e in edits
    } == {("a.rubric.yaml", 0, "alpha"), ("runs.cases.yaml", 0, "alpha")}


async def test_a_run_right_after_an_edit_elsewhere_resolves_against_it(
    fresh: LanguageClient, tmp_path: Path
) -> None:
    """A sub-rubric's id typed in one document, and at once (within the debounce) a run of the
    composite that names the new id in another: the run finds the sub-rubric as the editor has it."""
    client = fresh
    root = folder(
        tmp_path, "runs", {"sub.rubric.yaml": rubric("sub"), "main.rubric.yaml": rubric("main", "sub")}
    )
    await start(client, client.editor, [root])  # type: ignore[attr-defined]
    sub = await open_document(client, root / "sub.rubric.yaml")
    main = await open_document(client, root / "main.rubric.yaml")
    for uri in (sub, main):
        assert await asyncio.wait_for(diagnostics(client, uri), TIMEOUT) == []
    edit(client, sub, 2, (0, 4), (0, 7), "sub2")
    edit(client, main, 2, (5, 12), (5, 15), "sub2")
    answered = await answer(
        asyncio.ensure_future(
            client.workspace_execute_command_async(
                types.ExecuteCommandParams("aiEval.runRubric", [{"uri": main, "response": "a"}])
            )
        )
    )
    (outcome,) = answered["verdict"]["outcomes"]
    assert outcome["checkId"] == "sub" and outcome["passed"], outcome


# --- B6: nested workspace folders -------------------------------------------------------------------------


def nested(tmp_path: Path) -> tuple[Path, Path]:
    """`outer` holding `outer/inner`: `shared` only in outer, `inner_only` only in inner, and in
    each a composite naming each of them."""
    outer = folder(
        tmp_path,
        "outer",
        {
            "shared.rubric.yaml": rubric("shared"),
            "uses_shared.rubric.yaml": rubric("outer_uses_shared", "shared"),
            "uses_inner_only.rubric.yaml": rubric("outer_uses_inner_only", "inner_only"),
        },
    )
    inner = folder(
        outer,
        "inner",
        {
            "inner_only.rubric.yaml": rubric("inner_only"),
            "uses_shared.rubric.yaml": rubric("inner_uses_shared", "shared"),
            "uses_inner_only.rubric.yaml": rubric("inner_uses_inner_only", "inner_only"),
        },
    )
    return outer, inner


async def unresolved(client: LanguageClient, uri: str, ref: str) -> None:
    found = await diagnostics_until(client, uri, lambda found: found)
    assert codes(found) == ["unresolved-rubric"] and f"`{ref}`" in found[0].message


async def test_a_file_belongs_to_the_innermost_folder(fresh: LanguageClient, tmp_path: Path) -> None:
    client = fresh
    outer, inner = nested(tmp_path)
    await start(client, client.editor, [outer, inner])  # type: ignore[attr-defined]
    inner_uses_shared = await open_document(client, inner / "uses_shared.rubric.yaml")
    inner_uses_inner = await open_document(client, inner / "uses_inner_only.rubric.yaml")
    outer_uses_shared = await open_document(client, outer / "uses_shared.rubric.yaml")
    outer_uses_inner = await open_document(client, outer / "uses_inner_only.rubric.yaml")
    # Inner's files resolve against inner's rubrics only, outer's against outer's own only.
    await unresolved(client, inner_uses_shared, "shared")
    assert await asyncio.wait_for(diagnostics(client, inner_uses_inner), TIMEOUT) == []
    assert await asyncio.wait_for(diagnostics(client, outer_uses_shared), TIMEOUT) == []
    await unresolved(client, outer_uses_inner, "inner_only")
    # References stay in the folder: outer's `shared` is not named by inner's file.
    shared = await open_document(client, outer / "shared.rubric.yaml")
    assert places(await answer(references(client, shared, 0, 4)), outer) == {
        ("shared.rubric.yaml", 0),
        ("uses_shared.rubric.yaml", 5),
    }
    inner_only = await open_document(client, inner / "inner_only.rubric.yaml")
    assert places(await answer(references(client, inner_only, 0, 4)), outer) == {
        ("inner/inner_only.rubric.yaml", 0),
        ("inner/uses_inner_only.rubric.yaml", 5),
    }


async def test_a_nested_project_keeps_its_files_whether_or_not_it_is_a_workspace_folder(
    fresh: LanguageClient, tmp_path: Path
) -> None:
    """SPEC section 4: a file belongs to its nearest project root; `inner` holds `.git`, so it is
    its own project inside `outer`, and adding or removing it as a workspace folder moves nothing."""
    client = fresh
    outer, inner = nested(tmp_path)
    await start(client, client.editor, [outer])  # type: ignore[attr-defined]
    in_inner = await open_document(client, inner / "uses_shared.rubric.yaml")
    in_outer = await open_document(client, outer / "uses_inner_only.rubric.yaml")
    await unresolved(client, in_inner, "shared")  # `shared` is outer's
    await unresolved(client, in_outer, "inner_only")  # `inner_only` is inner's
    folders_changed(client, added=[inner])
    folders_changed(client, removed=[inner])
    shared = await open_document(client, outer / "shared.rubric.yaml")
    assert places(await answer(references(client, shared, 0, 4)), outer) == {
        ("shared.rubric.yaml", 0),
        ("uses_shared.rubric.yaml", 5),
    }
    await unresolved(client, in_inner, "shared")
    await unresolved(client, in_outer, "inner_only")


# --- B4: a folder removed while it loads or walks -----------------------------------------------------------


async def test_a_folder_removed_while_it_loads_or_walks_leaves_every_request_answered(
    fresh: LanguageClient, tmp_path: Path, big: Path
) -> None:
    client = fresh
    small = folder(
        tmp_path,
        "small",
        {"alpha.rubric.yaml": rubric("alpha"), "uses_alpha.rubric.yaml": rubric("u", "alpha")},
    )
    await start(client, client.editor, [small])  # type: ignore[attr-defined]
    alpha = await open_document(client, small / "alpha.rubric.yaml")
    uses_alpha = await open_document(client, small / "uses_alpha.rubric.yaml")
    assert await asyncio.wait_for(diagnostics(client, uses_alpha), TIMEOUT) == []
    typo_text = big_rubric("typo", broken=True)
    typo_path = big / "typo.rubric.yaml"  # open in the editor only, never written

    async def others_answer() -> None:
        """The other folder's documents are served all along."""
        found = await answer(references(client, alpha, 0, 4))
        assert places(found, small) == {("alpha.rubric.yaml", 0), ("uses_alpha.rubric.yaml", 5)}
        on_kind = await answer(hover(client, alpha, 4, 12))
        assert on_kind is not None and "must_contain_any" in on_kind.contents.value
        assert await current_diagnostics(client, uses_alpha) == []

    async def typo_answers(pending: list[asyncio.Future[Any]]) -> None:
        """The document under the removed folder: what was asked is answered, and it goes on
        being checked (its own problems) and hovered."""
        for request in pending:
            await answer(request)
        await diagnostics_until(client, typo, lambda found: set(codes(found)) == BROKEN_CODES, TIMEOUT)
        on_kind = await answer(hover(client, typo, 3, 12))
        assert on_kind is not None and "regex" in on_kind.contents.value
        found = await answer(references(client, typo, 0, 4))
        assert ("typo.rubric.yaml", 0) in places(found, big)

    # While it loads: added, a document of it opened and asked about, removed, all in one go.
    folders_changed(client, added=[big])
    typo = await open_document(client, typo_path, typo_text)
    pending = [hover(client, typo, 3, 12), references(client, typo, 0, 4)]
    await asyncio.sleep(0)  # the requests are sent now, before the removal
    folders_changed(client, removed=[big])
    await others_answer()
    await typo_answers(pending)

    # While it walks: added again, removed once its walk has begun (a request waiting for it).
    begun, _ = walks(client, "big")
    folders_changed(client, added=[big])
    await until(lambda: walks(client, "big")[0] > begun)
    pending = [references(client, typo, 0, 4), hover(client, typo, 3, 12)]
    others = asyncio.ensure_future(others_answer())
    await asyncio.sleep(0)
    folders_changed(client, removed=[big])
    await answer(others)
    await typo_answers(pending)
    # Its walk ends on its own (so the server is idle when the test shuts it down: see below).
    await until(lambda: walks(client, "big")[1] == walks(client, "big")[0])


async def run_during_the_first_walk(
    client: LanguageClient, big: Path
) -> tuple[asyncio.Future[None], asyncio.Future[Any]]:
    """Start the server on `big` and, once its walk has begun, ask for a run of one of its cases
    files: the start and the run, both under way (the run waits for the walk)."""
    starting = asyncio.ensure_future(start(client, client.editor, [big]))  # type: ignore[attr-defined]
    await until(lambda: walks(client, "big")[0] > 0 or starting.done())
    run = asyncio.ensure_future(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams("aiEval.runCases", [{"uri": (big / "present.cases.yaml").as_uri()}])
        )
    )
    await asyncio.sleep(0.1)  # the run has reached the server
    return starting, run


async def test_a_run_waiting_for_a_folder_that_is_removed_runs_where_its_file_went(
    fresh: LanguageClient, big: Path
) -> None:
    """A run asked for during the first walk, then the folder closed: the run is not made against
    the half-built index (every case would miss its rubric); its file now belongs to the project
    around it, which the run walks, as `ai-eval-lsp run` would."""
    client = fresh
    starting, run = await run_during_the_first_walk(client, big)
    folders_changed(client, removed=[big])
    row = (await answer(run))["row"]
    assert (row["target_id"], row["question_count"], row["error_count"]) == ("r7", 1, 0)
    await asyncio.wait_for(starting, TIMEOUT)


async def test_shutting_down_while_a_folder_is_walked_is_answered(fresh: LanguageClient, big: Path) -> None:
    """An editor closed during the first indexing, a run waiting for it: `shutdown` is answered
    (not an internal error), and so is the run (cancelled)."""
    client = fresh
    starting, run = await run_during_the_first_walk(client, big)
    client.shut_down = True  # type: ignore[attr-defined]
    try:
        await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
        with pytest.raises(Exception, match="cancel"):
            await answer(run)
    finally:
        client.exit(None)
        starting.cancel()
        await asyncio.gather(starting, return_exceptions=True)
