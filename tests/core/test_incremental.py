"""An edit inside one check or case is analysed by reading that item alone (`core/items.py`), and
the result is exactly a full analysis of the new text: problems (codes, messages, ranges, data,
order), the summary, and every node of the tree where it is. Random edit sequences (inserts,
deletes, pastes across items, indentation, comments, flow collections, quotes, Unicode, line
breaks of every kind) on generated rubrics and cases files, compared after each edit, below and
past the size where the reference parser stops re-reading documents libyaml rejects."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import examples
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ai_eval_lsp.core import yamltree
from ai_eval_lsp.core.analysis import Analysis, Edit, Rules, analyse, at_after, incremental, merged, update
from ai_eval_lsp.core.analysis import document as whole_document
from ai_eval_lsp.core.cursor import locate
from ai_eval_lsp.core.index import Role
from ai_eval_lsp.core.items import breaks
from ai_eval_lsp.core.text import LineIndex, split_lines
from ai_eval_lsp.core.yamltree import Node
from ai_eval_lsp.project.project import Project

CHECKS = (
    '  - id: polite\n    kind: must_contain_any\n    values: ["sorry", "é"]\n',
    "  - id: shape\n    kind: regex\n    pattern: '^[A-Z]'\n    flags: im\n",
    "  # a comment between checks\n  - id: judge\n    kind: llm_judge\n    description: Tone 😀\n",
    "  - {id: ref, kind: target_match, source: expected.reference, threshold: 0.6}\n",
    "  - id: sub\n    kind: composite\n    rubric: tone\n",
    "  - id: polite\n    kind: regexp\n    patern: x\n",
    "  - id: words\n    kind: must_not_contain\n    values:\n      - As an AI\n      - I cannot\n",
    "  - id: vague\n    kind: bogus\n",
)
CASES = (
    "  - id: a\n    question: {id: q1, input: hi, expected: {reference: yes}}\n    response: |\n      Sorry, é.\n      More.\n",
    '  - id: b\n    question:\n      id: q2\n    response: "plain 😀"\n    expect: pass\n',
    "  - id: a\n    response: >\n      folded\n      text\n    expect: maybe\n",
    "  - response: no id\n    extra: 1\n",
)
PIECES = (
    "x", "é", "😀", " ", "  ", "\n", "\r\n", "\r", "\n    ", "\n  - ", "- ", ": ", ":", "#", "# note\n", '"', "'",
    "{", "}", "[", "]", ", ", "[a, b]", "{k: v}", "\t", "&a ", "*a", "!!str ", "kind: regex", "id: polite",
    "pattern: '('", "values: [", "description: |\n      text\n", "\n    weight: 2", "---\n", "?",
    "\n    id: again", "!foo ", '\n    "": 1', "\n    kind: regex",
)  # fmt: skip


TYPED = (*"xé😀 :#\"'[]{}-,!&*", "", "ab", "\t")
"""Keystrokes that break no line: a character, a deletion, a short paste."""


@pytest.fixture(scope="module")
def rules(project: Project) -> Rules:
    return project.rules


def document(role: Role, items: list[int]) -> str:
    """A document of these items; with an odd count, the list ends the document (a cases file's
    last case without a final line break)."""
    if role == "cases":
        body = "".join(CASES[i % len(CASES)] for i in items)
        return "rubric: tone\ncases:\n" + (body[:-1] if len(items) % 2 else body + "gate: {pass_rate: 0.5}\n")
    body = "".join(CHECKS[i % len(CHECKS)] for i in items)
    scoring = "scoring:\n  combine: weighted_avg\n  weights: {polite: 2, gone: 1}\n"
    ordered = f"{scoring}checks:\n{body}" if len(items) % 2 else f"checks:\n{body}{scoring}"
    return f'# a rubric\nid: big\nversion: "1.0"\n{ordered}'


def shape(node: Node | None) -> Iterator[tuple[Any, ...]]:
    """Every node of a tree with its position, style and value, in a fixed order."""
    if node is None:
        return
    pending: list[tuple[tuple[Any, ...], Node]] = [((), node)]
    while pending:
        path, current = pending.pop()
        yield path, current.line, current.column, current.start_index, current.end_line, current.end_column
        yield path, current.end_index, current.style, repr(current.value)
        if current.entries is not None:
            for name, entry in current.entries.items():
                key = entry.key
                yield (
                    (*path, name),
                    key.line,
                    key.column,
                    key.start_index,
                    key.end_line,
                    key.end_column,
                    key.end_index,
                )
                pending.append(((*path, name), entry.value))
        for number, item in enumerate(current.items or []):
            pending.append(((*path, number), item))


def cursors(text: str) -> Iterator[tuple[int, int]]:
    """The start, middle and end of every line (and past them)."""
    for number, line in enumerate(split_lines(text)):
        for column in sorted({0, len(line) - len(line.lstrip()), len(line) // 2, len(line), len(line) + 1}):
            yield number, column


def under_cursors(text: str, located: Any) -> list[tuple[Any, ...] | None]:
    """What is under each of the `cursors`."""
    return [described(located(line, column)) for line, column in cursors(text)]


def described(at: Any) -> tuple[Any, ...] | None:
    if at is None:
        return None
    return (
        at.path,
        at.on_key,
        at.node.span,
        at.key.span if at.key else None,
        repr(at.node.value),
        repr(at.item),
    )


def full_at(full: Analysis) -> Any:
    return lambda line, column: locate(full.root, line, column) if full.root else None


def assert_same(incremental: Analysis, full: Analysis) -> None:
    assert under_cursors(incremental.text, incremental.at) == under_cursors(full.text, full_at(full))
    assert [(p.code, p.message, p.span, p.data, p.related) for p in incremental.problems] == [
        (p.code, p.message, p.span, p.data, p.related) for p in full.problems
    ]
    assert incremental.summary == full.summary
    assert list(shape(incremental.root)) == list(shape(full.root))
    # The checks or cases alone, as the outline, lenses and definitions read them.
    assert incremental.listed() == full.listed()
    numbers = range(-1, len(full.listed()) + 1)
    assert [list(shape(incremental.item(n))) for n in numbers] == [list(shape(full.item(n))) for n in numbers]


edit_steps = st.lists(
    st.tuples(
        st.floats(0, 1),  # where, as a share of the text
        st.booleans(),  # at the start of its line (indentation)
        st.integers(0, 12),  # characters removed
        st.one_of(st.sampled_from(PIECES), st.floats(0, 1)),  # inserted: a piece, or a paste from elsewhere
        st.booleans(),  # sent together with the next edit
    ),
    min_size=1,
    max_size=25,
)


def edits_of(
    text: str, steps: list[tuple[float, bool, int, str | float, bool]]
) -> Iterator[tuple[str, list[Edit]]]:
    """The texts an editing session goes through, each with the edits that made it (a few sent
    together, as one didChange may carry several)."""
    pending: list[Edit] = []
    for where, line_start, removed, inserted, together in steps:
        start = min(int(where * len(text)), len(text))
        if line_start:
            start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
        removed = min(removed, len(text) - start)
        if isinstance(inserted, float):  # a paste of a piece of the text, often across items
            at = int(inserted * len(text))
            inserted = text[at : at + 40]
        edit = Edit(start, removed, inserted)
        text = text[:start] + inserted + text[start + removed :]
        pending.append(edit)
        if not together:
            yield text, pending
            pending = []
    if pending:
        yield text, pending


def replacing(
    text: str, replacements: list[tuple[str, str, bool]]
) -> list[tuple[float, bool, int, str, bool]]:
    """The `edit_steps` that replace the first `old` of the text (as the steps before left it)
    with `new`, each sent together with the next when told: fixed examples of chosen edits."""
    steps = []
    for old, new, together in replacements:
        start = text.index(old)
        steps.append(((start + 0.5) / len(text), False, len(old), new, together))
        text = text[:start] + new + text[start + len(old) :]
    return steps


CROSSING = [1, 7]
"""A check whose pattern is edited, then a check of the unknown kind `bogus`."""
CROSSING_EDITS = [("[A-Z]", "[A-Za-z]", True), ("bogus", "regex", False)]
"""Two cursors, one didChange: the first check's pattern, and the second's kind, now `regex`
(which lacks its `pattern`)."""
REPEATED_ID = [0, 5]
"""Two checks named `polite`."""
SWAPPED_LINES = [("id: polite\n    kind: must_contain_any", "kind: must_contain_any\n    id: polite", False)]
"""The first `polite` check's `id:` and `kind:` lines swapped: no line added, its id one line down
(the repeated id's message names that line)."""


@pytest.mark.parametrize("limit", [yamltree.REFERENCE_LIMIT, 0], ids=["small", "past-the-reference-limit"])
@pytest.mark.parametrize("role", ["rubric", "cases"])
@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(items=st.lists(st.integers(0, 20), min_size=1, max_size=7), steps=edit_steps)
@example(
    items=[0, 1, 2],
    steps=[(0.5, False, 0, '"', False), (0.5, False, 0, "x", False), (0.5, False, 1, "", False)],
)
@example(
    items=[1, 1, 4],
    steps=[(0.4, True, 0, "  ", False), (0.6, False, 0, "\n", True), (0.7, False, 3, "é", False)],
)
@example(
    items=[3, 0, 1, 2, 2, 0], steps=[(0.75390625, False, 0, 0.0, False), (0.5, False, 0, 0.859375, False)]
)
@example(items=[0, 3, 5], steps=[(0.45, False, 0, "{k: v}", False), (0.3, False, 0, 0.8, False)])
@example(items=CROSSING, steps=replacing(document("rubric", CROSSING), CROSSING_EDITS))
@example(items=REPEATED_ID, steps=replacing(document("rubric", REPEATED_ID), SWAPPED_LINES))
def test_an_edit_gives_what_a_full_analysis_gives(
    rules: Rules, monkeypatch: pytest.MonkeyPatch, role: Role, limit: int, items: list[int], steps: Any
) -> None:
    monkeypatch.setattr(yamltree, "REFERENCE_LIMIT", limit)
    text = document(role, items)
    current = analyse(role, "x.yaml", text, rules)
    for new_text, edits in edits_of(text, steps):
        full = analyse(role, "x.yaml", new_text, rules)
        assert_peeks_agree(current, edits, new_text, full)
        current = update(current, edits, rules, LineIndex(new_text))
        assert_same(current, full)


def assert_peeks_agree(previous: Analysis, edits: list[Edit], text: str, full: Analysis) -> int:
    """Where `at_after` answers before the analysis of `text`, it finds what the analysis finds;
    how many cursors it answered for."""
    lines = LineIndex(text)
    peeked = [at_after(previous, edits, lines, line, column) for line, column in cursors(text)]
    found = under_cursors(text, full_at(full))
    answered = [(peek.at, want) for peek, want in zip(peeked, found, strict=True) if peek is not None]
    assert [described(at) for at, _ in answered] == [want for _, want in answered]
    return len(answered)


@pytest.mark.parametrize("role", ["rubric", "cases"])
@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    items=st.lists(st.integers(0, 20), min_size=1, max_size=7),
    keys=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 2), st.sampled_from(TYPED)), min_size=1, max_size=30
    ),
)
def test_typing_within_lines_gives_what_a_full_analysis_gives(
    rules: Rules, role: Role, items: list[int], keys: list[tuple[float, int, str]]
) -> None:
    """Keystrokes that add or remove no line, as most do (where the problems and the summary are
    carried over from the analysis before, with the edited item's own replaced)."""
    text = document(role, items)
    current = analyse(role, "x.yaml", text, rules)
    steps = [(where, False, removed, typed, False) for where, removed, typed in keys]
    for new_text, edits in edits_of(text, steps):
        if breaks(new_text) != breaks(current.text):
            current = analyse(role, "x.yaml", new_text, rules)  # a removed line break
            continue
        current = update(current, edits, rules, LineIndex(new_text))
        assert_same(current, analyse(role, "x.yaml", new_text, rules))


def test_edits_sent_together_are_one_edit_of_the_text_before() -> None:
    text = "abcdefgh"
    edits = [Edit(2, 1, "XY"), Edit(0, 1, ""), Edit(6, 0, "!")]
    after = text
    for edit in edits:
        after = after[: edit.start] + edit.inserted + after[edit.start + edit.removed :]
    one = merged(edits, after)
    assert text[: one.start] + one.inserted + text[one.start + one.removed :] == after


def edited(
    rules: Rules, items: list[int], replacements: list[tuple[str, str, bool]]
) -> tuple[Analysis, Analysis]:
    """The analysis after `replacements` (sent in one didChange) of a rubric of `items`, and a
    full analysis of the text they leave."""
    text = document("rubric", items)
    current = analyse("rubric", "x.yaml", text, rules)
    ((new_text, edits),) = edits_of(text, replacing(text, replacements))
    return update(current, edits, rules, LineIndex(new_text)), analyse("rubric", "x.yaml", new_text, rules)


def test_two_cursors_in_two_checks_read_both_again(rules: Rules) -> None:
    """One didChange with an edit in each of two checks: the second, its kind `bogus` renamed to
    `regex`, is no longer an unknown kind but a regex check that lacks its pattern."""
    after, full = edited(rules, CROSSING, CROSSING_EDITS)
    assert [(p.code, p.message) for p in after.problems if p.code != "unused-weight"] == [
        ("schema", "regex check: missing required field `pattern`")
    ]
    assert_same(after, full)


def test_a_range_across_two_items_is_inside_neither(rules: Rules) -> None:
    text = document("rubric", CROSSING)
    layout = analyse("rubric", "x.yaml", text, rules).layout
    assert layout is not None
    pattern, kind, second = text.index("[A-Z]"), text.index("bogus"), layout.starts[1]
    assert layout.find(pattern, pattern + 5) == 0
    assert layout.find(kind, kind + 5) == 1
    assert layout.find(pattern, second) == 0  # up to the first item's end: still inside it
    assert layout.find(pattern, second + 1) is None
    assert layout.find(pattern, kind + 5) is None


def test_swapping_a_checks_id_and_kind_lines_moves_the_line_its_repeated_id_names(rules: Rules) -> None:
    """No line is added, and the edit is inside the first `polite` check; its id is a line down,
    so the second `polite`'s message names the line it is on now."""
    after, full = edited(rules, REPEATED_ID, SWAPPED_LINES)
    (repeated,) = (p for p in after.problems if p.code == "duplicate-id")
    assert (
        repeated.message
        == "the check id `polite` is already used at line 6; check ids must be unique in a rubric"
    )
    assert_same(after, full)


@pytest.mark.parametrize("role", ["rubric", "cases"])
def test_typing_inside_an_item_reads_that_item_alone(
    rules: Rules, monkeypatch: pytest.MonkeyPatch, role: Role
) -> None:
    """Keystrokes inside one check or case, a quoted string typed through invalid YAML included
    (past the reference parser's limit, where libyaml's report stands), never read the document
    whole, and each gives what a full analysis gives."""
    monkeypatch.setattr(yamltree, "REFERENCE_LIMIT", 0)
    text = document(role, [0, 1, 2, 3, 4, 5, 6] if role == "rubric" else [0, 1, 2, 3])
    current = analyse(role, "x.yaml", text, rules)
    full = incremental.analyse

    def whole(*args: Any, **kwargs: Any) -> Analysis:
        raise AssertionError("the document was read whole")

    where = text.index("\n", text.index("  - id: "))
    monkeypatch.setattr(incremental, "analyse", whole)
    for number, typed in enumerate(["\n    note: ", *'"typed in quotes"']):
        text = text[:where] + typed + text[where:]
        current = update(current, [Edit(where, 0, typed)], rules, LineIndex(text))
        where += len(typed)
        assert_same(current, full(role, "x.yaml", text, rules))
        if number == 1:  # an open quote: libyaml's report of the document, found in that item
            assert [p.code for p in current.problems] == ["yaml-syntax"]


@pytest.mark.parametrize("role", ["rubric", "cases"])
def test_what_is_under_a_cursor_right_after_a_keystroke_needs_no_analysis(rules: Rules, role: Role) -> None:
    """Hover's view before the debounce lets the analysis run: inside the edited item (its kind
    typed anew, in a rubric), before it and after it, every cursor finds what the analysis would."""
    text = document(role, [0, 1, 2, 3, 4, 5, 6] if role == "rubric" else [0, 1, 2, 3])
    current = analyse(role, "x.yaml", text, rules)
    where = text.index("\n", text.index("kind: regex" if role == "rubric" else "  - id: b"))
    for typed in "abc":
        edits = [Edit(where, 0, typed)]
        text = text[:where] + typed + text[where:]
        where += 1
        cursors_count = len(list(cursors(text)))
        full = analyse(role, "x.yaml", text, rules)
        assert assert_peeks_agree(current, edits, text, full) > cursors_count * 0.9
        current = update(current, edits, rules, LineIndex(text))


@pytest.mark.parametrize("role", ["rubric", "cases"])
def test_typing_a_word_in_one_item_checks_no_other(
    rules: Rules, monkeypatch: pytest.MonkeyPatch, role: Role
) -> None:
    """A keystroke inside a value, which changes nothing other items or the summary read of it,
    carries over the rules across items and the summary: they are not computed again."""
    text = document(role, [0, 1, 2, 3, 4, 5, 6] if role == "rubric" else [0, 1, 2, 3])
    current = analyse(role, "x.yaml", text, rules)
    where = text.index("Tone 😀" if role == "rubric" else "plain 😀") + 4
    expected = []
    for typed in "abc":
        text = text[:where] + typed + text[where:]
        expected.append((text, [Edit(where, 0, typed)], analyse(role, "x.yaml", text, rules)))
        where += 1

    def across_items(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the rules across items were applied again")

    monkeypatch.setattr(whole_document, "rubric_lints", across_items)
    monkeypatch.setattr(whole_document, "lint_cases", across_items)
    for new_text, edits, full in expected:
        current = update(current, edits, rules, LineIndex(new_text))
        assert_same(current, full)


def test_typing_at_the_end_of_a_list_that_ends_the_text_reads_its_last_item_alone(
    rules: Rules, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where new cases are written: at the end of a cases file whose last case ends the text."""
    text = document("cases", [0, 1, 2])  # an odd count: no final line break
    current = analyse("cases", "x.yaml", text, rules)
    full = incremental.analyse

    def whole(*args: Any, **kwargs: Any) -> Analysis:
        raise AssertionError("the document was read whole")

    monkeypatch.setattr(incremental, "analyse", whole)
    for typed in "fail":
        edits = [Edit(len(text), 0, typed)]
        text += typed
        expected = full("cases", "x.yaml", text, rules)
        assert assert_peeks_agree(current, edits, text, expected) > len(list(cursors(text))) * 0.9
        current = update(current, edits, rules, LineIndex(text))
        assert_same(current, expected)


def test_an_edit_across_the_reference_limit_reads_the_document_whole(
    rules: Rules, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below the limit the reference parser decides odd keys, past it libyaml does: the items
    read on one side are not taken over to the other."""
    text = document("rubric", [0, 1, 2, 3])
    monkeypatch.setattr(yamltree, "REFERENCE_LIMIT", len(text) - 1)
    current = analyse("rubric", "x.yaml", text, rules)
    full = incremental.analyse
    whole: list[str] = []

    def counted(role: Role, path: str, new_text: str, *args: Any) -> Analysis:
        whole.append(new_text)
        return full(role, path, new_text, *args)

    monkeypatch.setattr(incremental, "analyse", counted)
    where = text.index("sorry")
    text = text[:where] + text[where + 2 :]
    current = update(current, [Edit(where, 2, "")], rules, LineIndex(text))
    assert whole == [text]
    assert_same(current, full("rubric", "x.yaml", text, rules))
