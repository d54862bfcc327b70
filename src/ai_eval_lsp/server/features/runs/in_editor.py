"""A run in the editor, whoever starts it (a command, a save): on a worker thread over the folder
as the editor has it, with throttled `$/progress`, cancellable by the request (`$/cancelRequest`)
or by its progress; a cancelled run stores nothing, sends nothing and is answered -32800. A
finished run sends `aiEval/runComplete` exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from ai_eval_lsp.core.evaluate import RubricError
from ai_eval_lsp.core.index import RubricIndex
from ai_eval_lsp.runs.render import cases_json, now_failing, run_facts, summary
from ai_eval_lsp.runs.run import Cancellation, Reader, RunCancelled, RunError, RunOptions, RunResult
from ai_eval_lsp.server.loop import take
from ai_eval_lsp.server.loop.off_loop import off_loop
from ai_eval_lsp.server.loop.progress import Progress
from ai_eval_lsp.server.loop.server import AiEvalServer
from ai_eval_lsp.server.loop.session import ProjectFolder
from ai_eval_lsp.server.lsp import names
from ai_eval_lsp.server.lsp.convert import NotApplicable, uri_of


def reader_for(server: AiEvalServer, folder: ProjectFolder) -> Reader:
    """Files as the editor has them when the run starts: open documents' texts, else the disk
    (as the project reads its files: `Project.read`)."""
    texts = {doc.path: doc.text for doc in server.session.documents_of(folder) if doc.path is not None}
    project = folder.project
    assert project is not None, "a run starts once its folder's project is loaded"

    def read(path: Path) -> bytes:
        text = texts.get(path.resolve())
        return text.encode("utf-8") if text is not None else project.read(path)

    return read


def rubrics_for(folder: ProjectFolder) -> RubricIndex | None:
    """What a run resolves rubrics against: the folder's index; for a document outside every
    workspace folder, None: the run walks its project root then, as `ai-eval-lsp run` does."""
    return folder.index.rubrics if folder.walked else None


T = TypeVar("T")


async def cancellable(server: AiEvalServer, cancellation: Cancellation, work: Callable[[], T]) -> T:
    """Work on a worker thread that the request (`$/cancelRequest`, or shutdown) may cancel, as
    may whoever else holds the cancellation (a run's progress). A cancel the work can no longer
    honour (a run whose row is stored) is refused: the request is then answered with its result."""
    request = server.protocol.msg_id
    if request is not None:
        server.session.request_began(request, cancellation)
    future = asyncio.ensure_future(off_loop(work))
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
            server.session.request_ended(request)


def verdicts_of(result: RunResult) -> dict[str, Any]:
    return {case.case_id: case.verdict.to_json() if case.verdict else None for case in result.cases}


def case_answers(result: RunResult) -> dict[str, Any]:
    """Each case's verdict, why each errored case has none, each case's `expect`, and `cases`:
    each case as a client shows it (its state and lines from `runs/render.py`; clients compute nothing)."""
    return {
        "verdicts": verdicts_of(result),
        "errors": {case.case_id: case.error for case in result.cases if case.error},
        "expected": {case.case_id: case.expect for case in result.cases if case.expect},
        "cases": cases_json(result),
    }


def run_answer(result: RunResult) -> dict[str, Any]:
    """A run of a cases file as the commands answer it: SPEC's `{row, verdicts}`, `case_answers`
    and the run's `summary`, the line a client shows (as `aiEval/runComplete` has it)."""
    return {"row": result.row, **case_answers(result), "summary": summary(result)}


Trigger = Literal["command", "save"]


def run_complete(result: RunResult, trigger: Trigger) -> dict[str, Any]:
    """`aiEval/runComplete`'s params: the row, what started the run, the line a client shows and
    its `facts` (`run_facts`), after an earlier run of the same cases file, the diff to it and the
    cases that now fail; with `casesUri`, the file run.
    A run on save carries its cases' answers too (`case_answers`): no request returns them."""
    params = {**result.row, "trigger": trigger, "summary": summary(result), "facts": run_facts(result.row)}
    if result.change is not None:
        params["change"] = result.change.to_json()
        params["nowFailing"] = now_failing(result)
    if result.cases_path is not None:
        params["casesUri"] = uri_of(result.cases_path)
    if trigger == "save":
        params.update(case_answers(result))
    return params


def flipped(result: RunResult) -> bool:
    return result.change is not None and bool(result.change.flipped)


async def run_in_folder(
    server: AiEvalServer,
    folder: ProjectFolder,
    title: str,
    token: types.ProgressToken | None,
    work: Callable[[RunOptions], RunResult],
    trigger: Trigger = "command",
    cancellation: Cancellation | None = None,
) -> RunResult:
    """One run: progress, cancellation, then the notification, the log and, for a client that
    does not show runs itself, a message (for a run on save, only when a case flipped)."""
    # The rubrics a run resolves are every file's, and an open one's as the editor has it now.
    if not await take.whole_folder(server, folder):
        raise NotApplicable(f"the workspace folder {folder.root} was closed; nothing was run")
    cancellation = cancellation or Cancellation()
    progress = Progress(server, title, token, on_cancel=cancellation.cancel)
    await progress.begin()
    options = RunOptions(
        source="editor",
        progress=lambda done, total: progress.report(done, total, "cases"),
        cancellation=cancellation,
        read=reader_for(server, folder),
        index=rubrics_for(folder),
    )
    try:
        result = await cancellable(server, cancellation, lambda: work(options))
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
    params = run_complete(result, trigger)
    line = params["summary"]
    progress.end(line)
    server.protocol.notify(names.RUN_COMPLETE, params)
    server.refresh_lenses()
    server.log(f"{title}: {line}\n" + "\n".join(result.notices))
    if not server.client_shows_runs() and (trigger == "command" or flipped(result)):
        kind = types.MessageType.Info if result.ok else types.MessageType.Warning
        server.window_show_message(types.ShowMessageParams(kind, " ".join([line, *result.notices])))
    return result
