"""SPEC section 6: every input gets an answer with a precise range, never a traceback."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from ai_eval_lsp.core.yamltree import MAX_DEPTH, REFERENCE_LIMIT, parse
from ai_eval_lsp.project.project import Project

VALID = 'id: ok\nversion: "1.0"\nchecks:\n  - {kind: must_contain_any, values: [a]}\nscoring: {combine: all_pass}\n'


def codes_and_starts(project: Project, path: Path, data: bytes) -> list[tuple[str, int, int]]:
    analysis = project.analyse(path, data)
    return [(p.code, p.span.start.line, p.span.start.column) for p in analysis.problems]


def test_invalid_utf8_is_reported_at_the_byte_and_the_rest_still_checked(
    project: Project, tmp_path: Path
) -> None:
    data = VALID.replace("version", "label: caf\xff\nversion").encode("latin-1")
    found = codes_and_starts(project, tmp_path / "x.rubric.yaml", data)
    # 0-based line 1 is the label; the byte follows the 10 characters of "label: caf"
    assert found == [("yaml-syntax", 1, 10)]
    assert "not valid UTF-8" in project.analyse(tmp_path / "x.rubric.yaml", data).problems[0].message


def test_thousands_of_levels_of_nesting_get_one_problem(project: Project, tmp_path: Path) -> None:
    """10,000 levels of flow lists; 2,000 of block lists (4 MB: 10,000 would take 100 MB of
    indentation), ten times the limit and past the reference parser's."""
    for text in (
        "label: " + "[" * 10_000 + "]" * 10_000 + "\n",
        "label:\n" + "".join("  " * i + "- \n" for i in range(1, 2_000)),
    ):
        analysis = project.analyse(tmp_path / "deep.rubric.yaml", text.encode())
        assert [p.code for p in analysis.problems] == ["yaml-syntax"]
        assert f"more than {MAX_DEPTH} levels" in analysis.problems[0].message


def test_both_parsers_stop_deep_nesting_at_the_same_place() -> None:
    text = "label: " + "[" * 10_000 + "]" * 10_000 + "\n"
    fast, reference = parse(text, "fast"), parse(text, "reference")
    assert fast.problems == reference.problems
    # the block mapping is level 1, so the first flow list past the limit opens at column 6 + MAX_DEPTH
    assert fast.problems[0].span.start.column == 7 + MAX_DEPTH - 1


def test_a_ten_megabyte_rubric_is_checked(project: Project, tmp_path: Path) -> None:
    check = '  - {kind: must_contain_any, values: ["' + "x" * 200 + '"]}\n'
    text = (
        'id: big\nversion: "1.0"\nchecks:\n'
        + check * (10_000_000 // len(check))
        + "  - {kind: regexp}\nscoring: {combine: all_pass}\n"
    )
    assert len(text) > 10_000_000
    started = time.monotonic()
    found = codes_and_starts(project, tmp_path / "big.rubric.yaml", text.encode())
    # the kind value follows the 11 characters of "  - {kind: " on the second-to-last line
    assert found == [("unknown-kind", text.count("\n") - 2, 11)]
    assert time.monotonic() - started < 120  # bounded, with a generous margin


def test_a_big_rubric_past_the_reference_limit_reports_libyamls_error(
    project: Project, tmp_path: Path
) -> None:
    check = "  - {kind: must_contain_any, values: [x]}\n"
    body = check * (REFERENCE_LIMIT // len(check) + 1)
    broken = f'id: big\nversion: "1.0"\nchecks:\n{body}  - {{kind: [unclosed\n{body}'
    assert len(broken) > REFERENCE_LIMIT
    analysis = project.analyse(tmp_path / "broken.rubric.yaml", broken.encode())
    line = broken[: broken.index("  - {kind: [unclosed")].count("\n")
    assert [(p.code, p.span.start.line) for p in analysis.problems] == [("yaml-syntax", line)]  # the `[`
    assert (
        analysis.problems[0].message
        == "YAML syntax error: this `[` is never closed: add `]` where the list ends"
    )


def test_the_cli_answers_every_bad_input_without_a_traceback(tmp_path: Path) -> None:
    inputs = {
        "utf8.rubric.yaml": b"id: \xff\xfe\n",
        "nul.rubric.yaml": b"id: a\x00b\n",
        "docs.rubric.yaml": b"a: 1\n---\nb: 2\n",
        "scalar.rubric.yaml": b"just a string\n",
        "tabs.rubric.yaml": b"id:\n\t- x\n",
        "dupes.rubric.yaml": b"id: a\nid: b\n",
        "alias.rubric.yaml": b"a: &a [*a]\n",
        "tag.rubric.yaml": b"id: !!binary aGk=\n",
        "bom.rubric.yaml": b"\xef\xbb\xbfid: a\n",
        "aliaskey.rubric.yaml": b"a: &a 1\n*a : x\n[1, 2]: y\n",
    }
    for name, data in inputs.items():
        (tmp_path / name).write_bytes(data)
    result = subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", "--root", str(tmp_path), "check", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    for name in inputs:
        assert f"{name}:" in result.stdout


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            'id: a\nchecks:\n  - {kind: must_contain_any, values: ["x", "y"\n  - {kind: regex}\n',
            (2, 37),
            "this `[` is never closed: add `]` where the list ends",
        ),
        (
            'id: a\nchecks:\n  - {kind: regex, pattern: "x"\n  - id: b\n',
            (2, 4),
            "this `{` is never closed: add `}` where the mapping ends",
        ),
        ("id: a\nlabel: 'hello\nversion: x\n", (1, 7), "this `'` is never closed: add the closing `'`"),
        (
            "id: a\nlabel\nversion: x\n",
            (1, 0),
            "`label` is not followed by `:`: write `label: value`, or remove the line",
        ),
        (
            "id: a\nchecks:\n\t- id: x\n",
            (2, 0),
            "a tab character: YAML indents with spaces only; replace it with spaces",
        ),
        (
            "id: a\nlabel: Note: this is it\n",
            (1, 11),
            '`: ` inside a value that is not quoted: quote the whole value (`label: "Note: this is it"`)',
        ),
        (
            "id: a\nchecks:\n  - id: x\n    kind: regex\n   pattern: y\n",
            (4, 3),
            "this line is indented differently from the lines of its block (the block from line 3, column 3): "
            "give it the same indentation as its siblings",
        ),
        (
            'id: a\nlabel: "hello\nversion: "1.0"\n',
            (2, 10),
            "text where a key or a list item was expected: an earlier line may hold a quote that is never "
            "closed, or this line is indented differently from its block",
        ),
    ],
)
def test_yaml_syntax_errors_say_what_is_wrong_where_the_fix_goes(
    text: str, where: tuple[int, int], message: str
) -> None:
    for parser in ("fast", "reference"):
        (problem,) = parse(text, parser).problems
        assert (problem.code, (problem.span.start.line, problem.span.start.column)) == ("yaml-syntax", where)
        assert problem.message == f"YAML syntax error: {message}"
