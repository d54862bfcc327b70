"""Where a cursor is for completion: a table of cursor positions, in valid and broken YAML."""

from __future__ import annotations

import re
import time

import pytest
from contract import CURSOR_RUBRIC
from hypothesis import example, given
from hypothesis import strategies as st

from ai_eval_lsp.core import context
from ai_eval_lsp.core.context import completion_context

ZERO_INDENT = """id: x
checks:
- id: a
  kind: must_contain_any
  
- kind: 
scoring: {combine: all_pass}
"""

BROKEN_ELSEWHERE = """id: x
label: [unclosed
checks:
  - kind: target_match
    mo
"""


@pytest.mark.parametrize(
    ("text", "line", "column", "path", "is_value", "partial", "siblings"),
    [
        (
            CURSOR_RUBRIC,
            5,
            4,
            ("checks", 0),
            False,
            "",
            {"id": "a", "kind": "regex"},
        ),  # empty line in a check
        (CURSOR_RUBRIC, 6, 10, ("checks", 1, "kind"), True, "", None),  # a kind value
        (CURSOR_RUBRIC, 7, 4, ("checks", 1), False, "", {}),  # after `- `
        (CURSOR_RUBRIC, 8, 19, ("checks", 1), False, "p", {"kind": "regex"}),  # flow style
        (CURSOR_RUBRIC, 10, 11, ("scoring", "combine"), True, "", None),  # an enum value
        (CURSOR_RUBRIC, 12, 4, ("scoring", "weights"), False, "", {}),  # a weight key
        (CURSOR_RUBRIC, 13, 0, (), False, "", None),  # the end of the file
        (ZERO_INDENT, 4, 2, ("checks", 0), False, "", {"id": "a", "kind": "must_contain_any"}),  # zero indent
        (ZERO_INDENT, 5, 8, ("checks", 1, "kind"), True, "", None),
        (BROKEN_ELSEWHERE, 4, 6, ("checks", 0), False, "mo", {"kind": "target_match"}),  # the file is broken
    ],
)
def test_cursor_table(
    text: str,
    line: int,
    column: int,
    path: tuple[object, ...],
    is_value: bool,
    partial: str,
    siblings: dict[str, object] | None,
) -> None:
    context = completion_context(text, line, column)
    assert context is not None
    assert (context.path, context.is_value, context.partial) == (path, is_value, partial)
    if siblings is not None:
        assert context.siblings == siblings


def test_a_cursor_past_the_end_has_no_context() -> None:
    assert completion_context("id: x\n", 5, 0) is None


# What completion reads before the cursor, as two regular expressions say it; the context scans
# the line instead, in linear time (these backtrack quadratically on long hyphenated words).
VALUE_BEFORE = re.compile(r"(?:^|[\s{,\-])([A-Za-z_][\w-]*):\s*([^\s,{}\[\]]*)$")
KEY_BEFORE = re.compile(r"(?:^\s*(?:-\s+)*|[{,]\s*)([A-Za-z_][\w-]*)?$")


@given(st.text(alphabet="ab_1-: ,{}[]\té", max_size=14))
@example("kind:")
@example("  - foo")
@example("x - foo")
@example("a-b-c: x")
def test_the_line_is_read_as_the_reference_expressions_read_it(before: str) -> None:
    value = VALUE_BEFORE.search(before)
    assert context._value_before(before) == (value.group(2) if value else None)
    if value is None:
        key = KEY_BEFORE.search(before)
        assert context._key_before(before) == ((key.group(1) or "") if key else None)


@pytest.mark.parametrize("line", ["a-" * 30_000 + "a", "  - kind: " + "x-" * 500_000])
def test_a_very_long_line_is_read_in_time(line: str) -> None:
    started = time.perf_counter()
    completion_context(f"id: x\nchecks:\n{line}\n", 2, len(line))
    assert time.perf_counter() - started < 5  # quadratic, it took minutes


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_top_level_key_in_a_big_rubric_sees_only_the_top_level(newline: str) -> None:
    checks = "".join(
        f"  - id: c{n}{newline}    kind: regex{newline}    pattern: x{newline}" for n in range(5000)
    )
    text = f"id: big{newline}checks:{newline}{checks}{newline}scoring: {{combine: all_pass}}{newline}"
    line = text.count(newline) - 2  # the empty line before `scoring`
    context = completion_context(text, line, 0)
    assert context is not None and context.path == () and not context.is_value
    assert context.siblings == {"id": "big", "checks": None, "scoring": {"combine": "all_pass"}}
