"""Between LSP's terms and the server's own: a URI and a path, a span of a text and a range in
the client's position encoding; and how a request that names nothing to act on is answered."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path, to_fs_path

from ai_eval_lsp.core.problems import Span
from ai_eval_lsp.core.text import Encoding, LineIndex


def path_of(uri: str) -> Path | None:
    fs_path = to_fs_path(uri)
    return Path(fs_path) if fs_path else None


def uri_of(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


class NotApplicable(JsonRpcInvalidParams):
    """The request names nothing this server can act on: answered -32602 with the reason."""


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
