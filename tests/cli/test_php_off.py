"""`php.run = false` where a Drupal developer meets it on the command line: the shipped example
site, with the setting in its `ai-eval.toml`. The PHP checks are skipped with SPEC section 4's
reason and never fail, and no PHP process starts; `php.command` is a script that records each
start, so the same site with `php.run = true` shows that the script is what would run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import without_test_plugins
from example_site import CASES, RUBRIC, SKIPPED, content_outcomes, copy_example, many_cases
from processes import recording_php

from ai_eval_lsp.project.registry import PHP_OFF
from ai_eval_lsp.runs.workers import PARALLEL_FROM, workers_for


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    return copy_example(tmp_path / "site")


def configure(site: Path, php_run: bool) -> Path:
    """Writes the site's `ai-eval.toml` with `php.command` a recording PHP; returns its record."""
    command, starts = recording_php(site.parent)
    (site / "ai-eval.toml").write_text(f'[php]\ncommand = ["{command}"]\nrun = {str(php_run).lower()}\n')
    return starts


def cli(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**without_test_plugins(), "XDG_CACHE_HOME": str(site.parent / "cache")}
    command = [str(Path(sys.executable).with_name("ai-eval-lsp")), *args]
    return subprocess.run(command, cwd=site, env=env, capture_output=True, text=True, timeout=180)


def cases_file(site: Path, copies: int) -> str:
    """The example's cases file, or one with `copies` of each case (graded in case workers)."""
    return CASES if copies == 1 else str(many_cases(site, copies).relative_to(site))


COPIES = pytest.mark.parametrize("copies", [1, 2 * PARALLEL_FROM // 5], ids=["in-process", "case-workers"])


def run_json(site: Path, cases: str) -> dict[str, Any]:
    result = cli(site, "run", "--format", "json", cases)
    assert result.returncode in (0, 1), result.stderr
    (run,) = json.loads(result.stdout)
    return run  # type: ignore[no-any-return]


@COPIES
def test_run_with_php_off_skips_the_php_checks_with_the_reason_and_starts_no_php(
    site: Path, copies: int
) -> None:
    starts = configure(site, php_run=False)
    run = run_json(site, cases_file(site, copies))
    contents = content_outcomes(run)
    assert len(contents) == 5 * copies
    for outcome in contents:
        assert SKIPPED in outcome["reason"], outcome
        assert "raised" not in outcome["reason"], outcome
    # The example's figures without its word counts: one case fewer fails.
    assert (run["row"]["pass_rate"], run["row"]["passed_gate"], run["row"]["error_count"]) == (0.8, 1, 0)
    assert starts.read_text() == ""


@COPIES
def test_run_with_php_on_starts_the_php_command_once_a_worker(site: Path, copies: int) -> None:
    """The control: the same site and command with `php.run = true` runs the PHP checks."""
    starts = configure(site, php_run=True)
    cases = cases_file(site, copies)
    run = run_json(site, cases)
    assert not any(PHP_OFF in outcome["reason"] for outcome in content_outcomes(run))
    assert run["verdicts"][f"too_short{'' if copies == 1 else '_0'}"]["passed"] is False
    assert (run["row"]["pass_rate"], run["row"]["passed_gate"]) == (0.6, 1)
    assert len(starts.read_text().splitlines()) == workers_for(5 * copies)


def test_the_text_report_warns_of_the_skipped_checks(site: Path) -> None:
    starts = configure(site, php_run=False)
    result = cli(site, "run", CASES)
    assert f"  warning: 5 checks were skipped: {PHP_OFF}" in result.stdout.splitlines()
    assert "pass rate 0.80" in result.stdout and "gate passed" in result.stdout
    # The one failure is the example's own expectation of its word count.
    assert "too_short: expected fail, which it did not get" in result.stdout
    assert starts.read_text() == ""


def test_check_shows_the_php_kind_as_not_executed_and_says_why(site: Path) -> None:
    starts = configure(site, php_run=False)
    result = cli(site, "check", "--format", "json", RUBRIC)
    assert result.returncode == 0, result.stdout
    (problem,) = json.loads(result.stdout)
    assert (problem["code"], problem["severity"], problem["line"]) == ("not-executed", "info", 16)
    assert f"but not in ai-eval-lsp's runs: it {PHP_OFF}" in problem["message"]
    assert starts.read_text() == ""


@pytest.mark.parametrize("php_run", [False, True])
def test_plugins_starts_php_only_when_php_runs(site: Path, php_run: bool) -> None:
    starts = configure(site, php_run)
    listing = json.loads(cli(site, "plugins", "--format", "json").stdout)
    (word_count,) = listing["php"]
    assert (word_count["runsInEditor"], word_count["why"]) == (php_run, None if php_run else PHP_OFF)
    assert (listing["phpRuntime"] is None) is not php_run
    assert len(starts.read_text().splitlines()) == int(php_run)
