"""`workspace/executeCommand`: the runs of SPEC section 5 (each as `running.py` runs it), the
history, diffs and what the clients show of them (`aiEval.render`), schema export and plugin
reload."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ai_eval_lsp.core.analysis import Analysis
from ai_eval_lsp.core.api import CheckOutcome
from ai_eval_lsp.core.evaluate import LoadedRubric, RubricError, outcome_json
from ai_eval_lsp.core.workspace import RubricSummary
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.render import outcome_line
from ai_eval_lsp.runs.report import history_answer, render_stored
from ai_eval_lsp.runs.run import (
    Cancellation,
    RunError,
    RunOptions,
    check_cases,
    check_response,
    run,
    run_cases,
)
from ai_eval_lsp.runs.store import RunName, StoreError
from ai_eval_lsp.server import names, query
from ai_eval_lsp.server.query import NotApplicable
from ai_eval_lsp.server.running import (
    cancellable,
    reader_for,
    rubrics_for,
    run_answer,
    run_in_folder,
    verdicts_of,
)
from ai_eval_lsp.server.server import AiEvalServer
from ai_eval_lsp.server.session import Folder, path_of, uri_of


def _argument(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, list) and arguments and isinstance(arguments[0], dict):
        return arguments[0]
    if isinstance(arguments, dict):
        return arguments
    raise NotApplicable("the command takes one object argument")


async def _target(server: AiEvalServer, argument: dict[str, Any]) -> tuple[Folder, Path, Analysis]:
    """The file a command names, with its folder and its analysis, all as the editor has them
    now: an open document's own analysis, else the file on disk's, once the folder is indexed
    and each of its open documents analysed (what a run resolves rubrics against)."""
    uri = argument.get("uri")
    path = path_of(uri) if isinstance(uri, str) else None
    if path is None:
        raise NotApplicable(f"the command needs the `uri` of a rubric or cases file, not {uri!r}")
    path = path.resolve()
    while True:
        document = await query.settled_document(server, str(uri))
        if document is not None and document.analysis is not None:
            return document.folder, path, document.analysis
        folder = server.folders.home_of(path, server.session.settings)
        if await query.whole_folder(server, folder):
            break
    project = _project(folder)
    role = project.role(path)
    if role is None:
        raise NotApplicable(f"{path} is not a rubric or cases file")
    try:
        analysis = await asyncio.to_thread(lambda: project.analyse(path, path.read_bytes(), role))
    except OSError as err:
        raise NotApplicable(f"{path}: cannot be read: {err.strerror}") from err
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


def _running(folder: Folder, analysis: Analysis) -> list[Path]:
    """The cases files that run a rubric, by path."""
    summary = analysis.summary
    if not isinstance(summary, RubricSummary):
        return []
    return [folder.root / cases.path for cases in query.cases_running(folder.index, summary)]


T = TypeVar("T")


async def _reading(read: Callable[[], T]) -> T:
    """A read of the results store, off the loop; what it cannot find is the caller's mistake."""
    try:
        return await asyncio.to_thread(read)
    except StoreError as err:
        raise NotApplicable(str(err)) from err


def _runs_named(argument: dict[str, Any]) -> tuple[str | None, RunName, RunName]:
    """The `target`, `base` and `head` of a history or diff: runs by local run id, or by name
    (`latest`, `previous`, `site:ID`, `site:latest`)."""
    target, base, head = argument.get("target"), argument.get("base"), argument.get("head")
    if not all(value is None or isinstance(value, int | str) for value in (base, head)):
        raise NotApplicable(
            f"`base` and `head` must be run ids or names (latest, site:ID, ...), not {base!r} and {head!r}"
        )
    if target is not None and not isinstance(target, str):
        raise NotApplicable(f"`target` must be a rubric id or site target, not {target!r}")
    return target, base, head


def _project(folder: Folder) -> Project:
    assert folder.project is not None, "a command runs once its folder's project is loaded"
    return folder.project


def register(server: AiEvalServer) -> None:
    @server.command(names.RUN_CASES)
    async def run_cases_command(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments))
        folder, path, analysis = await _target(ls, argument)
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
            ls, folder, title, token, lambda o: run_cases(project, path, o, case_ids)
        )
        return run_answer(result)

    @server.command(names.HISTORY)
    async def history(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments))
        target, limit = argument.get("target"), argument.get("limit")
        if not isinstance(target, str):
            raise NotApplicable(f"`target` must be a rubric id, not {target!r}")
        if limit is not None and not isinstance(limit, int):
            raise NotApplicable(f"`limit` must be a number of runs, not {limit!r}")
        store = query.results_of((await query.folder_of_target(ls, target, argument.get("uri"))).project)
        # `runs` and `compare` beside SPEC's rows: what a history view offers and opens on
        return await _reading(lambda: history_answer(store, target, limit))

    @server.command(names.DIFF)
    async def diff(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments)) if arguments else {}
        target, base, head = _runs_named(argument)
        store = query.results_of((await query.folder_of_target(ls, target, argument.get("uri"))).project)
        return await _reading(lambda: store.diff(base, head, target).to_json())

    @server.command(names.RENDER)
    async def render(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments))
        what, form = argument.get("what"), argument.get("format", "text")
        if what == "kinds":  # how many kinds the project of `uri` has, by source, as `plugins` ends
            folder = await query.folder_of_target(ls, None, argument.get("uri"))
            return {"text": _project(folder).registry.combined.kinds_line()}
        target, base, head = _runs_named(argument)
        store = query.results_of((await query.folder_of_target(ls, target, argument.get("uri"))).project)

        def read() -> str:
            try:
                return render_stored(store, str(what), str(form), target, base, head)
            except ValueError as err:
                raise NotApplicable(str(err)) from err

        return {"text": await _reading(read)}

    @server.command(names.RUN_RUBRIC)
    async def run_rubric(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments))
        folder, path, analysis = await _target(ls, argument)
        rubric = query.rubric_of(analysis)
        project = _project(folder)
        if "response" in argument:
            case = {
                "id": "response",
                "response": argument["response"],
                "question": argument.get("question") or {},
            }
            result = await run_in_folder(
                ls,
                folder,
                f"Run rubric {rubric.id}",
                argument.get("workDoneToken"),
                lambda o: run(project, rubric.name, [case], None, path, o),
            )
            return {"verdict": verdicts_of(result)["response"], "row": result.row}
        runs = []
        for cases_path in _running(folder, analysis):
            result = await run_in_folder(
                ls,
                folder,
                f"Run rubric {rubric.id} on {cases_path.name}",
                None,
                lambda o, cases_path=cases_path: run_cases(project, cases_path, o),  # type: ignore[misc]
            )
            runs.append({"casesUri": uri_of(cases_path), **run_answer(result)})
        return {"runs": runs}

    @server.command(names.RUN_CHECK)
    async def run_check(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments))
        folder, _, analysis = await _target(ls, argument)
        rubric = query.rubric_of(analysis)
        index = _check_index(rubric, argument)
        project = _project(folder)
        cancellation = Cancellation()
        options = RunOptions(
            cancellation=cancellation, read=reader_for(ls, folder), index=rubrics_for(folder)
        )
        try:
            if "response" in argument:
                response, question = str(argument["response"]), argument.get("question") or {}
                if not isinstance(question, dict):
                    raise NotApplicable("`question` must be a mapping")
                outcome = await cancellable(
                    ls,
                    cancellation,
                    lambda: check_response(project, rubric, index, response, question, options),
                )
                return {
                    "outcome": _outcome_json(outcome),
                    "text": outcome_line(outcome),
                }
            paths = _running(folder, analysis)
            found = await cancellable(
                ls, cancellation, lambda: check_cases(project, rubric, index, paths, options)
            )
        except (RunError, RubricError) as err:
            raise NotApplicable(str(err)) from err
        return {
            "cases": [
                {
                    "casesUri": uri_of(path),
                    "caseId": case_id,
                    "outcome": _outcome_json(outcome),
                }
                for path, case_id, outcome in found
            ],
            "text": "\n".join(
                f"{path.name} {case_id}: {outcome_line(outcome)}" for path, case_id, outcome in found
            ),
        }

    @server.command(names.EXPORT_SCHEMA)
    async def export_schema(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments)) if arguments else {}
        uri = argument.get("uri")
        path = path_of(uri) if isinstance(uri, str) else None
        folder = await query.folder_of_target(ls, None, str(uri) if path is not None else None)
        assert folder.project is not None, "a folder is found once its project is loaded"
        return folder.project.registry.combined.schema

    @server.command(names.RELOAD_PLUGINS)
    async def reload_plugins(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        importlib.invalidate_caches()
        folders = list(ls.session.folders.values())
        await asyncio.gather(*(ls.folders.load(folder, walk=False) for folder in folders))
        kinds: dict[str, str] = {}
        problems: list[str] = []
        for folder in folders:
            if folder.project is not None:
                registry = folder.project.registry
                kinds.update({kind: str(origin) for kind, origin in registry.combined.origins.items()})
                problems += [p for p in registry.problems() if p not in problems]
        return {"kinds": kinds, "problems": problems}
