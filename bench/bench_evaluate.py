"""Run throughput: cases per second of `ai-eval-lsp run` on a cases file (2,000 cases by default)
of a 20-check rubric with one chrF check, against a bare single-process sacrebleu loop over the
same (response, reference) pairs, printed as a ratio. The run is the real one: the cases file
read, the cases evaluated (on every core, in processes, past `PARALLEL_FROM` cases), the row and
every case stored in SQLite.

Run: .venv/bin/python bench/bench_evaluate.py [--cases N] [--repeat K]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from sacrebleu.metrics.chrf import CHRF

from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs import run as runs_module
from ai_eval_lsp.runs.run import RunOptions, run_cases
from ai_eval_lsp.runs.workers import PARALLEL_FROM, workers_for

WORDS = "refund order delivery sorry apologise days week arrive parcel account support help please thanks within five"


def sentence(rng: random.Random, words: int = 100) -> str:
    return " ".join(rng.choice(WORDS.split()) for _ in range(words)) + "."


def rubric() -> str:
    checks = ["  - {id: close, kind: target_match, source: expected.reference, mode: chrf, threshold: 0.4}"]
    for i in range(19):
        checks.append(
            [
                f"  - {{id: c{i}, kind: must_contain_any, values: [refund, sorry, zebra]}}",
                f'  - {{id: c{i}, kind: must_not_contain, values: ["As an AI", "I cannot"]}}',
                f'  - {{id: c{i}, kind: regex, pattern: "\\\\b(five|5)\\\\s+days\\\\b", flags: i}}',
                f"  - {{id: c{i}, kind: target_match, source: expected.reference, mode: normalized}}",
            ][i % 4]
        )
    return (
        'id: bench\nversion: "1.0"\nchecks:\n'
        + "\n".join(checks)
        + "\nscoring: {combine: weighted_avg, threshold: 0.5}\n"
    )


def timed(project: Project, root: Path, repeat: int, workers: int | None) -> float:
    """The median time of a run of the bench's cases file; `workers` forced, or None: as `run`
    decides."""
    decide = runs_module.workers_for
    if workers is not None:
        runs_module.workers_for = lambda cases: workers
    try:
        times = []
        for attempt in range(repeat):
            started = time.perf_counter()
            options = RunOptions(database=root / f"{workers}-{attempt}.sqlite")
            result = run_cases(project, root / "bench.cases.yaml", options)
            times.append(time.perf_counter() - started)
            assert result.row["error_count"] == 0, result.row
    finally:
        runs_module.workers_for = decide
    return statistics.median(times)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--cases", type=int, default=2000)
    options.add_argument("--repeat", type=int, default=3)
    args = options.parse_args()
    rng = random.Random(7)
    pairs = [(sentence(rng), sentence(rng)) for _ in range(args.cases)]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "ai-eval.toml").write_text("")
        (root / "bench.rubric.yaml").write_text(rubric())
        cases = [
            {"id": f"c{i}", "question": {"expected": {"reference": reference}}, "response": response}
            for i, (response, reference) in enumerate(pairs)
        ]
        (root / "bench.cases.yaml").write_text(json.dumps({"rubric": "bench", "cases": cases}))
        project = Project.load(root)
        ours, alone = timed(project, root, args.repeat, None), timed(project, root, args.repeat, 1)

    bare = []
    for _ in range(args.repeat):
        metric = CHRF()
        started = time.perf_counter()
        for response, reference in pairs:
            metric.sentence_score(response, [reference])
        bare.append(time.perf_counter() - started)
    direct = statistics.median(bare)

    workers = workers_for(args.cases)
    print(
        f"{args.cases} cases, {workers} case workers (one per {PARALLEL_FROM} cases, up to one per core); median of {args.repeat}"
    )
    print(f"{'':<44}{'cases/s':>10}{'s':>8}")
    for name, seconds in (
        ("ai-eval-lsp run, 20 checks incl. chrF", ours),
        ("the same run in one process", alone),
        ("bare sacrebleu sentence chrF loop", direct),
    ):
        print(f"{name:<44}{args.cases / seconds:>10.0f}{seconds:>8.2f}")
    print(
        f"ratio: the run grades {direct / ours:.2f}x the cases per second of the bare chrF loop (goal: 1.5x)"
    )


if __name__ == "__main__":
    main()
