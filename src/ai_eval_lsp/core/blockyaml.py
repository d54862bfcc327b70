"""The tree of a document in plain block YAML, read line by line.

Most rubrics and cases files use a small part of YAML: block mappings and lists, a value on the
line of its key or `-` (a plain one may go on to the lines below), quoted scalars and flow lists
and mappings on one line, and literal or folded block scalars. `read` builds such a document's
tree exactly as `yamltree`'s composer builds it from libyaml's events (the same values, ranges
and styles; `tests/core/test_block_reader.py` compares them), without a Python object per parser
event and mark: a line costs a few string operations, a block scalar's lines a few regular
expressions. For anything else (a quoted value or a flow collection over several lines, anchors,
aliases, tags, `?` keys, a block scalar's indentation indicator or `+`, tabs, `\r`, a repeated
or empty key, a document libyaml rejects), it answers None and the composer reads the document,
reporting what it reports.

Where libyaml puts a range that the line shows: a scalar from its first character to just past its
last; a flow collection from its bracket to just past the closing one; a block mapping from its
first key, a block list from its first `-`, each to the first token after it (where the line that
closes it starts), or to the end of the text; a block scalar from its `|` or `>` to the start of
the line after it (at the end of the text: to the start of the last line, or to its end if that
line is text).
"""

from __future__ import annotations

import functools
import re
from importlib.machinery import EXTENSION_SUFFIXES
from typing import Any

from ai_eval_lsp.core.yamlnodes import Entry, Node, Scalars, moved_tree

COMPILED = __file__.endswith(tuple(EXTENSION_SUFFIXES))
"""Whether this module runs as the compiled wheel's machine code (setup.py), as `--version` says."""

MAX_NESTING = 100
"""Deeper blocks, or flow collections, go to the composer, which reports nesting past its own
limit (`yamltree.MAX_DEPTH`, 200: both together stay within it)."""

_LINE = re.compile(
    r"( *)"  # the indentation
    r"(- +|-(?=\n|\Z))?"  # a list item's `-`
    r"(?:([^\s\-?:,\[\]{}#&*!|>'\"%@`][^:#,\[\]{}\n]*+)(?<! )(: +|:(?=\n|\Z)))?"  # a key and its `:`
    r"([^\n]*)\n?"  # the rest: a value, a comment, or nothing
)
"""A line. A key holding `:`, `#` or a flow indicator, or ending in a space, is not matched as one
(so the composer reads the document)."""
_QUOTED = r"\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"|'[^'\n]*(?:''[^'\n]*)*'"
_QUOTED_SCALAR = re.compile(_QUOTED)
_FLOW_TOKEN = re.compile(
    r" *(?:([\[{])|([\]}])|(,)|(: )"
    rf"|({_QUOTED})"
    r"|((?:[^\s\-?:,\[\]{}#&*!|>'\"%@`]|-(?=[^\s,\[\]{}:#]))(?:[^,\[\]{}:#\n]*[^\s,\[\]{}:#])?))"
)
"""What comes next in a flow collection: an opening or closing bracket, a comma, a key's `: `, a
quoted scalar on this line, a plain scalar (one holding `:` or `#` is the composer's to read)."""
_OPEN, _CLOSE, _COMMA, _COLON, _QUOTED_TOKEN, _PLAIN = range(1, 7)
_FIRST, _ITEM, _COLON_NEXT, _VALUE, _AFTER = range(5)
"""What a flow collection expects next: its first item (or its end), an item, a key's `: `, the
key's value, a comma or its end."""
_NOT_READ_HERE = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
"""Characters left to the composer: what YAML does not allow (libyaml rejects it), tabs and
`\\r` (where indentation and line breaks get subtle), NEL, U+2028, U+2029 and the byte order mark."""
_BLOCK_HEADER = re.compile(r"([|>])(-?)(?: *| +#[^\n]*)\Z")
"""A block scalar's header: its style, whether its final line break is stripped, a comment."""
_FOLDED_BREAKS = re.compile(r"\n+")


@functools.cache
def _block_patterns(indent: int) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """For a block scalar indented `indent` spaces: its lines (those indented as much or more,
    and blank ones), the indentation to take off each, a line indented more (each after a line
    break)."""
    return (
        re.compile(rf"(?: {{{indent}}}[^\n]*\n| *\n)*(?: {{{indent}}}[^\n]*\Z| *\Z)?"),
        re.compile(rf"\n {{1,{indent}}}"),
        re.compile(rf"\n {{{indent + 1}}}"),
    )


def _folded(breaks: re.Match[str]) -> str:
    """Folding: a line break between two lines of text is a space; `n` more are `n` breaks."""
    count = len(breaks.group())
    return " " if count == 1 else "\n" * (count - 1)


_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))")
_ESCAPED = {
    **{char: char for char in ' "/\\'},
    **dict(zip("0abtnvfreN_LP", "\0\a\b\t\n\v\f\r\x1b\x85\xa0\u2028\u2029", strict=True)),
}


def _unescaped(escape: re.Match[str]) -> str:
    """The character a double-quoted scalar's escape stands for (YAML 1.1's, as libyaml reads)."""
    digits = escape.group(1) or escape.group(2) or escape.group(3)
    if digits is not None:
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            raise _NotPlain  # libyaml rejects it
        return chr(code)
    char = _ESCAPED.get(escape.group(4))
    if char is None:
        raise _NotPlain  # libyaml rejects it
    return char


_NOT_PLAIN_FIRST = frozenset("#[{'\"?:,]}&*!|>%@`-")
"""What a plain scalar does not start with (`-` does, unless a space or the line's end follows)."""


def read(text: str) -> Node | None:
    """The tree of `text`, or None when it is not plain block YAML (see the module's docstring)."""
    if _NOT_READ_HERE.search(text):
        return None
    try:
        return _Reader().read(text)
    except _NotPlain:
        return None


class _NotPlain(Exception):
    """The document uses more of YAML than this reader reads."""


def _null_at(key: Node) -> Node:
    """An empty value: its key stands in for it, as the composer has it."""
    return Node(None, key.line, key.column, key.start_index, key.end_line, key.end_column, key.end_index, "")


class _Reader:
    """One document's reading; `line` is the number of the line being read."""

    def __init__(self) -> None:
        self.scalars = Scalars()
        self.line = 0
        self.resume = 0
        """Where the lines after a block scalar start, and their number (0: none to skip)."""
        self.resume_line = 0
        self.going_on: Node | None = None
        """The plain scalar the next line may go on with (nothing followed it on its last line)."""
        self.plains: dict[str, tuple[Any, int, bool]] = {}
        """Plain values read, by the line from their first character on: their value, length,
        and whether nothing follows them there (the next line may go on with them)."""
        self.flows: dict[str, Node] = {}
        """Flow collections read, by the line from their bracket on: the same ones recur (tag
        lists, metadata maps), and copying one's nodes costs a third of reading it again."""

    def read(self, text: str) -> Node | None:
        columns: list[int] = []  # the open blocks' columns and nodes, innermost last
        blocks: list[Node] = []
        pending: Node | None = None  # a key whose value is on the lines below it
        string = self.scalars.strings.setdefault
        line_at = _LINE.match
        position, number, length = 0, -1, len(text)
        while True:
            if self.resume:  # a block scalar took the lines up to here
                position, number, self.resume = self.resume, self.resume_line - 1, 0
            if position > length:
                break
            line = line_at(text, position)
            assert line is not None
            start, position = line.span()
            if position == start:
                position += 1  # the text's last line, empty
            number += 1
            indent, dash, name, colon, rest = line.groups()
            entry = dash is not None  # a list's item
            if not entry and name is None and (not rest or rest[0] == "#"):
                if rest:  # a comment ends a plain scalar
                    self.going_on = None
                continue  # blank, or a comment
            column = len(indent)
            self.line = number
            if self.going_on is not None:
                if column > columns[-1]:
                    self.go_on(text, start, position, blocks[-1])
                    continue
                self.going_on = None
            if (
                not column
                and not entry
                and name is None
                and rest[:3] in ("---", "...")
                and rest[3:4] in ("", " ")
            ):
                raise _NotPlain  # a document marker
            if pending is not None and (column > columns[-1] or (entry and column == columns[-1])):
                # Its value is the block starting here (a list may be as indented as its key).
                block = Node({}, number, column, start + column, 0, 0, 0, "")
                if entry:
                    block.value, block.items = [], []
                else:
                    block.entries = {}
                self.attach(blocks[-1], pending, block)
                self.open(columns, blocks, block)
                pending = None
            else:
                if pending is not None:
                    self.attach(blocks[-1], pending, _null_at(pending))
                    pending = None
                if not blocks:
                    if column:
                        raise _NotPlain
                    root = Node({}, number, 0, start, 0, 0, 0, "")
                    root.entries = {}
                    self.open(columns, blocks, root)
                while columns[-1] > column or (
                    # A list as indented as its key ends at the next key.
                    not entry
                    and columns[-1] == column
                    and blocks[-1].items is not None
                    and columns[-2:-1] == [column]
                ):
                    columns.pop()
                    closed = blocks.pop()
                    closed.end_line, closed.end_column, closed.end_index = number, column, start + column
                if columns[-1] != column:
                    raise _NotPlain  # indented as no open block is, or a value going on to this line
            mapping = blocks[-1]
            if mapping.items is not None:  # `- ` and a value, or the first key of a mapping
                if not entry:
                    raise _NotPlain
                column += len(dash)
                if name is None:
                    item = self.value(text, start, column, rest, columns[-1])
                    if item is None:
                        raise _NotPlain  # an empty item
                    mapping.items.append(item)
                    mapping.value.append(item.value)
                    continue
                block = Node({}, number, column, start + column, 0, 0, 0, "")
                block.entries = {}
                mapping.items.append(block)
                mapping.value.append(block.value)
                self.open(columns, blocks, block)
                mapping = block
            elif entry or name is None:
                raise _NotPlain
            if len(name) > 1000:
                raise _NotPlain  # libyaml's limit for a key on one line is near
            end = column + len(name)
            key = Node(string(name, name), number, column, start + column, number, end, start + end, "")
            value = self.value(text, start, end + len(colon), rest, columns[-1])
            if value is None:
                pending = key
            else:
                self.attach(mapping, key, value)
        if not blocks:
            return None
        if pending is not None:
            self.attach(blocks[-1], pending, _null_at(pending))
        breaks = text.count("\n")
        end_column = len(text) - (text.rfind("\n") + 1)
        for block in blocks:
            block.end_line, block.end_column, block.end_index = breaks, end_column, len(text)
        return blocks[0]

    @staticmethod
    def open(columns: list[int], blocks: list[Node], block: Node) -> None:
        if len(blocks) >= MAX_NESTING:
            raise _NotPlain
        columns.append(block.column)
        blocks.append(block)

    @staticmethod
    def attach(mapping: Node, key: Node, value: Node) -> None:
        name = key.value
        entries = mapping.entries
        assert entries is not None
        if name in entries or name == "":
            raise _NotPlain  # a repeated or empty key: the composer reports it
        entries[name] = Entry(key, value)
        mapping.value[name] = value.value

    def value(self, text: str, start: int, at: int, rest: str, parent: int) -> Node | None:
        """The scalar or flow collection at column `at` of the line starting at `start`, `rest`
        being the line from there (a comment may follow the value), in a block at column
        `parent`; None for no value."""
        plain = self.plains.get(rest)
        if plain is None and rest:
            first = rest[0]
            if first not in _NOT_PLAIN_FIRST or (first == "-" and rest[1:2].strip(" ")):
                comment = rest.find(" #")
                content = (rest[:comment] if comment >= 0 else rest).rstrip(" ")
                if ": " in content or content[-1] == ":":
                    raise _NotPlain  # a mapping libyaml rejects
                plain = self.plains[rest] = (self.scalars.plain(content), len(content), comment < 0)
        if plain is not None:
            value, length, open_ended = plain
            end = at + length
            node = Node(value, self.line, at, start + at, self.line, end, start + end, "")
            if open_ended:
                self.going_on = node
            return node
        if not rest:
            return None
        first = rest[0]
        if first == "#":
            return None
        if first in "|>":
            return self.block_scalar(text, start, at, rest, parent)
        if first in "[{":
            earlier = self.flows.get(rest)
            if earlier is None:
                node = self.flows[rest] = self.flow(text, start, start + at)
            else:
                node = moved_tree(
                    earlier,
                    self.line - earlier.line,
                    start + at - earlier.start_index,
                    at - earlier.column,
                    own_values=True,
                )
        elif first in "'\"":
            written = _QUOTED_SCALAR.match(rest)
            if written is None:
                raise _NotPlain  # going on to the next line
            node = self.quoted(written.group(), start, start + at)
        else:
            raise _NotPlain
        after = rest[node.end_column - at :]
        if after.strip(" ") and not (after[0] == " " and after.lstrip(" ")[0] == "#"):
            raise _NotPlain  # more after the value: libyaml rejects it, or reads it otherwise
        return node

    def go_on(self, text: str, start: int, end: int, holder: Node) -> None:
        """`going_on` goes on with the line from `start` to `end` (the last value `holder` took)."""
        node = self.going_on
        assert node is not None
        line = text[start:end].rstrip("\n")
        content = line.strip(" ")
        if " #" in content or ": " in content or content[-1] == ":":
            raise _NotPlain  # a comment, or a mapping libyaml rejects
        end_column = len(line.rstrip(" "))
        node.end_line, node.end_column, node.end_index = self.line, end_column, start + end_column
        # Folded as libyaml folds it: a line break is a space, `n` blank lines are `n` breaks.
        lines = [part.strip(" ") for part in text[node.start_index : node.end_index].split("\n")]
        node.value = self.scalars.plain(_FOLDED_BREAKS.sub(_folded, "\n".join(lines)))
        if holder.items is not None:
            holder.value[-1] = node.value
        else:
            holder.value[next(reversed(holder.value))] = node.value

    def block_scalar(self, text: str, start: int, at: int, header: str, parent: int) -> Node:
        """A literal (`|`) or folded (`>`) scalar, its header at column `at`: the lines below as
        indented as the first (more than `parent`), or more, and blank lines among and after them.
        The lines after it are read from `resume`."""
        written = _BLOCK_HEADER.match(header)
        first = text.find("\n", start + at) + 1
        if written is None or not first:
            raise _NotPlain  # keep (`+`), an indentation indicator, or no line below
        style, strip = written.group(1), bool(written.group(2))
        line_end = text.find("\n", first)
        line = text[first:] if line_end < 0 else text[first:line_end]
        indent = len(line) - len(line.lstrip(" "))
        if indent <= parent or indent == len(line):
            raise _NotPlain  # empty, or blank lines before its text
        body_pattern, margin, deeper = _block_patterns(indent)
        body = body_pattern.match(text, first)
        assert body is not None
        lines = body.group()
        number = self.line + 1 + lines.count("\n")  # of the line after it, or its last line
        if body.end() < len(text):  # libyaml ends it at the start of the line after it
            end = (number, 0, body.end())
        else:  # at the start of the text's last line, or at its end if that line is text
            last = lines[lines.rfind("\n") + 1 :]
            last_start = len(text) - len(last)
            end = (number, len(last), len(text)) if len(last) > indent else (number, 0, last_start)
        if style == ">" and deeper.search("\n" + lines):
            raise _NotPlain  # a more indented line of a folded scalar
        unindented = margin.sub("\n", "\n" + lines)[1:]
        content = unindented.rstrip("\n")
        broken = len(content) < len(unindented)  # a line break follows its last line of text
        if style == ">":
            content = _FOLDED_BREAKS.sub(_folded, content)
        if broken and not strip:
            content += "\n"  # clipped
        self.resume, self.resume_line = body.end() if body.end() < len(text) else len(text) + 1, number
        return Node(self.scalars.string(content), self.line, at, start + at, *end, style)

    def quoted(self, written: str, start: int, index: int) -> Node:
        """The node of a quoted scalar (`written` with its quotes) at `index` of the line starting
        at `start`."""
        quote, content = written[0], written[1:-1]
        if quote == '"' and "\\" in content:
            content = _ESCAPE.sub(_unescaped, content)
        if quote == "'":
            content = content.replace("''", "'")
        column, end = index - start, index + len(written)
        return Node(
            self.scalars.string(content), self.line, column, index, self.line, end - start, end, quote
        )

    def flow(self, text: str, start: int, index: int) -> Node:
        """The flow list or mapping at `index` of the line starting at `start`, closed on it."""
        number, scalars = self.line, self.scalars
        opened: list[Node] = []  # the collections open, innermost last
        keys: list[Node | None] = []  # the key each waits a value for
        expect = _FIRST
        position = index
        while True:
            token = _FLOW_TOKEN.match(text, position)
            if token is None:
                raise _NotPlain
            kind = token.lastindex
            assert kind is not None
            begin, position = token.start(kind), token.end()
            if kind == _CLOSE:
                node = opened.pop()
                keys.pop()
                if expect not in (_FIRST, _AFTER) or text[begin] != ("]" if node.items is not None else "}"):
                    raise _NotPlain
                node.end_line, node.end_column, node.end_index = number, position - start, position
                if not opened:
                    return node
                expect = _AFTER
                continue
            if kind == _COMMA:
                if expect != _AFTER:
                    raise _NotPlain
                expect = _ITEM
                continue
            if kind == _COLON:
                key = keys[-1]
                if expect != _COLON_NEXT or key is None or begin - key.start_index > 1000:
                    raise _NotPlain  # past 1,024 characters from its key, libyaml rejects it
                expect = _VALUE
                continue
            written = token.group(kind)
            if kind == _OPEN:
                node = Node({} if written == "{" else [], number, begin - start, begin, 0, 0, 0, "")
                if written == "{":
                    node.entries = {}
                else:
                    node.items = []
            elif kind == _PLAIN:
                end = begin + len(written)
                node = Node(
                    scalars.plain(written), number, begin - start, begin, number, end - start, end, ""
                )
            else:
                node = self.quoted(written, start, begin)
            if opened:
                parent = opened[-1]
                if parent.items is not None and expect in (_FIRST, _ITEM):
                    parent.items.append(node)
                    parent.value.append(node.value)
                    expect = _AFTER
                elif parent.entries is not None and expect in (_FIRST, _ITEM) and kind != _OPEN:
                    if kind == _PLAIN:  # a key is a string, whatever its scalar type
                        node.value = scalars.string(written)
                    keys[-1] = node
                    expect = _COLON_NEXT
                elif parent.entries is not None and expect == _VALUE:
                    key = keys[-1]
                    assert key is not None
                    self.attach(parent, key, node)
                    expect = _AFTER
                else:
                    raise _NotPlain
            if kind == _OPEN:
                if len(opened) >= MAX_NESTING:
                    raise _NotPlain
                opened.append(node)
                keys.append(None)
                expect = _FIRST
