"""Code lenses: "Run rubric", "Run check" and the last run on a rubric, "Run cases" on a cases file."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from lsprotocol import types

from ai_eval_lsp.runs.store import StoreError
from ai_eval_lsp.server.loop.off_loop import off_loop
from ai_eval_lsp.server.lsp import names
from ai_eval_lsp.server.query import rubrics
from ai_eval_lsp.server.query.snapshots import DocumentSnapshot

log = logging.getLogger(__name__)


def last_run_title(row: Mapping[str, Any], runs: int) -> str:
    low, high = row["pass_rate_ci_low"], row["pass_rate_ci_high"]
    interval = f"[{low:.2f}-{high:.2f}]" if low is not None else "[n/a]"
    return (
        f"last run: pass {row['pass_rate']:.2f} {interval}, {row['avg_score']:.1f}/5, "
        f"{runs} run{'s' * (runs != 1)}"
    )


def code_lenses(
    document: DocumentSnapshot, last_run: tuple[Mapping[str, Any] | None, int]
) -> list[types.CodeLens]:
    top = types.Range(types.Position(0, 0), types.Position(0, 0))
    uri = document.uri
    if document.role == "cases":
        return [types.CodeLens(top, types.Command("Run cases", names.RUN_CASES, arguments=[{"uri": uri}]))]
    lenses = [types.CodeLens(top, types.Command("Run rubric", names.RUN_RUBRIC, arguments=[{"uri": uri}]))]
    summary = rubrics.own_summary(document)
    row, runs = last_run
    if summary is not None and summary.id_span is not None and row is not None:
        line = summary.id_span.start.line
        history = types.Command(
            last_run_title(row, runs), names.HISTORY, arguments=[{"target": summary.id, "uri": uri}]
        )
        lenses.append(types.CodeLens(types.Range(types.Position(line, 0), types.Position(line, 0)), history))
    for index, check in enumerate(rubrics.checks_of(document)):
        where = types.Range(types.Position(check.line, 0), types.Position(check.line, 0))
        command = types.Command("Run check", names.RUN_CHECK, arguments=[{"uri": uri, "checkIndex": index}])
        lenses.append(types.CodeLens(where, command))
    return lenses


async def code_lens(document: DocumentSnapshot, params: types.CodeLensParams) -> list[types.CodeLens]:
    summary = rubrics.own_summary(document)
    last_run: tuple[Mapping[str, Any] | None, int] = (None, 0)
    if summary is not None and summary.id is not None and document.project is not None:
        store, target = rubrics.results_of(document.project), summary.id
        try:
            last_run = await off_loop(lambda: store.last_run(target))
        except StoreError as err:  # the lenses without it; the server's log says why
            log.warning("the last run of `%s` cannot be shown: %s", target, err)
    return code_lenses(document, last_run)
