"""Big runs on every core (a cases file of thousands of cases is not bound to one core): the
same results as one process, in case order; cancellation and time limits kept; no process left
behind."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from processes import ends_alone, orphan

from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs import run as runs
from ai_eval_lsp.runs.run import Cancellation, RunCancelled, RunOptions, run_cases

RUBRIC = """id: support
version: "1.0"
checks:
  - {id: apologises, kind: must_contain_any, values: [sorry]}
  - {id: days, kind: regex, pattern: "\\\\b(five|5)\\\\s+days\\\\b", flags: i}
  - {id: close, kind: target_match, source: expected.reference, mode: chrf, threshold: 0.3}
  - {id: length, kind: word_count, min: 3}
  - {id: polite, kind: composite, rubric: politeness}
scoring: {combine: weighted_avg, threshold: 0.5}
"""

POLITENESS = """id: politeness
version: "2.1"
checks:
  - {kind: must_not_contain, values: ["go away"]}
scoring: {combine: all_pass}
"""


def case(number: int) -> dict[str, Any]:
    response = ["Sorry, it arrives in five days.", "Go away.", "sorry", "Il arrive dans 5 days, désolé 🙏"][
        number % 4
    ]
    found: dict[str, Any] = {
        "id": f"c{number % 300}",  # ids repeat past 300: the run keeps both cases
        "question": {"expected": {"reference": "Sorry, your parcel arrives within five days."}},
        "response": response,
    }
    if number % 97 == 0:
        del found["response"]  # an errored case
    if number % 5 == 0:
        found["expect"] = "pass"
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "ai-eval.toml").write_text("")
    (tmp_path / "support.rubric.yaml").write_text(RUBRIC)
    (tmp_path / "politeness.rubric.yaml").write_text(POLITENESS)
    (tmp_path / "big.cases.yaml").write_text(
        json.dumps({"rubric": "support", "cases": [case(n) for n in range(450)]})
    )
    return tmp_path


def in_workers(monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    monkeypatch.setattr(runs, "workers_for", lambda cases: count)


def case_workers() -> list[int]:
    """The case workers this process started that still run."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:  # it ended meanwhile
            continue
        if b"ai_eval_lsp.runs.workers" in command and int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
            found.append(int(entry.name))
    return found


def test_a_run_in_workers_grades_as_one_process_does(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = Project.load(workspace)
    results = {}
    for workers in (1, 2):
        in_workers(monkeypatch, workers)
        seen: list[int] = []
        options = RunOptions(
            database=workspace / f"{workers}.sqlite",
            progress=lambda done, total, seen=seen: seen.append(done),
        )
        results[workers] = run_cases(project, workspace / "big.cases.yaml", options)
        assert seen[-1] == 450 and seen == sorted(seen)
    one, two = results[1], results[2]
    assert two.cases == one.cases
    assert [c.case_id for c in two.cases][299:302] == ["c299", "c0 (cases[300])", "c1 (cases[301])"]
    same = {k: v for k, v in one.row.items() if k not in ("id", "run_id", "timestamp", "duration")}
    assert {k: v for k, v in two.row.items() if k in same} == same
    assert json.loads(two.row["config_json"])["rubrics"] == [
        {"id": "politeness", "version": "2.1"},
        {"id": "support", "version": "1.0"},
    ]
    verdict = two.cases[1].verdict
    assert verdict is not None and [o.check_id for o in verdict.outcomes] == [
        "apologises",
        "days",
        "close",
        "length",
        "polite",
    ]
    assert two.cases[97].error == "the case has no `response` string"
    assert case_workers() == []


def test_a_cancelled_run_in_workers_stores_nothing_and_leaves_no_worker(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_workers(monkeypatch, 2)
    cancellation = Cancellation()

    def progress(done: int, total: int) -> None:
        if done >= 50:
            cancellation.cancel()

    options = RunOptions(progress=progress, cancellation=cancellation)
    with pytest.raises(RunCancelled):
        run_cases(Project.load(workspace), workspace / "big.cases.yaml", options)
    assert not (workspace / ".ai_eval" / "results.sqlite").exists()
    assert case_workers() == []


def test_the_time_limit_holds_in_workers(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    in_workers(monkeypatch, 2)
    (workspace / "ai-eval.toml").write_text("runTimeoutSeconds = 0.1\n")
    (workspace / "slow.rubric.yaml").write_text(
        'id: slow\nversion: "1.0"\nchecks:\n  - {kind: regex, pattern: "(a+)+$"}\nscoring: {combine: all_pass}\n'
    )
    cases = [{"id": f"s{n}", "response": "a" * 50_000 + "b"} for n in range(30)]
    (workspace / "slow.cases.yaml").write_text(json.dumps({"rubric": "slow", "cases": cases}))
    started = time.monotonic()
    result = run_cases(Project.load(workspace), workspace / "slow.cases.yaml", RunOptions())
    assert time.monotonic() - started < 120  # 30 checks of 0.1 s on two cores, and the workers' start
    for graded in result.cases:
        assert graded.verdict is not None and not graded.verdict.passed
        assert "matching took longer than 0.1 s and was stopped" in graded.verdict.outcomes[0].reason


def test_workers_end_with_a_server_killed_outright(tmp_path: Path, workspace: Path) -> None:
    """A server killed mid-run sends its case workers no signal: each sees its parent gone and
    ends, even in the middle of a check that would run for an hour."""
    (workspace / "ai-eval.toml").write_text("runTimeoutSeconds = 3600\n")
    (workspace / "slow.rubric.yaml").write_text(
        'id: slow\nversion: "1.0"\nchecks:\n  - {kind: regex, pattern: "(a+)+$"}\nscoring: {combine: all_pass}\n'
    )
    cases = [{"id": f"s{n}", "response": "a" * 50_000 + "b"} for n in range(400)]
    (workspace / "slow.cases.yaml").write_text(json.dumps({"rubric": "slow", "cases": cases}))
    server = (
        "import os\n"
        "from pathlib import Path\n"
        "from ai_eval_lsp.runs import run as runs, workers as caseworkers\n"
        "from ai_eval_lsp.project.project import Project\n"
        "import threading\n"
        "called = caseworkers._call\n"
        "def call(host, method, value, seconds):\n"
        "    # a second after a chunk is sent, its worker is deep in the hour-long regex\n"
        "    if method == 'grade':\n"
        "        pid, name = str(host.process.popen.pid), os.environ['AI_EVAL_TEST_PID_FILE']\n"
        "        threading.Timer(1.0, lambda: Path(name).write_text(pid)).start()\n"
        "    return called(host, method, value, seconds)\n"
        "caseworkers._call = call\n"
        "runs.workers_for = lambda cases: 2\n"
        f"root = Path({str(workspace)!r})\n"
        "runs.run_cases(Project.load(root), root / 'slow.cases.yaml')\n"
    )
    worker = orphan(server, tmp_path / "pid")
    assert ends_alone(worker, 30.0)
