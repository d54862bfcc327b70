"""The line-by-line reader of plain block YAML builds exactly the tree the composer builds from
libyaml's events (values, ranges, styles, key order), or leaves the document to the composer; and
it reads the documents authors write, so the first analysis of a big one takes the quick path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, examples
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rubrics import realistic, rubric

from ai_eval_lsp.core import blockyaml
from ai_eval_lsp.core.yamltree import Node, ParseResult, parse, read_fast

ROOT = Path(__file__).parents[2]


def shape(node: Node) -> Iterator[tuple[Any, ...]]:
    """Every field of every node, in document order (a value as written and typed)."""
    yield (
        type(node.value).__name__,
        repr(node.value) if node.entries is None and node.items is None else None,
        node.line,
        node.column,
        node.start_index,
        node.end_line,
        node.end_column,
        node.end_index,
        node.style,
    )
    if node.entries is not None:
        yield ("keys", list(node.entries), list(node.value))
        for entry in node.entries.values():
            yield from shape(entry.key)
            yield from shape(entry.value)
    if node.items is not None:
        yield ("items", len(node.items), len(node.value))
        for item in node.items:
            yield from shape(item)


def assert_read_alike(text: str) -> bool:
    """Whether the block reader read `text`; when it did, as the composer does."""
    read = blockyaml.read(text)
    if read is None:
        return False
    composed = read_fast(text, defer_odd_keys=True)
    assert isinstance(composed, ParseResult), f"the composer rejects what the block reader read: {composed}"
    assert composed.problems == [], "the block reader read a document with problems"
    assert composed.root is not None
    assert list(shape(read)) == list(shape(composed.root))
    return True


def yaml_files() -> list[Path]:
    return sorted(
        path
        for folder in (FIXTURES, ROOT / "examples", ROOT / "docs")
        for path in folder.rglob("*.y*ml")
        if path.suffix in (".yaml", ".yml")
    )


@pytest.mark.parametrize("path", yaml_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_repository_s_yaml_reads_alike(path: Path) -> None:
    assert_read_alike(path.read_bytes().decode("utf-8", errors="replace"))


def test_the_documents_authors_write_take_the_quick_path() -> None:
    texts = [
        realistic(2),
        rubric(20),
        *(path.read_text() for path in sorted((ROOT / "examples").rglob("*.yaml"))),
    ]
    assert all(assert_read_alike(text) for text in texts)
    assert parse(realistic(2)).parser == "fast"


def test_a_flow_collection_written_again_is_read_alike_where_it_recurs() -> None:
    flow = '{tags: [cx, "q"], n: {m: [1, {}]}}'
    text = f"a: {flow}\nb:\n  c: {flow}  # again\n  d:\n    - {flow}\n    - [x, {flow}]\ne: {flow}\n"
    assert assert_read_alike(text)
    read = blockyaml.read(text)
    assert read is not None
    first, last = read.value["a"], read.value["e"]
    assert first == last and first is not last and first["tags"] is not last["tags"]


@pytest.mark.parametrize(
    "text",
    [
        "a: |+\n  kept\n\n",  # a block scalar keeping its final line breaks
        "a: |2\n   indented\n",  # an indentation indicator
        "a: >\n  b\n    c\n",  # a more indented line in a folded scalar
        "a: |\n\n  b\n",  # a blank line before a block scalar's text
        "a: >\n  b\n   \n",  # spaces past its indentation in a folded scalar
        "a: |\nb: c\n",  # an empty block scalar
        "a: b\n  # c\n  d\n",  # a plain value going on after a comment
        "a: b\n  c: d\n",  # a mapping libyaml rejects
        "a: 'b\n  c'\n",  # a quoted one
        'a: "\\d+"\n',  # an escape libyaml rejects
        'a: "\\ud800"\n',  # a surrogate
        "a: &x 1\nb: *x\n",  # an anchor and an alias
        "a: !!str 1\n",  # a tag
        "a: 1\na: 2\n",  # a repeated key
        "a: b: c\n",  # a mapping libyaml rejects
        "a: [b, c\n",  # a flow list going on
        "a: [b: c]\n",  # a pair in a flow list
        "a: [b, ]\n",  # a trailing comma
        "a:\tb\n",  # a tab
        "a: b\r\nc: d\r\n",  # CRLF
        "--- \na: b\n",  # a document marker
        "- a\n- b\n",  # a list at the top
        "a:\n  -\n",  # an empty item
        "? a\n: b\n",  # an explicit key
        "a: b # c: d\n  e: f\n",  # indented as no block is
        "a: 'b' c\n",  # more after a quoted value
    ],
)
def test_what_it_does_not_read_goes_to_the_composer(text: str) -> None:
    assert blockyaml.read(text) is None
    assert parse(text).parser in ("fast", "reference")  # and the composer reads it as before


LONG_KEY = "k" * 1100
"""Past the 1,024 characters libyaml takes for a key on one line."""


@pytest.mark.parametrize(
    ("text", "at"),
    [
        pytest.param(f"{LONG_KEY}: b\n", (0, 1100), id="block key"),
        pytest.param(f"a:\n  {LONG_KEY}: b\n", (1, 1102), id="nested block key"),
        pytest.param(f"a: {{{LONG_KEY}: b}}\n", (0, 3), id="flow key"),
    ],
)
def test_a_key_longer_than_libyaml_takes_is_the_composers_syntax_error(
    text: str, at: tuple[int, int]
) -> None:
    assert blockyaml.read(text) is None
    (problem,) = parse(text).problems
    assert problem.code == "yaml-syntax"
    assert (problem.span.start.line, problem.span.start.column) == at


# --- generated documents -----------------------------------------------------------------------

SAFE = "abcxyz_09 .é😀"
TRICKY = SAFE + ":#'\"-[]{},&*!|>%@?~\\\t"


def scalars(alphabet: str) -> st.SearchStrategy[str]:
    plain = st.text(alphabet=alphabet, min_size=1, max_size=8)
    if alphabet != TRICKY:  # an empty flow value is the composer's to read
        plain = plain.filter(str.strip)
    words = st.sampled_from(["true", "null", "~", "0.5", "-3", "1e3", "0x1F", "0o7", ".inf", "yes", "-x"])
    escapes = st.sampled_from(
        ["\\n", "\\t", '\\"', "\\\\", "\\/", "\\x41", "\\u00e9", "\\U0001F600", "\\ ", "\\N", "\\_"]
    )
    if alphabet == TRICKY:
        escapes |= st.sampled_from(["\\d", "\\'", "\\x4", "\\uD800", "\\U00110000", "\\"])
    double = st.lists(
        st.one_of(st.text(alphabet=alphabet.replace('"', "").replace("\\", ""), max_size=3), escapes),
        max_size=3,
    )
    quoted = st.one_of(
        double.map(lambda parts: '"' + "".join(parts) + '"'),
        st.text(alphabet=alphabet + "'", max_size=6).map(lambda s: "'" + s.replace("'", "''") + "'"),
    )
    return st.one_of(plain, words, quoted)


def flows(alphabet: str) -> st.SearchStrategy[str]:
    item = scalars(alphabet.replace(",", "").replace(":", "").replace("#", ""))
    space = st.sampled_from(["", " ", "  "])

    def collections(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        listed = st.tuples(st.lists(st.tuples(space, inner, space), max_size=3)).map(
            lambda t: "[" + ",".join(a + v + b for a, v, b in t[0]) + "]"
        )
        mapped = st.lists(st.tuples(item, inner), max_size=3).map(
            lambda pairs: "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
        )
        return st.one_of(listed, mapped)

    return st.recursive(item, collections, max_leaves=6).filter(lambda s: s[:1] in "[{")


@st.composite
def documents(draw: st.DrawFn, alphabet: str) -> str:
    """A block document: keys and items at random indentations, values of every kind, comments,
    blank lines and trailing spaces, with or without a final line break."""
    lines: list[str] = []
    keys = st.text(alphabet=alphabet.replace("\t", ""), min_size=1, max_size=6)
    if alphabet != TRICKY:  # a key ending in a space is the composer's to read
        keys = keys.map(str.strip).filter(bool)
    comment = st.sampled_from(["", "", " # note", "  #: x", *(["#x"] if alphabet == TRICKY else [])])
    # Spaces past a folded scalar's indentation are the composer's to read.
    blank_lines = st.sampled_from(["", "# c", "  # c", *(["   "] if alphabet == TRICKY else [])])
    block_headers = st.sampled_from(
        ["|", ">", "|-", ">-", "| # c", *(["|+", ">2", "|x"] if alphabet == TRICKY else [])]
    )

    def block(indent: int, depth: int, as_list: bool) -> None:
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.integers(0, 6)) == 0:
                lines.append(draw(blank_lines))
            head = " " * indent + ("- " if as_list else "")
            key = "" if as_list and draw(st.booleans()) else draw(keys) + ":"
            kind = draw(st.integers(0, 5 if depth < 3 else 2))
            if kind == 5:
                lines.append(head + key + " " + draw(block_headers))
                texts = draw(st.lists(st.text(alphabet=alphabet, max_size=8), max_size=4))
                if alphabet == TRICKY:  # indented anyhow, blank lines with spaces, nothing at all
                    inner = len(head) + draw(st.sampled_from([2, 2, 1, 4, 0]))
                    for text in texts:
                        lines.append(" " * (inner + draw(st.sampled_from([0, 0, 0, 1, 2, -1]))) + text)
                else:  # its text indented as its first line's, blank lines empty
                    for number, text in enumerate(texts or ["x"]):
                        text = text.strip() or ("x" if number == 0 else "")
                        lines.append(" " * (len(head) + 2) + text if text else "")
            elif kind == 0:
                lines.append(head + key + " " + draw(scalars(alphabet)) + draw(comment))
                for _ in range(draw(st.integers(0, 2) if draw(st.booleans()) else st.just(0))):
                    # The value going on to the next lines, after blank lines or not.
                    lines.extend([""] * draw(st.integers(0, 2) if alphabet == TRICKY else st.just(0)))
                    text = draw(st.text(alphabet=alphabet, min_size=1, max_size=8))
                    if alphabet == TRICKY:
                        lines.append(" " * (len(head) + draw(st.sampled_from([2, 1, 0, -1]))) + text)
                    else:
                        lines.append(" " * (len(head) + 2) + (text.strip() or "x"))
            elif kind == 1:
                lines.append(head + key + " " + draw(flows(alphabet)) + draw(comment))
            elif kind == 2 and key:
                lines.append(head + key + draw(st.sampled_from(["", " ", " # empty"])))
            elif key:
                lines.append(head + key)
                inner = (len(head) if as_list else indent) + draw(st.sampled_from([2, 2, 3, 0]))
                block(inner, depth + 1, as_list=kind == 4)
            else:
                lines.append(head + draw(scalars(alphabet)))
            if as_list and key and draw(st.booleans()):
                lines.append(" " * len(head) + draw(keys) + ": " + draw(scalars(alphabet)))

    block(0, 0, as_list=False)
    text = "\n".join(line + draw(st.sampled_from(["", "", " "])) for line in lines)
    return text + draw(st.sampled_from(["\n", "", "\n\n", "\n# end"]))


@settings(max_examples=examples(600), deadline=None)
@given(documents(TRICKY))
@example("a: b\nc:\n  - d\n  - e: f\n    g: [h, 'i''j', {k: 1}]\nl:\n")
@example("a:\n  b:\n    c: 1\n  # note\nd: 2  # e")
@example("a:\n- b\n- c: [d]\n  e:\n  - f\ng: h\n")  # lists as indented as their keys
@example("a: |\n  b\n\n   c\n  # d\n\n# e\nf: >-\n  g\n  h\n\n  i\n- j")  # block scalars
@example("a:\n  - |\n    b\n  - >\n    c\n")
@example("0: |\n  x\n   \n9:\n")  # spaces past the indentation are text
@example("a: |\n  x\n   ")  # a last line of spaces past the indentation, then the end of the text
@example("a: >\n  x\n\n  y")  # a folded blank line, and no final line break
@example("a: {" + "x" * 1025 + ": b}\n")  # a flow key longer than libyaml takes
@example("a: b\n  c\n\n   d - e [f]\ng:\n  - h\n    i\n  - j: k\n     l\n")  # plain values going on
@example('a: "b\\"c\\\\d\\x41\\u00e9\\n"\n')  # escapes
def test_generated_documents_read_alike(text: str) -> None:
    assert_read_alike(text)


@settings(max_examples=examples(200), deadline=None)
@given(documents(SAFE))
def test_documents_of_plain_words_take_the_quick_path(text: str) -> None:
    composed = read_fast(text, defer_odd_keys=True)
    if isinstance(composed, ParseResult) and not composed.problems:  # e.g. no repeated key
        assert assert_read_alike(text), text
