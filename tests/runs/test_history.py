"""History and comparison (SPEC section 3): the paired tests, the store's cases and schema, and
the `history`, `diff` and `report` commands."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import without_test_plugins
from scipy.stats import binomtest

from ai_eval_lsp.cli import main
from ai_eval_lsp.core.compare import CaseRecord, binomial_two_sided, diff
from ai_eval_lsp.runs.report import opening_comparison
from ai_eval_lsp.runs.store import SCHEMA_VERSION, ResultStore, StoreError

# --- the paired tests against scipy's exact binomial test -------------------------------------


@pytest.mark.parametrize(
    ("low", "high"),
    [
        (0, 1),
        (1, 0),
        (0, 5),
        (3, 9),
        (7, 7),
        (6, 7),
        (12, 40),
        (0, 30),
        (250, 320),
        (4_800, 5_200),
        (1, 100_000),
    ],
)
def test_the_exact_two_sided_test_matches_scipy(low: int, high: int) -> None:
    expected = binomtest(min(low, high), low + high, 0.5, alternative="two-sided").pvalue
    assert binomial_two_sided(low, high) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_no_discordant_pair_gives_p_one() -> None:
    assert binomial_two_sided(0, 0) == 1.0


def test_large_n_does_not_underflow_to_a_wrong_answer() -> None:
    # 2^-20000 underflows a float; the answer must still be the right tiny number, not 0 or nan.
    p = binomial_two_sided(9_000, 11_000)
    assert 0 < p < 1e-40
    assert p == pytest.approx(binomtest(9_000, 20_000, 0.5).pvalue, rel=1e-6)


def record(case_id: str, score: float | None, passed: bool | None) -> CaseRecord:
    return CaseRecord(case_id, score, passed)


def row(run_id: int, pass_rate: float, avg_score: float, version: str = "1.0") -> dict[str, Any]:
    config = {"rubrics": [{"id": "tone", "version": version}, {"id": "other", "version": "9.0"}]}
    return {
        "target_id": "tone",
        "run_id": run_id,
        "pass_rate": pass_rate,
        "avg_score": avg_score,
        "config_json": json.dumps(config),
    }


def test_a_diff_pairs_cases_counts_flips_and_tests_them() -> None:
    base = [
        record("a", 5.0, True),
        record("b", 5.0, True),
        record("c", 0.0, False),
        record("d", 2.5, False),
        record("gone", 5.0, True),
        record("broken", None, None),
    ]
    head = [
        record("a", 0.0, False),
        record("b", 5.0, True),
        record("c", 4.0, True),
        record("d", 3.0, False),
        record("new", 1.0, False),
        record("broken", 5.0, True),
    ]
    comparison = diff(row(1, 0.6, 3.0), row(2, 0.5, 3.0), base, head)
    assert [case_id for case_id, _, _ in comparison.cases] == ["a", "b", "c", "d", "new", "broken", "gone"]
    assert comparison.flipped == ["a", "c"]
    assert comparison.only_head == ["new"] and comparison.only_base == ["gone"]
    # McNemar: a went pass->fail, c fail->pass; an errored case has no verdict to pair.
    assert comparison.mcnemar_p == binomtest(1, 2, 0.5).pvalue == 1.0
    # Sign test: a fell, c and d rose, b tied (dropped): 2 up, 1 down.
    assert comparison.sign_test_p == pytest.approx(binomtest(1, 3, 0.5).pvalue)
    assert comparison.deltas == {"pass_rate": pytest.approx(-0.1), "avg_score": 0.0}
    assert comparison.incomparable is None
    entry = comparison.to_json()["cases"][4]
    assert entry == {"caseId": "new", "base": None, "head": {"score": 1.0, "passed": False}}


def test_a_diff_across_a_major_version_says_the_scores_are_not_comparable() -> None:
    comparison = diff(row(1, 1, 5, "1.4"), row(2, 1, 5, "2.0"), [], [])
    assert comparison.incomparable == (
        "rubric `tone` went from version 1.4 to 2.0, a new major version: "
        "ai_eval declares its scores not comparable with the old ones"
    )
    assert diff(row(1, 1, 5, "1.4"), row(2, 1, 5, "1.9.1"), [], []).incomparable is None


# --- the store: cases with their row, one transaction, a schema version ------------------------

OLD_SCHEMA = """
CREATE TABLE ai_eval_run (run_id INTEGER PRIMARY KEY AUTOINCREMENT, target_id TEXT NOT NULL, started REAL NOT NULL);
CREATE TABLE ai_eval_result (
    id INTEGER PRIMARY KEY AUTOINCREMENT, target_id TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES ai_eval_run (run_id), timestamp INTEGER NOT NULL,
    avg_score REAL NOT NULL, pass_rate REAL NOT NULL, pass_rate_ci_low REAL, pass_rate_ci_high REAL,
    passed_gate INTEGER NOT NULL, question_count INTEGER NOT NULL, error_count INTEGER NOT NULL,
    scores_json TEXT NOT NULL, source TEXT NOT NULL, duration REAL NOT NULL, config_json TEXT);
CREATE INDEX ai_eval_result_target ON ai_eval_result (target_id, id);
INSERT INTO ai_eval_run VALUES (1, 'tone', 1.0);
INSERT INTO ai_eval_result VALUES (1, 'tone', 1, 1700000000, 2.5, 0.5, 0.09, 0.91, 1, 2, 0,
    '{"a": 5.0, "b": 0.0}', 'cli', 0.1, '{}');
"""


def a_row(target: str = "tone", count: int = 2) -> dict[str, Any]:
    return {
        "target_id": target,
        "avg_score": 2.5,
        "pass_rate": 0.5,
        "pass_rate_ci_low": 0.1,
        "pass_rate_ci_high": 0.9,
        "passed_gate": 1,
        "question_count": count,
        "error_count": 0,
        "scores_json": "{}",
        "source": "cli",
        "duration": 0.1,
        "config_json": "{}",
    }


def test_an_old_database_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    database = tmp_path / "results.sqlite"
    with sqlite3.connect(database) as connection:
        connection.executescript(OLD_SCHEMA)
    store = ResultStore(database)
    [old] = store.history("tone")
    assert old["avg_score"] == 2.5 and old["run_id"] == 1
    # Its cases come from scores_json, without verdicts (the old store never kept them).
    assert store.cases(old) == [CaseRecord("a", 5.0, None), CaseRecord("b", 0.0, None)]
    new = store.insert(a_row(), 2.0, [record("a", 5.0, True), record("b", 5.0, True)])
    assert new is not None and new["run_id"] == 2
    comparison = store.diff()
    assert comparison.base["run_id"] == 1 and comparison.head["run_id"] == 2
    assert comparison.flipped == [] and comparison.sign_test_p == 1.0  # one rise only
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_a_database_from_a_newer_version_is_refused_untouched(tmp_path: Path) -> None:
    database = tmp_path / "results.sqlite"
    with sqlite3.connect(database) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="written by a newer ai-eval-lsp"):
        ResultStore(database).history("tone")
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT name FROM sqlite_master").fetchall() == []


def test_the_last_run_of_a_target_and_how_many_it_has(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "deep" / "er" / "results.sqlite")  # its folders are made
    assert store.last_run("tone") == (None, 0)
    assert not store.path.exists()  # reading never creates the database
    for target in ("tone", "other", "tone"):
        store.insert(a_row(target), 1.0, [record("a", 5.0, True)])
    row, runs = store.last_run("tone")
    assert row is not None and (row["run_id"], row["target_id"], runs) == (3, "tone", 2)
    assert "runs" not in row
    assert store.last_run("other")[1] == 1 and store.last_run("none") == (None, 0)
    assert store.targets() == ["tone", "other"]
    assert [r["run_id"] for r in store.history("tone")] == [3, 1]


def test_a_history_opens_on_its_latest_run_and_the_newest_before_it_that_shares_a_case(
    tmp_path: Path,
) -> None:
    """Runs of another cases file of the same rubric pair no case: the diff skips them, or says
    plainly that there is none."""
    store = ResultStore(tmp_path / "results.sqlite")

    def ran(cases_file: str, *case_ids: str, target: str = "tone", scores: str | None = None) -> None:
        row = {**a_row(target), "config_json": json.dumps({"cases_file": cases_file})}
        row["scores_json"] = scores or json.dumps(dict.fromkeys(case_ids, 5.0))
        store.insert(row, 1.0, [record(case_id, 5.0, True) for case_id in case_ids])

    assert opening_comparison(store, "tone") == {"note": "`tone` has 0 runs: nothing to compare yet."}
    ran("t.cases.yaml", "a", "b")  # run 1
    assert opening_comparison(store, "tone") == {"note": "`tone` has 1 run: nothing to compare yet."}
    ran("t.cases.yaml", "a", "b")  # 2
    ran("u.cases.yaml", "c")  # 3
    ran("t.cases.yaml", "b", target="other")  # 4
    ran("x.cases.yaml", "b", scores="not JSON")  # 5: a row whose scores cannot be read pairs nothing
    ran("t.cases.yaml", "b", "d")  # 6
    assert opening_comparison(store, "tone") == {"base": 2, "head": 6}
    ran("v.cases.yaml", "e")  # 7
    assert opening_comparison(store, "tone") == {
        "note": "No run before run 7 (it ran v.cases.yaml) has a case in common with it, so there is no diff "
        "to show: their cases differ. Pick two runs to compare them all the same."
    }


def test_a_file_that_is_no_database_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    path.write_text("these are notes, not a database\n" * 100)
    with pytest.raises(
        StoreError,
        match=rf"^{re.escape(str(path))}: not a results database \(file is not a database\); name another "
        r"with --db \(or the `resultsDatabase` setting\)$",
    ):
        ResultStore(path).history("tone")


@contextlib.contextmanager
def nothing_can_be_written(folder: Path) -> Iterator[None]:
    """`folder` made immutable (ext4's `chattr +i`: not even root writes in it), as a read-only
    mount or a folder that is not yours is."""
    subprocess.run(["chattr", "+i", str(folder)], check=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="`chattr +i` needs root")
def test_a_database_where_nothing_can_be_written_is_read_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "artifact"
    store = ResultStore(folder / "results.sqlite")
    for _ in range(2):
        store.insert(a_row(), 1.0, [record("a", 5.0, True)])
    with contextlib.closing(sqlite3.connect(folder / "old.sqlite")) as connection:
        connection.executescript(OLD_SCHEMA)  # as the previous release left it: store schema 0
    (folder / "notes.sqlite").write_text("not a database\n" * 100)
    where = "; name another with --db (or the `resultsDatabase` setting)"
    with nothing_can_be_written(folder):
        assert [row["run_id"] for row in store.history("tone")] == [2, 1]
        row, runs = store.last_run("tone")
        assert runs == 2 and row is not None and store.cases(row) == [record("a", 5.0, True)]
        with pytest.raises(StoreError) as refused:
            store.check_writable()
        assert str(refused.value) == (
            f"{store.path}: the results database cannot be written (unable to open database file){where}"
        )
        with pytest.raises(StoreError) as refused:
            ResultStore(folder / "new.sqlite").check_writable()
        assert str(refused.value) == (
            f"{folder / 'new.sqlite'}: the results database cannot be created ({folder} cannot be written){where}"
        )
        assert not (folder / "new.sqlite").exists()
        with pytest.raises(StoreError) as refused:
            ResultStore(folder / "runs" / "new.sqlite").insert(a_row(), 1.0)
        assert str(refused.value) == (
            f"{folder / 'runs' / 'new.sqlite'}: the results database cannot be created "
            f"(Operation not permitted: {folder / 'runs'}){where}"
        )
        with pytest.raises(StoreError) as refused:
            ResultStore(folder / "old.sqlite").history("tone")
        assert str(refused.value) == (
            f"{folder / 'old.sqlite'} has store schema 0, and this ai-eval-lsp reads {SCHEMA_VERSION}; it "
            "cannot be upgraded where it is (nothing can be written there): copy it somewhere writable"
        )
        with pytest.raises(StoreError) as refused:
            ResultStore(folder / "notes.sqlite").history("tone")
        assert str(refused.value) == (
            f"{folder / 'notes.sqlite'}: not a results database (file is not a database){where}"
        )


def test_a_fault_between_the_row_and_its_cases_stores_neither(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results.sqlite")
    unwritable = CaseRecord("b", 5.0, True, "ok", ({"score": object()},))
    with pytest.raises(TypeError):
        store.insert(a_row(), 1.0, [record("a", 5.0, True), unwritable])
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("SELECT count(*) FROM ai_eval_result").fetchone() == (0,)
        assert connection.execute("SELECT count(*) FROM ai_eval_case").fetchone() == (0,)
        assert connection.execute("SELECT count(*) FROM ai_eval_run").fetchone() == (0,)


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from ai_eval_lsp.core.compare import CaseRecord
    from ai_eval_lsp.runs.store import ResultStore

    store = ResultStore(Path(sys.argv[1]))
    count = int(sys.argv[2])
    cases = [CaseRecord(f"c{i}", 5.0, True, "reason " * 20, ({"checkId": "x", "score": 1.0},)) for i in range(count)]
    row = {"target_id": "tone", "avg_score": 5.0, "pass_rate": 1.0, "pass_rate_ci_low": 0.9,
           "pass_rate_ci_high": 1.0, "passed_gate": 1, "question_count": count, "error_count": 0,
           "scores_json": "{}", "source": "cli", "duration": 0.1, "config_json": "{}"}

    def inside() -> bool:
        print("inside", flush=True)
        if sys.argv[3] == "hold":
            time.sleep(60)
        return True

    while True:
        store.insert(row, time.time(), cases, inside)
    """
)


def assert_whole_runs(database: Path) -> int:
    with sqlite3.connect(database) as connection:
        runs = connection.execute("SELECT run_id FROM ai_eval_run").fetchall()
        for (run_id,) in runs:
            [(question_count,)] = connection.execute(
                "SELECT question_count FROM ai_eval_result WHERE run_id = ?", (run_id,)
            ).fetchall()
            assert connection.execute(
                "SELECT count(*) FROM ai_eval_case WHERE run_id = ?", (run_id,)
            ).fetchone() == (question_count,)
        assert connection.execute(
            "SELECT count(*) FROM ai_eval_case WHERE run_id NOT IN (SELECT run_id FROM ai_eval_run)"
        ).fetchone() == (0,)
    return len(runs)


def test_a_process_killed_inside_the_transaction_leaves_nothing(tmp_path: Path) -> None:
    """Killed once every row of the run is written and before the commit: provably mid-write."""
    database = tmp_path / "results.sqlite"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(database), "2000", "hold"], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    assert writer.stdout.readline() == "inside\n"
    writer.kill()
    writer.wait()
    assert assert_whole_runs(database) == 0


@pytest.mark.parametrize("delay", [0.05, 0.2, 0.45, 0.8])
def test_a_process_killed_at_any_moment_leaves_whole_runs_only(tmp_path: Path, delay: float) -> None:
    database = tmp_path / "results.sqlite"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(database), "20000", "go"], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    assert writer.stdout.readline() == "inside\n"  # its first run is being written
    try:
        writer.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        writer.kill()
    writer.wait()
    assert writer.returncode == -9
    assert_whole_runs(database)


# --- the commands ------------------------------------------------------------------------------

RUBRIC = """id: tone
version: "{version}"
checks:
  - {{id: apologises, kind: must_contain_any, values: [{word}]}}
scoring: {{combine: all_pass}}
"""

CASES = """rubric: tone
gate: {pass_rate: 0.9}
cases:
  - id: sorry
    response: "We are sorry."
  - id: apology
    response: "Our apologies."
  - id: rude
    response: "No."
"""


@pytest.fixture
def runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """Two runs of `tone`: the second rubric passes `apology` instead of `sorry`."""
    (tmp_path / "ai-eval.toml").write_text("")
    (tmp_path / "t.cases.yaml").write_text(CASES)
    for word in ("sorry", "apologies"):
        (tmp_path / "tone.rubric.yaml").write_text(RUBRIC.format(version="1.0", word=word))
        main(["--root", str(tmp_path), "run", str(tmp_path / "t.cases.yaml")])
    capsys.readouterr()
    return tmp_path


def cli(root: Path, capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = main(["--root", str(root), *arguments])
    out, err = capsys.readouterr()
    return code, out, err


def test_run_prints_its_diff_to_the_run_before_and_the_bound_that_failed(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(runs, capsys, "run", str(runs / "t.cases.yaml"))
    assert code == 1
    assert "gate FAILED (pass_rate 0.33 < 0.9)" in out.splitlines()[0]
    assert (
        "  vs run 2: pass rate +0.00, average +0.00, 0 flipped (0 to fail, 0 to pass), McNemar p=1, sign test p=1"
        in out.splitlines()
    )


def test_history_lists_a_targets_runs_newest_first(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(runs, capsys, "history", "tone")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "tone: 2 runs, newest first"
    assert lines[1].split()[:3] == ["run", "when", "(UTC)"]
    assert [line.split()[0] for line in lines[2:]] == ["2", "1"]
    assert "0.33" in lines[2] and "[0.06, 0.79]" in lines[2] and "FAILED" in lines[2]
    code, out, _ = cli(runs, capsys, "history", "tone", "--limit", "1", "--format", "json")
    assert [r["run_id"] for r in json.loads(out)] == [2]


def test_history_of_an_unknown_target_names_the_known_ones(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(runs, capsys, "history", "tnoe")
    assert code == 2
    assert "no runs of `tnoe` are stored" in err and "targets with runs: `tone`" in err


def test_diff_shows_the_flipped_cases(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(runs, capsys, "diff", "--format", "json")
    assert code == 0
    found = json.loads(out)
    assert set(found) >= {"target", "base", "head", "cases", "flipped", "deltas", "mcnemar_p", "sign_test_p"}
    assert found["target"] == "tone" and (found["base"]["run_id"], found["head"]["run_id"]) == (1, 2)
    assert found["flipped"] == ["sorry", "apology"]
    assert found["cases"][0] == {
        "caseId": "sorry",
        "base": {"score": 5.0, "passed": True},
        "head": {"score": 0.0, "passed": False},
    }
    assert found["mcnemar_p"] == 1.0 and found["deltas"] == {"pass_rate": 0.0, "avg_score": 0.0}

    code, out, _ = cli(runs, capsys, "diff", "1", "2")
    lines = out.splitlines()
    assert re.match(r"tone: run 1 \(.*\) -> run 2 \(.*\) UTC", lines[0])
    assert "sorry    pass 5.00  fail 0.00  flipped to fail" in lines
    assert "apology  fail 0.00  pass 5.00  flipped to pass" in lines

    code, out, _ = cli(runs, capsys, "diff", "--format", "markdown")
    assert "| `sorry` | pass 5.00 | fail 0.00 | flipped to fail |" in out
    assert "<summary>Unchanged cases (1)</summary>" in out


def test_a_stored_case_whose_outcomes_no_reader_can_read_is_shown_without_them_and_named(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A results database is a file a repository may commit: a case's outcomes nested past what
    any reader follows crashed `diff`, `report` and `run`'s comparison."""
    database = runs / ".ai_eval" / "results.sqlite"
    with sqlite3.connect(database) as connection:
        connection.execute(
            "UPDATE ai_eval_case SET outcomes_json = ? WHERE case_id = 'sorry' AND run_id = 2",
            ("[" * 100 + "]" * 100,),
        )
    note = (
        f"warning: {database}: the check outcomes of case `sorry` of run 2 are left out: "
        "it nests more than 64 levels deep"
    )
    code, out, err = cli(runs, capsys, "diff", "1", "2")
    assert (code, err.splitlines()) == (0, [note])
    assert "sorry    pass 5.00  fail 0.00  flipped to fail" in out.splitlines()
    code, _, err = cli(runs, capsys, "report", "-o", str(runs / "r.html"))
    assert (code, err.splitlines()) == (0, [note])
    code, out, err = cli(runs, capsys, "run", str(runs / "t.cases.yaml"))
    assert code == 1 and "vs run 2:" in out and f"  {note}" in out.splitlines()


def test_diff_says_what_is_missing(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(runs, capsys, "diff", "2")[2] == (
        "error: run 2 is the latest run of `tone`: name a head run to compare it with\n"
    )
    assert "has no run 7" in cli(runs, capsys, "diff", "7")[2]
    code, _, err = cli(runs, capsys, "diff", "--db", str(runs / "none.sqlite"))
    assert code == 2 and f"no results database at {runs / 'none.sqlite'}" in err


def test_a_diff_says_what_the_store_lacks_and_names_runs_of_one_target(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results.sqlite")
    store.check_writable()
    ResultStore(tmp_path / "results.sqlite").insert(a_row("other"), 1.0)  # a target with one run
    (tmp_path / "empty.sqlite").write_bytes(b"")
    said = []
    for where, asked in (
        (tmp_path / "empty.sqlite", {}),
        (store.path, {}),
        (store.path, {"target": "tone"}),
    ):
        with pytest.raises(StoreError) as refused:
            ResultStore(where).diff(**asked)
        said.append(str(refused.value))
    store.insert(a_row("tone"), 2.0)
    store.insert(a_row("tone"), 3.0)
    with pytest.raises(StoreError) as refused:
        store.diff(2, 1)  # run 1 is of `other`
    said.append(str(refused.value))
    assert said == [
        f"{tmp_path / 'empty.sqlite'} holds no runs yet: run a cases file first",
        f"`other` has 1 run in {store.path}; a diff needs two",
        f"`tone` has 0 runs in {store.path}; a diff needs two",
        "run 2 is of `tone` and run 1 of `other`: a diff compares runs of one target",
    ]
    comparison = store.diff(2)  # a base alone: compared with its target's latest
    assert (comparison.base["run_id"], comparison.head["run_id"]) == (2, 3)


def test_a_diff_across_a_major_version_says_so_first(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (runs / "tone.rubric.yaml").write_text(RUBRIC.format(version="2.0", word="sorry"))
    cli(runs, capsys, "run", str(runs / "t.cases.yaml"))
    out = cli(runs, capsys, "diff")[1]
    assert out.splitlines()[1].startswith("rubric `tone` went from version 1.0 to 2.0, a new major version")


class Loads(HTMLParser):
    """Everything in a page that would fetch something."""

    def __init__(self) -> None:
        super().__init__()
        self.fetches: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "srcset", "action", "data", "poster") or (value and "url(" in value):
                self.fetches.append(f"{tag} {name}={value}")
        if tag in ("script", "iframe", "object", "embed", "link"):
            self.fetches.append(tag)


def test_report_is_one_html_file_that_loads_nothing(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(runs, capsys, "report", "-o", str(runs / "r.html"))
    assert code == 0 and out == f"wrote {runs / 'r.html'}: 1 target\n"
    page = (runs / "r.html").read_text()
    parser = Loads()
    parser.feed(page)
    assert parser.fetches == []
    assert "url(" not in page and "@import" not in page
    assert parser.tags.count("svg") == 1 and parser.tags.count("polygon") == 1  # the trend and its band
    assert "<h2>tone</h2>" in page and "2 runs; latest: run 2" in page
    assert "flipped to fail" in page  # the diff to the run before
    assert "x: run id</p>" in page and "hollow" not in page  # no site run to name in the legend


def test_a_run_stores_every_cases_result_with_its_row(runs: Path) -> None:
    store = ResultStore(runs / ".ai_eval" / "results.sqlite")
    [latest] = store.history("tone", 1)
    sorry, apology, rude = store.cases(latest)
    assert (sorry.case_id, sorry.score, sorry.passed) == ("sorry", 0.0, False)
    assert sorry.reason == "all_pass: 0 of 1 checks passed | failed: apologises (none of the values found)"
    assert sorry.outcomes == (
        {
            "checkId": "apologises",
            "kind": "must_contain_any",
            "score": 0.0,
            "passed": False,
            "reason": "none of the values found",
        },
    )
    assert (apology.passed, rude.passed) == (True, False)


@pytest.mark.parametrize("where", ["the folder", "below a file"])
def test_a_run_that_could_not_be_stored_says_so_before_grading(
    runs: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    database = runs if where == "the folder" else runs / "t.cases.yaml" / "results.sqlite"
    code, out, err = cli(runs, capsys, "run", str(runs / "t.cases.yaml"), "--db", str(database))
    why = (
        f"{runs} is a folder: the results database is a file"
        if where == "the folder"
        else (f"{database}: {runs / 't.cases.yaml'} is a file, not a folder")
    )
    assert (code, out) == (2, "")  # no case was graded, nothing printed
    assert err.splitlines()[-1] == f"error: {why}; name another with --db (or the `resultsDatabase` setting)"


@pytest.mark.parametrize("link", ["the file", "its folder"])
def test_the_results_database_is_never_written_through_a_link_out_of_the_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], link: str
) -> None:
    """Another program's database outside the project, reached through `.ai_eval/results.sqlite`
    or a linked `.ai_eval`, is neither written nor read; `--db` still names any file."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    outside.mkdir()
    other = outside / "results.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as connection:
        connection.executescript("CREATE TABLE moz_places (url TEXT); INSERT INTO moz_places VALUES ('x');")
    before = other.read_bytes()
    (project / ".git").mkdir(parents=True)
    (project / "t.cases.yaml").write_text(CASES)
    (project / "tone.rubric.yaml").write_text(RUBRIC.format(version="1.0", word="sorry"))
    if link == "the file":
        (project / ".ai_eval").mkdir()
        (project / ".ai_eval" / "results.sqlite").symlink_to(other)
    else:
        (project / ".ai_eval").symlink_to(outside)
    why = (
        f"error: {project / '.ai_eval' / 'results.sqlite'}: the results database is not written there: a "
        "symbolic link leads out of the project, and only files inside it are written; name another with "
        "--db (or the `resultsDatabase` setting)"
    )
    for command in (["run", str(project / "t.cases.yaml")], ["history", "tone"]):
        code, out, err = cli(project, capsys, *command)
        assert (code, out, err.splitlines()[-1]) == (2, "", why)
    assert other.read_bytes() == before and sorted(path.name for path in outside.iterdir()) == [
        "results.sqlite"
    ]
    elsewhere = tmp_path / "elsewhere.sqlite"
    code, _, _ = cli(project, capsys, "run", str(project / "t.cases.yaml"), "--db", str(elsewhere))
    assert code == 1 and ResultStore(elsewhere).targets() == ["tone"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a folder read-only in a mount namespace of its own")
def test_a_database_where_nothing_can_be_written_is_read_and_not_written(runs: Path) -> None:
    """A CI artifact on a read-only mount: history and diff read it; a run says it cannot store."""
    database = runs / ".ai_eval" / "results.sqlite"
    commands = "; ".join(
        f"{sys.executable} -m ai_eval_lsp --root {runs} {command} --db {database}; echo status $?"
        for command in ("history tone", "diff", f"run {runs / 't.cases.yaml'}")
    )
    done = subprocess.run(
        [
            "unshare",
            "--mount",
            "sh",
            "-c",
            f"mount --bind -o ro {database.parent} {database.parent}; {commands}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=without_test_plugins(),
    )
    assert done.stdout.startswith("tone: 2 runs, newest first\n"), done.stdout + done.stderr
    assert "\nstatus 0\ntone: run 1 (" in done.stdout  # history, then the diff
    assert done.stdout.endswith("status 0\nstatus 2\n")
    assert done.stderr.endswith(
        f"error: {database}: the results database cannot be written (unable to open database file); "
        "name another with --db (or the `resultsDatabase` setting)\n"
    )


def test_history_limit_must_be_positive_and_report_makes_its_folder(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--root", str(runs), "history", "tone", "--limit", "0"])
    assert stopped.value.code == 2
    assert "argument --limit: must be a whole number of at least 1, not '0'" in capsys.readouterr().err
    target = runs / "reports" / "new" / "tone.html"
    code, out, _ = cli(runs, capsys, "report", "-o", str(target))
    assert (code, out) == (0, f"wrote {target}: 1 target\n") and target.is_file()


def test_history_without_a_target_lists_the_targets(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(runs, capsys, "history")
    header, tone = out.splitlines()
    assert code == 0
    assert header == "target  runs  latest run  when (UTC)        pass rate  95% CI        average  gate"
    latest = json.loads(cli(runs, capsys, "history", "tone", "--format", "json")[1])[0]
    assert tone.split()[:3] == ["tone", "2", "2"]  # two runs, the latest is run 2, and its figures:
    assert tone.split()[-5:] == [
        f"{latest['pass_rate']:.2f}",
        f"[{latest['pass_rate_ci_low']:.2f},",
        f"{latest['pass_rate_ci_high']:.2f}]",
        f"{latest['avg_score']:.2f}/5",
        "passed" if latest["passed_gate"] else "FAILED",
    ]
    code, out, _ = cli(runs, capsys, "history", "--format", "json")
    assert json.loads(out) == [{"target": "tone", "runs": 2, "latest": latest}]
