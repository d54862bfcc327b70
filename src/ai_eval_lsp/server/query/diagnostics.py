"""Problems as LSP diagnostics, written as JSON once each: what the server publishes and a pull is
answered with."""

from __future__ import annotations

import json
from collections.abc import Sequence
from json.encoder import encode_basestring_ascii as json_string
from typing import Any

from lsprotocol import types

from ai_eval_lsp.core.problems import Problem
from ai_eval_lsp.drupal.secrets import redact_json
from ai_eval_lsp.server.lsp import names
from ai_eval_lsp.server.lsp.convert import client_range
from ai_eval_lsp.server.lsp.pygls_adapter import Written
from ai_eval_lsp.server.query.positions import location
from ai_eval_lsp.server.query.snapshots import DocumentSnapshot

Converted = dict[int, tuple[Problem, str]]
"""Problems as written (LSP diagnostics as JSON), by the problem's id."""


def diagnostics_json(
    document: DocumentSnapshot, problems: Sequence[Problem], kept: tuple[Converted, Converted]
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
            found = (problem, diagnostic_json(document, problem))
        converted[id(problem)] = found
        written.append(found[1])
    return Written(("[", ", ".join(written), "]")), converted


def diagnostic_json(document: DocumentSnapshot, problem: Problem) -> str:
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
