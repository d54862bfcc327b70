"""What a change re-runs (SPEC section 3, runs on save and `run --watch`): the cases files whose
rubric is the changed one or reaches it through composites, from the workspace index alone."""

from __future__ import annotations

from ai_eval_lsp.core.index import ProjectIndex, Summary, summarize, summarize_cases
from ai_eval_lsp.core.yamltree import parse


def rubric(rubric_id: str, *calls: str, kind: str = "must_contain_any") -> tuple[str, str]:
    checks = [f"  - {{id: own, kind: {kind}, values: [x]}}"]
    checks += [f"  - {{id: c{n}, kind: composite, rubric: {call}}}" for n, call in enumerate(calls)]
    return f"{rubric_id}.rubric.yaml", f'id: {rubric_id}\nversion: "1.0"\nchecks:\n' + "\n".join(
        checks
    ) + "\n"


def cases(name: str, ref: str) -> tuple[str, str]:
    return f"{name}.cases.yaml", f"rubric: {ref}\ncases:\n  - {{id: one, response: x}}\n"


def index(*files: tuple[str, str]) -> ProjectIndex:
    def summary(path: str, text: str) -> Summary:
        root = parse(text).root
        return (
            summarize_cases(path, root, text) if path.endswith(".cases.yaml") else summarize(path, root, text)
        )

    return ProjectIndex.of(summary(path, text) for path, text in files)


WORKSPACE = index(
    rubric("leaf"),
    rubric("middle", "leaf"),
    rubric("top", "middle"),
    rubric("other", kind="word_count"),
    rubric("loop_a", "loop_b", "leaf"),
    rubric("loop_b", "loop_a"),
    cases("leaf", "leaf"),
    cases("top", "top@1.0"),
    cases("other", "other"),
    cases("loop", "loop_b"),
    cases("nothing", "no_such_rubric"),
)


def test_a_rubric_re_runs_the_cases_files_that_reach_it_through_composites_and_no_other() -> None:
    assert WORKSPACE.affected(["leaf.rubric.yaml"]) == [
        "leaf.cases.yaml",
        "loop.cases.yaml",
        "top.cases.yaml",
    ]
    assert WORKSPACE.affected(["middle.rubric.yaml"]) == ["top.cases.yaml"]
    assert WORKSPACE.affected(["loop_a.rubric.yaml"]) == ["loop.cases.yaml"]


def test_a_cases_file_re_runs_itself_and_other_files_nothing() -> None:
    assert WORKSPACE.affected(["other.cases.yaml"]) == ["other.cases.yaml"]
    assert WORKSPACE.affected(["README.md"]) == []


def test_an_executor_re_runs_the_cases_files_whose_rubrics_use_its_kinds() -> None:
    assert WORKSPACE.using_kinds({"word_count"}) == ["other.cases.yaml"]
    assert WORKSPACE.using_kinds({"no_such_kind"}) == []
