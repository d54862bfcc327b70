"""An analysis is a value: nothing that reads it changes it, nor does making the analyses after it
(which share its checks and cases, `core/items.py`), nor reading those. Every object an analysis
reaches is fingerprinted when it is made, and again after every read of it and of the analyses
after it, through random editing sessions: a reading handler may so read a snapshot's analysis
on any thread while the event loop makes and reads the next."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from conftest import examples
from core.test_incremental import TYPED, cursors, document, edit_steps, edits_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_eval_lsp.core.analysis import Analysis, Edit, Rules, analyse, at_after, at_before, update
from ai_eval_lsp.core.index import Role, RubricIndex, summarize
from ai_eval_lsp.core.lints import CrossFileMemo
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.core.yamltree import parse
from ai_eval_lsp.project.project import Project

TONE = (
    'id: tone\nversion: "1.0"\nchecks:\n'
    "  - {id: close, kind: target_match, source: expected.reference, mode: chrf}\n"
    "scoring: {combine: all_pass}\n"
)
"""The rubric the generated documents name: their composites and cases files are linted against
it (a cases file's questions against the source it reads)."""


@pytest.fixture(scope="module")
def rules(project: Project) -> Rules:
    return project.rules


@pytest.fixture(scope="module")
def rubrics() -> RubricIndex:
    return RubricIndex([summarize("tone.rubric.yaml", parse(TONE).root)])


def fingerprint(value: object) -> Any:
    """Everything reachable from a value, as plain data: each object's type and what it holds (its
    fields, slots or items, in order); an object met again, by when it was first met."""
    met: dict[int, int] = {}

    def of(value: object) -> Any:
        if value is None or isinstance(value, str | int | bytes):
            return value
        if isinstance(value, float):
            return repr(value)  # nan is not equal to itself
        if id(value) in met:
            return ("met", met[id(value)])
        met[id(value)] = len(met)
        kind = type(value).__qualname__
        if isinstance(value, dict):
            return kind, tuple((of(key), of(each)) for key, each in value.items())
        if isinstance(value, list | tuple):
            return kind, tuple(of(each) for each in value)
        if isinstance(value, set | frozenset):
            return kind, tuple(sorted(repr(each) for each in value))
        if dataclasses.is_dataclass(value):
            names = [each.name for each in dataclasses.fields(value)]
        else:
            slots = [getattr(cls, "__slots__", ()) for cls in type(value).__mro__]
            names = [name for each in slots for name in ((each,) if isinstance(each, str) else each)]
            names += list(getattr(value, "__dict__", {}))
        return kind, tuple(
            (name, of(getattr(value, name, None))) for name in names if not name.startswith("__")
        )

    return of(value)


def read_everything(analysis: Analysis, rubrics: RubricIndex) -> None:
    """Every read a feature makes of an analysis."""
    analysis.value  # noqa: B018 - a read (a null document, `---` alone, has a tree and no value)
    analysis.root  # noqa: B018 - a read, for what it may do
    for line, column in cursors(analysis.text):
        analysis.at(line, column)
    listed = analysis.listed()
    for number in range(-1, len(listed) + 1):
        analysis.item(number)
    analysis.problems_in(None)
    analysis.problems_in(rubrics)
    analysis.problems_in(rubrics, CrossFileMemo())  # what the session keeps changes, not the analysis
    if analysis.layout is not None:
        list(analysis.layout.found())


def peek_everywhere(previous: Analysis, edits: list[Edit], text: str) -> None:
    """What hover and completion read of an analysis before the next is made."""
    lines = LineIndex(text)
    for line, column in cursors(text):
        at_after(previous, edits, lines, line, column)
        at_before(previous, edits, lines, line, column)


def assert_unchanged(made: list[Analysis], prints: list[Any]) -> None:
    changed = [
        number
        for number, (analysis, was) in enumerate(zip(made, prints, strict=True))
        if fingerprint(analysis) != was
    ]
    assert not changed, f"analyses {changed} of {len(made)} changed"


def session(rules: Rules, rubrics: RubricIndex, role: Role, text: str, steps: Any) -> None:
    """An editing session: each analysis read every way, then the next made from it and read."""
    made = [analyse(role, "x.yaml", text, rules)]
    prints = [fingerprint(made[0])]
    for new_text, edits in edits_of(text, steps):
        previous = made[-1]
        read_everything(previous, rubrics)
        peek_everywhere(previous, edits, new_text)
        assert_unchanged(made, prints)
        made.append(update(previous, edits, rules, LineIndex(new_text)))
        prints.append(fingerprint(made[-1]))
        assert_unchanged(made, prints)
        read_everything(made[-1], rubrics)
        assert_unchanged(made, prints)


@pytest.mark.parametrize("role", ["rubric", "cases"])
@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(items=st.lists(st.integers(0, 20), min_size=1, max_size=6), steps=edit_steps)
def test_reading_an_analysis_or_making_the_next_changes_none(
    rules: Rules, rubrics: RubricIndex, role: Role, items: list[int], steps: Any
) -> None:
    session(rules, rubrics, role, document(role, items), steps)


@pytest.mark.parametrize("role", ["rubric", "cases"])
@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    items=st.lists(st.integers(0, 20), min_size=2, max_size=6),
    keys=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 2), st.sampled_from(TYPED)), min_size=1, max_size=20
    ),
)
def test_typing_within_lines_changes_no_analysis(
    rules: Rules, rubrics: RubricIndex, role: Role, items: list[int], keys: list[tuple[float, int, str]]
) -> None:
    """Keystrokes that move the items after them by offsets alone, as most do."""
    steps = [(where, False, removed, typed, False) for where, removed, typed in keys]
    session(rules, rubrics, role, document(role, items), steps)
