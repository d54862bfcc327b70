"""Where a cursor is, for completion, even in broken or half-typed YAML.

The word being typed is replaced by a placeholder key (or value) and an excerpt is parsed: the
cursor's line, the block it sits in and that block's ancestors, found by indentation. That is
small whatever the document's size, and usually YAML even when the rest of the file is not.
Failing that, the whole text, then the text up to the cursor, are tried. The placeholder's path
in the tree is the context; its siblings say what is already written.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.core.yamltree import Node, parse

PLACEHOLDER = "ai_eval_cursor_placeholder"
WHOLE_TEXT_LIMIT = 256 * 1024
"""Past this size the whole text is not parsed when the excerpt fails: completion stays quick."""
_VALUE_END = frozenset(",{}[]")


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


def completion_context(text: str | LineIndex, line: int, column: int, whole: bool = True) -> Context | None:
    """The context at a cursor; without `whole`, from the excerpt alone (never the whole text)."""
    index = text if isinstance(text, LineIndex) else LineIndex(text)
    if line >= index.line_count:
        return None
    current = index.line(line)
    before, after = current[:column], current[column:]
    rest = after[_word_end(after, 0) :]
    value = _value_before(before)
    if value is not None:
        partial = value
        edited = before[: len(before) - len(partial)] + PLACEHOLDER + rest
        is_value = True
    else:
        key = _key_before(before)
        if key is None:
            return None
        partial = key
        prefix = before[: len(before) - len(partial)]
        block_key = prefix.strip() == "" or prefix.rstrip().endswith("-")
        # A block key's own value, after the cursor, is not part of the context.
        edited = prefix + f"{PLACEHOLDER}: 0" + ("" if block_key else rest)
        is_value = False
    lines = [index.line(number) for number in range(index.line_count)] if whole and _whole(index) else None
    candidates = [_excerpt(index, line, edited)]
    if lines is not None:
        candidates += [[*lines[:line], edited, *lines[line + 1 :]], [*lines[:line], edited]]
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


def _whole(index: LineIndex) -> bool:
    return len(index.text) <= WHOLE_TEXT_LIMIT


def _is_word(char: str) -> bool:
    return char.isalnum() or char in "_-"


def _word_end(text: str, start: int) -> int:
    end = start
    while end < len(text) and _is_word(text[end]):
        end += 1
    return end


def _word_start(text: str, end: int) -> int:
    start = end
    while start > 0 and _is_word(text[start - 1]):
        start -= 1
    return start


def _is_name_head(char: str) -> bool:
    return char.isascii() and (char.isalpha() or char == "_")


def _name_ending_at(text: str, end: int) -> bool:
    """Whether a field name (`[A-Za-z_][\\w-]*`) ends at `end`, starting after a space, `{`, `,`,
    `-` or the line's start (as `name: value` may be written)."""
    start = _word_start(text, end)
    for position in range(start, end):
        previous = text[position - 1] if position else " "
        at_word_start = position == start and (previous.isspace() or previous in "{,")
        if _is_name_head(text[position]) and (at_word_start or (position > start and previous == "-")):
            return True
    return False


def _value_before(before: str) -> str | None:
    """The value typed so far when the cursor follows `name:`, else None. Linear in the line:
    a regular expression here backtracked quadratically on long hyphenated words."""
    start = len(before)
    while start > 0 and not (before[start - 1].isspace() or before[start - 1] in _VALUE_END):
        start -= 1
    colon = start
    while colon > 0 and before[colon - 1].isspace():
        colon -= 1
    if colon > 0 and before[colon - 1] == ":" and _name_ending_at(before, colon - 1):
        return before[start:]
    colon = before.find(":", start)
    while colon != -1:  # `name:value`, with no space: the first colon after a name
        if _name_ending_at(before, colon):
            return before[colon + 1 :]
        colon = before.find(":", colon + 1)
    return None


def _key_before(before: str) -> str | None:
    """The key typed so far when the cursor is where a key goes, else None."""
    start = _word_start(before, len(before))
    name = before[start:]
    if name and not _is_name_head(name[0]):
        return None  # no field name: it starts with a digit or a `-`
    prefix = before[:start].rstrip()
    if prefix == "" or prefix.endswith(("{", ",")):
        return name
    while prefix.endswith("-") and (len(prefix) == 1 or prefix[-2].isspace()):
        prefix = prefix[:-1].rstrip()
    return name if prefix == "" else None


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


_TOP_LEVEL_HEAD = re.compile(r"[^\s#\-]")
_TOP_LEVEL_AFTER_BREAK = (re.compile(r"\n[^\s#\-]"), re.compile(r"\r[^\s#\-\n]"))
"""A line break, then a line at the top level. Starting with a literal lets the regex engine leap
from break to break: a pattern anchored with `^` is tried at every character, 20 times slower."""


def _top_level(index: LineIndex, line: int, edited: str) -> list[str]:
    """A key typed at the top level: its siblings are the other top-level lines, found by a scan
    of the text that visits only them (what is nested under them is not needed, and may be the
    whole of a 10,000-check rubric)."""
    text = index.text
    heads = [0] if _TOP_LEVEL_HEAD.match(text) else []
    heads += sorted(m.start() + 1 for pattern in _TOP_LEVEL_AFTER_BREAK for m in pattern.finditer(text))
    start = index.starts[line]
    end = index.starts[line + 1] if line + 1 < index.line_count else len(text)
    above = [index.line(bisect_right(index.starts, head) - 1) for head in heads if head < start]
    below = [index.line(bisect_right(index.starts, head) - 1) for head in heads if head >= end]
    return [*above, edited, *below]


def _excerpt(index: LineIndex, line: int, edited: str) -> list[str]:
    """The edited line, the lines of its block around it, and the ancestors of that block."""
    indent, target = _columns(edited) or (0, 0)
    if target == 0:
        return _top_level(index, line, edited)
    above: list[str] = []
    number = line - 1
    # The cursor's block: its sibling keys (and what is nested under them), up to the `- ` that
    # starts it if it is a list item.
    node: tuple[int, bool] | None = None  # (column, is a `- ` item) of the block's first line
    while number >= 0 and node is None:
        found = _columns(index.line(number))
        if found is not None:
            line_indent, content = found
            if content > target or (content == target and line_indent == content):
                above.append(index.line(number))
            elif content == target:
                above.append(index.line(number))
                node = (line_indent, True)
            else:
                number += 1  # this line is the block's parent: leave it to the next loop
                node = (target, False)
        number -= 1
    # Its ancestors: each the nearest line above that holds the one below it.
    ancestors: list[str] = []
    while number >= 0 and node is not None and (node[0] > 0 or node[1]):
        found = _columns(index.line(number))
        if found is not None:
            line_indent, content = found
            column, is_item = node
            holds = content < column or (is_item and line_indent == column and line_indent == content)
            if holds:
                ancestors.append(index.line(number))
                node = (line_indent, line_indent < content)
        number -= 1
    below = []
    for number in range(line + 1, index.line_count):
        text = index.line(number)
        found = _columns(text)
        if found is None:
            continue
        if found[1] < target or (found[0] < target and found[0] <= indent):
            break
        below.append(text)
    return [*reversed(ancestors), *reversed(above), edited, *below]
