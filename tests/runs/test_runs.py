"""Runs of cases files: the result row, the SQLite store, subscribers, time limits."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from contract import RESULT_ROW_FIELDS
from processes import alive, cpu_seconds, ends_alone, orphan

from ai_eval_lsp.cli import main
from ai_eval_lsp.core.evaluate import Evaluator, LoadedRubric
from ai_eval_lsp.core.executors import StringCheckExecutor
from ai_eval_lsp.core.results import CaseResult, build_row, gate_failures, wilson_interval
from ai_eval_lsp.core.text import markdown
from ai_eval_lsp.disk.settings import Settings
from ai_eval_lsp.hosts.python import PluginHost
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.project.registry import discover
from ai_eval_lsp.runs.run import Cancellation, RunCancelled, RunOptions, run_cases

RUBRIC = """id: support_tone
version: "1.0"
checks:
  - {id: apologises, kind: must_contain_any, values: [sorry]}
scoring: {combine: all_pass}
"""


def cases(*entries: str, gate: str = "") -> str:
    return "rubric: support_tone\n" + (f"gate: {gate}\n" if gate else "") + "cases:\n" + "".join(entries)


def case(case_id: str, response: str, expect: str = "") -> str:
    return f"  - id: {case_id}\n    response: {json.dumps(response)}\n" + (
        f"    expect: {expect}\n" if expect else ""
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "tone.rubric.yaml").write_text(RUBRIC)
    return tmp_path


def project(root: Path, **settings: Any) -> Project:
    return Project.load(root, Settings(**settings))


# --- the Wilson interval, worked out by hand for n = 10 (z = 1.96, z² = 3.8416) ---------------


def test_wilson_at_zero_passes() -> None:
    low, high = wilson_interval(0, 10)  # type: ignore[misc]
    assert low == 0.0
    assert high == pytest.approx(0.38416 / 1.38416, abs=1e-9)  # (z²/n) / (1 + z²/n)


def test_wilson_at_one_pass() -> None:
    low, high = wilson_interval(1, 10)  # type: ignore[misc]
    centre, half = 0.29208 / 1.38416, 1.96 * 0.018604**0.5 / 1.38416  # (0.1 + z²/2n), sqrt(0.009 + z²/4n²)
    assert (low, high) == (pytest.approx(centre - half, abs=1e-12), pytest.approx(centre + half, abs=1e-12))
    assert (round(low, 4), round(high, 4)) == (0.0179, 0.4042)  # the textbook interval for 1 of 10


def test_wilson_at_every_pass() -> None:
    low, high = wilson_interval(10, 10)  # type: ignore[misc]
    assert low == pytest.approx(1 - 0.38416 / 1.38416, abs=1e-9)
    assert high == 1.0


@pytest.mark.parametrize("total", [5, 19, 23])
def test_the_interval_stays_within_zero_and_one(total: int) -> None:
    """At these sizes the formula itself gives 1 + 2e-16 for all passes and -3e-17 for none: a
    pass rate's interval is clamped to what a rate can be."""
    assert wilson_interval(total, total)[1] == 1.0  # type: ignore[index]
    assert wilson_interval(0, total)[0] == 0.0  # type: ignore[index]


def test_no_scored_case_has_no_interval() -> None:
    assert wilson_interval(0, 0) is None


# --- the row -------------------------------------------------------------------------------------


def test_pass_rate_counts_scored_cases_and_question_count_counts_errors(workspace: Path) -> None:
    (workspace / "t.cases.yaml").write_text(
        cases(case("a", "sorry"), case("b", "no"), case("c", "sorry"), "  - id: d\n    question: {}\n")
    )
    result = run_cases(project(workspace), workspace / "t.cases.yaml")
    row = result.row
    assert set(row) == RESULT_ROW_FIELDS
    assert row["question_count"] == 4 and row["error_count"] == 1
    assert row["pass_rate"] == pytest.approx(2 / 3)
    assert row["avg_score"] == pytest.approx(10 / 3)  # (5 + 0 + 5) / 3 on the 0..5 scale
    assert json.loads(row["scores_json"]) == {"a": 5.0, "b": 0.0, "c": 5.0, "d": None}
    low, high = wilson_interval(2, 3)  # type: ignore[misc]
    assert (row["pass_rate_ci_low"], row["pass_rate_ci_high"]) == (low, high)
    assert isinstance(row["duration"], float) and row["source"] == "cli"
    config = json.loads(row["config_json"])
    assert config["rubrics"] == [{"id": "support_tone", "version": "1.0"}]
    assert {"name": "word_count", "distribution": "ai-eval-test-wordcount", "version": "0.3.0"} in config[
        "plugins"
    ]


def test_the_gate_and_expectations(workspace: Path) -> None:
    (workspace / "t.cases.yaml").write_text(
        cases(case("a", "sorry", "pass"), case("b", "no", "pass"), gate="{pass_rate: 0.4, avg_score: 2.5}")
    )
    result = run_cases(project(workspace), workspace / "t.cases.yaml")
    assert result.row["passed_gate"] == 1  # 0.5 >= 0.4 and 2.5 >= 2.5
    assert not result.expectations_met and not result.ok
    (workspace / "t.cases.yaml").write_text(
        cases(case("a", "sorry"), case("b", "no"), gate="{pass_rate: 0.6}")
    )
    assert run_cases(project(workspace), workspace / "t.cases.yaml").row["passed_gate"] == 0


def test_with_no_scored_case_rates_are_zero_and_any_gate_fails() -> None:
    errored = [CaseResult("a", None, "no rubric", None)]
    row = build_row("t", errored, {"pass_rate": 0.0}, "cli", 0.1, {})
    assert (row["pass_rate"], row["avg_score"], row["pass_rate_ci_low"], row["pass_rate_ci_high"]) == (
        0.0,
        0.0,
        None,
        None,
    )
    assert row["passed_gate"] == 0
    assert build_row("t", errored, None, "cli", 0.1, {})["passed_gate"] == 1


def test_an_errored_case_never_meets_its_expectation() -> None:
    assert not CaseResult("a", None, "broken", "fail").expectation_met


def test_a_missing_rubric_errors_every_case(tmp_path: Path) -> None:
    (tmp_path / "t.cases.yaml").write_text(cases(case("a", "sorry", "pass")))
    result = run_cases(project(tmp_path), tmp_path / "t.cases.yaml")
    assert (
        result.row["error_count"] == 1
        and result.cases[0].error == "no rubric `support_tone` in the workspace"
    )


@pytest.mark.parametrize(
    ("head", "reason"),
    [
        (
            "id: refund\n",
            "rubric `refund`: refund.rubric.yaml declares `id: refund` (line 1) but cannot be read: "
            "yaml-syntax at 3:1; fix its YAML",
        ),
        (
            "",
            "no rubric `refund` in the workspace; 1 rubric file cannot be read and may be it: "
            "refund.rubric.yaml (yaml-syntax at 2:1)",
        ),
    ],
)
def test_a_rubric_file_that_cannot_be_read_is_named_where_a_run_needs_it(
    workspace: Path, head: str, reason: str
) -> None:
    """The sub-rubric of a composite, or a cases file's own rubric, is in a file whose YAML does
    not parse: the reason says that file cannot be read and where, not only that no rubric has
    the id."""
    (workspace / "refund.rubric.yaml").write_text(f'{head}version: "1.0"\nchecks: [\n')
    composite = "  - {id: content, kind: composite, rubric: refund}\nscoring:"
    (workspace / "tone.rubric.yaml").write_text(RUBRIC.replace("scoring:", composite))
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry")))
    (workspace / "r.cases.yaml").write_text(cases(case("a", "sorry")).replace("support_tone", "refund"))
    verdict = run_cases(project(workspace), workspace / "t.cases.yaml").cases[0].verdict
    assert verdict is not None and [(o.check_id, o.passed, o.reason) for o in verdict.outcomes] == [
        ("apologises", True, 'found "sorry"'),
        ("content", False, reason),
    ]
    assert run_cases(project(workspace), workspace / "r.cases.yaml").cases[0].error == reason


def test_a_broken_rubric_errors_every_case_with_its_first_problem(workspace: Path) -> None:
    (workspace / "tone.rubric.yaml").write_text(RUBRIC.replace("must_contain_any", "must_contain"))
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry")))
    result = run_cases(project(workspace), workspace / "t.cases.yaml")
    assert result.row["error_count"] == 1
    assert "cannot be loaded: 1 error; first, at line 4: unknown check kind `must_contain`" in str(
        result.cases[0].error
    )


@pytest.mark.parametrize(
    ("check", "reason"),
    [
        (
            "{id: bad, kind: regex, pattern: '(unclosed'}",
            "the pattern does not compile: missing ) at position 9",
        ),
        ("{id: bad, kind: composite, rubric: nowhere}", "no rubric `nowhere` in the workspace"),
        ("{id: bad, kind: target_match, source: expected.nothing}", "expected.nothing"),
    ],
)
def test_an_error_the_site_meets_while_running_fails_only_its_check(
    workspace: Path, check: str, reason: str
) -> None:
    """SPEC section 3: only what the site refuses to load (syntax, schema, kinds, keys) makes a
    rubric broken; an invalid regex or an unresolvable reference fails its check, loudly."""
    rubric = RUBRIC.replace("scoring:", f"  - {check}\nscoring:").replace("all_pass", "weighted_avg")
    (workspace / "tone.rubric.yaml").write_text(rubric)
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry")))
    result = run_cases(project(workspace), workspace / "t.cases.yaml")
    assert result.row["error_count"] == 0
    verdict = result.cases[0].verdict
    assert verdict is not None
    outcomes = {o.check_id: o for o in verdict.outcomes}
    assert outcomes["apologises"].passed and not outcomes["bad"].passed
    assert reason in outcomes["bad"].reason


# --- the store ------------------------------------------------------------------------------------


def test_the_stored_row_reads_back_from_sqlite(workspace: Path) -> None:
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry")))
    result = run_cases(project(workspace), workspace / "t.cases.yaml")
    with sqlite3.connect(workspace / ".ai_eval" / "results.sqlite") as connection:
        connection.row_factory = sqlite3.Row
        stored = dict(connection.execute("SELECT * FROM ai_eval_result").fetchone())
    assert stored == result.row


def test_runs_get_new_run_ids_and_concurrent_runs_lose_nothing(workspace: Path) -> None:
    (workspace / "t.cases.yaml").write_text(cases(*(case(f"c{i}", "sorry") for i in range(20))))
    database = workspace / "shared.sqlite"
    rows: list[dict[str, Any]] = []
    workers = [
        threading.Thread(
            target=lambda: rows.append(
                run_cases(project(workspace), workspace / "t.cases.yaml", RunOptions(database=database)).row
            )
        )
        for _ in range(6)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    with sqlite3.connect(database) as connection:
        stored = connection.execute("SELECT id, run_id FROM ai_eval_result ORDER BY id").fetchall()
    assert len(stored) == 6
    assert len({run_id for _, run_id in stored}) == 6
    assert sorted((r["id"], r["run_id"]) for r in rows) == stored


def test_a_run_killed_midway_leaves_only_the_runs_before_it(workspace: Path) -> None:
    (workspace / "pyproject.toml").write_text("[tool.ai-eval]\nrunTimeoutSeconds = 60\n")
    (workspace / "slow.rubric.yaml").write_text(
        'id: slow\nversion: "1.0"\nchecks:\n  - {kind: regex, pattern: "(a+)+$"}\nscoring: {combine: all_pass}\n'
    )
    (workspace / "quick.cases.yaml").write_text("rubric: slow\ncases:\n" + case("a", "a"))
    (workspace / "s.cases.yaml").write_text("rubric: slow\ncases:\n" + case("a", "a" * 50_000 + "b"))
    command = [sys.executable, "-m", "ai_eval_lsp", "--root", str(workspace), "run"]
    subprocess.run([*command, str(workspace / "quick.cases.yaml")], check=True, capture_output=True)
    process = subprocess.Popen([*command, str(workspace / "s.cases.yaml")])
    while cpu_seconds(process.pid) < 1:  # its start takes a fraction of that: it is in the regex
        assert process.poll() is None
        time.sleep(0.05)
    process.kill()
    assert process.wait() == -9
    with sqlite3.connect(workspace / ".ai_eval" / "results.sqlite") as connection:
        assert connection.execute("SELECT run_id FROM ai_eval_result").fetchall() == [(1,)]
        assert connection.execute("SELECT run_id FROM ai_eval_case").fetchall() == [(1,)]


def test_a_cancelled_run_stores_nothing(workspace: Path) -> None:
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry")))
    cancellation = Cancellation()
    assert cancellation.cancel()
    with pytest.raises(RunCancelled):
        run_cases(project(workspace), workspace / "t.cases.yaml", RunOptions(cancellation=cancellation))
    assert not (workspace / ".ai_eval" / "results.sqlite").exists()


def test_a_cancel_that_comes_once_the_row_is_written_is_refused(workspace: Path) -> None:
    """Cancelled inside the store's transaction, just before it commits: nothing is stored; a
    cancel after the commit is refused, and the row stays."""
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry")))
    database = workspace / ".ai_eval" / "results.sqlite"

    class CancelledWhileWriting(Cancellation):
        def store(self) -> bool:
            self.cancel()
            return super().store()

    with pytest.raises(RunCancelled):
        run_cases(
            project(workspace), workspace / "t.cases.yaml", RunOptions(cancellation=CancelledWhileWriting())
        )
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT count(*) FROM ai_eval_result").fetchone() == (0,)
        assert connection.execute("SELECT count(*) FROM ai_eval_run").fetchone() == (0,)
    late = Cancellation()
    result = run_cases(project(workspace), workspace / "t.cases.yaml", RunOptions(cancellation=late))
    assert not late.cancel()
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT id FROM ai_eval_result").fetchall() == [(result.row["id"],)]


# --- subscribers, the envelope, the regression notice --------------------------------------------


def test_subscribers_get_each_row_once_after_it_is_stored_even_beside_failing_and_slow_ones(
    workspace: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for earlier in threading.enumerate():  # earlier tests' subscribers must not log into this one
        if earlier.name == "ai-eval run-complete subscribers":
            earlier.join()
    log = tmp_path_factory.mktemp("log") / "calls.jsonl"
    monkeypatch.setenv("AI_EVAL_TEST_SUBSCRIBERS", str(log))
    gate = log.with_name("the slow subscriber may end")
    monkeypatch.setenv("AI_EVAL_TEST_SLOW_UNTIL", str(gate))
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry")))
    result = run_cases(project(workspace), workspace / "t.cases.yaml")
    assert result.subscribers is not None and result.subscribers.is_alive()  # the row came back first
    gate.touch()
    result.subscribers.join(timeout=60)
    assert not result.subscribers.is_alive()
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(c["id"], c["run_id"]) for c in calls] == [(result.row["id"], result.row["run_id"])]
    with sqlite3.connect(workspace / ".ai_eval" / "results.sqlite") as connection:
        assert connection.execute("SELECT count(*) FROM ai_eval_result").fetchone() == (1,)


def test_the_envelope_is_written_only_when_asked(workspace: Path) -> None:
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry"), case("b", "no")))
    quiet = run_cases(project(workspace), workspace / "t.cases.yaml")
    assert quiet.subscribers is not None
    quiet.subscribers.join(timeout=60)
    assert not (workspace / ".ai_eval" / "envelopes").exists()
    result = run_cases(project(workspace, export_envelope_on_complete=True), workspace / "t.cases.yaml")
    assert result.subscribers is not None
    result.subscribers.join(timeout=60)
    row = result.row
    path = workspace / ".ai_eval" / "envelopes" / f"support_tone-{row['timestamp']}-{row['id']}.eee.json"
    envelope = json.loads(path.read_text())
    assert set(envelope) == {
        "schema_version",
        "evaluation_id",
        "retrieved_timestamp",
        "source_metadata",
        "model_info",
        "eval_library",
        "evaluation_results",
        "additional_details",
    }
    assert envelope["source_metadata"]["source_type"] == "evaluation_run"
    assert envelope["eval_library"]["name"] == "ai-eval-lsp"
    avg, rate = envelope["evaluation_results"]
    assert (avg["evaluation_name"], avg["score_details"]["score"], avg["metric_config"]["max_score"]) == (
        "avg_score",
        2.5,
        5,
    )
    assert rate["uncertainty"]["confidence_interval"]["lower"] == row["pass_rate_ci_low"]
    assert all(isinstance(v, str) for v in envelope["additional_details"].values())


def test_a_drop_of_more_than_half_a_point_is_noticed(workspace: Path) -> None:
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry"), case("b", "sorry")))
    assert run_cases(project(workspace), workspace / "t.cases.yaml").notices == []
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry"), case("b", "no")))
    notices = run_cases(project(workspace), workspace / "t.cases.yaml").notices
    assert notices == ["regression: support_tone dropped 2.50 points, from 5.00 to 2.50 over 2 cases"]


@pytest.mark.parametrize("output", ["text", "json"])
def test_runs_with_no_case_in_common_are_not_compared(
    workspace: Path, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    """Case `a` (5/5) in one cases file, then `b` and `c` (0/5) in another of the same rubric: the
    runs share no case, so no drop is noticed, and the line against the run before says only
    that; `diff` warns that its deltas compare different cases."""
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry")))
    (workspace / "u.cases.yaml").write_text(cases(case("b", "no"), case("c", "no")))
    assert main(["--root", str(workspace), "run", str(workspace / "t.cases.yaml")]) == 0
    capsys.readouterr()
    main(["--root", str(workspace), "run", str(workspace / "u.cases.yaml"), "--format", output])
    out = capsys.readouterr().out
    if output == "json":
        (report,) = json.loads(out)
        assert report["notices"] == []
        assert (report["diff"]["casesInCommon"], report["diff"]["onlyBase"]) == (0, ["a"])
        return
    against = [line for line in out.splitlines() if line.startswith(("  vs run", "  regression"))]
    assert against == ["  vs run 1: no case in common (it ran t.cases.yaml)"]
    assert main(["--root", str(workspace), "diff"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "runs 1 and 2 have no case in common (run 1 ran t.cases.yaml, run 2 ran u.cases.yaml): "
        "their deltas compare different cases"
    )


def test_runs_that_share_a_case_are_compared_as_before(workspace: Path) -> None:
    """One case in common is enough: the drop of the runs' averages is noticed."""
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry"), case("b", "sorry")))
    run_cases(project(workspace), workspace / "t.cases.yaml")
    (workspace / "u.cases.yaml").write_text(cases(case("b", "no"), case("c", "no")))
    result = run_cases(project(workspace), workspace / "u.cases.yaml")
    assert result.previous is not None and result.previous.in_common == 1
    assert result.notices == ["regression: support_tone dropped 5.00 points, from 5.00 to 0.00 over 2 cases"]


# --- time limits ----------------------------------------------------------------------------------


def test_a_catastrophic_regex_fails_within_the_limit() -> None:
    executor = StringCheckExecutor(regex_timeout=1.0)
    started = cpu_seconds(os.getpid())
    outcome = executor.execute({"kind": "regex", "id": "bad", "pattern": "(a+)+$"}, "a" * 50_000 + "b", {})
    assert cpu_seconds(os.getpid()) - started < 5
    assert not outcome.passed and "longer than 1 s" in outcome.reason


def test_a_plugin_that_never_returns_is_stopped_when_the_limit_runs_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The broken test plugin's `stuck` executor never returns: its check fails at the limit, and
    the process that ran it is gone (a thread could not have been stopped)."""
    pid_file = tmp_path / "pid"
    monkeypatch.setenv("AI_EVAL_TEST_PID_FILE", str(pid_file))
    rubric = LoadedRubric(
        "r",
        "1.0",
        {
            "checks": [{"kind": "stuck", "id": "s"}, {"kind": "regex", "pattern": "x"}],
            "scoring": {"combine": "all_pass"},
        },
    )
    with PluginHost(timeout=1.0) as host:
        evaluator = Evaluator(discover().runners(1.0, host), lambda ref: None)
        # The host started (its start has a bound of its own), so what follows is the check's time.
        warm = LoadedRubric(
            "w", "1.0", {"checks": [{"kind": "word_count"}], "scoring": {"combine": "all_pass"}}
        )
        assert evaluator.evaluate(warm, "x", {}) is not None
        started = time.monotonic()
        verdict = evaluator.evaluate(rubric, "x", {})
        # Within a generous multiple of the one-second limit (the machine may be busy), not the
        # several times the limit of a wrong bound.
        assert time.monotonic() - started < 5
        assert verdict is not None and not verdict.passed
        stuck, regex = verdict.outcomes
        assert (
            stuck.reason == "plugin ai-eval-test-broken 0.0.1 did not finish within 1 s (runTimeoutSeconds)"
        )
        assert regex.passed  # the run went on
    assert not alive(int(pid_file.read_text()))


def test_a_plugin_host_whose_server_was_killed_ends_with_it(tmp_path: Path) -> None:
    """A server killed outright sends its plugin host no signal, and a check stuck in a loop never
    reads the closed pipe: the host sees it has lost its parent and ends."""
    server = (
        "from ai_eval_lsp.core.evaluate import Evaluator, LoadedRubric\n"
        "from ai_eval_lsp.hosts.python import PluginHost\n"
        "from ai_eval_lsp.project.registry import discover\n"
        "rubric = LoadedRubric('r', '1.0', {'checks': [{'kind': 'stuck'}], 'scoring': {'combine': 'all_pass'}})\n"
        "with PluginHost(timeout=3600) as host:\n"
        "    Evaluator(discover().runners(3600, host), lambda ref: None).evaluate(rubric, 'x', {})\n"
    )
    host = orphan(server, tmp_path / "pid")
    assert ends_alone(host, 30.0)


def run_cli(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ai_eval_lsp", "--root", str(workspace), "run", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_the_run_command_prints_the_row_and_exits_by_gate_and_expectations(workspace: Path) -> None:
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry", "pass")))
    ok = run_cli(workspace, "--format", "json", str(workspace / "t.cases.yaml"))
    assert ok.returncode == 0, ok.stderr
    (report,) = json.loads(ok.stdout)
    assert set(report["row"]) == RESULT_ROW_FIELDS and report["verdicts"]["a"]["passed"] is True
    assert report["cases"] == {"a": {"state": "passed", "messages": []}}  # as the editors get it
    (workspace / "t.cases.yaml").write_text(cases(case("a", "no", "pass")))
    failed = run_cli(workspace, str(workspace / "t.cases.yaml"))
    assert failed.returncode == 1
    assert "a: expected pass, which it did not get" in failed.stdout


def test_a_big_run_prints_what_failed_and_a_line_of_counts_and_v_every_case(workspace: Path) -> None:
    """2,000 cases, two failing, one erroring: `run` prints those three and the counts, as pytest
    prints failures and a summary; `-v` every case; the row's identity only (`--format json`: the
    whole row)."""
    responses = ["sorry"] * 2000
    responses[7], responses[1500] = "no", "never"
    entries = [case(f"c{number}", response) for number, response in enumerate(responses)]
    entries[1999] = "  - id: c1999\n"  # no response: it errors
    path = workspace / "big.cases.yaml"
    path.write_text(cases(*entries))
    done = run_cli(workspace, str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == [
        "  c7: fail 0.00/5  all_pass: 0 of 1 checks passed | failed: apologises (none of the values found)",
        "  c1500: fail 0.00/5  all_pass: 0 of 1 checks passed | failed: apologises (none of the values found)",
        "  c1999: ERROR the case has no `response` string",
        "  1997 passed, 2 failed, 1 errored; -v lists every case",
        '  row: {"id": 1, "target_id": "support_tone", "run_id": 1, ...}',
    ]
    every = run_cli(workspace, "-v", str(path)).stdout.splitlines()
    assert len(every) == 1 + 2000 + 1 + 1 + 1  # the run, its cases, the counts, the diff, the row
    assert (
        every[1] == "  c0: pass 5.00/5  all_pass: 1 of 1 checks passed"
        and every[-3] == "  1997 passed, 2 failed, 1 errored"
    )
    (whole,) = json.loads(run_cli(workspace, "--format", "json", str(path)).stdout)
    assert len(json.loads(whole["row"]["scores_json"])) == 2000


def test_running_a_rubric_says_what_run_takes(workspace: Path) -> None:
    done = run_cli(workspace, str(workspace / "tone.rubric.yaml"))
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"error: {workspace / 'tone.rubric.yaml'}: a rubric, not a cases file: `run` runs a cases file "
        "(`*.cases.yaml`), which names a rubric (`rubric: support_tone`) and lists `cases` of recorded responses"
    )


def test_a_mistyped_expect_fails_the_run_and_the_cases_file_s_errors_are_said_first(workspace: Path) -> None:
    path = workspace / "t.cases.yaml"
    path.write_text(cases(case("a", "sorry", "passed")))
    done = run_cli(workspace, str(path))
    assert done.returncode == 1  # the case passed, but its expectation could not be checked
    assert "  a: `expect` must be pass or fail, not 'passed': fix the cases file" in done.stdout.splitlines()
    assert (
        f"warning: {path}:5:13: schema `cases[0].expect` must be one of `pass`, `fail`, not `passed` "
        "(did you mean `pass`?)"
    ) in done.stderr.splitlines()


def test_run_goes_on_past_a_file_it_cannot_run_and_prints_markdown(workspace: Path) -> None:
    missing, path = workspace / "missing.cases.yaml", workspace / "t.cases.yaml"
    path.write_text(cases(case("a", "sorry"), case("b", "no", "pass"), gate="{pass_rate: 0.9}"))
    first = run_cli(workspace, "--format", "markdown", str(missing), str(path))
    assert first.returncode == 2  # a file could not run; the other ran and was stored
    assert f"error: {missing}: cannot be read: No such file or directory" in first.stderr
    assert first.stdout.splitlines() == [
        "| cases file | rubric | run | pass rate [95% CI] | average | gate | cases | errors |",
        "|---|---|---:|---:|---:|---|---:|---:|",
        f"| `{path}` | `support_tone` | 1 | 0.50 [0.09, 0.91] | 2.50/5 | **FAILED** (pass\\_rate 0.50 \\< 0.9) | 2 | 0 |",
        f"| `{missing}` | | | | | could not run: {markdown(f'{missing}: cannot be read: No such file or directory')} | | |",
        "",
        "<details><summary>Cases that failed, errored or missed their expect (2)</summary>",
        "",
        f"- `{path}` `b`: fail 0.00/5  all\\_pass: 0 of 1 checks passed \\| failed: apologises (none of the values found)",
        f"- `{path}` `b`: expected pass, which it did not get",
        "",
        "</details>",
    ]
    path.write_text(cases(case("a", "sorry"), case("b", "sorry, yes", "pass")))
    done = run_cli(workspace, "--format", "markdown", str(path))
    assert done.returncode == 0, done.stderr
    table, diff = done.stdout.split("\n\n", 1)
    assert (
        table.splitlines()[2]
        == f"| `{path}` | `support_tone` | 2 | 1.00 [0.34, 1.00] | 5.00/5 | passed | 2 | 0 |"
    )
    assert diff.startswith("### ai-eval: `support_tone`, run 1 -> run 2\n")
    assert "| `b` | fail 0.00 | pass 5.00 | flipped to pass |" in diff


def test_duplicate_case_ids_keep_both_cases(workspace: Path) -> None:
    (workspace / "t.cases.yaml").write_text(cases(case("c1", "sorry"), case("c1", "no")))
    row = run_cases(project(workspace), workspace / "t.cases.yaml").row
    assert json.loads(row["scores_json"]) == {"c1": 5.0, "c1 (cases[1])": 0.0}


def test_a_run_that_scored_nothing_is_not_a_regression(workspace: Path) -> None:
    (workspace / "t.cases.yaml").write_text(cases(case("a", "sorry")))
    run_cases(project(workspace), workspace / "t.cases.yaml")
    (workspace / "t.cases.yaml").write_text(
        "rubric: support_tone\ncases:\n  - {id: a}\n"
    )  # no response: errored
    result = run_cases(project(workspace), workspace / "t.cases.yaml")
    assert result.row["error_count"] == 1 and result.notices == []


def test_the_projects_time_limit_stops_a_catastrophic_regex_in_the_cli(workspace: Path) -> None:
    (workspace / "ai-eval.toml").write_text("runTimeoutSeconds = 0.7\n")
    (workspace / "slow.rubric.yaml").write_text(
        'id: slow\nversion: "1.0"\nchecks:\n  - {kind: regex, pattern: "(a+)+$"}\nscoring: {combine: all_pass}\n'
    )
    (workspace / "s.cases.yaml").write_text("rubric: slow\ncases:\n" + case("a", "a" * 50_000 + "b"))
    finished = run_cli(workspace, "--format", "json", str(workspace / "s.cases.yaml"))
    (report,) = json.loads(finished.stdout)
    (outcome,) = report["verdicts"]["a"]["outcomes"]
    assert outcome["reason"].startswith("matching took longer than 0.7 s and was stopped")


@pytest.mark.parametrize(("weight", "noticed"), [(49, False), (51, True)])
def test_a_regression_is_a_drop_of_more_than_half_a_point(
    workspace: Path, weight: int, noticed: bool
) -> None:
    """One case, and the rubric's check `a` (of weight `weight` in 500) failing in the second run:
    the average falls by 5 x weight / 500, 0.49 or 0.51 points."""

    def rubric(word: str) -> str:
        return (
            'id: support_tone\nversion: "1.0"\nchecks:\n'
            f"  - {{id: a, kind: must_contain_any, values: [{word}]}}\n"
            "  - {id: b, kind: must_contain_any, values: [sorry]}\n"
            f"scoring: {{combine: weighted_avg, weights: {{a: {weight}, b: {500 - weight}}}}}\n"
        )

    (workspace / "t.cases.yaml").write_text(cases(case("one", "sorry")))
    (workspace / "tone.rubric.yaml").write_text(rubric("sorry"))
    run_cases(project(workspace), workspace / "t.cases.yaml")
    (workspace / "tone.rubric.yaml").write_text(rubric("zebra"))
    result = run_cases(project(workspace), workspace / "t.cases.yaml")
    drop = 5 * weight / 500
    assert result.row["avg_score"] == pytest.approx(5 - drop)
    regressions = [n for n in result.notices if n.startswith("regression:")]
    expected = [
        f"regression: support_tone dropped {drop:.2f} points, from 5.00 to {5 - drop:.2f} over 1 cases"
    ]
    assert regressions == (expected if noticed else [])


def test_the_gate_names_each_bound_it_missed() -> None:
    metrics = {"pass_rate": 0.5, "avg_score": 2.25}
    assert gate_failures({"pass_rate": 0.5, "avg_score": 2.25}, metrics, 4) == []
    assert gate_failures({"pass_rate": 0.8, "avg_score": 3}, metrics, 4) == [
        "pass_rate 0.50 < 0.8",
        "avg_score 2.25 < 3",
    ]
    assert gate_failures({"passrate": 0.1}, metrics, 4) == ["`passrate` is not a metric"]
    assert gate_failures({"pass_rate": 0.0}, metrics, 0) == ["no case was scored"]
    assert gate_failures(None, metrics, 0) == [] and gate_failures({}, metrics, 0) == []


def test_a_case_run_alone_keeps_its_name(workspace: Path) -> None:
    """A case without an id is `cases[N]` by its place in the file, in a run of it alone too."""
    (workspace / "t.cases.yaml").write_text(
        cases(case("a", "sorry"), '  - response: "no"\n', '  - response: "sorry"\n', case("a", "no"))
    )
    whole = run_cases(project(workspace), workspace / "t.cases.yaml")
    assert [c.case_id for c in whole.cases] == ["a", "cases[1]", "cases[2]", "a (cases[3])"]
    alone = run_cases(project(workspace), workspace / "t.cases.yaml", case_ids=["cases[2]"])
    assert [(c.case_id, c.verdict.passed if c.verdict else None) for c in alone.cases] == [("cases[2]", True)]
    both = run_cases(project(workspace), workspace / "t.cases.yaml", case_ids=["a"])
    assert [c.case_id for c in both.cases] == ["a", "a (cases[3])"]
