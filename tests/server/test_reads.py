"""Reading requests (`Reads` routes) in a server in this process: each handler, run on a worker
thread over its snapshot while the event loop edits the same document and reads the versions
that follow, answers what it answers alone; and taking a snapshot never changes the session (a
command naming a file outside every project folder adds none)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types
from server.inprocess import InProcess

from ai_eval_lsp.server.loop.dispatch import Reads
from ai_eval_lsp.server.lsp import names
from ai_eval_lsp.server.lsp.convert import NotApplicable
from ai_eval_lsp.server.routes import COMMANDS, METHODS

TONE = (
    'id: tone\nversion: "1.0"\nchecks:\n  - {id: polite, kind: must_contain_any, values: [sorry]}\n'
    "scoring: {combine: all_pass}\n"
)
CASES = "rubric: tone\ncases:\n  - {id: one, question: {id: q}, response: sorry}\n"
CHECKS = 200


def big_rubric() -> str:
    """A rubric of `CHECKS` checks, a composite naming `tone` after them, and weights naming both."""
    checks = "".join(
        f"  - id: c{n}\n    kind: must_contain_any\n    values: [a{n}, b]\n" for n in range(CHECKS)
    )
    composite = "  - id: sub\n    kind: composite\n    rubric: tone\n"
    scoring = "scoring:\n  combine: weighted_avg\n  weights: {c1: 2, sub: 1}\n"
    return f'id: big\nversion: "1.0"\nchecks:\n{checks}{composite}{scoring}'


def workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "ai-eval.toml").write_text("")
    (root / "tone.rubric.yaml").write_text(TONE)
    (root / "tone.cases.yaml").write_text(CASES)
    (root / "big.rubric.yaml").write_text(big_rubric())
    return root


def position(text: str, line_text: str, column: int = 0) -> types.Position:
    """The position `column` characters into the first line that ends with `line_text`."""
    lines = text.split("\n")
    number = next(n for n, line in enumerate(lines) if line.endswith(line_text))
    return types.Position(number, len(lines[number]) - len(line_text) + column)


def reading_params(uri: str, text: str) -> dict[str, list[Any]]:
    """The params of each reading route, about checks the edits move (late in the document)."""
    document = types.TextDocumentIdentifier(uri)
    c150 = position(text, "  - id: c150")
    kind = types.Position(c150.line + 1, len("    kind: ") + 2)  # on check c150's kind
    tone = position(text, "rubric: tone", 9)
    weight = position(text, "weights: {c1: 2, sub: 1}", 18)
    here = types.Range(kind, kind)
    return {
        types.TEXT_DOCUMENT_COMPLETION: [types.CompletionParams(text_document=document, position=kind)],
        types.TEXT_DOCUMENT_HOVER: [
            types.HoverParams(text_document=document, position=kind),
            types.HoverParams(text_document=document, position=tone),
        ],
        types.TEXT_DOCUMENT_DEFINITION: [
            types.DefinitionParams(text_document=document, position=tone),
            types.DefinitionParams(text_document=document, position=weight),
        ],
        types.TEXT_DOCUMENT_REFERENCES: [
            types.ReferenceParams(
                text_document=document,
                position=tone,
                context=types.ReferenceContext(include_declaration=True),
            )
        ],
        types.TEXT_DOCUMENT_RENAME: [
            types.RenameParams(text_document=document, position=tone, new_name="tone_v2")
        ],
        types.TEXT_DOCUMENT_DOCUMENT_SYMBOL: [types.DocumentSymbolParams(text_document=document)],
        types.WORKSPACE_SYMBOL: [types.WorkspaceSymbolParams(query="c1")],
        types.TEXT_DOCUMENT_CODE_ACTION: [
            types.CodeActionParams(
                text_document=document, range=here, context=types.CodeActionContext(diagnostics=[])
            )
        ],
        types.TEXT_DOCUMENT_CODE_LENS: [types.CodeLensParams(text_document=document)],
        names.HISTORY: [{"target": "tone", "uri": uri}],
        names.DIFF: [{"target": "tone", "uri": uri}],
        names.RENDER: [{"what": "kinds", "uri": uri}, {"what": "history", "target": "tone", "uri": uri}],
        names.EXPORT_SCHEMA: [{"uri": uri}],
    }


def reading_routes() -> list[Reads[Any]]:
    return [route for route in (*METHODS, *COMMANDS) if isinstance(route, Reads)]


def answered(route: Reads[Any], snapshot: Any, params: Any) -> Any:
    """A handler's answer over a snapshot, on the calling thread (an awaiting handler on a loop of
    its own); an error it answers with, by its type and words."""
    try:
        answer = route.handler(snapshot, params)
        return asyncio.run(answer) if inspect.iscoroutine(answer) else answer
    except Exception as err:
        return type(err).__name__, str(err)


async def snapshot_of(client: InProcess, route: Reads[Any], params: Any) -> Any:
    return await route.take(client.server, params)


async def read_on_the_loop(client: InProcess, route: Reads[Any], params: Any) -> None:
    """A request read as the server reads it: its snapshot taken, its handler run on the loop."""
    snapshot = await snapshot_of(client, route, params)
    if snapshot is None:
        return
    with contextlib.suppress(NotApplicable):
        answer = route.handler(snapshot, params)
        if inspect.isawaitable(answer):
            await answer


def read_until(
    reads: list[tuple[Reads[Any], Any, Any]], alone: list[Any], stop: threading.Event
) -> list[str]:
    """Every read again and again, on this thread, until told to stop (twice at least): those
    that answered otherwise than alone."""
    differ: list[str] = []
    rounds = 0
    while rounds < 2 or not stop.is_set():
        for (route, params, snapshot), answer in zip(reads, alone, strict=True):
            if answered(route, snapshot, params) != answer:
                differ.append(f"{route.name} {params}")
        rounds += 1
    return differ


async def test_every_reading_handler_answers_on_a_worker_thread_as_alone_while_the_loop_edits(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path / "workspace")
    client = InProcess()
    await client.start(root)
    text = (root / "big.rubric.yaml").read_text()
    uri = client.open(root / "big.rubric.yaml")
    client.open(root / "tone.cases.yaml")
    edit_at = position(text, "kind: must_contain_any").line  # in the first check
    client.change(uri, edit_at, 0, "\n")  # the checks after it move: the analysis shares them
    await client.settled()
    text = client.server.session.documents[uri].text
    params = reading_params(uri, text)
    routes = reading_routes()
    assert {route.name for route in routes} == set(params), "every reading route is read here"
    reads = [
        (route, each, await snapshot_of(client, route, each))
        for route in routes
        for each in params[route.name]
    ]
    alone = [await asyncio.to_thread(answered, route, snapshot, each) for route, each, snapshot in reads]
    assert all(answer is not None for answer in alone[:3])  # completion, and hover on a kind and on a rubric

    stop = threading.Event()
    reading = asyncio.create_task(asyncio.to_thread(read_until, reads, alone, stop))
    try:
        for step in range(10):  # the loop edits the document and reads each version meanwhile
            if step % 2:
                client.change(uri, edit_at, 0, "\n")
            else:
                client.change(uri, edit_at + 2, 13, "x")
            await client.server.scheduler.current(uri)
            later = reading_params(uri, client.server.session.documents[uri].text)
            for route in routes:
                for each in later[route.name]:
                    await read_on_the_loop(client, route, each)
    finally:
        stop.set()
    assert await reading == []


async def test_a_command_naming_a_file_outside_every_folder_adds_none(tmp_path: Path) -> None:
    """A read is told which folder holds a file, never makes one: the file's project is not loaded
    for it. The command is answered from the workspace when its target decides, else told the
    file is outside; opening the file (which makes its folder) lets it be answered."""
    root = workspace(tmp_path / "workspace")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "ai-eval.toml").write_text("")
    (elsewhere / "other.rubric.yaml").write_text(TONE.replace("id: tone", "id: other"))
    outside = (elsewhere / "other.rubric.yaml").as_uri()
    client = InProcess()
    await client.start(root)
    session = client.server.session
    folders = dict(session.folders)

    async def command(name: str, argument: dict[str, Any]) -> dict[str, Any]:
        return await client.request(
            types.WORKSPACE_EXECUTE_COMMAND, {"command": name, "arguments": [argument]}
        )

    schema = await command(names.EXPORT_SCHEMA, {"uri": outside})
    assert schema["error"]["message"] == (
        f"{elsewhere / 'other.rubric.yaml'} is in no project folder of the server (its workspace "
        "folders, and those of the files open outside them); open the file or a folder holding it, "
        "and ask again"
    )
    kinds = await command(names.RENDER, {"what": "kinds", "uri": outside})
    assert kinds["error"]["message"] == schema["error"]["message"]
    history = await command(names.HISTORY, {"target": "tone", "uri": outside})  # tone is the workspace's
    assert history["result"]["rows"] == [] and history["result"]["runs"] == []
    assert session.folders == folders

    client.open(elsewhere / "other.rubric.yaml")  # a mutating route: it makes the file's folder
    await client.settled()
    assert [folder.root for folder in session.folders.values() if folder.uri not in folders] == [elsewhere]
    schema = await command(names.EXPORT_SCHEMA, {"uri": outside})
    assert "result" in schema and "check_regex" in schema["result"]["$defs"]
