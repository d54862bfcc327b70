"""What is under a cursor: the key or value at a position of a parsed document."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ai_eval_lsp.core.yamltree import Node


@dataclass(frozen=True, slots=True)
class At:
    """A key (`on_key`) or value at `path`; `node` is the value, `key` its key node if any."""

    path: tuple[str | int, ...]
    node: Node
    key: Node | None
    on_key: bool
    item: Any = None
    """The value of the item of a top-level list it is in (a check, a case), if it is in one."""


def _inside(node: Node, line: int, column: int) -> bool:
    return (node.line, node.column) <= (line, column) <= (node.end_line, node.end_column)


ItemAt = Callable[[Node, int, int], tuple[int, Node | None] | None]
"""For a list and a cursor, when the list's items are placed apart (an analysis's checks or
cases: `Layout.item_at`), the index of its last item that starts at or before the cursor and
that item, placed; None to search the list itself."""


def locate(root: Node, line: int, column: int, item_at: ItemAt | None = None) -> At | None:
    """The innermost key or scalar value at (line, code-point column)."""
    node: Node = root
    path: tuple[str | int, ...] = ()
    key: Node | None = None
    found: At | None = None
    within: Any = None
    while True:
        if node.entries is not None:
            for name, entry in node.entries.items():
                if _inside(entry.key, line, column):
                    return At((*path, name), entry.value, entry.key, True, within)
                if _inside(entry.value, line, column):
                    node, path, key = entry.value, (*path, name), entry.key
                    found = At(path, node, key, False, within)
                    break
            else:
                return found
        elif node.items is not None:
            # Items are in document order: find the last that starts at or before the cursor.
            placed = item_at(node, line, column) if item_at is not None else None
            if placed is None:
                index = (
                    bisect_right(node.items, (line, column), key=lambda each: (each.line, each.column)) - 1
                )
                placed = index, node.items[index] if index >= 0 else None
            index, child = placed
            if child is None or not _inside(child, line, column):
                return found
            node, path, key = child, (*path, index), None
            if len(path) == 2:
                within = node.value
            found = At(path, node, key, False, within)
        else:
            return found
