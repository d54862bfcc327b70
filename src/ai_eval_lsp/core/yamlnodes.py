"""The tree's values: a node per value with its range, and plain scalars as the YAML 1.2 core
schema reads them. Both readers of `yamltree` build these."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ai_eval_lsp.core.problems import Span

_WORDS: dict[str, Any] = {
    **dict.fromkeys(("", "~", "null", "Null", "NULL")),
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
}
_NUMBER_START = frozenset("0123456789+-.")
_UNRESOLVED = object()
_INT10 = re.compile(r"[-+]?[0-9]+\Z")
_INT8 = re.compile(r"0o[0-7]+\Z")
_INT16 = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")


def resolve_plain(text: str) -> Any:
    """The value of an untagged plain scalar under the YAML 1.2 core schema."""
    if text in _WORDS:
        return _WORDS[text]
    if text[0] not in _NUMBER_START:  # most scalars: settled without a regex
        return text
    if _INT10.match(text):
        return _to_int(text, 10)
    if _INT8.match(text):
        return _to_int(text[2:], 8)
    if _INT16.match(text):
        return _to_int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    return text


def _to_int(digits: str, base: int) -> int | float:
    try:
        return int(digits, base)
    except ValueError:  # more digits than Python converts: keep the magnitude
        return float(digits) if base == 10 else math.inf


class Scalars:
    """A document's scalar values, one object each: the same strings and plain values recur
    throughout a document (field names, kinds), and a 10 MB rubric so takes ~25 MB less."""

    __slots__ = ("plains", "strings")

    def __init__(self) -> None:
        self.strings: dict[str, str] = {}
        self.plains: dict[str, Any] = {}

    def string(self, text: str) -> str:
        return self.strings.setdefault(text, text)

    def plain(self, text: str) -> Any:
        """An untagged plain scalar's value (`resolve_plain`)."""
        value = self.plains.get(text, _UNRESOLVED)
        if value is _UNRESOLVED:
            value = self.plains[text] = resolve_plain(text)
        return value


class Node:
    """A value of the document with its range; mappings and sequences keep their children.

    Positions are kept as plain ints (the range is built on demand): a document has one node
    per value, and building ranges eagerly was most of the composer's cost.
    """

    __slots__ = (
        "column",
        "end_column",
        "end_index",
        "end_line",
        "entries",
        "items",
        "line",
        "start_index",
        "style",
        "value",
    )

    def __init__(
        self,
        value: Any,
        line: int,
        column: int,
        start_index: int,
        end_line: int,
        end_column: int,
        end_index: int,
        style: str,
    ) -> None:
        """Lines, columns and offsets are 0-based; an offset counts code points."""
        self.value = value
        self.line, self.column, self.start_index = line, column, start_index
        # One int for a one-line value's two lines: past 256, each is an object of its own.
        self.end_line = line if end_line == line else end_line
        self.end_column, self.end_index = end_column, end_index
        self.style = style
        self.entries: dict[str, Entry] | None = None
        self.items: list[Node] | None = None

    @classmethod
    def between(cls, value: Any, start: Any, end: Any, style: str) -> Node:
        """A node between two parser marks (`line`, `column` and `index`)."""
        return cls(value, start.line, start.column, start.index, end.line, end.column, end.index, style)

    @property
    def span(self) -> Span:
        return Span.of(self.line, self.column, self.end_line, self.end_column)

    def get(self, key: str) -> Entry | None:
        return self.entries.get(key) if self.entries is not None else None

    def at(self, path: Iterable[str | int]) -> Node | None:
        """The node at a path of keys and indexes, or None where the path leaves the tree."""
        node: Node | None = self
        for step in path:
            if node is None:
                return None
            if isinstance(step, int) and node.items is not None:
                node = node.items[step] if 0 <= step < len(node.items) else None
            elif isinstance(step, str) and node.entries is not None:
                entry = node.entries.get(step)
                node = entry.value if entry else None
            else:
                return None
        return node

    def head(self) -> Span:
        """Where to report something about the whole node: its first line, for a block mapping."""
        if self.entries:
            first = next(iter(self.entries.values()))
            return Span(self.span.start, first.key.span.end)
        return self.span


@dataclass(slots=True, eq=False)
class Entry:
    """A mapping's key and value (not frozen: a frozen dataclass is three times as slow to make,
    and a document has one per key)."""

    key: Node
    value: Node


def moved_tree(node: Node, lines: int, offset: int, columns: int = 0, own_values: bool = False) -> Node:
    """A copy of a tree, `lines` down, `offset` code points on and (a tree on one line) `columns`
    to the right. Its values, plain data, are shared with `node`'s, unless `own_values`: then
    each mapping and list has values of its own, as a tree the parser read in another place."""
    copied = Node(
        node.value,
        node.line + lines,
        node.column + columns,
        node.start_index + offset,
        node.end_line + lines,
        node.end_column + columns,
        node.end_index + offset,
        node.style,
    )
    if node.entries is not None:
        copied.entries = {
            name: Entry(
                moved_tree(entry.key, lines, offset, columns, own_values),
                moved_tree(entry.value, lines, offset, columns, own_values),
            )
            for name, entry in node.entries.items()
        }
        if own_values:
            copied.value = {name: entry.value.value for name, entry in copied.entries.items()}
    elif node.items is not None:
        copied.items = [moved_tree(item, lines, offset, columns, own_values) for item in node.items]
        if own_values:
            copied.value = [item.value for item in copied.items]
    return copied
