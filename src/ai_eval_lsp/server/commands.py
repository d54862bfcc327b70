"""`workspace/executeCommand`: the runs of SPEC section 5, schema export and plugin reload.

A run works on a worker thread over a snapshot of its folder (the project, the rubric index, the
open documents' texts). It reports throttled `$/progress` and can be cancelled by the request
(`$/cancelRequest`) or by its progress: a cancelled run stores nothing, sends nothing and is
answered -32800. A finished run sends `aiEval/runComplete` with its row, exactly once.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from ai_eval_lsp.core.analysis import Analysis
from ai_eval_lsp.core.evaluate import LoadedRubric, RubricError, outcome_json
from ai_eval_lsp.core.workspace import RubricIndex, RubricSummary
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.run import (
    Cancellation,
    Reader,
    RunCancelled,
    RunError,
    RunOptions,
    RunResult,
    check_cases,
    check_response,
    run,
    run_cases,
)
from ai_eval_lsp.runs.store import StoreError
from ai_eval_lsp.server import names, query
from ai_eval_lsp.server.progress import Progress
from ai_eval_lsp.server.query import NotApplicable
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
        document = await query.settled(server, str(uri))
        if document is not None and document.analysis is not None:
            return document.folder, path, document.analysis
        folder = server.folders.home_of(path, server.settings)
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


def _reader(server: AiEvalServer, folder: Folder) -> Reader:
    """Files as the editor has them when the run starts: open documents' texts, else the disk."""
    texts = {doc.path: doc.text for doc in server.session.documents_of(folder) if doc.path is not None}

    def read(path: Path) -> bytes:
        text = texts.get(path.resolve())
        return text.encode("utf-8") if text is not None else path.read_bytes()

    return read


def _rubrics(folder: Folder) -> RubricIndex | None:
    """What a run resolves rubrics against: the folder's index; for a document outside every
    workspace folder, None: the run walks its project root then, as `ai-eval-lsp run` does."""
    return folder.index.rubrics if folder.walked else None


def _check_index(rubric: LoadedRubric, argument: dict[str, Any]) -> int:
    checks = rubric.data.get("checks")
    checks = checks if isinstance(checks, list) else []
    if isinstance(argument.get("checkIndex"), int):
        return int(argument["checkIndex"])
    wanted = argument.get("checkId")
    for index, check in enumerate(checks):
        if isinstance(check, dict) and check.get("id") == wanted:
            return index
    raise NotApplicable(f"rubric `{rubric.id}` has no check with id {wanted!r}")


def _running(folder: Folder, analysis: Analysis) -> list[Path]:
    """The cases files that run a rubric, by path."""
    summary = analysis.summary
    if not isinstance(summary, RubricSummary):
        return []
    return [folder.root / cases.path for cases in query.cases_running(folder, summary)]


def _verdicts(result: RunResult) -> dict[str, Any]:
    return {case.case_id: case.verdict.to_json() if case.verdict else None for case in result.cases}


def _run_json(result: RunResult) -> dict[str, Any]:
    """A run of a cases file as the commands answer it: SPEC's `{row, verdicts}`, plus why each
    errored case has no verdict and each case's `expect`, so a client can show failures in place."""
    return {
        "row": result.row,
        "verdicts": _verdicts(result),
        "errors": {case.case_id: case.error for case in result.cases if case.error},
        "expected": {case.case_id: case.expect for case in result.cases if case.expect},
    }


T = TypeVar("T")


async def _cancellable(server: AiEvalServer, cancellation: Cancellation, work: Callable[[], T]) -> T:
    """Work on a worker thread that the request (`$/cancelRequest`, or shutdown) may cancel, as
    may whoever else holds the cancellation (a run's progress). A cancel the work can no longer
    honour (a run whose row is stored) is refused: the request is then answered with its result."""
    request = server.protocol.msg_id
    if request is not None:
        server.cancellations[request] = cancellation
    future = asyncio.get_running_loop().run_in_executor(None, work)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        if not cancellation.cancel():
            return await future
        raise
    except RunCancelled:
        raise JsonRpcRequestCancelled("cancelled; nothing was stored") from None
    finally:
        if request is not None:
            server.cancellations.pop(request, None)


async def _run(
    server: AiEvalServer,
    folder: Folder,
    title: str,
    token: types.ProgressToken | None,
    work: Callable[[RunOptions], RunResult],
) -> RunResult:
    """One run: progress, cancellation, then the notification, the log and a summary."""
    # The rubrics a run resolves are every file's, and an open one's as the editor has it now.
    if not await query.whole_folder(server, folder):
        raise NotApplicable(f"the workspace folder {folder.root} was closed; nothing was run")
    cancellation = Cancellation()
    progress = Progress(server, title, token, on_cancel=cancellation.cancel)
    await progress.begin()
    options = RunOptions(
        source="editor",
        progress=lambda done, total: progress.report(done, total, "cases"),
        cancellation=cancellation,
        read=_reader(server, folder),
        index=_rubrics(folder),
    )
    try:
        result = await _cancellable(server, cancellation, lambda: work(options))
    except (asyncio.CancelledError, JsonRpcRequestCancelled):
        progress.end("cancelled")
        server.log(f"{title}: cancelled; nothing was stored")
        raise
    except (RunError, RubricError) as err:
        progress.end("failed")
        raise NotApplicable(str(err)) from err
    except BaseException:
        progress.end("failed")
        raise
    row = result.row
    summary = (
        f"{row['target_id']}: pass rate {row['pass_rate']:.2f}, average {row['avg_score']:.2f}/5, "
        f"gate {'passed' if row['passed_gate'] else 'failed'}, {row['error_count']} errors in {row['question_count']} cases"
    )
    progress.end(summary)
    server.protocol.notify(names.RUN_COMPLETE, row)
    server.refresh_lenses()
    server.log(f"{title}: {summary}\n" + "\n".join(result.notices))
    if not server.client_shows_runs():
        kind = types.MessageType.Info if result.ok else types.MessageType.Warning
        server.window_show_message(types.ShowMessageParams(kind, " ".join([summary, *result.notices])))
    return result


async def _reading(read: Callable[[], T]) -> T:
    """A read of the results store, off the loop; what it cannot find is the caller's mistake."""
    try:
        return await asyncio.to_thread(read)
    except StoreError as err:
        raise NotApplicable(str(err)) from err


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
        result = await _run(ls, folder, title, token, lambda o: run_cases(project, path, o, case_ids))
        return _run_json(result)

    @server.command(names.HISTORY)
    async def history(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments))
        target, limit = argument.get("target"), argument.get("limit")
        if not isinstance(target, str):
            raise NotApplicable(f"`target` must be a rubric id, not {target!r}")
        if limit is not None and not isinstance(limit, int):
            raise NotApplicable(f"`limit` must be a number of runs, not {limit!r}")
        store = query.results_of(await query.folder_of_target(ls, target, argument.get("uri")))
        return {"rows": await _reading(lambda: store.history(target, limit))}

    @server.command(names.DIFF)
    async def diff(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments)) if arguments else {}
        target, base, head = argument.get("target"), argument.get("base"), argument.get("head")
        if not all(value is None or isinstance(value, int) for value in (base, head)):
            raise NotApplicable(f"`base` and `head` must be run ids, not {base!r} and {head!r}")
        if target is not None and not isinstance(target, str):
            raise NotApplicable(f"`target` must be a rubric id, not {target!r}")
        store = query.results_of(await query.folder_of_target(ls, target, argument.get("uri")))
        return await _reading(lambda: store.diff(base, head, target).to_json())

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
            result = await _run(
                ls,
                folder,
                f"Run rubric {rubric.id}",
                argument.get("workDoneToken"),
                lambda o: run(project, rubric.name, [case], None, path, o),
            )
            return {"verdict": _verdicts(result)["response"], "row": result.row}
        runs = []
        for cases_path in _running(folder, analysis):
            result = await _run(
                ls,
                folder,
                f"Run rubric {rubric.id} on {cases_path.name}",
                None,
                lambda o, cases_path=cases_path: run_cases(project, cases_path, o),  # type: ignore[misc]
            )
            runs.append({"casesUri": uri_of(cases_path), **_run_json(result)})
        return {"runs": runs}

    @server.command(names.RUN_CHECK)
    async def run_check(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments))
        folder, _, analysis = await _target(ls, argument)
        rubric = query.rubric_of(analysis)
        index = _check_index(rubric, argument)
        project = _project(folder)
        cancellation = Cancellation()
        options = RunOptions(cancellation=cancellation, read=_reader(ls, folder), index=_rubrics(folder))
        try:
            if "response" in argument:
                response, question = str(argument["response"]), argument.get("question") or {}
                if not isinstance(question, dict):
                    raise NotApplicable("`question` must be a mapping")
                outcome = await _cancellable(
                    ls,
                    cancellation,
                    lambda: check_response(project, rubric, index, response, question, options),
                )
                return {"outcome": outcome_json(outcome) if outcome else None}
            paths = _running(folder, analysis)
            found = await _cancellable(
                ls, cancellation, lambda: check_cases(project, rubric, index, paths, options)
            )
        except (RunError, RubricError) as err:
            raise NotApplicable(str(err)) from err
        return {
            "cases": [
                {
                    "casesUri": uri_of(path),
                    "caseId": case_id,
                    "outcome": outcome_json(outcome) if outcome else None,
                }
                for path, case_id, outcome in found
            ]
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
