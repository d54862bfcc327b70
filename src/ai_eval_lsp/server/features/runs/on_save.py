"""Runs on save (SPEC section 3, `runOnSave`): a saved rubric or cases file with no problem that
breaks it runs the cases files it affects, as ordinary runs sent with `trigger: "save"`. A new
save cancels the on-save runs not yet finished (a cancelled run stores and sends nothing); a run
the user started is never touched, having its own cancellation."""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from ai_eval_lsp.core.problems import BREAKING_CODES
from ai_eval_lsp.runs.run import Cancellation, run_cases
from ai_eval_lsp.server.features.runs.in_editor import run_in_folder
from ai_eval_lsp.server.loop import take
from ai_eval_lsp.server.loop.server import AiEvalServer
from ai_eval_lsp.server.lsp.convert import NotApplicable


class Round:
    """The on-save runs of one save: cancelled together, the running one included."""

    def __init__(self) -> None:
        self.cancelled = False
        self.running: Cancellation | None = None

    def next_run(self) -> Cancellation | None:
        """The cancellation of the round's next run, or None once the round is cancelled."""
        self.running = None if self.cancelled else Cancellation()
        return self.running

    def cancel(self) -> None:
        self.cancelled = True
        if self.running is not None:
            self.running.cancel()


async def run_affected(server: AiEvalServer, uri: str, round_: Round) -> None:
    """Run the cases files a save of `uri` affects, one after another, unless the round is
    cancelled meanwhile or the saved file is broken (its runs would only error)."""
    document = await take.settled_document(server, uri)
    if document is None or document.analysis is None or round_.cancelled:
        return
    project = document.folder.project
    if project is None or project.settings.run_on_save != "affected":
        return
    if any(problem.code in BREAKING_CODES for problem in document.analysis.problems):
        return
    folder = document.folder
    for relative in folder.index.affected([document.relative]):
        cancellation = round_.next_run()
        if cancellation is None:
            return
        path = folder.root / relative
        try:
            await run_in_folder(
                server,
                folder,
                f"Run cases {path.name} (on save)",
                None,
                lambda options, path=path: run_cases(project, path, options),  # type: ignore[misc]
                trigger="save",
                cancellation=cancellation,
            )
        except JsonRpcRequestCancelled:  # a later save, or the user through its progress
            return
        except NotApplicable as err:  # said in the log; the other files still run
            server.log(f"{path.name}: not run on save: {err}")


def did_save(server: AiEvalServer, params: types.DidSaveTextDocumentParams) -> None:
    server.scheduler.start(params.text_document.uri)  # no need to wait for the debounce
    round_ = Round()
    server.session.save_began(round_)  # the runs of earlier saves are cancelled
    server.spawn(run_affected(server, params.text_document.uri, round_)).add_done_callback(
        lambda _: server.session.save_ended(round_)
    )
