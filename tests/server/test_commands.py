"""The commands' handlers in process: each is a module-level function given its one argument,
checked once (`dispatch.argument_of`), and the reading ones a workspace snapshot, so what they
answer is tested with no server, client or process."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_eval_lsp.core.index import ProjectIndex
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.server.features import plugins, results
from ai_eval_lsp.server.loop.dispatch import argument_of
from ai_eval_lsp.server.lsp.convert import NotApplicable
from ai_eval_lsp.server.query.rubrics import folder_of_target
from ai_eval_lsp.server.query.snapshots import Client, ProjectSnapshot, WorkspaceSnapshot

TONE = 'id: tone\nversion: "1.0"\nchecks:\n  - {kind: regex, pattern: x}\nscoring: {combine: all_pass}\n'


def folder(root: Path, files: dict[str, str], reads_site: bool = False) -> ProjectSnapshot:
    """A project folder of these rubric files, as a workspace-wide request sees it."""
    root.mkdir()
    (root / "ai-eval.toml").write_text("")
    project = Project.load(root)
    summaries = []
    for relative, text in files.items():
        (root / relative).write_text(text)
        summaries.append(project.analyse(root / relative, text.encode(), "rubric").summary)
    return ProjectSnapshot(root, ProjectIndex.of(summaries), project, reads_site)


def workspace(folders: list[ProjectSnapshot], home: ProjectSnapshot | None = None) -> WorkspaceSnapshot:
    return WorkspaceSnapshot(tuple(folders), home, {}, Client("utf-16"))


def test_a_command_takes_one_object_argument_or_none() -> None:
    assert argument_of([]) == {}
    assert argument_of([{"uri": "file:///x"}, "ignored"]) == {"uri": "file:///x"}
    with pytest.raises(NotApplicable, match="the command takes one object argument"):
        argument_of(["file:///x"])


def test_a_target_s_results_are_those_of_the_folder_holding_its_rubric(tmp_path: Path) -> None:
    empty = folder(tmp_path / "empty", {})
    tone = folder(tmp_path / "tone", {"tone.rubric.yaml": TONE})
    also = folder(tmp_path / "also", {"tone.rubric.yaml": TONE})
    site = folder(tmp_path / "site", {}, reads_site=True)
    assert folder_of_target(workspace([empty, tone, also]), "tone") is tone
    assert folder_of_target(workspace([empty, tone, also], home=also), "tone") is also  # the request's own
    assert folder_of_target(workspace([empty, site]), "site_target") is site  # a site's target
    assert folder_of_target(workspace([empty, tone], home=tone), None) is tone
    assert folder_of_target(workspace([empty, tone]), None) is empty
    with pytest.raises(NotApplicable, match="no workspace folder is open"):
        folder_of_target(workspace([]), "tone")


def test_the_schema_exported_is_that_of_the_request_s_project(tmp_path: Path) -> None:
    home = folder(tmp_path / "home", {})
    schema = plugins.export_schema(workspace([folder(tmp_path / "other", {}), home], home=home), {})
    assert home.project is not None and schema == home.project.registry.combined.schema
    assert "check_regex" in schema["$defs"]


async def test_history_says_what_is_wrong_with_its_argument(tmp_path: Path) -> None:
    seen = workspace([folder(tmp_path / "tone", {"tone.rubric.yaml": TONE})])
    with pytest.raises(NotApplicable, match="`target` must be a rubric id, not 3"):
        await results.history(seen, {"target": 3})
    with pytest.raises(NotApplicable, match="`limit` must be a number of runs, not 'all'"):
        await results.history(seen, {"target": "tone", "limit": "all"})
    answer = await results.history(seen, {"target": "tone"})
    assert answer["rows"] == [] and answer["runs"] == []
