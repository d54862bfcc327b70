"""The server's features in process, over the snapshot a request gets (`DocumentSnapshot`):
hover, code lenses and code actions answered from a document and its project folder's index as
they were when the request started, with no server, client or process."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_eval_lsp.core.cursor import locate
from ai_eval_lsp.core.index import ProjectIndex, Role
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.server.features import actions, hover, lenses
from ai_eval_lsp.server.lsp import names
from ai_eval_lsp.server.query.snapshots import Client, DocumentSnapshot

TONE = (
    'id: tone\nlabel: "Support tone"\nversion: "1.2"\nchecks:\n'
    "  - {id: polite, kind: must_contain_any, values: [sorry]}\n"
    "  - {id: calm, kind: regex, pattern: '^[^!]*$'}\n"
    "scoring: {combine: all_pass}\n"
)
REPLY = 'id: reply\nversion: "1.0"\nchecks:\n  - {id: tone, kind: composite, rubric: tone}\nscoring: {combine: min}\n'
CASES = "rubric: tone\ncases:\n  - {id: one, question: {id: q}, response: sorry}\n"


def snapshot(root: Path, files: dict[str, str], name: str, indexed: bool = True) -> DocumentSnapshot:
    """The snapshot a request about `name` gets, in a project of these files."""
    (root / "ai-eval.toml").write_text("")
    project = Project.load(root)
    analyses = {}
    for relative, text in files.items():
        path = root / relative
        path.write_text(text)
        role: Role = "cases" if relative.endswith(".cases.yaml") else "rubric"
        analyses[relative] = project.analyse(path, text.encode(), role)
    index = ProjectIndex.of([analysis.summary for analysis in analyses.values()])
    analysis = analyses[name]
    path = root / name
    return DocumentSnapshot(
        path.as_uri(),
        path,
        name,
        analysis.role,
        1,
        LineIndex(files[name]),
        analysis,
        root,
        index,
        indexed,
        project,
        Client("utf-16"),
        {},
    )


def hover_at(document: DocumentSnapshot, line: int, column: int) -> str | None:
    assert document.analysis is not None and document.analysis.root is not None
    at = locate(document.analysis.root, line, column)
    assert at is not None
    return hover.hover_text(document, at)


def test_hover_on_a_composite_reference_names_the_sub_rubric(tmp_path: Path) -> None:
    document = snapshot(tmp_path, {"tone.rubric.yaml": TONE, "reply.rubric.yaml": REPLY}, "reply.rubric.yaml")
    text = hover_at(document, 3, REPLY.splitlines()[3].index("rubric: tone") + 9)
    assert text == "**Support tone** (`tone` version 1.2)\n\ntone.rubric.yaml; checks: `polite`, `calm`."


def test_hover_on_a_reference_to_no_rubric_says_which_ids_there_are(tmp_path: Path) -> None:
    document = snapshot(
        tmp_path, {"reply.rubric.yaml": REPLY.replace("rubric: tone", "rubric: tones")}, "reply.rubric.yaml"
    )
    text = hover_at(document, 3, REPLY.splitlines()[3].index("rubric: tone") + 9)
    assert text == "No rubric `tones` in the workspace."


def test_hover_on_a_core_kind_says_who_runs_it(tmp_path: Path) -> None:
    document = snapshot(tmp_path, {"tone.rubric.yaml": TONE}, "tone.rubric.yaml")
    text = hover_at(document, 5, TONE.splitlines()[5].index("regex") + 1)
    assert text is not None and "; executed at run time." in text and "`pattern`" in text


@pytest.mark.parametrize(
    ("row", "title"),
    [
        (None, None),
        (
            {"pass_rate": 0.5, "pass_rate_ci_low": 0.1, "pass_rate_ci_high": 0.9, "avg_score": 2.5},
            "last run: pass 0.50 [0.10-0.90], 2.5/5, 3 runs",
        ),
    ],
)
def test_lenses_run_the_rubric_each_check_and_show_the_last_run(
    tmp_path: Path, row: dict[str, float] | None, title: str | None
) -> None:
    document = snapshot(tmp_path, {"tone.rubric.yaml": TONE}, "tone.rubric.yaml")
    found = lenses.code_lenses(document, (row, 3 if row else 0))
    commands = [
        (lens.range.start.line, lens.command.title, lens.command.command) for lens in found if lens.command
    ]
    expected = [(0, "Run rubric", names.RUN_RUBRIC)]
    if title is not None:
        expected.append((0, title, names.HISTORY))
    expected += [(4, "Run check", names.RUN_CHECK), (5, "Run check", names.RUN_CHECK)]
    assert commands == expected


def test_create_cases_file_is_offered_only_where_no_cases_file_runs_the_rubric(tmp_path: Path) -> None:
    alone = snapshot(tmp_path, {"tone.rubric.yaml": TONE}, "tone.rubric.yaml")
    action = actions.create_cases_action(alone)
    assert action is not None and action.title == "Create cases file tone.cases.yaml"
    with_cases = snapshot(tmp_path, {"tone.rubric.yaml": TONE, "tone.cases.yaml": CASES}, "tone.rubric.yaml")
    assert actions.create_cases_action(with_cases) is None
    before_the_walk = snapshot(tmp_path, {"tone.rubric.yaml": TONE}, "tone.rubric.yaml", indexed=False)
    assert actions.create_cases_action(before_the_walk) is None  # a cases file may still be found
