"""The read layer every feature stands on: documents as they are now, positions in the client's
encoding, places in other files (from their summaries, never from disk), kinds and their schema,
and the rubric and cases files that refer to each other. Features are siblings over this layer
and never call each other; nothing here changes the session."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from weakref import WeakKeyDictionary

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from ai_eval_lsp.core.analysis import Analysis, Before, Edit, at_after, at_before, before_broken
from ai_eval_lsp.core.cursor import At
from ai_eval_lsp.core.evaluate import LoadedRubric
from ai_eval_lsp.core.problems import Problem, Span
from ai_eval_lsp.core.text import Encoding, LineIndex, units
from ai_eval_lsp.core.workspace import CasesSummary, Role, RubricSummary, WorkspaceIndex
from ai_eval_lsp.core.yamltree import Node
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.store import ResultStore
from ai_eval_lsp.server import names
from ai_eval_lsp.server.folders import Folders
from ai_eval_lsp.server.pygls_adapter import Written
from ai_eval_lsp.server.scheduler import Scheduler
from ai_eval_lsp.server.session import Folder, OpenDocument, Session, Snapshot, path_of, uri_of

LOAD_WAIT = 60.0
"""How long a request waits for the workspace's projects to load before it says what is loading."""


class Server(Protocol):
    """What the read layer needs of the language server (`server.AiEvalServer`)."""

    @property
    def session(self) -> Session: ...
    @property
    def scheduler(self) -> Scheduler: ...
    @property
    def folders(self) -> Folders: ...
    @property
    def encoding(self) -> Encoding: ...


class NotApplicable(JsonRpcInvalidParams):
    """The request names nothing this server can act on: answered -32602 with the reason."""


@dataclass(frozen=True, slots=True)
class DocumentQuery:
    """An open document as one request sees it, taken in one place (`query_of`) when the request
    starts: its text, lines and analysis, and its project folder's index and project at that
    moment. A request that awaits (a store read, the folder's walk) still builds its answer from
    what it was asked about: nothing here changes under it."""

    uri: str
    path: Path | None
    relative: str
    role: Role | None
    version: int
    lines: LineIndex
    analysis: Analysis | None
    root: Path
    index: WorkspaceIndex
    indexed: bool
    """Whether the folder's walk was done (or it has none): until then `index` holds the open
    documents only."""
    project: Project | None

    @property
    def text(self) -> str:
        text: str = self.lines.text
        return text


def query_of(document: OpenDocument) -> DocumentQuery:
    folder = document.folder
    return DocumentQuery(
        document.uri,
        document.path,
        document.relative,
        document.role,
        document.version,
        document.lines,
        document.analysis,
        folder.root,
        folder.index,
        folder.indexed.is_set(),
        folder.project,
    )


async def current_document(server: Server, uri: str) -> OpenDocument | None:
    """An open rubric or cases file with the analysis of its text as it is now; None otherwise."""
    document = await server.scheduler.current(uri)
    if document is None or document.role is None or document.analysis is None:
        return None
    return document


async def current(server: Server, uri: str) -> DocumentQuery | None:
    """`current_document`, as the request's snapshot."""
    document = await current_document(server, uri)
    return query_of(document) if document is not None else None


def now(server: Server, uri: str) -> DocumentQuery | None:
    """An open document as it is now, with whatever analysis it last had (completion's view: it
    never waits for a check)."""
    document = server.session.documents.get(uri)
    return query_of(document) if document is not None else None


async def whole_folder(server: Server, folder: Folder) -> bool:
    """Wait until the folder is indexed and every open document of it is analysed as it is now:
    what a request that edits, runs or lists places in other files needs. False when the folder
    was removed meanwhile (its documents moved to another)."""
    await folder.indexed.wait()
    documents = server.session.documents_of(folder)
    await asyncio.gather(*(server.scheduler.current(doc.uri) for doc in documents), return_exceptions=True)
    return server.session.holds(folder)


async def settled_document(server: Server, uri: str) -> OpenDocument | None:
    """`current_document`, once the document's whole folder is too (`whole_folder`); a document
    whose folder is removed meanwhile is settled in the folder it moved to."""
    while (document := await current_document(server, uri)) is not None:
        if await whole_folder(server, document.folder) and server.session.documents.get(uri) is document:
            return document
    return None


async def settled(server: Server, uri: str) -> DocumentQuery | None:
    """`settled_document`, as the request's snapshot."""
    document = await settled_document(server, uri)
    return query_of(document) if document is not None else None


def _since_analysis(server: Server, uri: str) -> tuple[OpenDocument, Snapshot, Analysis] | None:
    """An open document edited since its last analysis (of the same role): the document, its
    snapshot now (its text, and the edits since) and that analysis."""
    document = server.session.documents.get(uri)
    snapshot = server.session.snapshot(document) if document is not None and not document.current else None
    previous = snapshot.previous if snapshot is not None else None
    if document is None or snapshot is None or previous is None or previous.role != snapshot.role:
        return None
    return document, snapshot, previous


def _last_read(server: Server, uri: str) -> tuple[OpenDocument, Analysis, Sequence[Edit]] | None:
    """An open document's last analysis that read its tree, and the edits since: the one kept
    while its analyses since read none (`OpenDocument.readable`), else its last analysis."""
    document = server.session.documents.get(uri)
    if document is not None and document.readable is not None:
        analysis, edits = document.readable
        return document, analysis, tuple(edits)
    edited = _since_analysis(server, uri)
    return (edited[0], edited[2], edited[1].edits) if edited is not None else None


async def under_cursor(
    server: Server, uri: str, position: types.Position
) -> tuple[DocumentQuery, At | None] | None:
    """An open rubric or cases file as it is now and what is under a cursor in it: at once where
    the edits since its analysis stay inside one check or case (`at_after`: hover right after a
    keystroke, before the debounce lets the analysis run; `at_before` where they broke its
    YAML), else once it is analysed."""
    edited = _since_analysis(server, uri)
    if edited is not None:
        document, snapshot, previous = edited
        line, column = from_position(server, document, position)
        peeked = at_after(previous, snapshot.edits, snapshot.lines, line, column)
        if peeked is not None:
            return query_of(document), peeked.at
    read = _last_read(server, uri)
    if read is not None:
        document, previous, edits = read
        peeked = at_before(previous, edits, document.lines, *from_position(server, document, position))
        if peeked is not None:
            return query_of(document), peeked.at
    analysed = await current(server, uri)
    return (analysed, at_position(server, analysed, position)) if analysed is not None else None


def before_broken_item(server: Server, uri: str, line: int, column: int) -> Before | None:
    """Where a cursor was in the last good reading of the check or case the edits since the
    document's analysis broke (`analysis.before_broken`)."""
    read = _last_read(server, uri)
    if read is None:
        return None
    document, previous, edits = read
    return before_broken(previous, edits, document.lines, line, column)


def project_of(document: DocumentQuery) -> Project:
    project = document.project
    assert project is not None, "a document is analysed only once its project is loaded"
    return project


# --- positions -----------------------------------------------------------------------------------


def to_range(server: Server, document: OpenDocument | DocumentQuery, span: Span) -> types.Range:
    """A span of an open document as an LSP range in the client's encoding."""
    lines, encoding = document.lines, server.encoding
    start = lines.to_client(span.start.line, span.start.column, encoding)
    end = lines.to_client(span.end.line, span.end.column, encoding)
    return types.Range(types.Position(*start), types.Position(*end))


def from_position(
    server: Server, document: OpenDocument | DocumentQuery, position: types.Position
) -> tuple[int, int]:
    """An LSP position as (line, code-point column) of the document."""
    return document.lines.from_client(position.line, position.character, server.encoding)


def at_position(server: Server, document: DocumentQuery, position: types.Position) -> At | None:
    """The key or value under the cursor."""
    if document.analysis is None:
        return None
    return document.analysis.at(*from_position(server, document, position))


def location(server: Server, root: Path, index: WorkspaceIndex, relative: str, span: Span) -> types.Location:
    """A place in any file of a project folder (its `root` and `index`): an open document's own
    text, else the file's summary."""
    path = root / relative
    document = server.session.document_at(path)
    if document is not None:
        return types.Location(document.uri, to_range(server, document, span))
    uri = uri_of(path)
    summary = index.summary(relative)
    lines = summary.lines if summary is not None else {}
    encoding = server.encoding

    def converted(line: int, column: int) -> types.Position:
        text = lines.get(line)
        return types.Position(line, units(text[:column], encoding) if text is not None else column)

    return types.Location(
        uri,
        types.Range(converted(span.start.line, span.start.column), converted(span.end.line, span.end.column)),
    )


# --- diagnostics ---------------------------------------------------------------------------------


Converted = dict[int, tuple[Problem, str]]

_CONVERTED: WeakKeyDictionary[OpenDocument, tuple[Converted, Converted]] = WeakKeyDictionary()
"""Each open document's problems as written the last two times (LSP diagnostics as JSON). An
update after an edit inside one item keeps the very problem objects of the other items, on lines
that did not change (`core/items.py`): those are not written again (a 10,000-check rubric has
thousands of them), nor after a keystroke that broke the YAML for a moment and the next that
mended it."""


def diagnostics(server: Server, document: OpenDocument) -> Written:
    """Every problem of a document as LSP diagnostics (a JSON array), against its folder's index
    as it is now."""
    last, before = _CONVERTED.get(document, ({}, {}))
    converted: Converted = {}
    written: list[str] = []
    for problem in server.session.problems(document):
        kept = last.get(id(problem)) or before.get(id(problem))
        if kept is None or kept[0] is not problem:
            kept = (problem, json.dumps(diagnostic(server, document, problem)))
        converted[id(problem)] = kept
        written.append(kept[1])
    _CONVERTED[document] = (converted, last)
    return Written(("[", ", ".join(written), "]"))


def diagnostic(server: Server, document: OpenDocument, problem: Problem) -> dict[str, Any]:
    """A problem as an LSP `Diagnostic`, in JSON's terms (written straight: tens of thousands of
    them through lsprotocol's classes and converter took a second)."""
    found: dict[str, Any] = {
        "range": _range(to_range(server, document, problem.span)),
        "message": problem.message,
        "severity": int(problem.severity),
        "code": problem.code,
        "source": names.SOURCE,
    }
    if problem.data:
        found["data"] = problem.data
    if problem.related:
        found["relatedInformation"] = [
            {
                "location": {"uri": place.uri, "range": _range(place.range)},
                "message": other.message,
            }
            for other in problem.related
            for place in [
                location(server, document.folder.root, document.folder.index, other.path, other.span)
            ]
        ]
    return found


def _range(where: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": where.start.line, "character": where.start.character},
        "end": {"line": where.end.line, "character": where.end.character},
    }


# --- kinds and schema ----------------------------------------------------------------------------


def kind_text(project: Project, kind: str) -> str | None:
    """A kind's title, description, origin and whether the runtime executes it."""
    registry = project.registry
    origin = registry.combined.origins.get(kind)
    if origin is None:
        return None
    definition = registry.combined.definition(kind)
    title = definition.get("title")
    parts = [f"**{title}** (`{kind}`)" if title else f"**`{kind}`**"]
    if definition.get("description"):
        parts.append(str(definition["description"]))
    validator = project.rules.validator
    own = [name for name in validator.properties(kind, ()) if name not in BASE_FIELDS]
    if own:
        parts.append(
            "Fields: "
            + "; ".join(f"`{name}` ({constraints(validator.annotations(kind, (name,)))})" for name in own)
            + "."
        )
    where = (
        f" ([{Path(origin.file).name}:{origin.line}]({uri_of(Path(origin.file))}#L{origin.line}))"
        if origin.file
        else ""
    )
    codebase = registry.codebase
    site = (
        f" (site `{codebase.site}` of {', '.join(codebase.sites)})"
        if origin.module and codebase is not None and len(codebase.sites) > 1
        else ""
    )
    parts.append(f"From {origin}{where}{site}; {project.registry.runs(kind)}.")
    return "\n\n".join(parts)


BASE_FIELDS = frozenset({"kind", "id", "description", "metadata"})
"""What every check has (`check_base`): a kind's hover lists only its own fields."""


def constraints(schema: dict[str, Any]) -> str:
    """What a field's schema asks of its value, in words: `integer, at least 0, default 20`."""
    said: list[str] = []
    if "const" in schema:
        said.append(f"always `{schema['const']}`")
    elif "enum" in schema:
        said.append("one of " + ", ".join(f"`{value}`" for value in schema["enum"]))
    elif isinstance(schema.get("type"), str):
        items = schema.get("items", {})
        of = (
            f" of {items['type']}s"
            if schema["type"] == "array" and isinstance(items, dict) and isinstance(items.get("type"), str)
            else ""
        )
        said.append(f"{schema['type']}{of}")
    for keyword, words in (
        ("minimum", "at least"),
        ("maximum", "at most"),
        ("minLength", "at least {} characters"),
        ("minItems", "at least {} items"),
    ):
        if keyword in schema:
            said.append(words.format(schema[keyword]) if "{}" in words else f"{words} {schema[keyword]}")
    if "default" in schema:
        said.append(f"default `{schema['default']}`")
    return ", ".join(said) or "any value"


def in_check(path: tuple[str | int, ...]) -> bool:
    return len(path) >= 2 and path[0] == "checks" and isinstance(path[1], int)


def field_schema(
    project: Project, document: DocumentQuery, path: tuple[str | int, ...], kind: Any
) -> dict[str, Any]:
    """The schema annotations of the field at `path`; inside a check, by that check's `kind`."""
    if document.role == "cases":
        return project.rules.cases_validator.annotations("", path)
    validator = project.rules.validator
    if len(path) >= 3 and in_check(path):
        return (
            validator.annotations(kind, path[2:]) if isinstance(kind, str) and kind in validator.kinds else {}
        )
    return validator.annotations("", path)


def check_kind(at: At) -> Any:
    """The `kind` of the check a cursor is in, if it is in one."""
    return at.item.get("kind") if in_check(at.path) and isinstance(at.item, dict) else None


# --- rubrics and cases files ---------------------------------------------------------------------


def rubric_of(analysis: Analysis) -> LoadedRubric:
    """The rubric a document holds, as the editor has it now."""
    root = analysis.root
    summary = analysis.summary
    if root is None or not isinstance(root.value, dict) or not isinstance(summary, RubricSummary):
        raise NotApplicable(f"{analysis.path} is not a rubric file")
    if summary.id is None:
        raise NotApplicable(f"{analysis.path}: the rubric has no `id`")
    return LoadedRubric(summary.id, summary.version, root.value)


def cases_running(index: WorkspaceIndex, rubric: RubricSummary) -> list[CasesSummary]:
    """The cases files of a project folder's index that run a rubric."""
    return index.cases.running(rubric, index.rubrics)


def checks_of(document: DocumentQuery) -> list[Node]:
    """The check nodes of a rubric document's last analysis."""
    root = document.analysis.root if document.analysis else None
    checks = root.at(("checks",)) if root is not None else None
    return list(checks.items or []) if checks is not None else []


def own_summary(document: OpenDocument | DocumentQuery) -> RubricSummary | None:
    summary = document.analysis.summary if document.analysis else None
    return summary if isinstance(summary, RubricSummary) else None


@dataclass(frozen=True, slots=True)
class Mention:
    """A place that names a rubric: its `id`, a composite `rubric:` or a cases file's `rubric:`."""

    path: str
    span: Span
    text: str


def mentions(index: WorkspaceIndex, target: RubricSummary) -> list[Mention]:
    """Every place of a project folder's index that names `target`: its id and every reference
    resolving to it."""
    rubrics = index.rubrics
    found = [Mention(target.path, target.id_span, str(target.id))] if target.id_span else []
    for summary in rubrics.by_path.values():
        for ref in summary.composites:
            if rubrics.resolve(ref.ref) == target:
                found.append(Mention(summary.path, ref.span, ref.ref))
    for cases in cases_running(index, target):
        if cases.rubric is not None and cases.rubric_span is not None:
            found.append(Mention(cases.path, cases.rubric_span, cases.rubric))
    return found


def rubric_named_at(
    server: Server, document: DocumentQuery, position: types.Position
) -> tuple[RubricSummary | None, tuple[str | int, ...]]:
    """The rubric named at a position (by its `id` or a `rubric:` reference), and the path there."""
    at = at_position(server, document, position)
    if at is None:
        return None, ()
    if at.on_key or not isinstance(at.node.value, str):
        return None, at.path
    rubrics = document.index.rubrics
    if at.path and at.path[-1] == "rubric":
        return rubrics.resolve(at.node.value), at.path
    if at.path == ("id",):
        return own_summary(document), at.path
    return None, at.path


def results_of(project: Project | None) -> ResultStore:
    """The store a project's runs write to."""
    assert project is not None, "results are asked for once the project is loaded"
    return ResultStore(project.results_database)


async def loaded(server: Server) -> list[Folder]:
    """Every project folder once loaded and, if walked, indexed (those a walk finds meanwhile
    too): waits up to `LOAD_WAIT` seconds, then says what is still loading."""
    deadline = asyncio.get_running_loop().time() + LOAD_WAIT
    while pending := [
        f for f in server.session.folders.values() if not (f.ready.is_set() and f.indexed.is_set())
    ]:
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            roots = ", ".join(str(folder.root) for folder in pending)
            raise NotApplicable(f"still loading after {LOAD_WAIT:g} s: {roots}; ask again once it is indexed")
        waits = [asyncio.ensure_future(asyncio.gather(f.ready.wait(), f.indexed.wait())) for f in pending]
        try:
            await asyncio.wait(waits, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
    return [folder for folder in server.session.folders.values() if folder.project is not None]


async def folder_of_target(server: Server, target: str | None, uri: str | None) -> Folder:
    """The project folder whose results a history or diff reads: the one whose index has the
    rubric `target` (the one holding `uri` first, when several do), else one reading a site (a
    site's target), else the one holding `uri`, else the first; once every folder is loaded."""
    folders = await loaded(server)
    path = path_of(uri) if isinstance(uri, str) else None
    home = server.folders.home_of(path.resolve(), server.session.settings) if path is not None else None
    holding = [f for f in folders if target is not None and f.index.rubrics.with_id(target)]
    if not holding and target is not None:  # a site's target: the projects reading a site
        holding = [f for f in folders if f.site is not None]
    holding.sort(key=lambda folder: folder is not home)
    if holding:
        return holding[0]
    if home is not None:
        await home.ready.wait()
        return home
    if not folders:
        raise NotApplicable("no workspace folder is open, and no rubric or cases file names this target")
    return folders[0]
