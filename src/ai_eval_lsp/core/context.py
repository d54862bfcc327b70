"""Where a cursor is, for completion, even in broken or half-typed YAML.

The word being typed is replaced by a placeholder key (or value) and an excerpt is parsed: the
cursor's line, the block it sits in and that block's ancestors, found by indentation. That is
small whatever the document's size, and usually YAML even when the rest of the file is not.
Failing that, the whole text, then the text up to the cursor, are tried. The placeholder's path
in the tree is the context; its siblings say what is already written.
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
    """A key is being typed in the mapping at `path`, or the value of `path[-1]`.

    List positions in `path` count within the parsed excerpt, not the file: use `siblings`, not
    the position, to learn about the surrounding check.
    """

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
        block_key = prefix.strip() == "" or prefix.rstrip().endswith("-")
        # A block key's own value, after the cursor, is not part of the context.
        edited = prefix + f"{PLACEHOLDER}: 0" + ("" if block_key else rest)
        is_value = False
    else:
        return None
    candidates = (
        _excerpt(lines, line, edited),
        [*lines[:line], edited, *lines[line + 1 :]],
        [*lines[:line], edited],
    )
    for candidate in candidates:
        root = parse("\n".join(candidate), fallback=False).root
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


def _columns(text: str) -> tuple[int, int] | None:
    """(indentation, column where the content starts after any `- `); None for blank or comment."""
    stripped = text.lstrip(" ")
    if not stripped or stripped.startswith("#"):
        return None
    indent = len(text) - len(stripped)
    content = indent
    while text.startswith("- ", content) or text[content:] == "-":
        content += 2
        content += len(text[content:]) - len(text[content:].lstrip(" "))
    return indent, content


def _excerpt(lines: list[str], line: int, edited: str) -> list[str]:
    """The edited line, the lines of its block around it, and the ancestors of that block."""
    indent, target = _columns(edited) or (0, 0)
    above: list[str] = []
    number = line - 1
    # The cursor's block: its sibling keys (and what is nested under them), up to the `- ` that
    # starts it if it is a list item.
    node: tuple[int, bool] | None = None  # (column, is a `- ` item) of the block's first line
    while number >= 0 and node is None:
        found = _columns(lines[number])
        if found is not None:
            line_indent, content = found
            if content > target or (content == target and line_indent == content):
                above.append(lines[number])
            elif content == target:
                above.append(lines[number])
                node = (line_indent, True)
            else:
                number += 1  # this line is the block's parent: leave it to the next loop
                node = (target, False)
        number -= 1
    # Its ancestors: each the nearest line above that holds the one below it.
    ancestors: list[str] = []
    while number >= 0 and node is not None and (node[0] > 0 or node[1]):
        found = _columns(lines[number])
        if found is not None:
            line_indent, content = found
            column, is_item = node
            holds = content < column or (is_item and line_indent == column and line_indent == content)
            if holds:
                ancestors.append(lines[number])
                node = (line_indent, line_indent < content)
        number -= 1
    below = []
    for text in lines[line + 1 :]:
        found = _columns(text)
        if found is None:
            continue
        if found[1] < target or (found[0] < target and found[0] <= indent):
            break
        below.append(text)
    return [*reversed(ancestors), *reversed(above), edited, *below]
