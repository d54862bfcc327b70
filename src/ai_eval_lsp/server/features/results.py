"""What the results store holds, as clients ask for it (SPEC section 5): `aiEval.history`,
`aiEval.diff` and `aiEval.render` (the same words and pictures as the CLI's `history`, `diff` and
`report`), each read off the loop from the store of the project the target belongs to (in the
workspace as it was once every project was loaded: `take.loaded_workspace`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from ai_eval_lsp.runs.report import history_answer, render_stored
from ai_eval_lsp.runs.store import ResultStore, RunName, StoreError
from ai_eval_lsp.server.loop.off_loop import off_loop
from ai_eval_lsp.server.lsp.convert import NotApplicable
from ai_eval_lsp.server.query import rubrics
from ai_eval_lsp.server.query.snapshots import WorkspaceSnapshot


async def history(workspace: WorkspaceSnapshot, argument: dict[str, Any]) -> dict[str, Any]:
    """`aiEval.history` {target, limit?}: SPEC's rows, with `runs` and `compare` beside them (what
    a history view offers and opens on)."""
    target, limit = argument.get("target"), argument.get("limit")
    if not isinstance(target, str):
        raise NotApplicable(f"`target` must be a rubric id, not {target!r}")
    if limit is not None and not isinstance(limit, int):
        raise NotApplicable(f"`limit` must be a number of runs, not {limit!r}")
    store = rubrics.results_of(rubrics.folder_of_target(workspace, target).project)
    return await _reading(store, lambda: history_answer(store, target, limit))


async def diff(workspace: WorkspaceSnapshot, argument: dict[str, Any]) -> dict[str, Any]:
    """`aiEval.diff` {target?, base?, head?}: two runs compared."""
    target, base, head = _runs_named(argument)
    store = rubrics.results_of(rubrics.folder_of_target(workspace, target).project)
    return await _reading(store, lambda: store.diff(base, head, target).to_json())


async def render(workspace: WorkspaceSnapshot, argument: dict[str, Any]) -> dict[str, Any]:
    """`aiEval.render` {what, target?, base?, head?, format}: `{text}`; `what: "kinds"` is how
    many kinds the project of `uri` has, by source, as `plugins` ends."""
    what, form = argument.get("what"), argument.get("format", "text")
    if what == "kinds":
        folder = rubrics.folder_of_target(workspace, None)
        assert folder.project is not None, "a folder is found once its project is loaded"
        return {"text": folder.project.registry.combined.kinds_line()}
    target, base, head = _runs_named(argument)
    store = rubrics.results_of(rubrics.folder_of_target(workspace, target).project)

    def read() -> str:
        try:
            return render_stored(store, str(what), str(form), target, base, head)
        except ValueError as err:
            raise NotApplicable(str(err)) from err

    return {"text": await _reading(store, read)}


T = TypeVar("T")
log = logging.getLogger(__name__)


async def _reading(store: ResultStore, read: Callable[[], T]) -> T:
    """A read of the results store, off the loop; what it cannot find is the caller's mistake.
    The rows it left out go to the log."""
    try:
        return await off_loop(read)
    except StoreError as err:
        raise NotApplicable(str(err)) from err
    finally:
        for note in store.skipped:
            log.warning("%s", note)


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
