"""The evaluator's own edges, in process: one check run alone, checks that are no mapping, checks
that cannot run here and counted as such, an executor whose `applies()` raises; and verdicts as
the CLI prints them in JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ai_eval_lsp.cli import main
from ai_eval_lsp.core.api import CheckOutcome, Services
from ai_eval_lsp.core.evaluate import CheckSkipped, Evaluator, LoadedRubric, RubricError, Runner
from ai_eval_lsp.core.executors import StringCheckExecutor, TargetMatchExecutor

RUBRIC = LoadedRubric(
    "tone",
    "1.0",
    {
        "checks": [
            {"id": "sorry", "kind": "must_contain_any", "values": ["sorry"]},
            "not a check",
            {"id": "php", "kind": "php_only"},
            {"id": "again", "kind": "php_only"},
        ],
        "scoring": {"combine": "all_pass"},
    },
)


class PhpOnly:
    """Claims `php_only` checks, as a PHP executor does where no PHP can run them."""

    def applies(self, check: Mapping[str, Any]) -> bool:
        return check.get("kind") == "php_only"

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> CheckOutcome:
        raise AssertionError("an unavailable runner is never asked to execute")


class Raising:
    def applies(self, check: Mapping[str, Any]) -> bool:
        raise ValueError("no idea")

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> CheckOutcome:
        raise AssertionError("never claimed")


def evaluator(*extra: Runner) -> Evaluator:
    return Evaluator([Runner(StringCheckExecutor(), "core"), *extra], lambda ref: None)


def test_one_check_runs_alone_by_its_place() -> None:
    outcome = evaluator().run_check(RUBRIC, 0, "So sorry", {})
    assert outcome == CheckOutcome("sorry", "must_contain_any", 1.0, True, 'found "sorry"')
    with pytest.raises(RubricError, match=r"^rubric `tone@1.0` has no check at position 4$"):
        evaluator().run_check(RUBRIC, 4, "x", {})
    with pytest.raises(RubricError, match=r"^rubric `tone@1.0` has no check at position -1$"):
        evaluator().run_check(RUBRIC, -1, "x", {})
    no_checks = LoadedRubric("empty", None, {"checks": "none"})
    with pytest.raises(RubricError, match=r"^rubric `empty` has no check at position 0$"):
        evaluator().run_check(no_checks, 0, "x", {})


def test_a_check_that_is_no_mapping_fails_with_its_place() -> None:
    outcome = evaluator().run_check(RUBRIC, 1, "x", {})
    assert outcome == CheckOutcome("", "", 0.0, False, "checks[1] is not a mapping")


def test_checks_that_cannot_run_here_are_skipped_and_counted_by_cause() -> None:
    runs = evaluator(Runner(PhpOnly(), "module my_mod", unavailable="PHP is off (php.run)"))
    verdict = runs.evaluate(RUBRIC, "So sorry", {})
    assert verdict is not None and verdict.skipped == ("php", "again")
    assert runs.cannot_run == {"PHP is off (php.run)": 2}
    assert (
        "skipped: php (php_only, PHP is off (php.run)); again (php_only, PHP is off (php.run))"
        in verdict.reason
    )


def test_an_executor_whose_applies_raises_fails_the_check_it_would_not_say() -> None:
    runs = evaluator(Runner(Raising(), "plugin fragile 1.0"))
    outcome = runs.run_check(RUBRIC, 2, "x", {})
    assert outcome == CheckOutcome(
        "php", "php_only", 0.0, False, "plugin fragile 1.0 raised in applies(): ValueError: no idea"
    )


def test_the_cli_prints_each_verdict_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ai-eval.toml").write_text("")
    (tmp_path / "tone.rubric.yaml").write_text(
        'id: tone\nversion: "1.0"\nchecks:\n  - {id: sorry, kind: must_contain_any, values: [sorry]}\n'
        "  - {id: other, kind: not_a_kind}\nscoring: {combine: all_pass}\n"
    )
    (tmp_path / "t.cases.yaml").write_text("rubric: tone\ncases:\n  - {id: a, response: So sorry}\n")
    main(["--root", str(tmp_path), "run", "--format", "json", str(tmp_path / "t.cases.yaml")])
    (report,) = json.loads(capsys.readouterr().out)
    assert report["errors"]["a"].startswith(
        "rubric `tone@1.0` (tone.rubric.yaml) cannot be loaded: 1 error; first, at line 5: unknown check kind `not_a_kind`"
    )
    (tmp_path / "tone.rubric.yaml").write_text(
        'id: tone\nversion: "1.0"\nchecks:\n  - {id: sorry, kind: must_contain_any, values: [sorry]}\n'
        "  - {id: judge, kind: llm_judge, description: polite}\nscoring: {combine: all_pass}\n"
    )
    main(["--root", str(tmp_path), "run", "--format", "json", str(tmp_path / "t.cases.yaml")])
    (report,) = json.loads(capsys.readouterr().out)
    assert report["verdicts"]["a"] == {
        "score": 1.0,
        "passed": True,
        "reason": "all_pass: 1 of 1 checks passed | skipped: judge (llm_judge, not executed)",
        "outcomes": [
            {
                "checkId": "sorry",
                "kind": "must_contain_any",
                "score": 1.0,
                "passed": True,
                "reason": 'found "sorry"',
            }
        ],
        "skipped": ["judge"],
    }


# --- composites, combining and the reason a user reads ------------------------------------------

LIBRARY = {
    "polite": {
        "checks": [
            {"id": "sorry", "kind": "must_contain_any", "values": ["sorry"]},
            {"id": "thanks", "kind": "must_contain_any", "values": ["thanks"]},
        ],
        "scoring": {"combine": "weighted_avg"},
    },
    "judged": {"checks": [{"id": "judge", "kind": "llm_judge", "description": "kind?"}]},
    "reference": {
        "checks": [{"kind": "target_match", "source": "expected.reference"}],
        "scoring": {"combine": "all_pass"},
    },
    "broken": {
        "checks": [{"kind": "must_contain_any", "values": ["x"]}],
        "scoring": {"combine": "average"},
    },
}
TONES = {
    "1.0": {
        "checks": [{"kind": "must_contain_any", "values": ["sorry"]}],
        "scoring": {"combine": "all_pass"},
    },
    "2.0": {
        "checks": [{"id": "older", "kind": "composite", "rubric": "tone@1.0"}],
        "scoring": {"combine": "all_pass"},
    },
}


def library(ref: str) -> LoadedRubric | None:
    """The workspace of these tests: `polite`, `judged` and `broken` (no version), `tone` 1.0 and
    2.0 (2.0 nests 1.0), and `unreadable`, which the workspace knows but cannot load."""
    rubric_id, _, version = ref.partition("@")
    if rubric_id == "unreadable":
        raise RubricError("rubric `unreadable` cannot be read: Permission denied")
    if rubric_id == "tone":
        version = version or "2.0"
        return LoadedRubric("tone", version, TONES[version]) if version in TONES else None
    data = LIBRARY.get(rubric_id)
    return LoadedRubric(rubric_id, None, data) if data is not None and not version else None


def composing(*checks: Any, **scoring: Any) -> LoadedRubric:
    return LoadedRubric(
        "main", "1.0", {"checks": list(checks), "scoring": {"combine": "all_pass", **scoring}}
    )


def run_one(
    check: Any, response: str = "So sorry", question: Mapping[str, Any] | None = None
) -> CheckOutcome | None:
    runs = Evaluator(
        [Runner(StringCheckExecutor(), "core"), Runner(TargetMatchExecutor(Services()), "core")], library
    )
    return runs.run_check(composing(check), 0, response, question or {})


def test_the_question_reaches_a_check_run_alone_and_through_composites() -> None:
    question = {"id": "q1", "expected": {"reference": "So sorry"}}
    target = {"id": "same", "kind": "target_match", "source": "expected.reference"}
    assert run_one(target, "So sorry", question) == CheckOutcome(
        "same", "target_match", 1.0, True, "matches the reference exactly"
    )
    assert run_one({"id": "nested", "kind": "composite", "rubric": "reference"}, "So sorry", question) == (
        CheckOutcome("nested", "composite", 1.0, True, "reference: all_pass: 1 of 1 checks passed")
    )


def test_a_composite_is_one_outcome_with_the_sub_rubrics_score_and_verdict() -> None:
    # polite: sorry passes, thanks fails; weighted_avg of 1 and 0 is 0.5, at the default threshold 0.5
    assert run_one({"id": "manners", "kind": "composite", "rubric": "polite"}) == CheckOutcome(
        "manners",
        "composite",
        0.5,
        True,
        "polite: weighted_avg 0.500 >= threshold 0.5 | failed: thanks (none of the values found)",
    )
    assert run_one({"kind": "composite", "rubric": "polite"}, "no") == CheckOutcome(
        "",
        "composite",
        0.0,
        False,
        "polite: weighted_avg 0.000 < threshold 0.5 | failed: sorry (none of the values found); "
        "thanks (none of the values found)",
    )


def test_a_composite_names_versions_and_a_cycle_needs_the_same_version() -> None:
    # tone (bare: 2.0, the highest) nests tone@1.0: the same id, another version, so no cycle
    assert run_one({"kind": "composite", "rubric": "tone"}) == CheckOutcome(
        "",
        "composite",
        1.0,
        True,
        "tone@2.0: all_pass: 1 of 1 checks passed",
    )
    runs = Evaluator([Runner(StringCheckExecutor(), "core")], library)
    looping = LoadedRubric("tone", "1.0", {"checks": [{"kind": "composite", "rubric": "tone@1.0"}]})
    assert runs.run_check(looping, 0, "So sorry", {}) == CheckOutcome(
        "", "composite", 0.0, False, "composite cycle: tone → tone"
    )


@pytest.mark.parametrize(
    ("check", "reason"),
    [
        ({"kind": "composite"}, "`rubric` must name a rubric of the workspace"),
        ({"kind": "composite", "rubric": ""}, "`rubric` must name a rubric of the workspace"),
        ({"kind": "composite", "rubric": ["polite"]}, "`rubric` must name a rubric of the workspace"),
        ({"kind": "composite", "rubric": "nowhere"}, "no rubric `nowhere` in the workspace"),
        (
            {"kind": "composite", "rubric": "unreadable"},
            "rubric `unreadable` cannot be read: Permission denied",
        ),
        (
            {"kind": "composite", "rubric": "broken"},
            "rubric `broken`: `scoring.combine` must be one of all_pass, any_pass, weighted_avg, min, max, "
            "median, not 'average'",
        ),
    ],
)
def test_a_composite_that_cannot_be_evaluated_fails_with_the_cause(
    check: dict[str, Any], reason: str
) -> None:
    assert run_one({"id": "sub", **check}) == CheckOutcome("sub", "composite", 0.0, False, reason)


def test_a_composite_whose_rubric_runs_nothing_is_skipped_and_named() -> None:
    runs = Evaluator([Runner(StringCheckExecutor(), "core")], library)
    rubric = composing(
        {"id": "sorry", "kind": "must_contain_any", "values": ["sorry"]},
        {"id": "judges", "kind": "composite", "rubric": "judged"},
    )
    assert runs.run_check(rubric, 1, "So sorry", {}) == "composite: `judged` has no executable check"
    verdict = runs.evaluate(rubric, "So sorry", {})
    assert verdict is not None
    assert verdict.skipped == ("judges",)
    assert verdict.reason == (
        "all_pass: 1 of 1 checks passed | skipped: judges (composite: `judged` has no executable check)"
    )
    assert runs.evaluate(composing({"kind": "composite", "rubric": "judged"}), "So sorry", {}) is None


def scored(*checks: Any, **scoring: Any) -> LoadedRubric:
    return LoadedRubric("main", None, {"checks": list(checks), "scoring": scoring})


SORRY = {"id": "sorry", "kind": "must_contain_any", "values": ["sorry"]}
THANKS = {"id": "thanks", "kind": "must_contain_any", "values": ["thanks"]}
JUDGE = {"id": "judge", "kind": "llm_judge", "description": "kind?"}


@pytest.mark.parametrize(
    ("scoring", "score", "passed", "reason"),
    [
        (
            {"combine": "all_pass"},
            0.0,
            False,
            "all_pass: 1 of 2 checks passed | failed: thanks (none of the values found) | "
            "skipped: judge (llm_judge, not executed)",
        ),
        (
            {"combine": "any_pass"},
            1.0,
            True,
            "any_pass: 1 of 2 checks passed | failed: thanks (none of the values found) | "
            "skipped: judge (llm_judge, not executed)",
        ),
        (
            {"combine": "weighted_avg", "weights": {"sorry": 1, "thanks": 3}, "threshold": 0.25},
            0.25,
            True,
            "weighted_avg 0.250 >= threshold 0.25 | failed: thanks (none of the values found) | "
            "skipped: judge (llm_judge, not executed)",
        ),
        (
            {"combine": "weighted_avg", "weights": {"sorry": 3, "judge": 0}},
            0.75,
            True,
            "weighted_avg 0.750 >= threshold 0.5 | failed: thanks (none of the values found) | "
            "skipped: judge (llm_judge, not executed)",
        ),
        (
            {"combine": "min", "threshold": 0.01},
            0.0,
            False,
            "min 0.000 < threshold 0.01 | failed: thanks (none of the values found) | "
            "skipped: judge (llm_judge, not executed)",
        ),
        (
            {"combine": "max", "threshold": 1},
            1.0,
            True,
            "max 1.000 >= threshold 1 | failed: thanks (none of the values found) | "
            "skipped: judge (llm_judge, not executed)",
        ),
        (
            {"combine": "median"},
            0.5,
            True,
            "median 0.500 >= threshold 0.5 | failed: thanks (none of the values found) | "
            "skipped: judge (llm_judge, not executed)",
        ),
    ],
)
def test_the_verdict_reason_names_the_mode_each_failed_and_each_skipped_check(
    scoring: dict[str, Any], score: float, passed: bool, reason: str
) -> None:
    verdict = evaluator().evaluate(scored(SORRY, THANKS, JUDGE, **scoring), "So sorry", {})
    assert verdict is not None
    assert (verdict.score, verdict.passed, verdict.reason, verdict.skipped) == (
        score,
        passed,
        reason,
        ("judge",),
    )


def test_a_verdict_with_nothing_failed_or_skipped_is_its_summary_alone() -> None:
    verdict = evaluator().evaluate(scored(SORRY, combine="weighted_avg", threshold=0.99), "sorry", {})
    assert verdict is not None
    assert verdict.reason == "weighted_avg 1.000 >= threshold 0.99"


@pytest.mark.parametrize(
    ("scoring", "error"),
    [
        (
            None,
            "rubric `main`: `scoring.combine` must be one of all_pass, any_pass, weighted_avg, min, max, median, not None",
        ),
        (
            {},
            "rubric `main`: `scoring.combine` must be one of all_pass, any_pass, weighted_avg, min, max, median, not None",
        ),
        (
            {"combine": "mean"},
            "rubric `main`: `scoring.combine` must be one of all_pass, any_pass, weighted_avg, min, max, median, not 'mean'",
        ),
        ({"combine": "min", "threshold": 1.5}, "`scoring.threshold` must be a number from 0 to 1, not 1.5"),
        ({"combine": "min", "threshold": -0.5}, "`scoring.threshold` must be a number from 0 to 1, not -0.5"),
        (
            {"combine": "all_pass", "threshold": True},
            "`scoring.threshold` must be a number from 0 to 1, not True",
        ),
        (
            {"combine": "max", "threshold": "high"},
            "`scoring.threshold` must be a number from 0 to 1, not 'high'",
        ),
        ({"combine": "weighted_avg", "weights": [1, 2]}, "`scoring.weights` must map check ids to numbers"),
        (
            {"combine": "weighted_avg", "weights": {"thanks": -1}},
            "the weight of `thanks` must be a number >= 0, not -1",
        ),
        (
            {"combine": "weighted_avg", "weights": {"sorry": "1"}},
            "the weight of `sorry` must be a number >= 0, not '1'",
        ),
    ],
)
def test_scoring_the_evaluator_cannot_use_is_an_error_with_the_cause(
    scoring: dict[str, Any] | None, error: str
) -> None:
    rubric = LoadedRubric("main", None, {"checks": [SORRY, THANKS], "scoring": scoring})
    with pytest.raises(RubricError) as raised:
        evaluator().evaluate(rubric, "So sorry", {})
    assert str(raised.value) == error


def test_the_edges_of_scoring_values_are_accepted() -> None:
    for scoring, score in [
        ({"combine": "min", "threshold": 0}, 0.0),
        ({"combine": "max", "threshold": 1.0}, 1.0),
        ({"combine": "weighted_avg", "weights": {"sorry": 0, "thanks": 0.0}}, 0.0),
        ({"combine": "weighted_avg", "weights": None}, 0.5),
    ]:
        verdict = evaluator().evaluate(scored(SORRY, THANKS, **scoring), "So sorry", {})
        assert verdict is not None and verdict.score == score, scoring


def test_a_rubric_without_a_list_of_checks_cannot_be_evaluated() -> None:
    with pytest.raises(RubricError, match=r"^rubric `main@1.0` has no list of checks$"):
        evaluator().evaluate(LoadedRubric("main", "1.0", {"checks": {"a": 1}}), "x", {})


class Unrunnable:
    """A PHP executor that finds out only when asked that it cannot run here."""

    def __init__(self, in_applies: bool) -> None:
        self.in_applies = in_applies

    def applies(self, check: Mapping[str, Any]) -> bool:
        if check.get("kind") == "php_only" and self.in_applies:
            raise CheckSkipped("needs the Drupal service `@cache`")
        return check.get("kind") == "php_only"

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> CheckOutcome:
        raise CheckSkipped("needs the Drupal service `@cache`")


class Faulty:
    def __init__(self, result: Any) -> None:
        self.result = result

    def applies(self, check: Mapping[str, Any]) -> bool:
        return check.get("kind") == "php_only"

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> Any:
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


@pytest.mark.parametrize("in_applies", [True, False])
def test_an_executor_that_cannot_run_a_check_here_skips_it_with_its_cause(in_applies: bool) -> None:
    runs = evaluator(Runner(Unrunnable(in_applies), "module my_mod"), Runner(PhpOnly(), "never reached"))
    assert runs.run_check(RUBRIC, 2, "x", {}) == "php_only, needs the Drupal service `@cache`"
    verdict = runs.evaluate(RUBRIC, "So sorry", {})
    assert verdict is not None
    assert verdict.reason == (
        "all_pass: 1 of 2 checks passed | failed: checks[1] (checks[1] is not a mapping) | "
        "skipped: php (php_only, needs the Drupal service `@cache`); "
        "again (php_only, needs the Drupal service `@cache`)"
    )
    assert runs.cannot_run == {"needs the Drupal service `@cache`": 3}


def test_the_first_executor_that_raises_in_applies_is_the_one_named() -> None:
    runs = evaluator(Runner(Raising(), "plugin first 1.0"), Runner(Raising(), "plugin second 2.0"))
    assert runs.run_check(RUBRIC, 2, "x", {}) == CheckOutcome(
        "php", "php_only", 0.0, False, "plugin first 1.0 raised in applies(): ValueError: no idea"
    )
    claimed = evaluator(
        Runner(Raising(), "plugin first 1.0"), Runner(PhpOnly(), "module my_mod", "no PHP found")
    )
    assert claimed.run_check(RUBRIC, 2, "x", {}) == "php_only, no PHP found"
    assert claimed.cannot_run == {"no PHP found": 1}


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        (KeyError("threshold"), "plugin odd 1.0 raised KeyError: 'threshold'"),
        ({"score": 1}, "plugin odd 1.0 returned dict, not a CheckOutcome"),
        (None, "plugin odd 1.0 returned NoneType, not a CheckOutcome"),
    ],
)
def test_an_executor_that_fails_fails_only_its_check_with_the_cause(result: Any, reason: str) -> None:
    outcome = evaluator(Runner(Faulty(result), "plugin odd 1.0")).run_check(RUBRIC, 3, "x", {})
    assert outcome == CheckOutcome("again", "php_only", 0.0, False, reason)


def test_checks_without_an_id_are_named_by_their_place() -> None:
    rubric = scored(
        SORRY,
        {"kind": "llm_judge", "description": "kind?"},
        {"kind": "must_contain_any", "values": ["thanks"]},
        combine="all_pass",
    )
    verdict = evaluator().evaluate(rubric, "So sorry", {})
    assert verdict is not None
    assert (verdict.reason, verdict.skipped) == (
        "all_pass: 1 of 2 checks passed | failed: checks[2] (none of the values found) | "
        "skipped: checks[1] (llm_judge, not executed)",
        ("checks[1]",),
    )
