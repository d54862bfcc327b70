"""A text as editors count it: line breaks, position encodings, and edits applied in place."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ai_eval_lsp.core.text import LineIndex, code_points, split_lines, units

PIECES = ["a", "b", "\n", "\r", "\r\n", "é", "😀", "\u2028", "\x85"]
texts = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


@given(texts)
@example("a\rb\r\nc\n")
def test_lines_end_at_lf_crlf_and_cr_only(text: str) -> None:
    index = LineIndex(text)
    assert [index.line(n) for n in range(index.line_count)] == split_lines(text)
    assert all(char not in "".join(split_lines(text)) for char in "\r\n")
    assert text.count("\u2028") == "".join(split_lines(text)).count("\u2028")  # text, not a break


edits = st.tuples(texts, st.integers(0, 14), st.integers(0, 14), texts)


@given(edits)
@example(("a\r", 2, 2, "\nb"))  # joins the `\r` before it with the `\n` it inserts
@example(("a\r\nb", 2, 2, "x"))  # splits a `\r\n`
def test_an_edit_updates_the_index_as_a_fresh_one_would(edit: tuple[str, int, int, str]) -> None:
    text, start, end, new = edit
    start, end = sorted((min(start, len(text)), min(end, len(text))))
    edited = LineIndex(text).replace(start, end, new)
    fresh = LineIndex(text[:start] + new + text[end:])
    assert (edited.text, edited.starts) == (fresh.text, fresh.starts)


@pytest.mark.parametrize(
    ("encoding", "width"),
    [("utf-8", [1, 2, 4, 1]), ("utf-16", [1, 1, 2, 1]), ("utf-32", [1, 1, 1, 1])],
)
def test_columns_convert_between_code_points_and_the_clients_units(encoding: str, width: list[int]) -> None:
    line = "aé😀b"
    offsets = [sum(width[:n]) for n in range(len(line) + 1)]
    assert [units(line[:n], encoding) for n in range(len(line) + 1)] == offsets  # type: ignore[arg-type]
    assert [code_points(line, u, encoding) for u in offsets] == list(range(len(line) + 1))  # type: ignore[arg-type]


def test_positions_past_the_end_or_inside_a_character_are_clamped() -> None:
    index = LineIndex("ab😀\ncd")
    assert index.offset(0, 3, "utf-16") == 2  # inside the surrogate pair: its start
    assert index.offset(0, 99, "utf-16") == 3  # past the line's end: its end
    assert index.offset(7, 0, "utf-16") == len(index.text)  # past the last line: the end
    assert index.from_client(9, 9, "utf-16") == (1, 2)
