"""Where a cursor is, for completion, even in broken or half-typed YAML.

The word being typed is replaced by a placeholder key (or value), and the text is parsed: first
whole, then only up to the cursor's line (a prefix of block YAML is almost always YAML). The
placeholder's path in the tree is the context; its siblings say what is already written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ai_eval_lsp.core.yamltree import Node, parse

PLACEHOLDER = "ai_eval_cursor_placeholder"
_VALUE = re.compile(r"(?:^|[\s{,\-])([A-Za-z_][\w-]*):\s*([^\s,{}\[\]]*)$")
_KEY = re.compile(r"(?:^\s*(?:-\s+)*|[{,]\s*)([A-Za-z_][\w-]*)?$")


@dataclass(frozen=True, slots=True)
class Context:
    """A key is being typed in the mapping at `path`, or the value of `path[-1]`."""

    path: tuple[str | int, ...]
    is_value: bool
    partial: str
    siblings: dict[str, Any]
    """The other keys of the mapping the cursor is in, with their values."""


def completion_context(text: str, line: int, column: int) -> Context | None:
    lines = text.split("\n")
    if line >= len(lines):
        return None
    current = lines[line]
    before, after = current[:column], current[column:]
    tail = re.match(r"[\w-]*", after)
    rest = after[tail.end() if tail else 0 :]
    value = _VALUE.search(before)
    key = _KEY.search(before)
    if value is not None:
        partial = value.group(2)
        edited = before[: len(before) - len(partial)] + PLACEHOLDER + rest
        is_value = True
    elif key is not None:
        partial = key.group(1) or ""
        prefix = before[: len(before) - len(partial)]
        if prefix.strip() == "" or prefix.rstrip().endswith("-"):
            edited = prefix + f"{PLACEHOLDER}: 0" + (rest if rest.strip() else "")
        else:
            edited = prefix + f"{PLACEHOLDER}: 0" + rest
        is_value = False
    else:
        return None
    for candidate in ([*lines[:line], edited, *lines[line + 1 :]], [*lines[:line], edited]):
        root = parse("\n".join(candidate)).root
        found = _find(root, (), is_value) if root is not None else None
        if found is not None:
            path, mapping = found
            siblings = {
                k: v
                for k, v in (mapping.value.items() if isinstance(mapping.value, dict) else [])
                if k != PLACEHOLDER
            }
            return Context(path, is_value, partial, siblings)
    return None


def _find(
    node: Node, path: tuple[str | int, ...], is_value: bool
) -> tuple[tuple[str | int, ...], Node] | None:
    """The placeholder's path (the mapping's path for a key, the field's for a value)."""
    if node.entries is not None:
        for name, entry in node.entries.items():
            if not is_value and name == PLACEHOLDER:
                return path, node
            if is_value and entry.value.value == PLACEHOLDER:
                return (*path, name), node
            found = _find(entry.value, (*path, name), is_value)
            if found is not None:
                return found
    elif node.items is not None:
        for index, item in enumerate(node.items):
            found = _find(item, (*path, index), is_value)
            if found is not None:
                return found
    return None
