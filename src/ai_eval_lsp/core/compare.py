"""Two runs of one target compared case by case, with the paired tests of SPEC section 3."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ai_eval_lsp.core.rows import loads

SITE_ID = "siteId"
"""The key a site's run carries (its row id on the site); a local run has none."""


@dataclass(frozen=True, slots=True)
class CaseRecord:
    """One case of a stored run: its 0..5 score and verdict, None for an errored case."""

    case_id: str
    score: float | None
    passed: bool | None
    reason: str | None = None
    outcomes: tuple[Mapping[str, Any], ...] = ()
    question_id: str | None = None
    """The `id` of the case's question (for a site's run, its own key): what a local run and a
    site's run are paired by."""
    tied: bool = False
    """A site's question whose verdict its row leaves unknown: scored the same as the question
    on the other side of the row's pass line (`row_verdicts`). Its `passed` is None."""

    @property
    def scored(self) -> bool:
        return self.score is not None

    def to_json(self) -> dict[str, Any]:
        return {"score": self.score, "passed": self.passed}


def binomial_two_sided(low: int, high: int) -> float:
    """The exact two-sided test of `low` against `high` successes under p = 1/2:
    `min(1, 2 * P[X <= min(low, high)])` for `X ~ Binomial(low + high, 1/2)`; 1 when both are 0."""
    n, k = low + high, min(low, high)
    if n == 0 or 2 * k >= n:
        return 1.0
    # P[X <= k] = pmf(k) * (1 + pmf(k-1)/pmf(k) + ...), each ratio i / (n - i + 1); pmf(k) in
    # logs, so no term underflows for large n and the sum stops once terms no longer count.
    log_pmf_k = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
    total, term = 1.0, 1.0
    for i in range(k, 0, -1):
        term *= i / (n - i + 1)
        total += term
        if term < total * 1e-17:
            break
    return min(1.0, 2 * math.exp(log_pmf_k) * total)


def major(version: str | None) -> str | None:
    return version.split(".", 1)[0] if version else None


def _config(row: Mapping[str, Any]) -> dict[str, Any]:
    try:
        config = loads(row.get("config_json") or "{}")
    except ValueError:
        return {}
    return config if isinstance(config, dict) else {}


def target_version(row: Mapping[str, Any]) -> str | None:
    """The version of the run's own rubric, from the row's `config_json`."""
    config = _config(row)
    for rubric in config.get("rubrics", []):
        if isinstance(rubric, dict) and rubric.get("id") == row.get("target_id"):
            version = rubric.get("version")
            return str(version) if version is not None else None
    return None


def cases_file(row: Mapping[str, Any]) -> str | None:
    """The cases file a run ran (relative to its project's root), from the row's `config_json`."""
    found = _config(row).get("cases_file")
    return found if isinstance(found, str) else None


def mirrored_target(row: Mapping[str, Any]) -> str | None:
    """The site target a local run's cases file mirrors (its `site_target`)."""
    found = None if SITE_ID in row else _config(row).get("site_target")
    return found if isinstance(found, str) else None


def run_label(row: Mapping[str, Any]) -> str:
    """A run as messages and tables name it: `run 12`, or `site run 412`."""
    return f"site run {row[SITE_ID]}" if SITE_ID in row else f"run {row['run_id']}"


def run_name(row: Mapping[str, Any]) -> int | str:
    """A run as commands take it (`aiEval.diff`'s `base` and `head`): its local run id, or
    `site:412`."""
    return f"site:{row[SITE_ID]}" if SITE_ID in row else int(row["run_id"])


def question_scores(scores_json: Any, questions: bool) -> list[CaseRecord]:
    """The per-case (a site's: per-question, `questions`) scores of a row's `scores_json`: an
    object from id to a 0..5 score or null, read entry by entry (a score that is no number is
    null); any other shape gives none, leaving the run its aggregates only."""
    try:
        scores = loads(scores_json) if isinstance(scores_json, str | bytes) else None
    except ValueError:
        return []
    if not isinstance(scores, dict):
        return []
    return [
        CaseRecord(str(key), score_of(value), None, question_id=str(key) if questions else None)
        for key, value in scores.items()
    ]


def score_of(value: Any) -> float | None:
    """A `scores_json` entry's score: a finite number, or a string holding one; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def passing_count(pass_rate: float, scored: int) -> int:
    """How many of a site row's `scored` questions its pass rate says passed: `round(pass_rate x
    scored)` as the site's PHP rounds, half away from zero, on the rate as written (0.7 x 5 is 4,
    although the float 0.7 is a little less), within 0..scored."""
    if not math.isfinite(pass_rate):
        return 0
    product = Decimal(repr(float(pass_rate))) * scored
    return max(0, min(scored, int(product.to_integral_value(ROUND_HALF_UP))))


def row_verdicts(cases: Sequence[CaseRecord], pass_rate: float) -> list[CaseRecord]:
    """A site's questions with the verdicts their own row implies (SPEC 3, "A site question's
    verdict"): of the scored questions, the `passing_count` with the highest scores passed, the
    others failed; where the last one passed and the first one failed would have the same
    score, every question of that score is `tied`, its verdict unknown."""
    scores = sorted((case.score for case in cases if case.score is not None), reverse=True)
    passing = passing_count(pass_rate, len(scores))
    last_in = scores[passing - 1] if passing else math.inf
    first_out = scores[passing] if passing < len(scores) else -math.inf
    tie = last_in if last_in == first_out else None

    def judged(case: CaseRecord) -> CaseRecord:
        if case.score is None:
            return case
        if case.score == tie:
            return replace(case, passed=None, tied=True)
        return replace(case, passed=case.score >= last_in)

    return [judged(case) for case in cases]


@dataclass(frozen=True, slots=True)
class Diff:
    target: str
    base: Mapping[str, Any]
    head: Mapping[str, Any]
    cases: tuple[tuple[str, CaseRecord | None, CaseRecord | None], ...]
    """Every case of either run: head's order, then the cases only the base has."""

    @property
    def flipped(self) -> list[str]:
        return [case_id for case_id, base, head in self.cases if flips(base, head)]

    @property
    def only_base(self) -> list[str]:
        return [case_id for case_id, _, head in self.cases if head is None]

    @property
    def only_head(self) -> list[str]:
        return [case_id for case_id, base, _ in self.cases if base is None]

    @property
    def mcnemar_p(self) -> float:
        """Pass/fail over the cases with a verdict in both runs: b went pass->fail, c fail->pass."""
        paired = [(b, h) for _, b, h in self.cases if b is not None and h is not None and _verdicts(b, h)]
        return binomial_two_sided(
            sum(1 for b, h in paired if b.passed and not h.passed),
            sum(1 for b, h in paired if h.passed and not b.passed),
        )

    @property
    def sign_test_p(self) -> float:
        """Scores over the cases scored in both runs whose score changed (ties dropped)."""
        paired = [
            (b.score, h.score)
            for _, b, h in self.cases
            if b is not None and h is not None and b.scored and h.scored
        ]
        return binomial_two_sided(
            sum(1 for b, h in paired if h is not None and b is not None and h > b),
            sum(1 for b, h in paired if h is not None and b is not None and h < b),
        )

    @property
    def deltas(self) -> dict[str, float]:
        return {
            "pass_rate": self.head["pass_rate"] - self.base["pass_rate"],
            "avg_score": self.head["avg_score"] - self.base["avg_score"],
        }

    @property
    def incomparable(self) -> str | None:
        """Why the scores are not comparable: ai_eval's major version bump of the rubric."""
        old, new = target_version(self.base), target_version(self.head)
        if major(old) is None or major(new) is None or major(old) == major(new):
            return None
        return (
            f"rubric `{self.target}` went from version {old} to {new}, a new major version: "
            "ai_eval declares its scores not comparable with the old ones"
        )

    @property
    def in_common(self) -> int:
        """How many cases (by id) both runs have: those the paired tests compare."""
        return sum(1 for _, base, head in self.cases if base is not None and head is not None)

    @property
    def other_cases_file(self) -> str | None:
        """The cases file the base ran, when it is not the one the head ran."""
        base, head = cases_file(self.base), cases_file(self.head)
        return base if base is not None and head is not None and base != head else None

    @property
    def unpaired(self) -> str | None:
        """Why the runs cannot be compared case by case: they have no case in common (most often
        they ran two cases files of one rubric), so their deltas compare different cases."""
        if self.in_common:
            return None
        base, head = run_label(self.base), run_label(self.head)
        files = (
            f" ({base} ran {cases_file(self.base)}, {head} ran {cases_file(self.head)})"
            if self.other_cases_file
            else ""
        )
        both = (
            f"runs {self.base['run_id']} and {self.head['run_id']}"
            if SITE_ID not in self.base and SITE_ID not in self.head
            else f"{base} and {head}"
        )
        return f"{both} have no case in common{files}: their deltas compare different cases"

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "base": dict(self.base),
            "head": dict(self.head),
            "comparable": self.incomparable is None,
            "notice": self.incomparable,
            "cases": [
                {
                    "caseId": case_id,
                    "base": base.to_json() if base else None,
                    "head": head.to_json() if head else None,
                }
                for case_id, base, head in self.cases
            ],
            "flipped": self.flipped,
            "onlyBase": self.only_base,
            "onlyHead": self.only_head,
            "casesInCommon": self.in_common,
            "deltas": self.deltas,
            "mcnemar_p": self.mcnemar_p,
            "sign_test_p": self.sign_test_p,
        }


def _verdicts(base: CaseRecord, head: CaseRecord) -> bool:
    return base.passed is not None and head.passed is not None


def flips(base: CaseRecord | None, head: CaseRecord | None) -> bool:
    """Whether a case's verdict flipped between two runs (both gave one, and they differ)."""
    return base is not None and head is not None and _verdicts(base, head) and base.passed != head.passed


def diff(
    base: Mapping[str, Any],
    head: Mapping[str, Any],
    base_cases: Sequence[CaseRecord],
    head_cases: Sequence[CaseRecord],
    by_question: bool = False,
) -> Diff:
    """Two rows of one target and their cases, compared case by case; `by_question`, a local run
    and a site's run, by question id (a case without one pairs with nothing, and is listed by its
    case id)."""

    def key(case: CaseRecord) -> str:
        if not by_question:
            return case.case_id
        return case.question_id if case.question_id is not None else f"{case.case_id} (no question id)"

    in_base = {key(case): case for case in base_cases}
    in_head = {key(case): case for case in head_cases}
    cases: list[tuple[str, CaseRecord | None, CaseRecord | None]]
    cases = [(key(case), in_base.get(key(case)), case) for case in head_cases]
    cases += [(key(case), case, None) for case in base_cases if key(case) not in in_head]
    return Diff(str(head["target_id"]), base, head, tuple(cases))
