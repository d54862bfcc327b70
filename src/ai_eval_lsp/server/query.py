"""The read layer every feature stands on, and the snapshots a reading handler is given: a
document as one request sees it (`DocumentQuery`, with what is under a cursor: `Cursor`) or the
workspace (`WorkspaceSnapshot`), immutable values taken on the event loop before the handler runs
(`Session.query_of`, `Session.workspace_of`; `snapshots.py` awaits what they need). Over them:
positions in the client's encoding, places in other files (from their summaries, never from
disk), diagnostics as JSON, kinds and their schema, and the rubric and cases files that refer to
each other. Nothing here can reach the session: features are siblings over this layer."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as json_string
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path, to_fs_path

from ai_eval_lsp.core.analysis import Analysis, Before, Edit, Peeked, at_after, at_before, before_broken
from ai_eval_lsp.core.cursor import At
from ai_eval_lsp.core.evaluate import LoadedRubric
from ai_eval_lsp.core.items import Listed
from ai_eval_lsp.core.problems import Problem, Span
from ai_eval_lsp.core.text import Encoding, LineIndex, units
from ai_eval_lsp.core.workspace import CasesSummary, Role, RubricSummary, WorkspaceIndex
from ai_eval_lsp.drupal.secrets import redact_json
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.store import ResultStore
from ai_eval_lsp.server import names
from ai_eval_lsp.server.pygls_adapter import Written


def path_of(uri: str) -> Path | None:
    fs_path = to_fs_path(uri)
    return Path(fs_path) if fs_path else None


def uri_of(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


class NotApplicable(JsonRpcInvalidParams):
    """The request names nothing this server can act on: answered -32602 with the reason."""


# --- the snapshots -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Client:
    """What answers depend on of the client: the position encoding agreed, and whether it takes
    snippets in completion."""

    encoding: Encoding
    snippets: bool = False


@dataclass(frozen=True, slots=True)
class OpenText:
    """An open document's text, as the editor has it, where another file's answer places things."""

    uri: str
    lines: LineIndex


@dataclass(frozen=True, slots=True)
class Since:
    """An analysis of a document's text before its latest edits, and those edits in order."""

    analysis: Analysis
    edits: tuple[Edit, ...]


@dataclass(frozen=True, slots=True)
class DocumentQuery:
    """An open document as one request sees it, taken in one place (`Session.query_of`) when the
    request starts: its text, lines and analysis, and its project folder's index and project at
    that moment. A request that awaits (a store read) still builds its answer from what it was
    asked about: nothing here changes under it."""

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
    client: Client
    open: Mapping[Path, OpenText]
    """Every open document's text, by path: places in them are where the editor has them."""
    edited: Since | None = None
    """Its last analysis (of its role, against its project) when edits came since: what is under
    a cursor is read from the one item they stay inside (`peek`)."""
    readable: Since | None = None
    """Its last analysis that read a tree, and the edits since (`before_broken_item`)."""

    @property
    def text(self) -> str:
        text: str = self.lines.text
        return text


@dataclass(frozen=True, slots=True)
class Cursor:
    """A document as a request at a cursor sees it, and what is under the cursor there."""

    document: DocumentQuery
    at: At | None


@dataclass(frozen=True, slots=True, eq=False)
class FolderView:
    """A project folder as a workspace-wide request sees it."""

    root: Path
    index: WorkspaceIndex
    project: Project | None
    reads_site: bool
    """Whether its project reads a site's runs."""


@dataclass(frozen=True, slots=True)
class WorkspaceSnapshot:
    """Every project folder as a workspace-wide request sees it (`Session.workspace_of`), the one
    holding the file the request names (`home`), and the open documents' texts."""

    folders: tuple[FolderView, ...]
    home: FolderView | None
    open: Mapping[Path, OpenText]
    client: Client
    outside: Path | None = None
    """The file the request names, when no project folder of the session holds it."""


def project_of(document: DocumentQuery) -> Project:
    project = document.project
    assert project is not None, "a document is analysed only once its project is loaded"
    return project


def peek(document: DocumentQuery, position: types.Position) -> Peeked | None:
    """What is under a cursor in a document edited since its analysis, without analysing it: read
    from the one check or case the edits stay inside (`at_after`: hover right after a keystroke,
    before the debounce lets the analysis run; `at_before` where they broke its YAML); None when
    only its analysis can tell."""
    line, column = from_position(document, position)
    if document.edited is not None:
        peeked = at_after(document.edited.analysis, document.edited.edits, document.lines, line, column)
        if peeked is not None:
            return peeked
    if document.readable is not None:
        return at_before(document.readable.analysis, document.readable.edits, document.lines, line, column)
    return None


def before_broken_item(document: DocumentQuery, line: int, column: int) -> Before | None:
    """Where a cursor was in the last good reading of the check or case the edits since the
    document's analysis broke (`analysis.before_broken`)."""
    read = document.readable
    return (
        before_broken(read.analysis, read.edits, document.lines, line, column) if read is not None else None
    )


# --- positions -----------------------------------------------------------------------------------


def range_in(lines: LineIndex, encoding: Encoding, span: Span) -> types.Range:
    """A span of a text as an LSP range in the client's encoding."""
    start, end = client_range(lines, encoding, span)
    return types.Range(types.Position(*start), types.Position(*end))


def client_range(lines: LineIndex, encoding: Encoding, span: Span) -> tuple[tuple[int, int], tuple[int, int]]:
    """A span of a text as (line, units) of the client's encoding, from and to."""
    return (
        lines.to_client(span.start.line, span.start.column, encoding),
        lines.to_client(span.end.line, span.end.column, encoding),
    )


def to_range(document: DocumentQuery, span: Span) -> types.Range:
    """A span of a document as an LSP range in the client's encoding."""
    return range_in(document.lines, document.client.encoding, span)


def from_position(document: DocumentQuery, position: types.Position) -> tuple[int, int]:
    """An LSP position as (line, code-point column) of the document."""
    return document.lines.from_client(position.line, position.character, document.client.encoding)


def at_position(document: DocumentQuery, position: types.Position) -> At | None:
    """The key or value under the cursor."""
    if document.analysis is None:
        return None
    return document.analysis.at(*from_position(document, position))


def location(
    seen: DocumentQuery | WorkspaceSnapshot, root: Path, index: WorkspaceIndex, relative: str, span: Span
) -> types.Location:
    """A place in any file of a project folder (its `root` and `index`): an open document's own
    text, else the file's summary."""
    path = root / relative
    encoding = seen.client.encoding
    document = seen.open.get(path)
    if document is not None:
        return types.Location(document.uri, range_in(document.lines, encoding, span))
    uri = uri_of(path)
    summary = index.summary(relative)
    lines = summary.lines if summary is not None else {}

    def converted(line: int, column: int) -> types.Position:
        text = lines.get(line)
        return types.Position(line, units(text[:column], encoding) if text is not None else column)

    return types.Location(
        uri,
        types.Range(converted(span.start.line, span.start.column), converted(span.end.line, span.end.column)),
    )


# --- diagnostics ---------------------------------------------------------------------------------


Converted = dict[int, tuple[Problem, str]]
"""Problems as written (LSP diagnostics as JSON), by the problem's id."""


def diagnostics(
    document: DocumentQuery, problems: Sequence[Problem], kept: tuple[Converted, Converted]
) -> tuple[Written, Converted]:
    """Problems of a document as LSP diagnostics (a JSON array), and how each was written. `kept`:
    how they were written the last two times; a problem kept there is not written again (an
    update after an edit inside one item keeps the very problem objects of the other items, on
    lines that did not change, `core/items.py`: a 10,000-check rubric has thousands of them, and
    a keystroke that broke the YAML for a moment and the next that mended it give them back)."""
    last, before = kept
    converted: Converted = {}
    written: list[str] = []
    for problem in problems:
        found = last.get(id(problem)) or before.get(id(problem))
        if found is None or found[0] is not problem:
            found = (problem, diagnostic(document, problem))
        converted[id(problem)] = found
        written.append(found[1])
    return Written(("[", ", ".join(written), "]")), converted


def diagnostic(document: DocumentQuery, problem: Problem) -> str:
    """A problem as an LSP `Diagnostic` in JSON, written straight (tens of thousands of them
    through lsprotocol's classes and converter took a second, and through dicts and `json.dumps`
    a third of one), with no secret the process holds."""
    start, end = client_range(document.lines, document.client.encoding, problem.span)
    written = (
        f'{{"range": {_json_range(start, end)}, "message": {json_string(problem.message)}, '
        f'"severity": {int(problem.severity)}, "code": {json_string(problem.code)}, "source": {_SOURCE}'
    )
    if problem.data:
        written += f', "data": {json.dumps(problem.data)}'
    if problem.related:
        related = [
            {"location": {"uri": place.uri, "range": _range(place.range)}, "message": other.message}
            for other in problem.related
            for place in [location(document, document.root, document.index, other.path, other.span)]
        ]
        written += f', "relatedInformation": {json.dumps(related)}'
    return redact_json(written + "}")  # the one redaction of the messages written already


_SOURCE = json_string(names.SOURCE)


def _json_range(start: tuple[int, int], end: tuple[int, int]) -> str:
    return (
        f'{{"start": {{"line": {start[0]}, "character": {start[1]}}}, '
        f'"end": {{"line": {end[0]}, "character": {end[1]}}}}}'
    )


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
    data, summary = analysis.value, analysis.summary
    if not isinstance(data, dict) or not isinstance(summary, RubricSummary):
        raise NotApplicable(f"{analysis.path} is not a rubric file")
    if summary.id is None:
        raise NotApplicable(f"{analysis.path}: the rubric has no `id`")
    return LoadedRubric(summary.id, summary.version, data)


def cases_running(index: WorkspaceIndex, rubric: RubricSummary) -> list[CasesSummary]:
    """The cases files of a project folder's index that run a rubric."""
    return index.cases.running(rubric, index.rubrics)


def checks_of(document: DocumentQuery) -> list[Listed]:
    """The checks of a rubric document's last analysis: each one's range and value."""
    analysis = document.analysis
    return analysis.listed() if analysis is not None and analysis.role == "rubric" else []


def own_summary(document: DocumentQuery) -> RubricSummary | None:
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
    document: DocumentQuery, position: types.Position
) -> tuple[RubricSummary | None, tuple[str | int, ...]]:
    """The rubric named at a position (by its `id` or a `rubric:` reference), and the path there."""
    at = at_position(document, position)
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
    return ResultStore(project.results_database, project.root)


def folder_of_target(workspace: WorkspaceSnapshot, target: str | None) -> FolderView:
    """The project folder whose results a history or diff reads: the one whose index has the
    rubric `target` (the one holding the request's file first, when several do), else one
    reading a site (a site's target), else the one holding the request's file, else the first.
    A request naming a file no folder holds is told so, unless `target` decides."""
    folders, home = [f for f in workspace.folders if f.project is not None], workspace.home
    holding = [f for f in folders if target is not None and f.index.rubrics.with_id(target)]
    if not holding and workspace.outside is not None:
        raise NotApplicable(
            f"{workspace.outside} is in no project folder of the server (its workspace folders, and "
            "those of the files open outside them); open the file or a folder holding it, and ask again"
        )
    if not holding and target is not None:  # a site's target: the projects reading a site
        holding = [f for f in folders if f.reads_site]
    holding.sort(key=lambda folder: folder is not home)
    if holding:
        return holding[0]
    if home is not None:
        return home
    if not folders:
        raise NotApplicable("no workspace folder is open, and no rubric or cases file names this target")
    return folders[0]
