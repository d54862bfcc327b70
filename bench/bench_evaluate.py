"""Evaluation throughput: cases per second for a 20-check rubric with one chrF check, against
calling sacrebleu directly on the same (response, reference) pairs, printed as a ratio.

Run: .venv/bin/python bench/bench_evaluate.py [--cases N]
"""

from __future__ import annotations

import argparse
import random
import time

from sacrebleu.metrics.chrf import CHRF

from ai_eval_lsp.core.evaluate import Evaluator, LoadedRubric
from ai_eval_lsp.plugins import discover

WORDS = [
    "refund",
    "order",
    "delivery",
    "sorry",
    "apologise",
    "days",
    "week",
    "arrive",
    "parcel",
    "account",
    "support",
    "help",
    "please",
    "thanks",
    "within",
    "five",
]


def sentence(rng: random.Random, words: int = 100) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + "."


def rubric() -> LoadedRubric:
    checks = [
        {
            "id": "close",
            "kind": "target_match",
            "source": "expected.reference",
            "mode": "chrf",
            "threshold": 0.4,
        }
    ]
    for i in range(19):
        checks.append(
            [
                {"id": f"c{i}", "kind": "must_contain_any", "values": ["refund", "sorry", "zebra"]},
                {"id": f"c{i}", "kind": "must_not_contain", "values": ["As an AI", "I cannot"]},
                {"id": f"c{i}", "kind": "regex", "pattern": r"\b(five|5)\s+days\b", "flags": "i"},
                {"id": f"c{i}", "kind": "target_match", "source": "expected.reference", "mode": "normalized"},
            ][i % 4]
        )
    return LoadedRubric(
        "bench", "1.0", {"checks": checks, "scoring": {"combine": "weighted_avg", "threshold": 0.5}}
    )


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--cases", type=int, default=300)
    args = options.parse_args()
    rng = random.Random(7)
    pairs = [(sentence(rng), sentence(rng)) for _ in range(args.cases)]
    evaluator = Evaluator(discover().runners(timeout=10), lambda ref: None, timeout=10)
    target = rubric()
    evaluator.evaluate(target, *pairs[0][:1], {"expected": {"reference": pairs[0][1]}})  # warm imports

    started = time.perf_counter()
    for response, reference in pairs:
        evaluator.evaluate(target, response, {"expected": {"reference": reference}})
    ours = time.perf_counter() - started

    started = time.perf_counter()
    for response, reference in pairs:
        CHRF().sentence_score(response, [reference])
    direct = time.perf_counter() - started

    print(f"{'':<34}{'cases/s':>10}{'ms/case':>10}")
    print(
        f"{'evaluator, 20 checks incl. chrF':<34}{args.cases / ours:>10.0f}{ours / args.cases * 1000:>10.2f}"
    )
    print(
        f"{'sacrebleu sentence chrF alone':<34}{args.cases / direct:>10.0f}{direct / args.cases * 1000:>10.2f}"
    )
    print(f"ratio: a case through the evaluator takes {ours / direct:.2f}x the time of its chrF call alone")


if __name__ == "__main__":
    main()
