"""Where a cursor is for completion: a table of cursor positions, in valid and broken YAML."""

from __future__ import annotations

import pytest
from contract import CURSOR_RUBRIC

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
