"""One rubric file per problem: each declares the exact code and range it must get, and no more."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, Expected, expectations

from ai_eval_lsp.core.problems import SEVERITY_OF_CODE
from ai_eval_lsp.core.validate import Engine
from ai_eval_lsp.project.project import Project

PROBLEM_FILES = sorted((FIXTURES / "problems").glob("*.yaml"))
WORKSPACE_FILES = sorted((FIXTURES / "workspaces").rglob("*.yaml"))


def found_problems(project: Project, path: Path) -> list[tuple[Expected, str]]:
    analysis = project.analyse(path, path.read_bytes(), project.role(path) or "rubric")
    index = project.index({path: analysis}).rubrics if "workspaces" in path.parts else None
    problems = analysis.problems_in(index)
    return [
        (
            Expected(
                p.code,
                (p.span.start.line + 1, p.span.start.column + 1),
                (p.span.end.line + 1, p.span.end.column + 1),
                "",
            ),
            p.message,
        )
        for p in problems
    ]


def check_file(project: Project, path: Path) -> None:
    expected = expectations(path)
    found = found_problems(project, path)
    assert [(e.code, e.start, e.end) for e, _ in found] == [
        (e.code, e.start, e.end) for e in sorted(expected, key=lambda e: (e.start, e.code))
    ], "\n".join(f"{e.code} {e.start}-{e.end} {m}" for e, m in found)
    for e in expected:
        # The whole message, as the user reads it: what is wrong, where, and how to fix it.
        messages = [m for f, m in found if (f.code, f.start, f.end) == (e.code, e.start, e.end)]
        assert e.fragment in messages, (e.fragment, messages)


@pytest.mark.parametrize("path", PROBLEM_FILES, ids=lambda p: p.stem)
def test_problem_fixture(project: Project, path: Path) -> None:
    check_file(project, path)


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("path", WORKSPACE_FILES, ids=lambda p: "/".join(p.parts[-2:]))
def test_workspace_fixture(path: Path, engine: Engine) -> None:
    """Each workspace with its own settings (`fragment_kinds` declares a kind whose schema uses
    the keywords the core schema does not), read and validated by each path alike."""
    check_file(Project.load(path.parent, parser=engine, engine=engine), path)


def test_every_code_of_this_engine_has_a_fixture() -> None:
    declared = {e.code for path in PROBLEM_FILES + WORKSPACE_FILES for e in expectations(path)}
    assert set(SEVERITY_OF_CODE) <= declared


MAIN = (
    'id: main\nversion: "1.0"\nchecks:\n  - {kind: composite, rubric: refund}\nscoring: {combine: all_pass}\n'
)


def composite_message(root: Path) -> str:
    project = Project.load(root)
    path = root / "main.rubric.yaml"
    analysis = project.analyse(path, path.read_bytes())
    (problem,) = analysis.problems_in(project.index({path: analysis}).rubrics)
    return problem.message


@pytest.mark.parametrize(
    ("head", "declared"),
    [
        ("id: refund", True),
        ("id: 'refund'  # the refund rubric", True),
        ('id:   "refund"  ', True),
        ("id: refund#2", False),  # YAML reads the plain scalar `refund#2`
        ("  id: refund", False),  # indented: not a top-level key
        ("id: Refund", False),  # not an id
        ("id: refund\nid: refund", False),  # two lines say it: the text does not tell
        ("# id: refund", False),
    ],
)
def test_a_rubric_file_that_cannot_be_read_is_known_by_its_id_line_alone(
    tmp_path: Path, head: str, declared: bool
) -> None:
    """A rubric whose YAML does not parse has no id; a composite naming it says that file cannot
    be read, and names it as the rubric meant when exactly one of its lines is `id: <the id>`."""
    (tmp_path / "ai-eval.toml").write_text("")
    (tmp_path / "main.rubric.yaml").write_text(MAIN)
    (tmp_path / "refund.rubric.yaml").write_text(f"{head}\nchecks: [\n")
    error_line = head.count("\n") + 2
    if declared:
        assert composite_message(tmp_path) == (
            "composite check `refund`: refund.rubric.yaml declares `id: refund` (line 1) but cannot be read: "
            f"yaml-syntax at {error_line}:1; fix its YAML"
        )
    else:
        assert composite_message(tmp_path) == (
            "composite check `refund`: there is no rubric `refund` in the workspace; the rubrics are `main`; "
            f"1 rubric file cannot be read and may be it: refund.rubric.yaml (yaml-syntax at {error_line}:1)"
        )


def test_several_unreadable_rubric_files_are_counted(tmp_path: Path) -> None:
    (tmp_path / "ai-eval.toml").write_text("")
    (tmp_path / "main.rubric.yaml").write_text(MAIN)
    for name in "abcde":
        (tmp_path / f"{name}.rubric.yaml").write_text("checks: [\n")
    assert composite_message(tmp_path) == (
        "composite check `refund`: there is no rubric `refund` in the workspace; the rubrics are `main`; "
        "5 rubric files cannot be read, and one may be it: a.rubric.yaml (yaml-syntax at 1:1), "
        "b.rubric.yaml (yaml-syntax at 1:1), c.rubric.yaml (yaml-syntax at 1:1) and 2 more"
    )
    for name in "ab":
        (tmp_path / f"{name}.rubric.yaml").write_text("id: refund\nchecks: [\n")
    assert composite_message(tmp_path) == (
        "composite check `refund`: 2 files declare `id: refund` but cannot be read: "
        "a.rubric.yaml (yaml-syntax at 2:1), b.rubric.yaml (yaml-syntax at 2:1); fix their YAML"
    )


@pytest.mark.parametrize(
    ("fixture", "start", "data"),
    [
        # did-you-mean: the key or kind at fault and the one best suggestion the quick fix offers
        ("problems/unknown_top_key", (5, 1), {"key": "descripton", "suggestions": ["description"]}),
        ("problems/plugin_kind_typo", (9, 24), {"key": "mix", "suggestions": ["min"]}),
        ("workspaces/fragment_kinds/survey", (44, 40), {"key": "colour", "suggestions": []}),
        ("problems/unknown_kind", (6, 11), {"kind": "regexp", "suggestions": ["regex"]}),
        ("problems/unknown_kind", (8, 11), {"kind": "xyzzy", "suggestions": []}),
        ("problems/bad_enum", (8, 12), {"suggestions": ["weighted_avg"]}),
        ("problems/enum_close_to_two", (6, 12), {"suggestions": ["any_pass"]}),
        ("workspaces/fragment_kinds/survey", (42, 36), {"suggestions": []}),
        # the version quoted as written
        ("problems/version_number", (3, 10), {"replacement": '"1.10"'}),
        ("problems/version_integer", (3, 10), {"replacement": '"2.0"'}),
        # the required field to add, and the kind of check it goes in ("" at the top level)
        ("problems/missing_scoring", (2, 1), {"field": "scoring", "kind": ""}),
        ("problems/unknown_key_after_non_ascii", (9, 5), {"field": "pattern", "kind": "regex"}),
        ("problems/missing_kind", (5, 5), {"field": "kind"}),
        # nothing to act on
        ("problems/version_exponent", (3, 10), {}),
        ("problems/wrong_type", (11, 8), {}),
    ],
)
def test_a_problem_carries_what_its_quick_fix_needs(
    project: Project, fixture: str, start: tuple[int, int], data: dict[str, object]
) -> None:
    path = FIXTURES / f"{fixture}.{'cases' if 'cases' in fixture else 'rubric'}.yaml"
    owner = project if "workspaces" not in path.parts else Project.load(path.parent)
    analysis = owner.analyse(path, path.read_bytes())
    index = owner.index({path: analysis}).rubrics
    (problem,) = [
        p for p in analysis.problems_in(index) if (p.span.start.line + 1, p.span.start.column + 1) == start
    ]
    assert problem.data == data
