"""A long random editing session: incremental edits (line breaks of every kind, characters
outside the BMP, U+2028, positions past line and document ends) interleaved with completion,
hover, code actions, symbols and definition at random places, some inside surrogate pairs. No
request may fail, and the final diagnostics must equal `check`'s on the text the editor holds.

Bounded here (AI_EVAL_FUZZ_EDITS, default 400); `bench/bench_fuzz.py` runs it long."""

from __future__ import annotations

import asyncio
import os
import random
import re
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from ai_eval_lsp.project.project import Project
from e2e.conftest import EDITORS, SERVER
from e2e.helpers import diagnostics, open_document, start

EDITS = int(os.environ.get("AI_EVAL_FUZZ_EDITS", "400"))
SEED = int(os.environ.get("AI_EVAL_FUZZ_SEED", "20261130"))

START = """id: fuzzed
version: "1.0"
description: "naïve 😀 text\u2028with a line separator"
checks:
  - {id: polite, kind: must_contain_any, values: [sorry, "🙏"]}
  - id: shape
    kind: regex
    pattern: "^[A-Z]"
scoring:
  combine: weighted_avg
  weights: {polite: 2}
"""

ITEMS = (
    'id: items\nversion: "1.0"\nchecks:\n'
    + "".join(
        f"  - id: c{n}\n    kind: {kind}\n    values: [sorry, é]\n    pattern: 'x+'\n    description: Tone {n}\n"
        for n, kind in enumerate(["must_contain_any", "regex", "llm_judge", "composite"] * 3)
    )
    + "scoring:\n  combine: all_pass\n"
)
"""A rubric of many checks and no U+2028 (which makes every edit read the document whole): most
edits stay inside one check, and are analysed by reading that check alone."""

PIECES = [
    "\n", "\r\n", "\r", " ", "  ", "- ", ": ", "{", "}", "[", "]", ",", "#", '"', "'", "é", "😀", "\u2028", "\x85",
    "kind: regex", "kind: regexp", "pattern: x", "  - {kind: must_contain_any, values: [a]}\n", "values: [",
    "id: ", "weights: {", "polite", "combine: all_pass", "threshold: 2", "version: 1.10", "patern: y", "\t",
]  # fmt: skip

_BREAK = re.compile(r"\r\n|\r|\n")


class EditorText:
    """The document as the editor holds it: lines end at `\\n`, `\\r\\n` or `\\r`, positions count
    units of the negotiated encoding. Written here independently of the server's own."""

    def __init__(self, text: str, encoding: str) -> None:
        self.text, self.encoding = text, encoding

    def line_starts(self) -> list[int]:
        return [0, *(m.end() for m in _BREAK.finditer(self.text))]

    def units(self, text: str) -> int:
        codec = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[self.encoding]
        width = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[self.encoding]
        return len(text.encode(codec, "surrogatepass")) // width

    def line(self, number: int) -> str:
        starts = self.line_starts()
        end = starts[number + 1] if number + 1 < len(starts) else len(self.text)
        return self.text[starts[number] : end].rstrip("\r\n")

    def position(self, offset: int) -> types.Position:
        starts = self.line_starts()
        number = max(i for i, start in enumerate(starts) if start <= offset)
        return types.Position(number, self.units(self.text[starts[number] : offset]))

    def offset(self, position: types.Position) -> int:
        """As LSP says: a character past the line's end is its end; a line past the last, the end."""
        starts = self.line_starts()
        if position.line >= len(starts):
            return len(self.text)
        line = self.line(position.line)
        column = 0
        while column < len(line) and self.units(line[: column + 1]) <= position.character:
            column += 1
        return starts[position.line] + column

    def apply(self, start: types.Position, end: types.Position, new: str) -> None:
        low, high = sorted((self.offset(start), self.offset(end)))
        self.text = self.text[:low] + new + self.text[high:]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    (root / ".git").mkdir()
    return root


@pytest_lsp.fixture(params=EDITORS, config=SERVER, scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    yield await start(lsp_client, request.param, [workspace])
    await lsp_client.shutdown_session()


def random_position(rng: random.Random, text: EditorText, anywhere: bool) -> types.Position:
    """A place in the text: a character boundary, or (`anywhere`) any unit, past the ends too."""
    if anywhere:
        line = rng.randint(0, len(text.line_starts()) + 1)
        width = text.units(text.line(line)) if line < len(text.line_starts()) else 0
        return types.Position(line, rng.randint(0, width + 3))
    return text.position(rng.randint(0, len(text.text)))


async def random_request(client: LanguageClient, rng: random.Random, uri: str, text: EditorText) -> None:
    where = random_position(rng, text, anywhere=True)
    document = types.TextDocumentIdentifier(uri)
    kind = rng.choice(["completion", "hover", "action", "symbols", "definition"])
    if kind == "completion":
        await client.text_document_completion_async(types.CompletionParams(document, where))
    elif kind == "hover":
        await client.text_document_hover_async(types.HoverParams(document, where))
    elif kind == "action":
        span = types.Range(where, where)
        await client.text_document_code_action_async(
            types.CodeActionParams(document, span, types.CodeActionContext([]))
        )
    elif kind == "symbols":
        await client.text_document_document_symbol_async(types.DocumentSymbolParams(document))
    else:
        await client.text_document_definition_async(types.DefinitionParams(document, where))


@pytest.mark.parametrize("start", [START, ITEMS], ids=["small", "items"])
async def test_a_random_editing_session(client: LanguageClient, workspace: Path, start: str) -> None:
    """After every hundred edits and at the end, the diagnostics are `check`'s for the text."""
    rng = random.Random(f"{SEED}-{client.position_encoding}-{len(start)}")  # type: ignore[attr-defined]
    text = EditorText(start, client.position_encoding)  # type: ignore[attr-defined]
    path = workspace / f"fuzzed-{client.position_encoding}-{len(start)}.rubric.yaml"  # type: ignore[attr-defined]
    uri = await open_document(client, path, text.text)
    version = 1
    for step in range(EDITS):
        start_at = random_position(rng, text, anywhere=rng.random() < 0.1)
        end_at = start_at if rng.random() < 0.6 else random_position(rng, text, anywhere=False)
        if (end_at.line, end_at.character) < (start_at.line, start_at.character):
            start_at, end_at = end_at, start_at
        new = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 3)))
        version += 1
        text.apply(start_at, end_at, new)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version, uri),
                [types.TextDocumentContentChangePartial(range=types.Range(start_at, end_at), text=new)],
            )
        )
        if rng.random() < 0.3:
            await asyncio.wait_for(random_request(client, rng, uri, text), 30)
        if step % 100 == 99:  # let a check land now and then, and compare it with a full one
            found = await diagnostics(client, uri, version)
            assert [(d.code, d.message, d.range) for d in found] == expected(workspace, path, text), text.text
    found = await diagnostics(client, uri, version)
    assert [(d.code, d.message, d.range) for d in found] == expected(workspace, path, text), text.text


def expected(workspace: Path, path: Path, text: EditorText) -> list[tuple[str, str, types.Range]]:
    """What `check` reports for the text, as ranges in the client's encoding."""
    project = Project.load(workspace)
    analysis = project.analyse(path, text.text.encode("utf-8"))
    problems = analysis.problems_in(project.index({path: analysis}).rubrics)

    def position(line: int, column: int) -> types.Position:
        return types.Position(
            line, text.units(text.line(line)[:column]) if line < len(text.line_starts()) else 0
        )

    return [
        (
            str(p.code),
            p.message,
            types.Range(
                position(p.span.start.line, p.span.start.column), position(p.span.end.line, p.span.end.column)
            ),
        )
        for p in problems
    ]
