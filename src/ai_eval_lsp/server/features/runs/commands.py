"""The runs a client asks for (SPEC section 5): `aiEval.runCases`, `aiEval.runRubric` and
`aiEval.runCheck`, each on a worker thread over the folder as the editor has it (`in_editor.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_eval_lsp.core.analysis import Analysis
from ai_eval_lsp.core.api import CheckOutcome
from ai_eval_lsp.core.evaluate import LoadedRubric, RubricError, outcome_json
from ai_eval_lsp.core.index import RubricSummary
from ai_eval_lsp.disk.reading import why_not_read
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.render import outcome_line
from ai_eval_lsp.runs.run import (
    Cancellation,
    RunError,
    RunOptions,
    check_cases,
    check_response,
    run,
)
from ai_eval_lsp.runs.run import run_cases as run_cases_file
from ai_eval_lsp.server.features.runs.in_editor import (
    cancellable,
    reader_for,
    rubrics_for,
    run_answer,
    run_in_folder,
    verdicts_of,
)
from ai_eval_lsp.server.loop import take
from ai_eval_lsp.server.loop.off_loop import off_loop
from ai_eval_lsp.server.loop.server import AiEvalServer
from ai_eval_lsp.server.loop.session import ProjectFolder
from ai_eval_lsp.server.lsp.convert import NotApplicable, path_of, uri_of
from ai_eval_lsp.server.query import rubrics


async def run_cases(server: AiEvalServer, argument: dict[str, Any]) -> dict[str, Any]:
    """`aiEval.runCases` {uri, caseIds?}: a run of a cases file (of the listed cases only)."""
    folder, path, analysis = await _target(server, argument)
    if analysis.role != "cases":
        raise NotApplicable(f"{path} is not a cases file")
    project = _project(folder)
    case_ids = argument.get("caseIds")
    if case_ids is not None and (
        not isinstance(case_ids, list) or not all(isinstance(c, str) for c in case_ids)
    ):
        raise NotApplicable(f"`caseIds` must be a list of case ids, not {case_ids!r}")
    token = argument.get("workDoneToken")
    title = f"Run cases {path.name}" + (f" ({len(case_ids)} of them)" if case_ids is not None else "")
    result = await run_in_folder(
        server, folder, title, token, lambda o: run_cases_file(project, path, o, case_ids)
    )
    return run_answer(result)


async def run_rubric(server: AiEvalServer, argument: dict[str, Any]) -> dict[str, Any]:
    """`aiEval.runRubric` {uri, response?, question?}: a run of one response, or of every cases
    file that runs the rubric."""
    folder, path, analysis = await _target(server, argument)
    rubric = rubrics.rubric_of(analysis)
    project = _project(folder)
    if "response" in argument:
        case = {
            "id": "response",
            "response": argument["response"],
            "question": argument.get("question") or {},
        }
        result = await run_in_folder(
            server,
            folder,
            f"Run rubric {rubric.id}",
            argument.get("workDoneToken"),
            lambda o: run(project, rubric.name, [case], None, path, o),
        )
        return {"verdict": verdicts_of(result)["response"], "row": result.row}
    runs = []
    for cases_path in _running(folder, analysis):
        result = await run_in_folder(
            server,
            folder,
            f"Run rubric {rubric.id} on {cases_path.name}",
            None,
            lambda o, cases_path=cases_path: run_cases_file(project, cases_path, o),  # type: ignore[misc]
        )
        runs.append({"casesUri": uri_of(cases_path), **run_answer(result)})
    return {"runs": runs}


async def run_check(server: AiEvalServer, argument: dict[str, Any]) -> dict[str, Any]:
    """`aiEval.runCheck` {uri, checkId or checkIndex, response?, question?}: one check on one
    response, or on every case of the cases files that run its rubric; not a run (no row)."""
    folder, _, analysis = await _target(server, argument)
    rubric = rubrics.rubric_of(analysis)
    index = _check_index(rubric, argument)
    project = _project(folder)
    cancellation = Cancellation()
    options = RunOptions(
        cancellation=cancellation, read=reader_for(server, folder), index=rubrics_for(folder)
    )
    try:
        if "response" in argument:
            response, question = str(argument["response"]), argument.get("question") or {}
            if not isinstance(question, dict):
                raise NotApplicable("`question` must be a mapping")
            outcome = await cancellable(
                server,
                cancellation,
                lambda: check_response(project, rubric, index, response, question, options),
            )
            return {"outcome": _outcome_json(outcome), "text": outcome_line(outcome)}
        paths = _running(folder, analysis)
        found = await cancellable(
            server, cancellation, lambda: check_cases(project, rubric, index, paths, options)
        )
    except (RunError, RubricError) as err:
        raise NotApplicable(str(err)) from err
    return {
        "cases": [
            {"casesUri": uri_of(path), "caseId": case_id, "outcome": _outcome_json(outcome)}
            for path, case_id, outcome in found
        ],
        "text": "\n".join(
            f"{path.name} {case_id}: {outcome_line(outcome)}" for path, case_id, outcome in found
        ),
    }


async def _target(server: AiEvalServer, argument: dict[str, Any]) -> tuple[ProjectFolder, Path, Analysis]:
    """The file a command names, with its folder and its analysis, all as the editor has them
    now: an open document's own analysis, else the file on disk's, once the folder is indexed
    and each of its open documents analysed (what a run resolves rubrics against)."""
    uri = argument.get("uri")
    named = path_of(uri) if isinstance(uri, str) else None
    if named is None:
        raise NotApplicable(f"the command needs the `uri` of a rubric or cases file, not {uri!r}")
    path = named.resolve()
    while True:
        document = await take.settled_document(server, str(uri))
        if document is not None and document.analysis is not None:
            return document.folder, path, document.analysis
        folder = server.project_folders.home_of(path, server.session.settings)
        if await take.whole_folder(server, folder):
            break
    project = _project(folder)
    role = project.role(named)
    if role is None:
        raise NotApplicable(f"{path} is not a rubric or cases file")
    try:  # read by the name it was given: where a symbolic link leads is no name to read by
        analysis = await off_loop(lambda: project.analyse(path, project.read(named), role))
    except OSError as err:
        raise NotApplicable(f"{named}: {why_not_read(err)}") from err
    return folder, path, analysis


def _check_index(rubric: LoadedRubric, argument: dict[str, Any]) -> int:
    """The position of the check an argument names (`checkIndex`, or `checkId`)."""
    checks = rubric.data.get("checks")
    checks = checks if isinstance(checks, list) else []
    if isinstance(argument.get("checkIndex"), int):
        return int(argument["checkIndex"])  # the evaluator says when there is none there
    wanted = argument.get("checkId")
    for index, check in enumerate(checks):
        if isinstance(check, dict) and check.get("id") == wanted:
            return index
    raise NotApplicable(f"rubric `{rubric.name}` has no check with id {wanted!r}")


def _outcome_json(outcome: CheckOutcome | str) -> dict[str, Any] | None:
    """SPEC's outcome JSON; null for a check that was skipped."""
    return outcome_json(outcome) if isinstance(outcome, CheckOutcome) else None


def _running(folder: ProjectFolder, analysis: Analysis) -> list[Path]:
    """The cases files that run a rubric, by path."""
    summary = analysis.summary
    if not isinstance(summary, RubricSummary):
        return []
    return [folder.root / cases.path for cases in rubrics.cases_running(folder.index, summary)]


def _project(folder: ProjectFolder) -> Project:
    assert folder.project is not None, "a command runs once its folder's project is loaded"
    return folder.project
