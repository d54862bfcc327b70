"""A big run on every core: the cases go, in chunks, to child processes (`python -P -m
ai_eval_lsp.runs.workers`, the same environment), each grading with its own evaluator, plugin host
and PHP worker, exactly as a run in one process does; results come back in case order.

A child is told the project (root and settings) and the run's rubrics already resolved, so it
reads nothing of the workspace and imports nothing from it. Every check stays bounded by
`runTimeoutSeconds` inside the child; a cancelled run kills the children at once.

Each child is a `hosts.process.Host`; the values of its requests and answers are pickled (base64,
inside the hosts' JSON lines): JSON would join a YAML text's lone surrogates into one character,
and a child must grade the very text the parent read. Both ends are this module, in one
environment.
"""

from __future__ import annotations

import base64
import contextlib
import math
import os
import pickle
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ai_eval_lsp.core.evaluate import Evaluator, LoadedRubric, RubricError
from ai_eval_lsp.core.results import CaseResult
from ai_eval_lsp.disk.settings import Settings
from ai_eval_lsp.hosts.process import Exited, Host, Refused, serve_parent, start_child
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.grading import evaluating, grade

PARALLEL_FROM = 200
"""Cases per worker at least: starting one costs ~0.4 s, so a run of fewer than twice this many
stays in its own process."""
START_SECONDS = 60.0
POLL_SECONDS = 0.1
"""How often a run waiting for its workers looks whether it was cancelled."""
MAX_WORKERS = 8

Prepared = Mapping[str, Mapping[str, Any] | str | None]
"""Each rubric reference the run may meet: the rubric (`{id, version, data}`), why it cannot be
loaded, or None when no rubric answers to it."""


class PreparedLibrary:
    """Rubrics resolved before the run, answered as a `RubricLibrary` answers."""

    def __init__(self, prepared: Prepared) -> None:
        self.prepared = prepared

    def __call__(self, ref: str) -> LoadedRubric | None:
        found = self.prepared.get(ref)
        if isinstance(found, str):
            raise RubricError(found)
        return LoadedRubric(found["id"], found["version"], found["data"]) if found else None


def workers_for(cases: int) -> int:
    """How many processes grade a run of this many cases: one per usable core, at most one per
    `PARALLEL_FROM` cases; 1 means the run stays in its own process."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS, cases // PARALLEL_FROM))


class Cancelled(Exception):
    """The run was cancelled while its cases were graded; the workers are gone."""


def grade_in_workers(
    root: Path,
    settings: Settings,
    ref: str,
    cases: Sequence[tuple[str, Any]],
    prepared: Prepared,
    workers: int,
    progress: Callable[[int], None],
    cancelled: Callable[[], bool],
) -> tuple[list[CaseResult], Counter[str]]:
    """Grade `(name, case)` pairs in `workers` processes; results in case order, and how many
    checks were skipped for each reason. Raises Cancelled once `cancelled()` says so."""
    size = max(25, math.ceil(len(cases) / (workers * 4)))
    chunks = [list(range(start, min(start + size, len(cases)))) for start in range(0, len(cases), size)]
    results: list[CaseResult | None] = [None] * len(cases)
    cannot_run: Counter[str] = Counter()
    lock = threading.Lock()
    hosts: list[Host] = []
    start = (root, settings, prepared, ref)

    def work() -> None:
        host: Host | None = None
        while True:
            with lock:
                if not chunks or cancelled():
                    break
                chunk = chunks.pop(0)
            try:
                if host is None:
                    host = Host(lambda: start_child("ai_eval_lsp.runs.workers"))
                    with lock:
                        hosts.append(host)
                    _call(host, "start", start, START_SECONDS)
                graded, skipped = _call(host, "grade", [cases[i] for i in chunk], math.inf)
            except Exception as err:  # the chunk's cases say why; the run goes on
                cause = (err.cause if isinstance(err, Exited) else str(err)) or "no output"
                graded = [
                    CaseResult(cases[i][0], None, f"the process grading this case ended ({cause})", None)
                    for i in chunk
                ]
                skipped = {}
                if host is not None:
                    host.discard()
                host = None
            with lock:
                for i, result in zip(chunk, graded, strict=True):
                    results[i] = result
                cannot_run.update(skipped)
                progress(sum(1 for r in results if r is not None))
        if host is not None:
            host.close()

    threads = [threading.Thread(target=work, name=f"ai-eval case worker {n}") for n in range(workers)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                if cancelled():
                    raise Cancelled
                thread.join(POLL_SECONDS)
    finally:
        if cancelled():
            with lock:
                chunks.clear()
                running = list(hosts)
            for host in running:
                host.close()  # the call under way fails at once
        for thread in threads:
            thread.join()
    if cancelled():
        raise Cancelled
    assert all(result is not None for result in results), "every chunk is graded or errored"
    return [result for result in results if result is not None], cannot_run


def _call(host: Host, method: str, value: Any, seconds: float) -> Any:
    """One request of the case-worker protocol, its value pickled both ways."""
    answer = host.call(method, {"pickled": _pickled(value)}, seconds)
    return pickle.loads(base64.b64decode(answer["pickled"]))


def _pickled(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value)).decode("ascii")


# --- the child ------------------------------------------------------------------------------------


def main() -> None:
    """Set up from the `start` request, then grade each chunk asked for, until stdin closes."""
    with contextlib.ExitStack() as stack:
        graded_by: list[tuple[Evaluator, PreparedLibrary, str]] = []

        def begin(params: Mapping[str, str]) -> dict[str, str]:
            root, settings, prepared, ref = pickle.loads(base64.b64decode(params["pickled"]))
            library = PreparedLibrary(prepared)
            evaluator = stack.enter_context(evaluating(Project.load(root, settings), library))
            graded_by.append((evaluator, library, ref))
            return {"pickled": _pickled(True)}

        def grade_chunk(params: Mapping[str, str]) -> dict[str, str]:
            if not graded_by:
                raise Refused("asked to grade before it was started")
            evaluator, library, ref = graded_by[-1]
            chunk = pickle.loads(base64.b64decode(params["pickled"]))
            graded = [grade(evaluator, library, ref, name, case) for name, case in chunk]
            skipped = Counter(evaluator.cannot_run)
            evaluator.cannot_run.clear()
            return {"pickled": _pickled((graded, skipped))}

        serve_parent({"start": begin, "grade": grade_chunk})


if __name__ == "__main__":
    main()
