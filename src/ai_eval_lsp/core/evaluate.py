"""The evaluator: what ai_eval's RubricCheckEvaluator does with a rubric and one response.

Each check goes to the first executor whose `applies()` is true, in dispatch order; a check no
executor claims is skipped and named in the reason; `composite` is evaluated here, recursively,
cycle-guarded and capped at three hops. A rubric with no executable check has no verdict.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ai_eval_lsp.core.api import CheckOutcome
from ai_eval_lsp.core.index import check_name
from ai_eval_lsp.core.lints import MAX_COMPOSITE_HOPS
from ai_eval_lsp.core.refs import format_ref

COMBINE_MODES = ("all_pass", "any_pass", "weighted_avg", "min", "max", "median")


class RubricError(Exception):
    """The rubric itself cannot be evaluated (for example an unknown combine mode)."""


class CheckSkipped(Exception):
    """An executor claims a check but cannot run it here (a PHP executor that needs a Drupal
    service, or no PHP): the check is skipped with this cause, as kinds nobody runs are."""


@dataclass(frozen=True, slots=True)
class LoadedRubric:
    id: str
    version: str | None
    data: Mapping[str, Any]

    @property
    def name(self) -> str:
        return format_ref(self.id, self.version)


RubricSource = Callable[[str], LoadedRubric | None]
"""Resolves `id` or `id@version` to a rubric of the workspace."""


@dataclass(frozen=True, slots=True)
class Runner:
    """An executor in dispatch order; `unavailable` says why one that claims checks cannot run
    them here at all. Each executor bounds its own time (the core regex search, the plugin host
    and the PHP worker kill what outlives `runTimeoutSeconds`)."""

    executor: Any
    name: str
    unavailable: str | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    score: float
    passed: bool
    reason: str
    outcomes: tuple[CheckOutcome, ...]
    skipped: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "passed": self.passed,
            "reason": self.reason,
            "outcomes": [outcome_json(o) for o in self.outcomes],
            "skipped": list(self.skipped),
        }


def outcome_json(outcome: CheckOutcome) -> dict[str, Any]:
    return {
        "checkId": outcome.check_id,
        "kind": outcome.kind,
        "score": outcome.score,
        "passed": outcome.passed,
        "reason": outcome.reason,
    }


def claim(runners: Sequence[Runner], check: Mapping[str, Any]) -> tuple[Runner | None, str | None]:
    """The first runner whose `applies()` is true; one that raises is passed over, and its
    error is returned when no other runner claims the check."""
    error = None
    for runner in runners:
        try:
            if runner.executor.applies(check):
                return runner, None
        except CheckSkipped:
            return runner, None  # it claims the check; running it will say why it is skipped
        except Exception as err:
            error = error or f"{runner.name} raised in applies(): {type(err).__name__}: {err}"
    return None, error


class Evaluator:
    def __init__(self, runners: Sequence[Runner], rubrics: RubricSource) -> None:
        self.runners = list(runners)
        self.rubrics = rubrics
        self.cannot_run: Counter[str] = Counter()
        """How many checks were skipped for each reason their executor gave (no PHP, a Drupal
        service it needs): a run says so in a line, not only in each case's reason."""

    def evaluate(self, rubric: LoadedRubric, response: str, question: Mapping[str, Any]) -> Verdict | None:
        """The rubric's verdict on one response, or None when no check was executable."""
        return self._evaluate(rubric, response, question, (rubric,))

    def run_check(
        self, rubric: LoadedRubric, index: int, response: str, question: Mapping[str, Any]
    ) -> CheckOutcome | str:
        """One check of a rubric, as the evaluator would run it: its outcome, or why it was
        skipped (the words a verdict's reason gives after its name: `llm_judge, not executed`)."""
        checks = rubric.data.get("checks")
        if not isinstance(checks, list) or not 0 <= index < len(checks):
            raise RubricError(f"rubric `{rubric.name}` has no check at position {index}")
        return self._check(index, checks[index], response, question, (rubric,))

    def _evaluate(
        self,
        rubric: LoadedRubric,
        response: str,
        question: Mapping[str, Any],
        chain: tuple[LoadedRubric, ...],
    ) -> Verdict | None:
        checks = rubric.data.get("checks")
        if not isinstance(checks, list):
            raise RubricError(f"rubric `{rubric.name}` has no list of checks")
        executed: list[tuple[int, Mapping[str, Any], CheckOutcome]] = []
        skipped: list[str] = []
        skip_reasons: list[str] = []
        for index, check in enumerate(checks):
            outcome = self._check(index, check, response, question, chain)
            if isinstance(outcome, CheckOutcome):
                executed.append((index, check, outcome))
            else:
                skipped.append(check_name(index, check))
                skip_reasons.append(f"{check_name(index, check)} ({outcome})")
        if not executed:
            return None
        return _combine(rubric, executed, tuple(skipped), skip_reasons)

    def _check(
        self,
        index: int,
        check: Any,
        response: str,
        question: Mapping[str, Any],
        chain: tuple[LoadedRubric, ...],
    ) -> CheckOutcome | str:
        """An outcome, or why the check was skipped."""
        if not isinstance(check, Mapping):  # it has no id: it is named by its place
            return CheckOutcome("", "", 0.0, False, f"checks[{index}] is not a mapping")
        kind = check.get("kind")
        if kind == "composite":
            return self._composite(check, response, question, chain)
        runner, error = claim(self.runners, check)
        if runner is not None:
            outcome = (
                self._execute(runner, check, response, question)
                if runner.unavailable is None
                else CheckSkipped(runner.unavailable)
            )
            if isinstance(outcome, CheckOutcome):
                return outcome
            self.cannot_run[str(outcome)] += 1
            return f"{kind}, {outcome}"
        if error:
            return CheckOutcome.of(check, False, error)
        return f"{kind}, not executed"

    def _execute(
        self, runner: Runner, check: Mapping[str, Any], response: str, question: Mapping[str, Any]
    ) -> CheckOutcome | CheckSkipped:
        try:
            outcome = runner.executor.execute(check, response, question)
        except CheckSkipped as skipped:
            return skipped
        except Exception as err:  # reported as the check's failure, never raised
            return CheckOutcome.of(check, False, f"{runner.name} raised {type(err).__name__}: {err}")
        if not isinstance(outcome, CheckOutcome):
            return CheckOutcome.of(
                check, False, f"{runner.name} returned {type(outcome).__name__}, not a CheckOutcome"
            )
        return outcome

    def _composite(
        self,
        check: Mapping[str, Any],
        response: str,
        question: Mapping[str, Any],
        chain: tuple[LoadedRubric, ...],
    ) -> CheckOutcome | str:
        """The composite's outcome, or why it was skipped (its rubric runs nothing)."""
        ref = check.get("rubric")
        if not isinstance(ref, str) or not ref:
            return CheckOutcome.of(check, False, "`rubric` must name a rubric of the workspace")
        try:
            sub = self.rubrics(ref)
        except RubricError as err:
            return CheckOutcome.of(check, False, str(err))
        if sub is None:
            return CheckOutcome.of(check, False, f"no rubric `{ref}` in the workspace")
        names = " → ".join(r.id for r in (*chain, sub))
        if any((r.id, r.version) == (sub.id, sub.version) for r in chain):
            return CheckOutcome.of(check, False, f"composite cycle: {names}")
        if len(chain) > MAX_COMPOSITE_HOPS:
            return CheckOutcome.of(
                check, False, f"composites nest deeper than {MAX_COMPOSITE_HOPS} hops: {names}"
            )
        try:
            verdict = self._evaluate(sub, response, question, (*chain, sub))
        except RubricError as err:
            return CheckOutcome.of(check, False, str(err))
        if verdict is None:
            return f"composite: `{sub.name}` has no executable check"
        return CheckOutcome(
            str(check.get("id") or ""),
            "composite",
            verdict.score,
            verdict.passed,
            f"{sub.name}: {verdict.reason}",
        )


def _number(value: Any, what: str, low: float = 0.0, high: float | None = None) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value < low
        or (high is not None and value > high)
    ):
        bound = f"from {low:g} to {high:g}" if high is not None else f">= {low:g}"
        raise RubricError(f"{what} must be a number {bound}, not {value!r}")
    return float(value)


def _combine(
    rubric: LoadedRubric,
    executed: list[tuple[int, Mapping[str, Any], CheckOutcome]],
    skipped: tuple[str, ...],
    skip_reasons: list[str],
) -> Verdict:
    scoring = rubric.data.get("scoring")
    if not isinstance(scoring, Mapping) or scoring.get("combine") not in COMBINE_MODES:
        combine = scoring.get("combine") if isinstance(scoring, Mapping) else None
        raise RubricError(
            f"rubric `{rubric.name}`: `scoring.combine` must be one of {', '.join(COMBINE_MODES)}, not {combine!r}"
        )
    mode = scoring["combine"]
    threshold = _number(scoring.get("threshold", 0.5), "`scoring.threshold`", 0.0, 1.0)
    outcomes = [outcome for _, _, outcome in executed]
    scores = [outcome.score for outcome in outcomes]
    if mode == "all_pass":
        passed = all(o.passed for o in outcomes)
        score = 1.0 if passed else 0.0
    elif mode == "any_pass":
        passed = any(o.passed for o in outcomes)
        score = 1.0 if passed else 0.0
    else:
        if mode == "weighted_avg":
            weights = scoring.get("weights") or {}
            if not isinstance(weights, Mapping):
                raise RubricError("`scoring.weights` must map check ids to numbers")
            ws = [
                _number(weights.get(check.get("id"), 1.0), f"the weight of `{check.get('id')}`")
                for _, check, _ in executed
            ]
            total = sum(ws)
            score = sum(w * s for w, s in zip(ws, scores, strict=True)) / total if total else 0.0
        else:
            reducers: dict[str, Callable[[list[float]], float]] = {
                "min": min,
                "max": max,
                "median": statistics.median,
            }
            score = reducers[mode](scores)
        passed = score >= threshold
    failed = [f"{check_name(i, c)} ({o.reason})" for i, c, o in executed if not o.passed]
    summary = (
        f"{mode}: {sum(o.passed for o in outcomes)} of {len(outcomes)} checks passed"
        if mode in ("all_pass", "any_pass")
        else f"{mode} {score:.3f} {'>=' if passed else '<'} threshold {threshold:g}"
    )
    parts = [summary]
    if failed:
        parts.append("failed: " + "; ".join(failed))
    if skip_reasons:
        parts.append("skipped: " + "; ".join(skip_reasons))
    return Verdict(score, passed, " | ".join(parts), tuple(outcomes), skipped)
