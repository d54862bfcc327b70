"""An edit read in proportion to it: `update` gives the analysis of a document after edits,
reading, validating and linting only the one check or case they stay inside (`core/items.py`),
and putting the summary and the rules across items together from the items' results (or, for a
keystroke that moved no line, splicing the item's own into the last analysis's); any other edit
falls back to `analyse`. What is under a cursor right after edits is read the same way
(`at_after`), and from the last good reading of an item a keystroke broke (`at_before`)."""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Sequence
from dataclasses import dataclass, replace
from operator import attrgetter

from ai_eval_lsp.core import yamltree
from ai_eval_lsp.core.analysis.document import Analysis, Rules, analyse, assemble, bare_summary, item_found
from ai_eval_lsp.core.cursor import At, locate
from ai_eval_lsp.core.index import CheckFacts, RubricSummary, Summary, with_check_changed
from ai_eval_lsp.core.items import (
    Item,
    ItemFindings,
    Layout,
    Lines,
    breaks,
    flatten,
    item_head,
    item_of,
    moved_ends,
    tally_of,
)
from ai_eval_lsp.core.lints import CheckId, scoring_lints
from ai_eval_lsp.core.problems import Problem, Span
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.core.yamlnodes import moved_tree
from ai_eval_lsp.core.yamltree import Entry, Node, ParseResult, libyaml_failure, read_fast, syntax_problem


@dataclass(frozen=True, slots=True)
class Edit:
    """`removed` characters at offset `start` replaced by `inserted`."""

    start: int
    removed: int
    inserted: str


def merged(edits: Sequence[Edit], text: str) -> Edit:
    """Edits applied one after the other as one edit of the text before them; `text` is the text
    after them all."""
    start, old_end, new_end = (
        edits[0].start,
        edits[0].start + edits[0].removed,
        edits[0].start + len(edits[0].inserted),
    )
    for edit in edits[1:]:
        covered = max(new_end, edit.start + edit.removed)
        old_end += covered - new_end
        start = min(start, edit.start)
        new_end = covered + len(edit.inserted) - edit.removed
    return Edit(start, old_end - start, text[start:new_end])


def update(previous: Analysis, edits: Sequence[Edit], rules: Rules, lines: LineIndex) -> Analysis:
    """The analysis of `lines.text`, which is `previous.text` with `edits` applied in order: the
    same as `analyse` gives, at the cost of the one item the edits stay inside, if they do.

    Shares `previous`'s items, and changes nothing of it."""
    text = lines.text
    analysis = None
    if edits and previous.layout is not None:
        analysis = _item_update(previous, merged(edits, text), rules, lines)
    return analysis or analyse(previous.role, previous.path, text, rules)


@dataclass(frozen=True, slots=True)
class UnderCursor:
    """What `at_after` found under a cursor: the same as the analysis of the text would."""

    at: At | None


def at_after(
    previous: Analysis, edits: Sequence[Edit], lines: LineIndex, line: int, column: int
) -> UnderCursor | None:
    """What is under a cursor in `lines.text` (`previous.text` with `edits` applied) without
    analysing it: hover right after a keystroke, before the debounce lets the analysis run. Read
    from the one item the edits stay inside, or from `previous` away from it; None when only the
    analysis can tell (the edits cross items, the item does not read, or what is under the cursor
    spans the edit)."""
    layout = previous.layout
    if not edits:
        return UnderCursor(previous.at(line, column))
    if layout is None or previous.tree is None:
        return None
    edit = merged(edits, lines.text)
    edited = _edited_item(previous, layout, edit, lines.text)
    if edited is None or layout.broken is not None:
        return None
    number, item_text, moved, delta = edited
    read = _read_node(layout, number, item_text)
    if not isinstance(read, tuple):
        return None  # the document may not read at all now
    node, first = read[0], layout.lines[number]
    # The last item of a list that ends the text may end inside its last line.
    after = first + breaks(item_text) + (not item_text.endswith(("\n", "\r")))
    if line < first:  # before the item: as it was, if it ends before the edit
        at = previous.at(line, column)
        unchanged = at is None or all(each.end_index < edit.start for each in _nodes_of_at(at))
        return UnderCursor(at) if unchanged else None
    if line >= after:  # after it: as it was, moved, if it starts after the edit
        at = previous.at(line - moved, column)
        if at is None:
            return UnderCursor(None)
        if at.path[:2] == (layout.container, number) or any(
            each.start_index < edit.start + edit.removed for each in _nodes_of_at(at)
        ):
            return None  # in the edited item (its end reaches the next line), or spanning the edit
        key = moved_tree(at.key, moved, delta) if at.key is not None else None
        return UnderCursor(At(at.path, moved_tree(at.node, moved, delta), key, at.on_key, at.item))
    if not (node.line, node.column) <= (line, column) <= (node.end_line, node.end_column):
        return None  # on its `- `, or past it: the list's, which the edit moved
    inner = locate(node, line, column)
    path = (layout.container, number)
    if inner is None:
        return UnderCursor(At(path, node, None, False, node.value))
    return UnderCursor(At((*path, *inner.path), inner.node, inner.key, inner.on_key, node.value))


@dataclass(frozen=True, slots=True)
class CursorBefore:
    """Where a cursor was in the last good reading of the one item the edits since broke."""

    lines: LineIndex
    """The text of that reading."""
    line: int
    column: int


def before_broken(
    previous: Analysis, edits: Sequence[Edit], lines: LineIndex, line: int, column: int
) -> CursorBefore | None:
    """Where a cursor in `lines.text` (`previous.text` with `edits` applied) was in `previous`,
    when the edits stay inside one item, `previous` read it and its YAML does not read now (a
    keystroke that broke it): completion and hover right after such a keystroke answer from that
    reading, where the full analysis has no tree. None otherwise, and for a cursor
    inside the text the edits put in."""
    layout = previous.layout
    if not edits or layout is None or previous.tree is None or layout.broken is not None:
        return None
    edit = merged(edits, lines.text)
    edited = _edited_item(previous, layout, edit, lines.text)
    if edited is None or not isinstance(_read_node(layout, edited[0], edited[1]), Exception):
        return None
    offset = lines.starts[min(line, lines.line_count - 1)] + column
    put_in = edit.start + len(edit.inserted)
    if edit.start < offset < put_in:
        return None
    was = offset if offset <= edit.start else offset - len(edit.inserted) + edit.removed
    text = lines.replace(edit.start, put_in, previous.text[edit.start : edit.start + edit.removed])
    number = bisect_right(text.starts, was) - 1
    return CursorBefore(text, number, was - text.starts[number])


def at_before(
    previous: Analysis, edits: Sequence[Edit], lines: LineIndex, line: int, column: int
) -> UnderCursor | None:
    """What was under a cursor in the last good reading of the item the edits broke
    (`before_broken`), placed where `lines.text` has it; None where `before_broken` is."""
    before = before_broken(previous, edits, lines, line, column)
    if before is None:
        return None
    at = previous.at(before.line, before.column)
    if at is None:
        return UnderCursor(None)
    edit = merged(edits, lines.text)

    def placed(node: Node) -> Node:
        """A copy of a node at its place in `lines.text` (what it holds is shared, unmoved)."""
        start, end = _after_edit(node.start_index, edit, True), _after_edit(node.end_index, edit, False)
        first, last = (bisect_right(lines.starts, offset) - 1 for offset in (start, end))
        return moved_ends(
            node, 0, 0, (last, end - lines.starts[last], end), (first, start - lines.starts[first], start)
        )

    key = placed(at.key) if at.key is not None else None
    return UnderCursor(At(at.path, placed(at.node), key, at.on_key, at.item))


def _after_edit(offset: int, edit: Edit, starts: bool) -> int:
    """Where an offset of the text before an edit is after it (inside what it removed: its end);
    what `starts` where the edit put text in starts after that text."""
    if offset < edit.start or (offset == edit.start and not starts):
        return offset
    return max(offset - edit.removed, edit.start) + len(edit.inserted)


def _nodes_of_at(at: At) -> tuple[Node, ...]:
    return (at.node,) if at.key is None else (at.node, at.key)


def _item_update(previous: Analysis, edit: Edit, rules: Rules, lines: LineIndex) -> Analysis | None:
    """The analysis after an edit inside one item, or None when it must be read whole."""
    layout = previous.layout
    assert layout is not None
    edited = _edited_item(previous, layout, edit, lines.text)
    if edited is None:
        return None
    number, item_text, moved, delta = edited
    text, was_broken = lines.text, layout.broken is not None
    if moved and any(problem.span.start.line >= layout.root_end[0] for problem in layout.top_parsed):
        return None  # the parser's messages after the list may name lines (a repeated key's first)
    after = number + 1
    layout = replace(
        layout,
        starts=layout.starts[:after] + [offset + delta for offset in layout.starts[after:]],
        lines=layout.lines[:after] + [line + moved for line in layout.lines[after:]],
        end=layout.end + delta,
        end_line=layout.end_line + moved,
    )
    item = _read_item(layout, number, item_text, text, rules)
    if isinstance(item, Exception):
        return _broken(previous, layout, number, item, lines)
    if item is None:
        return None
    items = list(layout.items)
    before = items[number].found_at(layout.lines[number])
    items[number] = item
    for other in layout.numbered:  # their messages name lines: read again where they are now
        if other != number and layout.lines[other] != items[other].line:
            again = _read_item(
                layout, other, text[layout.starts[other] : layout.item_end(other)], text, rules
            )
            if not isinstance(again, Item):
                return None
            items[other] = again
    layout = replace(
        layout,
        items=items,
        broken=None,
        numbered=tuple(n for n, each in enumerate(items) if each.numbered)
        if item.numbered or number in layout.numbered
        else layout.numbered,
    )
    # Problems carry over only from an analysis that had them all (not a syntax error's alone).
    spliceable = not moved and not was_broken
    was = (
        (number, before, _lines_of(lines, edit.start, edit.start + len(edit.inserted)))
        if spliceable
        else None
    )
    return _assembled(previous, layout, lines, was)


def _edited_item(
    previous: Analysis, layout: Layout, edit: Edit, text: str
) -> tuple[int, str, int, int] | None:
    """The item an edit of `previous.text` stays inside, as `text` (after the edit) has it: its
    number, its new text, and how many lines and characters the edit added; None when the edit
    is not inside one item, or leaves it something other than one item in its place."""
    number = layout.find(edit.start, edit.start + edit.removed)
    if number is None or layout.broken not in (None, number):
        return None
    if (len(text) <= yamltree.REFERENCE_LIMIT) != layout.small:
        return None  # across the limit the other items would be read by another parser's rules
    start, delta = layout.starts[number], len(edit.inserted) - edit.removed
    item_text = text[start : layout.item_end(number) + delta]
    last = number == len(layout.items) - 1
    if (
        (not item_text.endswith(("\n", "\r")) and not (last and layout.end == len(previous.text)))
        or (item_text.startswith("\n") and text[start - 1 : start] == "\r")
        or item_head(item_text) != layout.frame.column
    ):
        return None
    moved = breaks(item_text) - breaks(previous.text[start : layout.item_end(number)])
    return number, item_text, moved, delta


def _read_item(
    layout: Layout, number: int, item_text: str, text: str, rules: Rules
) -> Item | Exception | None:
    """Item `number` read from its text alone: the item, libyaml's error when it rejects the
    text, or None when the text is not one item in its place."""
    read = _read_node(layout, number, item_text)
    if not isinstance(read, tuple):
        return read
    node, parsed = read
    line, start = layout.lines[number], layout.starts[number]
    return Item(node, line, start, item_found(layout.role, number, node, text, rules, parsed), line)


def _read_node(layout: Layout, number: int, item_text: str) -> tuple[Node, list[Problem]] | Exception | None:
    """Item `number`'s tree read from its text alone, where the document has it, with the
    parser's problems; or as `_read_item` says."""
    container = layout.container
    last = number == len(layout.items) - 1
    line = layout.lines[number]
    before = layout.frame.before(container, number, line)
    stand_in = before + item_text + layout.frame.after(last)
    reading = read_fast(stand_in, defer_odd_keys=layout.small)
    if not isinstance(reading, ParseResult):
        return reading
    end_line = line + breaks(item_text)
    node = item_of(reading, container, number, last, end_line, len(stand_in))
    # The text of the last item of a list that ends the text may end inside its last line.
    limit = end_line + (not item_text.endswith(("\n", "\r")))
    if node is None or any(not line <= p.span.start.line < limit for p in reading.problems):
        return None
    offset = layout.starts[number] - len(before)  # from the stand-in text's offsets to the document's
    return moved_tree(node, 0, offset), reading.problems


def _broken(
    previous: Analysis, layout: Layout, number: int, error: Exception, lines: LineIndex
) -> Analysis | None:
    """The analysis of a document libyaml rejects inside item `number`. The full analysis reports
    libyaml's error only past `REFERENCE_LIMIT` (below, the reference parser reads it again):
    here too, and below it the document is read whole."""
    text = lines.text
    if layout.small:
        return None
    before = layout.frame.before(layout.container, number, layout.lines[number])
    failure = libyaml_failure(before + text[layout.starts[number] :])
    if failure is None:
        return None
    problem = syntax_problem(Lines(lines), failure)
    summary = bare_summary(layout.role, previous.path, None, lines, [problem])
    return Analysis(
        layout.role, previous.path, text, None, summary, [problem], replace(layout, broken=number)
    )


def _assembled(
    previous: Analysis,
    layout: Layout,
    lines: LineIndex,
    edited: tuple[int, ItemFindings, tuple[int, int]] | None = None,
) -> Analysis:
    """The analysis of the layout's items put together with the top level around them. `edited`:
    the item an edit that moved no line is inside, what it held before, and the lines the edit
    is on."""
    root = _root(layout, lines)
    end_line, _ = layout.root_end
    shift = layout.end_line - end_line
    top_parsed = _moved_after(layout.top_parsed, end_line, shift)
    top_schema = _moved_after(layout.top_schema, end_line, shift)
    layout = replace(
        layout,
        root=root,
        root_end=(layout.end_line, layout.end),
        top_parsed=top_parsed,
        top_schema=top_schema,
    )
    spliced = _spliced(previous, layout, lines, root, *edited) if edited is not None else None
    if spliced is not None:
        summary, problems, layout = spliced
        return Analysis(layout.role, previous.path, lines.text, root, summary, problems, layout)
    # What was found in each item, where this text has it; the tally is made again from the items
    # when an id next changes.
    items = [item.found_moved(line) for item, line in zip(layout.items, layout.lines, strict=True)]
    layout = replace(layout, items=items, tally=None)
    found = [item.found for item in items]
    problems = top_parsed + flatten(item.parsed for item in found) + top_schema
    summary = assemble(layout.role, previous.path, root, found, lines, problems, ())
    return Analysis(layout.role, previous.path, lines.text, root, summary, problems, layout)


_ACROSS_CHECKS = frozenset({"duplicate-id", "unused-weight", "ignored-by-combine"})
"""The codes of a rubric's rules across its checks (see `_across_checks`)."""


def _spliced(
    previous: Analysis,
    layout: Layout,
    lines: LineIndex,
    root: Node,
    number: int,
    before: ItemFindings,
    edit_lines: tuple[int, int],
) -> tuple[Summary, list[Problem], Layout] | None:
    """The summary, problems and layout after an edit that moved no line: the previous problems
    with the item's own replaced; for a check whose id or facts changed, the summary's entries of
    that check and the rules across checks of the ids it had and has too (`_across_checks`).
    None when that cannot be told so: a problem or the summary places something on the edited
    lines, whose columns the edit may have moved."""
    after = layout.items[number].found
    first, last = edit_lines
    summary = previous.summary
    if any(first <= line <= last for line in summary.lines):
        return None
    stale: list[Problem] = []
    fresh: list[Problem] = []
    if (after.check_id, after.facts) != (before.check_id, before.facts):
        across = _across_checks(previous, layout, lines, root, number, before)
        if across is None:
            return None
        summary, layout, stale, fresh = across
    own = {id(problem) for part in (before.parsed, before.schema, before.lints) for problem in part}
    gone = set(stale)
    kept = [
        problem
        for problem in previous.problems
        if id(problem) not in own and not (problem.code in _ACROSS_CHECKS and problem in gone)
    ]
    if len(kept) != len(previous.problems) - len(own) - len(stale):
        return None  # the previous problems are not those of this item's reading
    for problem in kept:
        if _touches(problem.span, first, last) or any(
            _touches(related.span, first, last) for related in problem.related
        ):
            return None
    for problem in (*after.parsed, *after.schema, *after.lints, *fresh):  # into the sorted others
        insort(kept, problem, key=Problem.sort_key)
    return summary, kept, layout


def _touches(span: Span, first: int, last: int) -> bool:
    """Whether a span starts or ends on one of the lines from `first` to `last`."""
    start, end = span.start.line, span.end.line
    return first <= start <= last or first <= end <= last


def _across_checks(
    previous: Analysis, layout: Layout, lines: LineIndex, root: Node, number: int, before: ItemFindings
) -> tuple[Summary, Layout, list[Problem], list[Problem]] | None:
    """After check `number`'s id or facts changed (and no line moved): the rubric's summary with
    that check's entries replaced, the layout with its tally (`core/tally.py`) updated, and the
    problems of the rules across checks that changed (those of its old and new id, and scoring's
    when it names checks), as (summary, layout, stale problems, fresh problems). None for a
    cases file."""
    summary = previous.summary
    if not isinstance(summary, RubricSummary) or not isinstance(before.facts, CheckFacts):
        return None
    after = layout.items[number].found
    assert isinstance(after.facts, CheckFacts)
    was = previous.layout
    assert was is not None
    tally = was.tally if was.tally is not None else tally_of(was.found())  # lines moved since it was made

    def where(other: int) -> CheckId:
        found = layout.items[other].found_at(layout.lines[other]).check_id
        assert found is not None, "a check the tally holds has an id"
        return found

    changed = tally.changed(
        number, (before.check_id, after.check_id), (before.facts.kind, after.facts.kind), where
    )
    names = {found[0] for found in (before.check_id, after.check_id) if found is not None}
    stale = [problem for name in names for problem in tally.repeated.get(name, ())]
    fresh = [problem for name in names for problem in changed.repeated.get(name, ())]
    scoring = root.at(("scoring",))
    if names and scoring is not None and scoring.get("weights") is not None:  # they name checks
        stale += scoring_lints(root, tally.in_order())
        fresh += scoring_lints(root, changed.in_order())
    earlier = (item.found.facts for item in layout.items[:number])
    summary = with_check_changed(summary, earlier, before.facts, after.facts, changed.kinds, lines)  # type: ignore[arg-type]
    return summary, replace(layout, tally=changed), stale, fresh


def _lines_of(lines: LineIndex, start: int, end: int) -> tuple[int, int]:
    """The first and last line of a range of offsets."""
    return bisect_right(lines.starts, start) - 1, bisect_right(lines.starts, end) - 1


def _moved_after(problems: list[Problem], line: int, lines: int) -> list[Problem]:
    """Problems with their positions from `line` on moved by `lines`."""
    if not lines:
        return problems
    return [
        replace(
            problem,
            span=Span.of(
                problem.span.start.line + (lines if problem.span.start.line >= line else 0),
                problem.span.start.column,
                problem.span.end.line + (lines if problem.span.end.line >= line else 0),
                problem.span.end.column,
            ),
        )
        for problem in problems
    ]


def _root(layout: Layout, text: LineIndex) -> Node:
    """The layout's tree: its root and list new, the items in it shared, what follows the list
    moved with the text after it."""
    old = layout.root
    container = layout.container
    end_line, end = layout.root_end
    lines, offset = layout.end_line - end_line, layout.end - end
    # A list that ends the text ends where the text does (its last line may be the edited one).
    ends = None if layout.frame.follows is not None else _text_end(text)
    assert old.entries is not None
    entries: dict[str, Entry] = {}
    value: dict[str, object] = {}
    after = False
    for name, entry in old.entries.items():
        if name == container:
            sequence = moved_ends(entry.value, lines, offset, ends)
            sequence.items = list(map(_node, layout.items))
            sequence.value = list(map(_value, sequence.items))
            entries[name], value[name] = Entry(entry.key, sequence), sequence.value
            after = True
        elif after and (lines or offset):
            entries[name] = Entry(
                moved_tree(entry.key, lines, offset), moved_tree(entry.value, lines, offset)
            )
            value[name] = old.value[name]
        else:
            entries[name], value[name] = entry, old.value[name]
    root = moved_ends(old, lines, offset, ends)
    root.entries, root.value = entries, value
    return root


_node = attrgetter("node")
_value = attrgetter("value")


def _text_end(text: LineIndex) -> tuple[int, int, int]:
    last = text.line_count - 1
    return last, len(text.line(last)), len(text.text)
