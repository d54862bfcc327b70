"""Rubrics and cases files as features read them: the rubric a document holds, its checks, the cases
files that run it, every place that names it, and the project folder whose results a target's
runs are in."""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from ai_eval_lsp.core.analysis import Analysis
from ai_eval_lsp.core.evaluate import LoadedRubric
from ai_eval_lsp.core.index import CasesSummary, ProjectIndex, RubricSummary
from ai_eval_lsp.core.items import Listed
from ai_eval_lsp.core.problems import Span
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.store import ResultStore
from ai_eval_lsp.server.lsp.convert import NotApplicable
from ai_eval_lsp.server.query.positions import at_position
from ai_eval_lsp.server.query.snapshots import DocumentSnapshot, ProjectSnapshot, WorkspaceSnapshot


def rubric_of(analysis: Analysis) -> LoadedRubric:
    """The rubric a document holds, as the editor has it now."""
    data, summary = analysis.value, analysis.summary
    if not isinstance(data, dict) or not isinstance(summary, RubricSummary):
        raise NotApplicable(f"{analysis.path} is not a rubric file")
    if summary.id is None:
        raise NotApplicable(f"{analysis.path}: the rubric has no `id`")
    return LoadedRubric(summary.id, summary.version, data)


def cases_running(index: ProjectIndex, rubric: RubricSummary) -> list[CasesSummary]:
    """The cases files of a project folder's index that run a rubric."""
    return index.cases.running(rubric, index.rubrics)


def checks_of(document: DocumentSnapshot) -> list[Listed]:
    """The checks of a rubric document's last analysis: each one's range and value."""
    analysis = document.analysis
    return analysis.listed() if analysis is not None and analysis.role == "rubric" else []


def own_summary(document: DocumentSnapshot) -> RubricSummary | None:
    summary = document.analysis.summary if document.analysis else None
    return summary if isinstance(summary, RubricSummary) else None


@dataclass(frozen=True, slots=True)
class Mention:
    """A place that names a rubric: its `id`, a composite `rubric:` or a cases file's `rubric:`."""

    path: str
    span: Span
    text: str


def mentions(index: ProjectIndex, target: RubricSummary) -> list[Mention]:
    """Every place of a project folder's index that names `target`: its id and every reference
    resolving to it."""
    rubrics = index.rubrics
    found = [Mention(target.path, target.id_span, str(target.id))] if target.id_span else []
    for summary in rubrics.by_path.values():
        for ref in summary.composites:
            if rubrics.resolve(ref.ref) == target:
                found.append(Mention(summary.path, ref.span, ref.ref))
    for cases in cases_running(index, target):
        if cases.rubric is not None and cases.rubric_span is not None:
            found.append(Mention(cases.path, cases.rubric_span, cases.rubric))
    return found


def rubric_named_at(
    document: DocumentSnapshot, position: types.Position
) -> tuple[RubricSummary | None, tuple[str | int, ...]]:
    """The rubric named at a position (by its `id` or a `rubric:` reference), and the path there."""
    at = at_position(document, position)
    if at is None:
        return None, ()
    if at.on_key or not isinstance(at.node.value, str):
        return None, at.path
    rubrics = document.index.rubrics
    if at.path and at.path[-1] == "rubric":
        return rubrics.resolve(at.node.value), at.path
    if at.path == ("id",):
        return own_summary(document), at.path
    return None, at.path


def results_of(project: Project | None) -> ResultStore:
    """The store a project's runs write to."""
    assert project is not None, "results are asked for once the project is loaded"
    return ResultStore(project.results_database, project.root)


def folder_of_target(workspace: WorkspaceSnapshot, target: str | None) -> ProjectSnapshot:
    """The project folder whose results a history or diff reads: the one whose index has the
    rubric `target` (the one holding the request's file first, when several do), else one
    reading a site (a site's target), else the one holding the request's file, else the first.
    A request naming a file no folder holds is told so, unless `target` decides."""
    folders, home = [f for f in workspace.folders if f.project is not None], workspace.home
    holding = [f for f in folders if target is not None and f.index.rubrics.with_id(target)]
    if not holding and workspace.outside is not None:
        raise NotApplicable(
            f"{workspace.outside} is in no project folder of the server (its workspace folders, and "
            "those of the files open outside them); open the file or a folder holding it, and ask again"
        )
    if not holding and target is not None:  # a site's target: the projects reading a site
        holding = [f for f in folders if f.reads_site]
    holding.sort(key=lambda folder: folder is not home)
    if holding:
        return holding[0]
    if home is not None:
        return home
    if not folders:
        raise NotApplicable("no workspace folder is open, and no rubric or cases file names this target")
    return folders[0]
