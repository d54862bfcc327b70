"""`workspace/executeCommand`: the runs of SPEC section 5, schema export and plugin reload.

A run works on a worker thread, reports `$/progress`, honours cancellation, and once stored
sends `aiEval/runComplete` with the row, exactly once; its result is also logged and summarised.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types

from ai_eval_lsp.core.evaluate import LoadedRubric, RubricError, outcome_json
from ai_eval_lsp.runs import (
    RubricLibrary,
    RunCancelled,
    RunError,
    RunOptions,
    RunResult,
    make_evaluator,
    read_cases,
    run,
    run_cases,
)
from ai_eval_lsp.server import workspace
from ai_eval_lsp.server.server import AiEvalServer

RUN_COMPLETE = "aiEval/runComplete"
RUN_CHECK, RUN_RUBRIC, RUN_CASES = "aiEval.runCheck", "aiEval.runRubric", "aiEval.runCases"
EXPORT_SCHEMA, RELOAD_PLUGINS = "aiEval.exportSchema", "aiEval.reloadPlugins"


class CommandError(Exception):
    """The command's arguments name nothing it can run; answered as a request error."""


def _argument(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, list) and arguments and isinstance(arguments[0], dict):
        return arguments[0]
    if isinstance(arguments, dict):
        return arguments
    raise CommandError("the command takes one object argument")


def rubric_of(server: AiEvalServer, uri: str) -> LoadedRubric:
    """The rubric of a document, as the editor has it now."""
    state = server.state(uri)
    root = state.root if state is not None else None
    if state is None or state.analysis is None or root is None or not isinstance(root.value, dict):
        raise CommandError(f"{uri} is not a rubric file")
    summary = state.analysis.summary
    if summary.id is None:
        raise CommandError(f"{uri}: the rubric has no `id`")
    return LoadedRubric(summary.id, summary.version, root.value)


def cases_files_for(server: AiEvalServer, rubric: LoadedRubric) -> list[Path]:
    index = server.session.index
    found = []
    for relative, ref in sorted(server.session.cases_refs.items()):
        target = index.resolve(ref)
        if target is not None and (target.id, target.version) == (rubric.id, rubric.version):
            found.append(server.session.root / relative)
    return found


def _check_index(rubric: LoadedRubric, argument: dict[str, Any]) -> int:
    checks = rubric.data.get("checks")
    checks = checks if isinstance(checks, list) else []
    if isinstance(argument.get("checkIndex"), int):
        return int(argument["checkIndex"])
    wanted = argument.get("checkId")
    for index, check in enumerate(checks):
        if isinstance(check, dict) and check.get("id") == wanted:
            return index
    raise CommandError(f"rubric `{rubric.id}` has no check with id {wanted!r}")


class _Progress:
    """`$/progress` for one run, thread-safe; the client's cancel sets `cancelled`."""

    def __init__(self, server: AiEvalServer, title: str, token: types.ProgressToken | None) -> None:
        self.server, self.title = server, title
        self.token: types.ProgressToken | None = token or str(uuid.uuid4())
        self.loop = asyncio.get_running_loop()
        self.cancelled = threading.Event()
        self.own_token = token is None

    async def begin(self) -> None:
        token, window = self.token, self.server.client_capabilities.window
        if token is None:
            return
        if self.own_token:
            if not (window and window.work_done_progress):
                self.token = None  # the client shows no progress: report none
                return
            await self.server.work_done_progress.create_async(token)
        self.server.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(self.title, cancellable=True, percentage=0)
        )

    def report(self, done: int, total: int) -> None:
        token = self.token
        if token is None:
            return

        def send() -> None:
            pending = self.server.work_done_progress.tokens.get(token)
            if pending is not None and pending.cancelled():
                self.cancelled.set()
            self.server.work_done_progress.report(
                token,
                types.WorkDoneProgressReport(
                    message=f"{done}/{total} cases", percentage=int(100 * done / max(total, 1))
                ),
            )

        self.loop.call_soon_threadsafe(send)

    def end(self, message: str) -> None:
        if self.token is not None:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))


def _verdicts(result: RunResult) -> dict[str, Any]:
    return {case.case_id: case.verdict.to_json() if case.verdict else None for case in result.cases}


async def _run(
    server: AiEvalServer,
    title: str,
    token: types.ProgressToken | None,
    work: Callable[[RunOptions], RunResult],
) -> RunResult:
    """One run: progress, cancellation, then the notification, the log and a summary."""
    progress = _Progress(server, title, token)
    await progress.begin()
    options = RunOptions(
        source="editor",
        progress=progress.report,
        cancelled=progress.cancelled,
        read=server.session.read,
        index=server.session.index,
    )
    try:
        result = await asyncio.to_thread(work, options)
    except RunCancelled:
        progress.end("cancelled")
        server.log(f"{title}: cancelled; nothing was stored")
        raise
    except (RunError, RubricError) as err:
        progress.end("failed")
        raise CommandError(str(err)) from err
    except Exception:
        progress.end("failed")
        raise
    row = result.row
    summary = (
        f"{row['target_id']}: pass rate {row['pass_rate']:.2f}, average {row['avg_score']:.2f}/5, "
        f"gate {'passed' if row['passed_gate'] else 'failed'}, {row['error_count']} errors in {row['question_count']} cases"
    )
    progress.end(summary)
    server.protocol.notify(RUN_COMPLETE, row)
    server.log(f"{title}: {summary}\n" + "\n".join(result.notices))
    kind = types.MessageType.Info if result.ok else types.MessageType.Warning
    server.window_show_message(types.ShowMessageParams(kind, " ".join([summary, *result.notices])))
    return result


def register(server: AiEvalServer) -> None:
    @server.command(RUN_CASES)
    async def run_cases_command(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments))
        path = ls.session.path_of(str(argument.get("uri")))
        if path is None:
            raise CommandError("runCases needs the `uri` of a cases file")
        project = ls.session.require_project()
        token = argument.get("workDoneToken")
        result = await _run(ls, f"Run cases {path.name}", token, lambda o: run_cases(project, path, o))
        return {"row": result.row, "verdicts": _verdicts(result)}

    @server.command(RUN_RUBRIC)
    async def run_rubric(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments))
        rubric = rubric_of(ls, str(argument.get("uri")))
        project = ls.session.require_project()
        ref = f"{rubric.id}@{rubric.version}" if rubric.version else rubric.id
        path = ls.session.path_of(str(argument["uri"])) or ls.session.root
        if "response" in argument:
            case = {
                "id": "response",
                "response": argument["response"],
                "question": argument.get("question") or {},
            }
            result = await _run(
                ls,
                f"Run rubric {rubric.id}",
                argument.get("workDoneToken"),
                lambda o: run(project, ref, [case], None, path, o),
            )
            return {"verdict": _verdicts(result)["response"], "row": result.row}
        runs = []
        for cases_path in cases_files_for(ls, rubric):
            result = await _run(
                ls,
                f"Run rubric {rubric.id} on {cases_path.name}",
                None,
                partial(run_cases, project, cases_path),
            )
            uri = ls.session.uri_of(project.relative(cases_path))
            runs.append({"casesUri": uri, "row": result.row, "verdicts": _verdicts(result)})
        return {"runs": runs}

    @server.command(RUN_CHECK)
    async def run_check(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        argument = _argument(list(arguments))
        rubric = rubric_of(ls, str(argument.get("uri")))
        index = _check_index(rubric, argument)
        project = ls.session.require_project()
        evaluator = make_evaluator(project, RubricLibrary(project, ls.session.index, ls.session.read))

        def outcome(response: str, question: Any) -> Any:
            found = evaluator.run_check(
                rubric, index, response, question if isinstance(question, dict) else {}
            )
            return outcome_json(found) if found is not None else None

        if "response" in argument:
            return {
                "outcome": await asyncio.to_thread(
                    outcome, str(argument["response"]), argument.get("question") or {}
                )
            }
        results = []
        for cases_path in cases_files_for(ls, rubric):
            data = read_cases(cases_path, project, ls.session.read)
            for number, case in enumerate(data["cases"]):
                if not isinstance(case, dict) or not isinstance(case.get("response"), str):
                    continue
                results.append(
                    {
                        "casesUri": ls.session.uri_of(project.relative(cases_path)),
                        "caseId": str(case.get("id") or f"cases[{number}]"),
                        "outcome": await asyncio.to_thread(
                            outcome, case["response"], case.get("question") or {}
                        ),
                    }
                )
        return {"cases": results}

    @server.command(EXPORT_SCHEMA)
    def export_schema(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        return ls.session.require_project().registry.combined.schema

    @server.command(RELOAD_PLUGINS)
    async def reload_plugins(ls: AiEvalServer, *arguments: Any) -> dict[str, Any]:
        problems = await workspace.reload(ls, ls.session.settings)
        kinds = ls.session.require_project().registry.combined.origins
        return {"kinds": {kind: str(origin) for kind, origin in kinds.items()}, "problems": problems}
