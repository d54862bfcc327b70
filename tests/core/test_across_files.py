"""A document's problems against the workspace after edits, to it and to the rubrics it names, are
those of a full analysis of it against the same rubrics (they are kept per case and per check
between analyses)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import examples
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_incremental import assert_same, edit_steps, edits_of

from ai_eval_lsp.core.analysis import Analysis, Edit, Rules, analyse, update
from ai_eval_lsp.core.analysis import document as whole_document
from ai_eval_lsp.core.index import RubricIndex
from ai_eval_lsp.core.problems import Problem
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.project.project import Project

CASES = (
    "  - id: a\n    question: {id: q1, input: hi, expected: {reference: yes, title: T}}\n    response: ok\n",
    "  - id: b\n    question:\n      id: q2\n      expected:\n        reference: [one, two]\n    response: ok\n",
    "  - id: c\n    question: {id: q3, expected: {title: only a title}}\n    response: ok\n",
    "  - question: {id: q4}\n    response: no id\n",
    "  - id: a\n    question: 7\n    response: not a mapping\n",
)
SOURCES = ("expected.reference", "expected.title", "expected.reference", "input", "expected.0")
"""What the rubrics' target_match checks read: each rubric reads some of these."""


@pytest.fixture(scope="module")
def rules(project: Project) -> Rules:
    return project.rules


def rubrics(rules: Rules, reads: list[int]) -> RubricIndex:
    """The workspace's rubrics: `tone`, whose target_match checks read `reads`, and `sub`, which
    `tone` runs through a composite and which reads the title."""
    checks = "".join(
        f"  - {{id: m{n}, kind: target_match, source: {SOURCES[i % len(SOURCES)]}}}\n"
        for n, i in enumerate(reads)
    )
    tone = f'id: tone\nversion: "1.0"\nchecks:\n{checks}  - {{kind: composite, rubric: sub}}\nscoring: {{combine: all_pass}}\n'
    sub = 'id: sub\nversion: "1.0"\nchecks:\n  - {id: t, kind: target_match, source: expected.title}\nscoring: {combine: all_pass}\n'
    return RubricIndex(
        analyse("rubric", path, text, rules).summary
        for path, text in (("tone.rubric.yaml", tone), ("sub.rubric.yaml", sub))
    )


def described(problems: list[Problem]) -> list[tuple[Any, ...]]:
    return [(p.code, p.message, p.span, p.data, p.related) for p in problems]


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    items=st.lists(st.integers(0, 9), min_size=1, max_size=6),
    steps=edit_steps,
    reads=st.lists(st.lists(st.integers(0, 9), max_size=4), min_size=1, max_size=4),
)
@example(
    items=[0, 1, 2],
    steps=[(0.6, False, 9, "x", False), (0.3, False, 0, "\n    ", False)],
    reads=[[0], [1, 3], [0, 2]],
)
def test_problems_against_rubrics_after_edits_are_those_of_a_full_analysis(
    rules: Rules, items: list[int], steps: Any, reads: list[list[int]]
) -> None:
    text = "rubric: tone\ncases:\n" + "".join(CASES[i % len(CASES)] for i in items)
    current: Analysis = analyse("cases", "x.cases.yaml", text, rules)
    for number, (new_text, edits) in enumerate(edits_of(text, steps)):
        index = rubrics(rules, reads[number % len(reads)])  # the rubric edited meanwhile
        current.problems_in(index)
        current = update(current, edits, rules, LineIndex(new_text))
        full = analyse("cases", "x.cases.yaml", new_text, rules)
        assert described(current.problems_in(index)) == described(full.problems_in(index))


def test_a_keystroke_in_one_case_changes_that_case_s_problems_alone(rules: Rules) -> None:
    text = "rubric: tone\ncases:\n" + "".join(
        CASES[n % 3].replace("id: ", f"id: n{n}_", 1) for n in range(30)
    )
    index = rubrics(rules, [0, 1, 0])
    before = analyse("cases", "x.cases.yaml", text, rules)
    found = before.problems_in(index)
    assert {p.code for p in found} == {"unresolved-source"}
    start = text.index("reference: yes", len(text) // 2)
    edited = text[:start] + "answer" + text[start + len("reference") :]
    after = update(before, [Edit(start, len("reference"), "answer")], rules, LineIndex(edited))
    now = after.problems_in(index)
    assert described(now) == described(analyse("cases", "x.cases.yaml", edited, rules).problems_in(index))
    assert len(now) == len(found) + 2
    assert [p.message for p in now if p not in found] == [
        "case `n15_a`: the question has no string or list of strings at `expected.reference`, which "
        f"target_match check `{check}` of `tone@1.0` reads"
        for check in ("m0", "m2")
    ]


def renamed(text: str, check: int, name: str) -> tuple[str, Edit]:
    """The text with check `check`'s id replaced by `name` (empty: no id), and the edit."""
    start = 0
    for _ in range(check + 1):
        start = text.index("  - id:", start) + len("  - id:")
    end = text.index("\n", start)
    return text[:start] + (f" {name}" if name else " ") + text[end:], Edit(
        start, end - start, f" {name}" if name else " "
    )


RUBRIC = (
    'id: r\nversion: "1.0"\nchecks:\n'
    + "".join(
        f"  - id: {name}\n    kind: {kind}\n    {field}\n"
        for name, kind, field in (
            ("a", "regex", "pattern: x"),
            ("b", "composite", "rubric: tone"),
            ("a", "target_match", "source: expected.reference"),
            ("c", "llm_judge", "description: judge"),
            ("d", "composite", "rubric: nowhere"),
            ("b", "must_contain_any", "values: [x]"),
        )
    )
    + "scoring:\n  combine: weighted_avg\n  weights: {a: 1, e: 2}\n"
)


@settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    renames=st.lists(
        st.tuples(st.integers(0, 5), st.sampled_from(["a", "b", "c", "d", "e", "f", "ab", ""])),
        min_size=1,
        max_size=12,
    )
)
@example(renames=[(0, "b"), (1, "c"), (2, ""), (0, "a")])
def test_renaming_checks_gives_what_a_full_analysis_gives(
    rules: Rules, renames: list[tuple[int, str]]
) -> None:
    """Ids renamed, repeated, taken out and given back: the repeated ids, the weights that name
    no check and the summary's check ids, composites and sources, as a full analysis has them."""
    text = RUBRIC
    current = analyse("rubric", "x.yaml", text, rules)
    index = rubrics(rules, [0])
    for check, name in renames:
        text, edit = renamed(text, check, name)
        current = update(current, [edit], rules, LineIndex(text))
        full = analyse("rubric", "x.yaml", text, rules)
        assert_same(current, full)
        assert described(current.problems_in(index)) == described(full.problems_in(index))


def test_typing_a_check_s_id_applies_no_rule_across_checks_again(
    rules: Rules, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typing a new check's id, then renaming it to an id another check holds: what it changes
    (its id's repeated-id problems, the summary's entries of that check) is updated in place of
    the rules across checks and the summary made again from every check."""
    text = RUBRIC.replace("checks:\n", "checks:\n  - id: \n    kind: regex\n    pattern: y\n", 1)
    current = analyse("rubric", "x.yaml", text, rules)
    where = text.index("  - id: ") + len("  - id: ")
    expected = []
    for typed in ("n", "e", "w"):
        text = text[:where] + typed + text[where:]
        expected.append((text, [Edit(where, 0, typed)]))
        where += 1
    renamed_to_a = text[: where - 3] + "a" + text[where:]
    expected.append((renamed_to_a, [Edit(where - 3, 3, "a")]))
    expected = [(new, edits, analyse("rubric", "x.yaml", new, rules)) for new, edits in expected]

    def across_checks(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the rules across checks, or the summary, were made from every check")

    monkeypatch.setattr(whole_document, "rubric_lints", across_checks)
    monkeypatch.setattr(whole_document, "rubric_summary", across_checks)
    for new_text, edits, full in expected:
        current = update(current, edits, rules, LineIndex(new_text))
        assert_same(current, full)
    assert [p.message for p in current.problems if p.message.startswith("the check id `a`")] == [
        "the check id `a` is already used at line 4; check ids must be unique in a rubric"
    ] * 2  # the new check holds it first now
