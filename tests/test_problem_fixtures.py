"""One rubric file per problem: each declares the exact code and range it must get, and no more."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, Expected, expectations

from ai_eval_lsp.core.problems import SEVERITY_OF_CODE
from ai_eval_lsp.project import Project

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


@pytest.mark.parametrize("path", WORKSPACE_FILES, ids=lambda p: "/".join(p.parts[-2:]))
def test_workspace_fixture(path: Path) -> None:
    check_file(Project.load(path.parent), path)


def test_every_code_of_this_engine_has_a_fixture() -> None:
    declared = {e.code for path in PROBLEM_FILES + WORKSPACE_FILES for e in expectations(path)}
    assert set(SEVERITY_OF_CODE) <= declared
