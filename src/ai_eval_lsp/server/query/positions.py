"""Positions in a snapshot, in the client's encoding: a span as a range, a position as a place in
the text, what is under a cursor (read at once, right after a keystroke, where the edits since the
analysis allow), and a place in any file of a project folder (from its summary, never from disk)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from ai_eval_lsp.core.analysis import CursorBefore, UnderCursor, at_after, at_before, before_broken
from ai_eval_lsp.core.cursor import At
from ai_eval_lsp.core.index import ProjectIndex
from ai_eval_lsp.core.problems import Span
from ai_eval_lsp.core.text import units
from ai_eval_lsp.server.lsp.convert import range_in, uri_of
from ai_eval_lsp.server.query.snapshots import DocumentSnapshot, WorkspaceSnapshot


def to_range(document: DocumentSnapshot, span: Span) -> types.Range:
    """A span of a document as an LSP range in the client's encoding."""
    return range_in(document.lines, document.client.encoding, span)


def from_position(document: DocumentSnapshot, position: types.Position) -> tuple[int, int]:
    """An LSP position as (line, code-point column) of the document."""
    return document.lines.from_client(position.line, position.character, document.client.encoding)


def at_position(document: DocumentSnapshot, position: types.Position) -> At | None:
    """The key or value under the cursor."""
    if document.analysis is None:
        return None
    return document.analysis.at(*from_position(document, position))


def peek(document: DocumentSnapshot, position: types.Position) -> UnderCursor | None:
    """What is under a cursor in a document edited since its analysis, without analysing it: read
    from the one check or case the edits stay inside (`at_after`: hover right after a keystroke,
    before the debounce lets the analysis run; `at_before` where they broke its YAML); None when
    only its analysis can tell."""
    line, column = from_position(document, position)
    if document.since_analysis is not None:
        peeked = at_after(
            document.since_analysis.analysis, document.since_analysis.edits, document.lines, line, column
        )
        if peeked is not None:
            return peeked
    if document.since_parsed is not None:
        return at_before(
            document.since_parsed.analysis, document.since_parsed.edits, document.lines, line, column
        )
    return None


def before_broken_item(document: DocumentSnapshot, line: int, column: int) -> CursorBefore | None:
    """Where a cursor was in the last good reading of the check or case the edits since the
    document's analysis broke (`analysis.before_broken`)."""
    read = document.since_parsed
    return (
        before_broken(read.analysis, read.edits, document.lines, line, column) if read is not None else None
    )


def location(
    seen: DocumentSnapshot | WorkspaceSnapshot, root: Path, index: ProjectIndex, relative: str, span: Span
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
