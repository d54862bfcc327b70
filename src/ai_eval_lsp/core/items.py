"""A rubric's checks and a cases file's cases as items, so that an edit inside one item costs that
item, not the document.

A full analysis keeps, beside its result, a `Layout`: each item of the top-level `checks` or
`cases` block list with the text it spans (from the start of its `- ` line to the next item's)
and what was found in it: its parser problems, schema problems, own lints and summary facts.
An edit inside one item reads it again from its new text alone (`analysis.update`): libyaml is
given a short stand-in for the document before the item that leaves its parser in the same state
at the item's first line (blank lines up to it, the top-level mapping's first key and the list's
first `-` where they are), then the item, then the next item's `-` (or the next top-level key).
Lines and columns so come out as in the whole document; offsets differ by a constant. The
document's result is then put together again from the items' results: the same problems, in the
same order, as a full analysis of the new text gives (`tests/core/test_incremental.py` compares them).

An item is never changed once read: its nodes, shared by the analyses that follow, keep the
positions of the text it was read in, and each analysis places an item where its own text has it
as it is read (`Layout.placed`: the item's own nodes, or a moved copy), never in place; reading an
analysis so changes nothing, on any thread.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, overload

from ai_eval_lsp.core import yamltree
from ai_eval_lsp.core.index import CaseSummary, CheckFacts, Role
from ai_eval_lsp.core.lints import CheckId
from ai_eval_lsp.core.problems import Problem, Span
from ai_eval_lsp.core.tally import Tally
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.core.yamlnodes import moved_tree
from ai_eval_lsp.core.yamltree import Entry, Node, ParseResult

CONTAINERS: dict[Role, str] = {"rubric": "checks", "cases": "cases"}

_ITEM_HEAD = re.compile(r"( *)- +[^\s#]")
"""An item's first line: its indentation, `- `, and its value on the same line."""
_BLANK_OR_COMMENTS = re.compile(r"(?:[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n))*[ \t]*")


def item_head(text: str, start: int = 0) -> int | None:
    """The column of the `-` of an item whose text starts at `start`, if it starts as one does."""
    head = _ITEM_HEAD.match(text, start)
    return len(head.group(1)) if head is not None else None


def breaks(text: str) -> int:
    """How many line breaks a text holds (`\\r\\n` is one)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def moved_span(span: Span, lines: int) -> Span:
    return Span.of(span.start.line + lines, span.start.column, span.end.line + lines, span.end.column)


def _moved_problems(problems: Sequence[Problem], lines: int) -> Sequence[Problem]:
    return (
        [replace(problem, span=moved_span(problem.span, lines)) for problem in problems] if problems else ()
    )


def _moved_id(found: CheckId | None, lines: int) -> CheckId | None:
    if found is None:
        return None
    name, line, column, end_line, end_column = found
    return name, line + lines, column, end_line + lines, end_column


Facts = CheckFacts | CaseSummary | None
"""What the summary takes from an item: a check's facts, or a case's summary."""


def _moved_facts(facts: Facts, lines: int) -> Facts:
    if isinstance(facts, CheckFacts):
        if facts.composite is None:
            return facts
        return replace(
            facts, composite=replace(facts.composite, span=moved_span(facts.composite.span, lines))
        )
    if isinstance(facts, CaseSummary):
        return replace(
            facts,
            id_span=moved_span(facts.id_span, lines) if facts.id_span is not None else None,
            head=moved_span(facts.head, lines),
            question_span=moved_span(facts.question_span, lines) if facts.question_span is not None else None,
        )
    return None


@dataclass(frozen=True, slots=True)
class ItemFindings:
    """What was found in one item, at the positions of the text it was read in."""

    parsed: Sequence[Problem]
    schema: Sequence[Problem]
    lints: Sequence[Problem]
    """A check's own lints (a case has none of its own)."""
    check_id: CheckId | None
    facts: Facts

    def moved(self, lines: int) -> ItemFindings:
        if lines == 0:
            return self
        return ItemFindings(
            _moved_problems(self.parsed, lines),
            _moved_problems(self.schema, lines),
            _moved_problems(self.lints, lines),
            _moved_id(self.check_id, lines),
            _moved_facts(self.facts, lines),
        )


@dataclass(frozen=True, slots=True, eq=False)
class Item:
    """One check or case as it was read: its node, at the positions of the text it was read in
    (the item's text starting at `line` and offset `index`), and what was found in it, for its
    text starting at `found_line` (moved there by the analysis that moved its lines)."""

    node: Node
    line: int
    index: int
    found: ItemFindings
    found_line: int

    @property
    def numbered(self) -> bool:
        """Whether a message names a line (a repeated key does): read again when it moves."""
        return bool(self.found.parsed)

    def found_at(self, line: int) -> ItemFindings:
        """What was found in it, for its text starting at `line`."""
        return self.found if line == self.found_line else self.found.moved(line - self.found_line)

    def found_moved(self, line: int) -> Item:
        """This item with what was found in it moved to `line` (its nodes as they are): kept by
        the analyses after the one that moved it, whose problems are then the same objects."""
        if line == self.found_line:
            return self
        return Item(self.node, self.line, self.index, self.found_at(line), line)


class Listed(NamedTuple):
    """A check or case: where an analysis's text has it (as its node says), and its value."""

    line: int
    column: int
    end_line: int
    end_column: int
    value: Any

    @staticmethod
    def of(node: Node, lines: int = 0) -> Listed:
        """A node's, `lines` down."""
        return Listed(node.line + lines, node.column, node.end_line + lines, node.end_column, node.value)

    @property
    def span(self) -> Span:
        return Span.of(self.line, self.column, self.end_line, self.end_column)


@dataclass(frozen=True, slots=True)
class Frame:
    """Where the document around the items puts what the parser remembers at an item's start."""

    root_line: int
    root_column: int
    key_line: int
    first_line: int
    column: int
    """The column of every item's `-`."""
    follows: tuple[int, int] | None
    """Where the token after the list is (the next top-level key), None at the text's end."""

    def before(self, container: str, number: int, line: int) -> str:
        """A stand-in for the text before item `number` (starting on `line`)."""
        parts = ["\n" * self.root_line, " " * self.root_column]
        if self.key_line > self.root_line:
            parts += ["a: 0", "\n" * (self.key_line - self.root_line), " " * self.root_column]
        parts += [f"{container}:", "\n" * (self.first_line - self.key_line)]
        if number > 0:
            parts += [" " * self.column, "- 0", "\n" * (line - self.first_line)]
        return "".join(parts)

    def after(self, last: bool) -> str:
        """A stand-in for what follows an item: the next item's `-`, or the next top-level key."""
        if not last:
            return " " * self.column + "- 0\n"
        return "" if self.follows is None else " " * self.follows[1] + "z: 0\n"


@dataclass(frozen=True, slots=True, eq=False)
class Layout:
    """A document's items and the parts of its result outside them, for one analysis."""

    role: Role
    frame: Frame
    items: list[Item]
    starts: list[int]
    """Where each item's text starts in this analysis's text."""
    lines: list[int]
    """The line each item's text starts on."""
    end: int
    """Where the last item's text ends (the list's end: the next top-level line, or the text's)."""
    end_line: int
    root: Node
    """The last tree read whole (while an item is `broken`, from before it broke)."""
    root_end: tuple[int, int]
    """The line and offset where the items ended in `root`, and its top-level problems' text."""
    top_parsed: list[Problem]
    """The parser's problems outside the items."""
    top_schema: list[Problem]
    small: bool
    """Whether the text is at most `REFERENCE_LIMIT` long (the reference parser decides odd keys)."""
    broken: int | None = None
    """The item libyaml rejects, when the analysis reports its syntax error (`root` is older)."""
    numbered: tuple[int, ...] = field(default=())
    """The items a message of which names a line."""
    tally: Tally | None = None
    """A rubric's ids and kinds across its checks (items as they are): made with a full analysis,
    kept by edits that change an id and move no line, made again at the next id typed after one
    that moves lines."""

    @property
    def container(self) -> str:
        return CONTAINERS[self.role]

    def item_end(self, number: int) -> int:
        return self.starts[number + 1] if number + 1 < len(self.starts) else self.end

    def find(self, start: int, end: int) -> int | None:
        """The item whose text holds `[start, end)` (an insertion: `start == end`), if one does;
        typing at the end of a list that ends the text is typing in its last item."""
        number = bisect_right(self.starts, start) - 1
        if number == len(self.starts) - 1 and start == end == self.end and self.frame.follows is None:
            return number
        if number < 0 or end > self.item_end(number) or start >= self.item_end(number):
            return None
        return number

    def placed(self, number: int) -> Node:
        """Item `number`'s node where this analysis has it: the item's own, or a moved copy."""
        item = self.items[number]
        lines, offset = self.lines[number] - item.line, self.starts[number] - item.index
        return moved_tree(item.node, lines, offset) if lines or offset else item.node

    def item_at(self, sequence: Node, line: int, column: int) -> tuple[int, Node | None] | None:
        """For `locate`: when `sequence` is this analysis's list of items, the last item that
        starts at or before a cursor, by number, placed (None before the first); else None."""
        entry = self.root.get(self.container)
        if entry is None or entry.value is not sequence:
            return None
        items, lines = self.items, self.lines
        number = (
            bisect_right(range(len(items)), (line, column), key=lambda n: (lines[n], items[n].node.column))
            - 1
        )
        return number, self.placed(number) if number >= 0 else None

    def listed(self) -> list[Listed]:
        """Each item's range where this analysis has it, and its value (no node is copied)."""
        return [
            Listed.of(item.node, line - item.line) for item, line in zip(self.items, self.lines, strict=True)
        ]

    def placed_root(self) -> Node:
        """`root` with every item where this analysis has it: those an edit moved, copies."""
        placed = [self.placed(number) for number in range(len(self.items))]
        root = self.root
        if all(node is item.node for node, item in zip(placed, self.items, strict=True)):
            return root
        assert root.entries is not None
        entries = dict(root.entries)
        entry = entries[self.container]
        sequence = moved_ends(entry.value, 0, 0, None)
        sequence.items = placed
        entries[self.container] = Entry(entry.key, sequence)
        copied = moved_ends(root, 0, 0, None)
        copied.entries = entries
        return copied

    def found(self) -> Iterator[ItemFindings]:
        """What was found in each item, where this analysis has it."""
        for item, line in zip(self.items, self.lines, strict=True):
            yield item.found_at(line)


def layout_of(
    role: Role,
    root: Node,
    text: str,
    parsed: ParseResult,
    top_schema: list[Problem],
    found: Sequence[ItemFindings],
) -> Layout | None:
    """The layout of a document read whole, or None when its items cannot be read one by one: a
    list that is not a block list of items whose value starts on their `- ` line, anchors, text
    before the top-level mapping, the reference parser's reading."""
    container = CONTAINERS[role]
    entry = root.get(container)
    if (
        parsed.parser != "fast"
        or parsed.anchored
        or entry is None
        or not entry.value.items
        or root.entries is None
        or not _BLANK_OR_COMMENTS.fullmatch(text, 0, root.start_index)
        or any(char in text for char in "\x85\u2028\u2029")
    ):
        return None
    sequence = entry.value
    starts: list[int] = []
    lines: list[int] = []
    column = -1
    for node in sequence.items or []:
        start = node.start_index - node.column
        head = _ITEM_HEAD.match(text, start)
        if head is None or head.end() - 1 != node.start_index or column not in (-1, len(head.group(1))):
            return None
        column = len(head.group(1))
        starts.append(start)
        lines.append(node.line)
    at_end = sequence.end_index >= len(text)
    end = len(text) if at_end else sequence.end_index - sequence.end_column
    end_line = sequence.end_line if not at_end else root.end_line
    frame = Frame(
        root.line,
        root.column,
        entry.key.line,
        lines[0],
        column,
        None if at_end else (sequence.end_line, sequence.end_column),
    )
    if frame.follows is not None and frame.follows[0] != end_line:
        return None
    # The parser's problems go to the item whose lines hold their start.
    inside: list[Sequence[Problem]] = [()] * len(lines)
    top_parsed: list[Problem] = []
    for problem in parsed.problems:
        number = bisect_right(lines, problem.span.start.line) - 1
        if number >= 0 and (at_end or problem.span.start.line < end_line):
            inside[number] = (*inside[number], problem)
        else:
            top_parsed.append(problem)
    items = [
        Item(node, line, start, replace(item_found, parsed=item_parsed) if item_parsed else item_found, line)
        for node, line, start, item_found, item_parsed in zip(
            sequence.items or [], lines, starts, found, inside, strict=True
        )
    ]
    return Layout(
        role,
        frame,
        items,
        starts,
        lines,
        end,
        end_line,
        root,
        (end_line, end),
        top_parsed,
        top_schema,
        len(text) <= yamltree.REFERENCE_LIMIT,
        numbered=tuple(n for n, item in enumerate(items) if item.numbered),
        # Made with the analysis, off the event loop: the first id typed then costs its entries.
        tally=tally_of(found) if role == "rubric" else None,
    )


def tally_of(found: Iterable[ItemFindings]) -> Tally:
    """The tally of a rubric's checks, from what was found in each."""
    ids: list[CheckId | None] = []
    kinds: list[str | None] = []
    for each in found:
        ids.append(each.check_id)
        kinds.append(each.facts.kind if isinstance(each.facts, CheckFacts) else None)
    return Tally.of(ids, kinds)


def item_of(
    parsed: ParseResult, container: str, number: int, last: bool, after_line: int, length: int
) -> Node | None:
    """The item read from its stand-in document (of `length` characters, whose text after the
    item starts on `after_line`), or None when the stand-in did not read as one item in its place
    and the list going on to the stand-in for what follows (the edit changed the structure)."""
    root = parsed.root
    if root is None or root.entries is None or parsed.anchored:
        return None
    expected = ["a", container, "z"] if "a" in root.entries else [container, "z"]
    if list(root.entries) != (expected if "z" in root.entries else expected[:-1]):
        return None
    sequence = root.entries[container].value
    count = (number > 0) + 1 + (not last)
    if sequence.items is None or len(sequence.items) != count:
        return None
    if not last:
        going_on = sequence.items[-1].line == after_line
    elif "z" in root.entries:
        follows = root.entries["z"].key
        going_on = (
            (sequence.end_line, sequence.end_column)
            == (follows.line, follows.column)
            == (after_line, follows.column)
        )
    else:
        going_on = sequence.end_index == length
    return sequence.items[1 if number > 0 else 0] if going_on else None


class Lines(Sequence[str]):
    """A `LineIndex` as the list of its lines, for `syntax_problem`."""

    def __init__(self, index: LineIndex) -> None:
        self.source = index

    def __len__(self) -> int:
        return self.source.line_count

    @overload
    def __getitem__(self, number: int) -> str: ...
    @overload
    def __getitem__(self, number: slice) -> Sequence[str]: ...
    def __getitem__(self, number: int | slice) -> str | Sequence[str]:
        if isinstance(number, slice):
            return [self.source.line(n) for n in range(*number.indices(len(self)))]
        return self.source.line(number)


def flatten(lists: Iterable[Sequence[Any]]) -> list[Any]:
    return [value for values in lists for value in values]


def moved_ends(
    node: Node,
    lines: int,
    offset: int,
    ends: tuple[int, int, int] | None,
    starts: tuple[int, int, int] | None = None,
) -> Node:
    """A copy of a node holding the same children, its end moved, or put at `ends` (and its start
    at `starts`)."""
    copied = Node(
        node.value,
        *(starts or (node.line, node.column, node.start_index)),
        *(ends or (node.end_line + lines, node.end_column, node.end_index + offset)),
        node.style,
    )
    copied.entries, copied.items = node.entries, node.items
    return copied
