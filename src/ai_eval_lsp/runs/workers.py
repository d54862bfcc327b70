"""A big run on every core: the cases go, in chunks, to child processes (`python -P -m
ai_eval_lsp.runs.workers`, the same environment), each grading with its own evaluator, plugin host
and PHP worker, exactly as a run in one process does; results come back in case order.

A child is told the project (root and settings) and the run's rubrics already resolved, so it
reads nothing of the workspace and imports nothing from it. Every check stays bounded by
`runTimeoutSeconds` inside the child; a cancelled run kills the children at once.

Requests and answers are pickled (one base64 line each, in the JSON lines of `childproc`): JSON
would join a YAML text's lone surrogates into one character, and a child must grade the very
text the parent read. Both ends are this module, in one environment.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import os
import pickle
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ai_eval_lsp.core.evaluate import Evaluator, LoadedRubric, RubricError
from ai_eval_lsp.core.results import CaseResult
from ai_eval_lsp.disk.settings import Settings
from ai_eval_lsp.hosts.process import MARK, Garbled, Process, Timeout, child_protocol, start_child

PARALLEL_FROM = 200
"""Cases per worker at least: starting one costs ~0.4 s, so a run of fewer than twice this many
stays in its own process."""
START_SECONDS = 60.0
POLL_SECONDS = 0.1
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
    processes: list[Process] = []
    start = ("start", (root, settings, prepared, ref))

    def work() -> None:
        process: Process | None = None
        while True:
            with lock:
                if not chunks or cancelled():
                    break
                chunk = chunks.pop(0)
            try:
                if process is None:
                    process = start_child("ai_eval_lsp.runs.workers")
                    with lock:
                        processes.append(process)
                    _call(process, start, START_SECONDS)
                graded, skipped = _call(process, ("grade", [cases[i] for i in chunk]), math.inf)
            except Exception as err:  # the chunk's cases say why; the run goes on
                cause = (process.cause() if process else "") or str(err) or "no output"
                graded = [
                    CaseResult(cases[i][0], None, f"the process grading this case ended ({cause})", None)
                    for i in chunk
                ]
                skipped = {}
                if process is not None:
                    process.kill()
                process = None
            with lock:
                for i, result in zip(chunk, graded, strict=True):
                    results[i] = result
                cannot_run.update(skipped)
                progress(sum(1 for r in results if r is not None))
        if process is not None:
            process.stop()

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
                for process in processes:
                    process.kill()
        for thread in threads:
            thread.join()
    if cancelled():
        raise Cancelled
    assert all(result is not None for result in results), "every chunk is graded or errored"
    return [result for result in results if result is not None], cannot_run


def _call(process: Process, request: tuple[str, Any], seconds: float) -> Any:
    """One request and its answer; waits in short slices so a killed child is noticed."""
    deadline = time.monotonic() + seconds
    process.send(_line(request), time.monotonic() + START_SECONDS)
    while True:
        try:
            message = process.receive(min(deadline, time.monotonic() + POLL_SECONDS))
        except Timeout:
            if time.monotonic() >= deadline:
                raise
            continue
        if "error" in message:
            raise Garbled(str(message["error"]))
        return pickle.loads(base64.b64decode(message["pickled"]))


def _line(value: Any) -> bytes:
    return (
        json.dumps({"pickled": base64.b64encode(pickle.dumps(value)).decode("ascii")}).encode("ascii") + b"\n"
    )


# --- the child ------------------------------------------------------------------------------------


def main() -> None:
    """Set up from the first request, then grade each chunk asked for, until stdin closes."""
    protocol = child_protocol()
    from ai_eval_lsp.project.project import Project
    from ai_eval_lsp.runs.grading import evaluating, grade

    with contextlib.ExitStack() as stack:
        evaluator: Evaluator | None = None
        library = PreparedLibrary({})
        ref = ""
        for line in sys.stdin.buffer:
            op, value = pickle.loads(base64.b64decode(json.loads(line)["pickled"]))
            if op == "start":
                root, settings, prepared, ref = value
                library = PreparedLibrary(prepared)
                evaluator = stack.enter_context(evaluating(Project.load(root, settings), library))
                protocol.write(MARK + _line(True))
            elif evaluator is None:
                protocol.write(
                    MARK + json.dumps({"error": "asked to grade before it was started"}).encode() + b"\n"
                )
            else:
                graded = [grade(evaluator, library, ref, name, case) for name, case in value]
                protocol.write(MARK + _line((graded, Counter(evaluator.cannot_run))))
                evaluator.cannot_run.clear()


if __name__ == "__main__":
    main()
