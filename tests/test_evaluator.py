"""The evaluator's own edges, in process: one check run alone, checks that are no mapping, checks
that cannot run here and counted as such, an executor whose `applies()` raises; and verdicts as
the CLI prints them in JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ai_eval_lsp.api import CheckOutcome
from ai_eval_lsp.cli import main
from ai_eval_lsp.core.evaluate import Evaluator, LoadedRubric, RubricError, Runner
from ai_eval_lsp.core.executors import StringCheckExecutor

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
