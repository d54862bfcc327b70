"""A run's cases in words (`runs/render.py`): the one place that says what a case got, for the
CLI's `run` (text and markdown) and for the editors (the `cases` of a run answer, which VS Code's
Testing view and Neovim's quickfix list display as they come)."""

from __future__ import annotations

from typing import Any

import pytest

from ai_eval_lsp.core.api import CheckOutcome
from ai_eval_lsp.core.evaluate import Verdict
from ai_eval_lsp.core.results import CaseResult, build_row
from ai_eval_lsp.runs.render import cases_json, format_run, format_runs_markdown, outcome_line
from ai_eval_lsp.runs.run import RunResult

REASON = "all_pass: 1 of 2 checks passed | failed: length (1 words, minimum 3)"
FAILED = Verdict(
    0.0,
    False,
    REASON,
    (
        CheckOutcome("apologises", "must_contain_any", 1.0, True, "found sorry"),
        CheckOutcome("length", "word_count", 0.0, False, "1 words, minimum 3"),
    ),
    (),
)
PASSED = Verdict(1.0, True, "all_pass: 2 of 2 checks passed", (), ())
FAIL_LINE = {"text": f"fail 0.00/5  {REASON}"}


def run_of(*cases: CaseResult) -> RunResult:
    row = build_row("support_tone", cases, None, "cli", 0.1, {})
    return RunResult({**row, "id": 1, "run_id": 1, "timestamp": 1796000000}, list(cases))


def shown(case: CaseResult) -> dict[str, Any]:
    return cases_json(run_of(case))[case.case_id]


def test_a_case_the_rubric_passes_passes_with_nothing_to_say() -> None:
    assert shown(CaseResult("polite", PASSED, None, None)) == {"state": "passed", "messages": []}
    assert shown(CaseResult("polite", PASSED, None, "pass")) == {"state": "passed", "messages": []}


def test_a_case_the_rubric_fails_says_its_score_and_why() -> None:
    assert shown(CaseResult("curt", FAILED, None, None)) == {"state": "failed", "messages": [FAIL_LINE]}


def test_a_case_that_fails_as_its_expect_says_passes_and_still_says_why() -> None:
    assert shown(CaseResult("curt", FAILED, None, "fail")) == {"state": "passed", "messages": [FAIL_LINE]}


@pytest.mark.parametrize(
    ("verdict", "expect", "actual"), [(FAILED, "pass", "fail"), (PASSED, "fail", "pass")]
)
def test_a_missed_expect_fails_with_both_verdicts(verdict: Verdict, expect: str, actual: str) -> None:
    case = shown(CaseResult("c", verdict, None, expect))
    assert case["state"] == "failed"
    assert case["messages"][1:] == [
        {"text": f"expected {expect}, which it did not get", "expected": expect, "actual": actual}
    ]


def test_a_case_that_cannot_be_scored_errors_with_its_cause() -> None:
    error = "the case has no `response` string"
    assert shown(CaseResult("broken", None, error, None)) == {
        "state": "errored",
        "messages": [{"text": f"ERROR {error}"}],
    }
    # its expect is missed too, with no verdict to set against it
    assert shown(CaseResult("broken", None, error, "pass"))["messages"] == [
        {"text": f"ERROR {error}"},
        {"text": "expected pass, which it did not get", "expected": "pass"},
    ]


def test_a_mistyped_expect_fails_and_says_how_to_fix_it() -> None:
    assert shown(CaseResult("c", PASSED, None, "passed")) == {
        "state": "failed",
        "messages": [
            {"text": "pass 5.00/5  all_pass: 2 of 2 checks passed"},
            {"text": "`expect` must be pass or fail, not 'passed': fix the cases file"},
        ],
    }


def test_the_cli_prints_the_same_lines() -> None:
    """`run` prints the lines of the cases that failed, errored or missed their `expect` and a
    line of counts (`-v`: every case's lines); its markdown lists the cases an editor lists."""
    result = run_of(
        CaseResult("polite", PASSED, None, "pass"),
        CaseResult("curt", FAILED, None, "fail"),
        CaseResult("rude", FAILED, None, "pass"),
    )
    text = format_run("t.cases.yaml", result).splitlines()
    assert text[1:] == [
        f"  curt: {FAIL_LINE['text']}",
        f"  rude: {FAIL_LINE['text']}",
        "  rude: expected pass, which it did not get",
        "  1 passed, 2 failed; 1 missed its `expect`; -v lists every case",
        '  row: {"id": 1, "target_id": "support_tone", "run_id": 1, ...}',
    ]
    assert format_run("t.cases.yaml", result, every_case=True).splitlines()[1:6] == [
        "  polite: pass 5.00/5  all_pass: 2 of 2 checks passed",
        f"  curt: {FAIL_LINE['text']}",
        f"  rude: {FAIL_LINE['text']}",
        "  rude: expected pass, which it did not get",
        "  1 passed, 2 failed; 1 missed its `expect`",
    ]
    listed = [
        line for line in format_runs_markdown([("t", result)], []).splitlines() if line.startswith("- ")
    ]
    cell = FAIL_LINE["text"].replace("_", "\\_").replace("|", "\\|")
    assert listed == [
        f"- `t` `curt`: {cell}",
        f"- `t` `rude`: {cell}",
        "- `t` `rude`: expected pass, which it did not get",
    ]


@pytest.mark.parametrize(
    ("cases", "counts"),
    [
        ([], "no case"),
        ([CaseResult("a", PASSED, None, None)], "1 passed; -v lists every case"),
        (
            [CaseResult("a", None, "no response", None), CaseResult("b", FAILED, None, None)],
            "1 failed, 1 errored",
        ),
        (
            [CaseResult("a", None, "no response", "pass"), CaseResult("b", PASSED, None, "fail")],
            "1 passed, 1 errored; 2 missed their `expect`",
        ),
    ],
)
def test_a_run_s_counts_say_only_what_there_is(cases: list[CaseResult], counts: str) -> None:
    assert f"  {counts}" in format_run("t.cases.yaml", run_of(*cases)).splitlines()


def test_a_check_run_alone_is_worded_as_a_verdict_words_it() -> None:
    assert outcome_line(CheckOutcome("polite", "must_contain_any", 1.0, True, 'found "sorry"')) == (
        'pass 5.00/5  found "sorry"'
    )
    assert outcome_line("composite: `judged` has no executable check") == (
        "skipped (composite: `judged` has no executable check)"
    )
