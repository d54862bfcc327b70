"""The result row of a run (the seed's run-complete event), built from per-case verdicts."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ai_eval_lsp.core.compare import CaseRecord
from ai_eval_lsp.core.evaluate import Verdict, outcome_json

Z_95 = 1.96

METRICS = ("pass_rate", "avg_score")
"""What a gate may bound."""


def wilson_interval(passes: int, total: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval for `passes` of `total`, without continuity correction."""
    if total == 0:
        return None
    p = passes / total
    denominator = 1 + z * z / total
    center = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, center - half), min(1.0, center + half)


EXPECTATIONS = ("pass", "fail")
"""What a case's `expect` may be."""


@dataclass(frozen=True, slots=True)
class CaseResult:
    case_id: str
    verdict: Verdict | None
    error: str | None
    expect: str | None
    question_id: str | None = None
    """The `id` of its question, when it has one."""

    @property
    def scored(self) -> bool:
        return self.error is None and self.verdict is not None

    @property
    def expectation_met(self) -> bool:
        """A case with no `expect` always meets it; an errored case never does, nor does one whose
        `expect` is neither pass nor fail (a mistyped expectation must not pass unchecked)."""
        if self.expect is None:
            return True
        if self.expect not in EXPECTATIONS:
            return False
        return self.scored and self.verdict is not None and self.verdict.passed == (self.expect == "pass")

    def record(self) -> CaseRecord:
        """The case as the store keeps it: its 0..5 score and verdict, or its error."""
        if self.verdict is None or self.error is not None:
            return CaseRecord(self.case_id, None, None, self.error, question_id=self.question_id)
        verdict = self.verdict
        outcomes = tuple(outcome_json(o) for o in verdict.outcomes)
        return CaseRecord(
            self.case_id, 5 * verdict.score, verdict.passed, verdict.reason, outcomes, self.question_id
        )


def gate_failures(gate: Mapping[str, float] | None, metrics: Mapping[str, float], scored: int) -> list[str]:
    """Each bound of the gate that the run missed, said in a line; none when the gate passed."""
    if not gate:
        return []
    if not scored:
        return ["no case was scored"]
    return [
        f"{name} {metrics[name]:.2f} < {bound:g}" if name in metrics else f"`{name}` is not a metric"
        for name, bound in gate.items()
        if metrics.get(name, -1.0) < bound
    ]


def build_row(
    target_id: str,
    cases: Sequence[CaseResult],
    gate: Mapping[str, float] | None,
    source: str,
    duration: float,
    config: Mapping[str, Any],
) -> dict[str, Any]:
    """Every field of the row but `id`, `run_id` and `timestamp`, which the store assigns."""
    scored = [c for c in cases if c.scored and c.verdict is not None]
    passes = sum(1 for c in scored if c.verdict is not None and c.verdict.passed)
    avg_score = (
        sum(5 * c.verdict.score for c in scored if c.verdict is not None) / len(scored) if scored else 0.0
    )
    pass_rate = passes / len(scored) if scored else 0.0
    interval = wilson_interval(passes, len(scored))
    passed_gate = not gate_failures(gate, {"pass_rate": pass_rate, "avg_score": avg_score}, len(scored))
    return {
        "target_id": target_id,
        "avg_score": avg_score,
        "pass_rate": pass_rate,
        "pass_rate_ci_low": interval[0] if interval else None,
        "pass_rate_ci_high": interval[1] if interval else None,
        "passed_gate": 1 if passed_gate else 0,
        "question_count": len(cases),
        "error_count": len(cases) - len(scored),
        "scores_json": json.dumps(
            {c.case_id: (5 * c.verdict.score if c.scored and c.verdict is not None else None) for c in cases}
        ),
        "source": source,
        "duration": float(duration),
        "config_json": json.dumps(config, sort_keys=True),
    }
