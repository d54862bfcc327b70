"""Completion and hover right after a keystroke that breaks one check's YAML: the full
analysis of the text has no tree then, so they answer from that check's last good reading, at
the place the text has it now."""

from __future__ import annotations

import pytest

from ai_eval_lsp.core.analysis import Edit, Rules, analyse, at_before, before_broken
from ai_eval_lsp.core.context import completion_context
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.core.yamltree import Node
from ai_eval_lsp.project.project import Project

RUBRIC = (
    'id: spaced\nversion: "1.0"\nchecks:\n'
    "  - id: one\n    kind: regex\n    pattern: '^x'\n    flags: i\n"
    "  - id: two\n    kind: must_contain_any\n    values: [a, b]\n"
    "  - id: three\n    kind: llm_judge\n    description: Judge 😀\n"
    "scoring: {combine: all_pass}\n"
)


@pytest.fixture(scope="module")
def rules(project: Project) -> Rules:
    return project.rules


def spaced(line: int) -> tuple[str, Edit]:
    """The rubric with one more space before the key on `line` (inside a check)."""
    at = LineIndex(RUBRIC).starts[line] + 4
    return RUBRIC[:at] + " " + RUBRIC[at:], Edit(at, 0, " ")


KEY_LINES = [n for n, line in enumerate(RUBRIC.split("\n")) if line.startswith("    ") and n != 4]
"""The lines of keys inside checks but a check's first key after `- id:` (there a space more is
still YAML)."""


def text_of(node: Node, text: str) -> str:
    return text[node.start_index : node.end_index]


@pytest.mark.parametrize("line", KEY_LINES)
def test_hover_in_a_check_a_keystroke_broke_reads_its_last_good_reading(rules: Rules, line: int) -> None:
    previous = analyse("rubric", "x.yaml", RUBRIC, rules)
    text, edit = spaced(line)
    assert analyse("rubric", "x.yaml", text, rules).tree is None  # the YAML is broken
    lines = LineIndex(text)
    for number in range(lines.line_count):
        for column in range(len(lines.line(number)) + 1):
            # Where the cursor was in the text before the space.
            was = previous.at(number, column - 1 if number == line and column > 4 else column)
            peeked = at_before(previous, [edit], lines, number, column)
            assert peeked is not None
            at = peeked.at
            if was is None or at is None:
                assert was is at is None
                continue
            assert (at.path, at.on_key, at.item) == (was.path, was.on_key, was.item)
            # What the text now holds there (with the space, where the edit is inside), on the
            # same line: hover's range moved with the text.
            for now, then in ((at.node, was.node), (at.key, was.key)):
                assert (now is None) == (then is None)
                if now is not None and then is not None:
                    inside = then.start_index < edit.start < then.end_index
                    held = RUBRIC[then.start_index : then.end_index]
                    if inside:
                        cut = edit.start - then.start_index
                        held = held[:cut] + " " + held[cut:]
                    assert text_of(now, text) == held and now.line == then.line


def test_completion_in_a_check_a_keystroke_broke_reads_its_last_good_reading(rules: Rules) -> None:
    """One more space before `flags:` in a regex check: the regex check's keys, as before it."""
    previous = analyse("rubric", "x.yaml", RUBRIC, rules)
    text, edit = spaced(6)
    lines = LineIndex(text)
    assert completion_context(lines, 6, 5, whole=False) is None
    before = before_broken(previous, [edit], lines, 6, 5)
    assert before is not None
    assert (before.lines.text, before.line, before.column) == (RUBRIC, 6, 4)
    context = completion_context(before.lines, before.line, before.column)
    assert context is not None
    assert (context.path[0], context.is_value, context.siblings["kind"]) == ("checks", False, "regex")


def test_an_item_that_still_reads_is_not_answered_from_before(rules: Rules) -> None:
    previous = analyse("rubric", "x.yaml", RUBRIC, rules)
    at = RUBRIC.index("'^x'") + 2
    text = RUBRIC[:at] + "y" + RUBRIC[at:]
    assert before_broken(previous, [Edit(at, 0, "y")], LineIndex(text), 5, 14) is None
