"""The site's own runs (SPEC 3), read from a site whose database is an SQLite file: each row read
as seed 003 says, kept once, in the history beside the local runs, compared question by question
with the local run of the cases file that mirrors its target; `site pull`, `history --site` and
`diff site:...` from the command line. The servers' drivers are tested against real MariaDB and
PostgreSQL servers in tests/e2e/test_site_databases.py."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest
from site_db import RUBRIC, SiteRow, SqliteSite, drush_row, runner_row
from site_shapes import Database, default_install

from ai_eval_lsp.cli import main
from ai_eval_lsp.core.compare import passing_count, question_scores, row_verdicts
from ai_eval_lsp.drupal.site_address import parse_url
from ai_eval_lsp.runs.report import history_answer, opening_comparison
from ai_eval_lsp.runs.site import SiteError, SiteReader, announce, as_row, pull, site_row, why_unreadable
from ai_eval_lsp.runs.store import ResultStore, StoreError

SCORES = {"q1": 5.0, "q2": 1.0, "q17": 2.0, "q4": None}


def reader_of(path: Path, prefix: str = "") -> SiteReader:
    return SiteReader(parse_url(f"sqlite://localhost/{path}#{prefix}", Path("/")))


@pytest.fixture
def site(tmp_path: Path) -> SqliteSite:
    return SqliteSite(tmp_path / "site" / "site.sqlite")


def test_rows_of_both_paths_are_read_as_the_seed_says_and_kept_once(tmp_path: Path, site: SqliteSite) -> None:
    site.insert(
        runner_row("support_bot", SCORES, run_id=7, timestamp=1_780_000_000),
        drush_row("support_bot", {"q1": 5.0, "q2": 4.0}, timestamp=1_780_000_100, duration=3.57),
    )
    store = ResultStore(tmp_path / "results.sqlite")
    reader = reader_of(site.path)
    first = pull(store, reader)
    assert [(row["siteId"], row["run_id"], row["duration"], row["source"]) for row in first.rows] == [
        (1, 7, 42.0, "manual"),
        (2, None, 3.57, "drush"),
    ]
    assert first.rows[0]["question_count"] == 4 and first.rows[0]["error_count"] == 1
    assert pull(store, reader).rows == []  # nothing new: nothing stored twice
    assert [row["id"] for row in store.history("support_bot")] == [2, 1]  # newest first
    # a second reader (another editor, the CLI) reads what is already stored as stored
    assert pull(store, reader_of(site.path)).rows == []
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("SELECT count(*) FROM ai_eval_site_result").fetchone() == (2,)
    reader.close()


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("avg_score", "abc", "`avg_score` is 'abc', not a number"),
        ("question_count", "2.5", "`question_count` is 2.5, not a whole number"),
        ("target_id", "", "`target_id` is '', not a target id"),
        ("error_count", 9, "`error_count` 9 is not between 0 and `question_count` 2"),
        # out of their domain (SPEC 6)
        ("avg_score", -3, "`avg_score` -3 is not between 0 and 5"),
        ("avg_score", 5.5, "`avg_score` 5.5 is not between 0 and 5"),
        ("pass_rate", 7, "`pass_rate` 7 is not between 0 and 1"),
        ("pass_rate_ci_low", -0.1, "`pass_rate_ci_low` -0.1 is not between 0 and 1"),
        ("pass_rate_ci_high", 1.5, "`pass_rate_ci_high` 1.5 is not between 0 and 1"),
        ("question_count", -1, "`question_count` -1 is negative"),
        ("error_count", -1, "`error_count` -1 is not between 0 and `question_count` 2"),
        ("scores_json", '{"q1": 99, "q2": 0}', "question `q1` of `scores_json` scores 99, not 0..5"),
        (
            "scores_json",
            '{"q1": 5, "q\\u001b[31m": -4}',
            "question `q\\x1b[31m` of `scores_json` scores -4, not 0..5",
        ),
        ("scores_json", '{"q1": "6.5"}', "question `q1` of `scores_json` scores 6.5, not 0..5"),
        ("scores_json", '{"q1": 5.000001}', "question `q1` of `scores_json` scores 5.000001, not 0..5"),
        ("scores_json", '{"q1": 1e1}', "question `q1` of `scores_json` scores 10, not 0..5"),
    ],
)
def test_a_row_that_cannot_be_read_is_skipped_with_its_id_and_the_others_are_read(
    tmp_path: Path, site: SqliteSite, column: str, value: object, why: str
) -> None:
    first, bad, last = site.insert(*(drush_row("support_bot", {"q1": 5.0, "q2": 0.0}) for _ in range(3)))
    site.execute(f"UPDATE ai_eval_result SET {column} = ? WHERE id = ?", (value, bad))
    store = ResultStore(tmp_path / "results.sqlite")
    pulled = pull(store, reader_of(site.path))
    assert [row["id"] for row in pulled.rows] == [first, last]
    assert pulled.skipped == [f"site row {bad} of `ai_eval_result` is skipped: {why}"]
    assert pulled.last_id == last


DEEP = "[" * 100_000 + "]" * 100_000
"""JSON nested deeper than Python's parser recurses (a RecursionError where it was read)."""
STORE_MOST = "a results store keeps at most 9223372036854775807"


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("run_id", 1e19, f"`run_id` 10000000000000000000 is out of range: {STORE_MOST}"),
        ("question_count", 1e19, f"`question_count` 10000000000000000000 is out of range: {STORE_MOST}"),
        ("timestamp", 10**17, "`timestamp` 100000000000000000 is no date between 1970 and 9999"),
        ("timestamp", -(10**15), "`timestamp` -1000000000000000 is no date between 1970 and 9999"),
        ("scores_json", '{"a": ' + DEEP + "}", "`scores_json` nests more than 64 levels deep"),
        ("scores_json", DEEP, "`scores_json` nests more than 64 levels deep"),
        ("config_json", '{"a": ' + DEEP + "}", "`config_json` nests more than 64 levels deep"),
    ],
    ids=[
        "run_id 1e19",
        "question_count 1e19",
        "timestamp 1e17",
        "timestamp -1e15",
        "deep scores",
        "deep array",
        "deep config",
    ],
)
def test_a_row_no_store_keeps_or_no_reader_shows_is_skipped_and_later_pulls_go_on(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str], column: str, value: object, why: str
) -> None:
    """Issue 40's red team, finding 3: such a row stopped every pull (OverflowError as it was
    stored, RecursionError as it was checked) or, stored, crashed `history`, `diff` and `report`."""
    first, bad, last = site.insert(
        *(runner_row("support_bot", {"q1": 5.0, "q2": 0.0}, run_id=n) for n in range(3))
    )
    site.execute(f"UPDATE ai_eval_result SET {column} = ? WHERE id = ?", (value, bad))
    code, out, err = cli(project, capsys, "site", "pull")
    assert code == 0 and len(out.splitlines()) == 2
    assert err == f"warning: site row {bad} of `ai_eval_result` is skipped: {why}\n"
    (newer,) = site.insert(runner_row("support_bot", {"q1": 5.0, "q2": 5.0}, run_id=3))
    code, out, err = cli(project, capsys, "site", "pull")  # the pulls after it go on
    assert (code, err) == (0, "") and out.startswith(f"site run {newer} of support_bot")
    report = str(project / "report.html")
    for command in (
        ["history", "support_bot"],
        ["diff", "site:latest", f"site:{first}"],
        ["report", "-o", report],
    ):
        code, out, err = cli(project, capsys, *command)
        assert (code, err) == (0, ""), command
    assert f"site {last}" in cli(project, capsys, "history", "support_bot")[1]


def test_rows_a_store_took_before_they_were_checked_are_skipped_with_a_note_by_every_reader(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store written before rows were checked may hold what crashed `history` (a timestamp
    with no date), `diff` and `report` (JSON nested past the parser's recursion): each reader,
    the CLI's and the server's, leaves such a row out and names it."""
    site.insert(*(runner_row("support_bot", {"q1": 5.0, "q2": n / 2}, run_id=n) for n in range(3)))
    cli(project, capsys, "site", "pull")
    store = ResultStore(project / ".ai_eval" / "results.sqlite")
    with sqlite3.connect(store.path) as connection:  # as a store before these checks took them
        for site_id, column, value in [
            (7, "scores_json", DEEP),
            (8, "config_json", DEEP),
            (9, "timestamp", 10**17),
        ]:
            connection.execute(
                "INSERT INTO ai_eval_site_result SELECT site, ?, target_id, run_id, timestamp + 1, avg_score, "
                "pass_rate, pass_rate_ci_low, pass_rate_ci_high, passed_gate, question_count, error_count, "
                "scores_json, source, duration, config_json FROM ai_eval_site_result WHERE site_id = 3",
                (site_id,),
            )
            connection.execute(
                f"UPDATE ai_eval_site_result SET {column} = ? WHERE site_id = ?", (value, site_id)
            )
    notes = [
        f"warning: {store.path}: site run 7 of `support_bot` is skipped: its `scores_json` nests more than 64 levels deep",
        f"warning: {store.path}: site run 8 of `support_bot` is skipped: its `config_json` nests more than 64 levels deep",
        f"warning: {store.path}: site run 9 of `support_bot` is skipped: its `timestamp` 100000000000000000 is no "
        "date between 1970 and 9999",
    ]
    code, out, err = cli(project, capsys, "history", "support_bot")
    assert (code, sorted(err.splitlines())) == (0, notes) and "3 runs, newest first" in out
    code, out, err = cli(project, capsys, "diff", "site:2", "site:3", "--format", "markdown")
    assert code == 0 and "site run 2 -> site run 3" in out and set(err.splitlines()) <= set(notes)
    for command in (["diff", "--target", "support_bot"], ["report", "-o", str(project / "r.html")]):
        code, out, err = cli(project, capsys, *command)
        assert (code, sorted(err.splitlines())) == (0, notes), command
    code, out, err = cli(project, capsys, "diff", "site:7", "site:3")
    missing = f"error: {store.path} has no site run 7 (`ai-eval-lsp site pull` reads the site's runs)"
    assert code == 2 and err.splitlines()[0] == missing and set(err.splitlines()[1:]) <= set(notes)
    # what the server answers `aiEval.history` and `aiEval.siteRuns` with
    assert [row["siteId"] for row in history_answer(store, "support_bot", None)["rows"]] == [3, 2, 1]
    listed = announce(store, "s", store.site_history(reader_of(site.path).address.identity), 0.5)
    assert [run.row["siteId"] for run in listed] == [3, 2, 1]


@pytest.mark.parametrize(
    "scores", ['{"q1": 5.0, "q2": 0, "q3": null, "q4": "2.5", "a: 7": 1}', "[99, -4]", '{"q1": 99', '"99"']
)
def test_scores_within_0_to_5_or_of_another_shape_are_read(
    tmp_path: Path, site: SqliteSite, scores: str
) -> None:
    (row_id,) = site.insert(drush_row("support_bot", {"q1": 5.0}))
    site.execute("UPDATE ai_eval_result SET scores_json = ? WHERE id = ?", (scores, row_id))
    pulled = pull(ResultStore(tmp_path / "results.sqlite"), reader_of(site.path))
    assert (pulled.skipped, [row["scores_json"] for row in pulled.rows]) == ([], [scores])


def test_a_row_larger_than_a_row_is_read_is_skipped_and_named(
    tmp_path: Path, site: SqliteSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ai_eval_lsp.runs.site.ROW_BYTES", 2**20)  # 64 MB, smaller for the test
    monkeypatch.setattr("ai_eval_lsp.runs.site.BATCH_BYTES", 2**19)
    ids = site.insert(*(drush_row("support_bot", {"q1": 5.0}) for _ in range(6)))
    for row_id, size in zip(ids[1:4], [2**21, 2**18, 2**18], strict=True):
        site.execute("UPDATE ai_eval_result SET config_json = ? WHERE id = ?", ("x" * size, row_id))
    pulled = pull(ResultStore(tmp_path / "results.sqlite"), reader_of(site.path))
    assert [row["id"] for row in pulled.rows] == [ids[0], *ids[2:]]
    assert pulled.skipped == [
        f"site row {ids[1]} of `ai_eval_result` is skipped: its 2.0 MB of text are more than ai-eval-lsp "
        "reads of one row (1.0 MB)"
    ]


def test_numbers_as_strings_and_decimals_are_read_and_other_scores_leave_aggregates_only() -> None:
    import decimal

    row = as_row(
        site_row(
            [
                "12",
                "support_bot",
                None,
                decimal.Decimal("1780000000"),
                decimal.Decimal("3.1000"),
                "0.75",
                None,
                b"0.9",
                "1",
                4,
                "0",
                b"[1, 2]",
                "manual",
                decimal.Decimal("12.34"),
                None,
            ]
        )
    )
    assert row == {
        "id": 12,
        "target_id": "support_bot",
        "run_id": None,
        "timestamp": 1780000000,
        "avg_score": 3.1,
        "pass_rate": 0.75,
        "pass_rate_ci_low": None,
        "pass_rate_ci_high": 0.9,
        "passed_gate": 1,
        "question_count": 4,
        "error_count": 0,
        "scores_json": "[1, 2]",
        "source": "manual",
        "duration": 12.34,
        "config_json": None,
        "siteId": 12,
    }
    assert ResultStore(Path("/nonexistent.sqlite")).cases(row) == []


def test_each_new_row_is_announced_with_its_line_and_whether_it_regressed(
    tmp_path: Path, site: SqliteSite
) -> None:
    site.insert(
        runner_row("support_bot", {"q1": 4.0, "q2": 4.0}, run_id=1),
        runner_row("other_bot", {"q1": 0.0}, run_id=2),
        runner_row("support_bot", {"q1": 4.0, "q2": 2.6}, run_id=3),  # average -0.70
        runner_row("support_bot", {"q1": 4.0, "q2": 2.0, "q3": None}, run_id=4),  # -0.30 more
    )
    store = ResultStore(tmp_path / "results.sqlite")
    pulled = pull(store, reader_of(site.path))
    runs = announce(store, reader_of(site.path).address.identity, pulled.rows, 0.5)
    assert [(run.summary, run.regressed) for run in runs] == [
        (
            "site run 1 of support_bot: pass rate 1.00 [0.80, 1.00], average 4.00/5, gate passed, 2 questions, 0 errors",
            False,
        ),
        (
            "site run 2 of other_bot: pass rate 0.00 [0.00, 0.20], average 0.00/5, gate failed, 1 question, 0 errors",
            False,
        ),
        (
            "site run 3 of support_bot regressed: pass rate 1.00 [0.80, 1.00], average 3.30/5, gate passed, "
            "2 questions, 0 errors; average -0.70 against site run 1 (tolerance 0.5)",
            True,
        ),
        (
            "site run 4 of support_bot: pass rate 0.50 [0.30, 0.70], average 3.00/5, gate failed, 3 questions, "
            "1 error; average -0.30 against site run 3",
            False,
        ),
    ]


def test_a_history_s_newest_runs_carry_the_line_and_regression_they_were_told_with(
    tmp_path: Path, site: SqliteSite
) -> None:
    """What `aiEval.siteRuns` lists: the newest runs, each compared with the run before it, found
    among them or, for the oldest listed, in the store."""
    site.insert(
        runner_row("support_bot", {"q1": 4.0, "q2": 4.0}, run_id=1),
        runner_row("other_bot", {"q1": 0.0}, run_id=2),
        runner_row("support_bot", {"q1": 4.0, "q2": 2.6}, run_id=3),  # average -0.70
        runner_row("support_bot", {"q1": 4.0, "q2": 2.0, "q3": None}, run_id=4),  # -0.30 more
    )
    store = ResultStore(tmp_path / "results.sqlite")
    identity = reader_of(site.path).address.identity
    told = announce(store, identity, pull(store, reader_of(site.path)).rows, 0.5)
    newest = store.site_history(identity, limit=2)
    listed = announce(store, identity, newest, 0.5)
    assert [run.row["siteId"] for run in listed] == [4, 3]  # in the order given
    assert [(run.summary, run.regressed) for run in listed] == [
        (run.summary, run.regressed) for run in (told[3], told[2])
    ]
    assert listed[1].regressed and "against site run 1" in listed[1].summary  # the store's run before it
    one_by_one = [announce(store, identity, [row], 0.5)[0] for row in newest]
    assert [(run.summary, run.regressed) for run in one_by_one] == [
        (run.summary, run.regressed) for run in listed
    ]


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda path: path.unlink(), "there is no such file"),
        (
            lambda path: sqlite3.connect(path).execute("DROP TABLE ai_eval_result"),
            "there is no table `ai_eval_result`: is ai_eval installed on the site (and the table prefix right)?",
        ),
        (lambda path: path.write_bytes(b"not a database" * 100), "file is not a database"),
    ],
)
def test_a_site_that_cannot_be_read_says_why(
    tmp_path: Path, site: SqliteSite, damage: object, said: str
) -> None:
    damage(site.path)  # type: ignore[operator]
    with pytest.raises(SiteError) as refused:
        pull(ResultStore(tmp_path / "results.sqlite"), reader_of(site.path))
    assert str(refused.value) == f"cannot read the site's runs from sqlite file {site.path}: {said}"


def test_a_driver_error_that_quotes_the_password_is_said_without_it(tmp_path: Path) -> None:
    """A driver's own text, where no known cause fits, is said with the password taken out in
    every form it may take there, and its control characters escaped (a server's words)."""
    address = parse_url("mysql://reader:K%C3%A4x7-Secret@127.0.0.1:3306/shop", tmp_path)
    quoted = RuntimeError(
        f"login of {address.username}:{address.password} failed; sent {address.password.encode()!r}, "
        "from mysql://reader:K%C3%A4x7-Secret@127.0.0.1\n\x1b[31m"
    )
    assert why_unreadable(address, quoted) == (
        "cannot read the site's runs from mysql database `shop` on 127.0.0.1:3306 as `reader`: login of "
        "reader:*** failed; sent b'***', from mysql://reader:***@127.0.0.1\\n\\x1b[31m"
    )


def test_the_site_is_read_only(tmp_path: Path, site: SqliteSite) -> None:
    site.insert(drush_row("support_bot", {"q1": 5.0}))
    before = site.path.read_bytes()
    pull(ResultStore(tmp_path / "results.sqlite"), reader_of(site.path))
    assert site.path.read_bytes() == before
    assert not site.path.with_name("site.sqlite-wal").exists()


def test_a_site_target_s_history_opens_on_its_latest_run_and_the_newest_site_run_sharing_a_question(
    tmp_path: Path, site: SqliteSite
) -> None:
    """A site keeps its questions in `scores_json`: the history view's diff pairs the latest
    site run with the newest site run before it that has one of its questions (a run of other
    questions, or whose scores cannot be read, pairs nothing), and names them as `aiEval.diff`
    takes them."""
    site.insert(
        runner_row("support_bot", {"q1": 5.0, "q2": 4.0}, run_id=1),
        runner_row("support_bot", {"q9": 5.0}, run_id=2),
        runner_row("other_bot", {"q1": 5.0}, run_id=3),
        drush_row("support_bot", {"q2": 1.0, "q3": 2.0}),
    )
    store = ResultStore(tmp_path / "results.sqlite")
    pull(store, reader_of(site.path))
    answer = history_answer(store, "support_bot", None)
    assert [row["siteId"] for row in answer["rows"]] == [4, 2, 1]
    assert answer["runs"] == [
        {"name": "site:4", "label": "site run 4"},
        {"name": "site:2", "label": "site run 2"},
        {"name": "site:1", "label": "site run 1"},
    ]
    assert answer["compare"] == {"base": "site:1", "head": "site:4"}
    assert store.diff(answer["compare"]["base"], answer["compare"]["head"]).head["siteId"] == 4
    (bad,) = site.insert(drush_row("support_bot", {"q2": 3.0}))
    site.execute("UPDATE ai_eval_result SET scores_json = '[3.0]' WHERE id = ?", (bad,))
    pull(store, reader_of(site.path))
    assert opening_comparison(store, "support_bot") == {
        "note": "No site run before site run 5 has a question in common with it, so there is no diff to show: "
        "their questions differ. Pick two runs to compare them all the same."
    }


# --- the command line, with a project mirroring the site's target ----------------------------------


CASES = """\
rubric: refund_answer
site_target: support_bot
cases:
  - id: refund_late
    question: {id: q17, input: "Where is my refund?"}
    response: "Sorry, it is on its way."
  - id: polite
    question: {id: q1, input: "Hello"}
    response: "Sorry to hear that."
  - id: no_question_id
    response: "No apology here."
"""


@pytest.fixture
def project(tmp_path: Path, site: SqliteSite) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "ai-eval.toml").write_text(f'site.database = "sqlite://localhost/{site.path}"\n')
    (root / "refund.rubric.yaml").write_text(RUBRIC)
    (root / "refund.cases.yaml").write_text(CASES)
    return root


def cli(root: Path, capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = main(["--root", str(root), *arguments])
    out, err = capsys.readouterr()
    return code, out, err


def test_site_pull_prints_a_line_per_new_run_oldest_first_and_nothing_twice(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.insert(
        runner_row("support_bot", {"q1": 5.0, "q17": 0.0}, run_id=1),
        drush_row("support_bot", {"q1": 5.0, "q17": 1.0}),
        drush_row("other_bot", {"x": 5.0}),
    )
    code, out, err = cli(project, capsys, "site", "pull", str(project))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "site run 1 of support_bot: pass rate 0.50 [0.30, 0.70], average 2.50/5, gate failed, 2 questions, 0 errors",
        "site run 2 of support_bot: pass rate 0.50 [0.30, 0.70], average 3.00/5, gate failed, 2 questions, "
        "0 errors; average +0.50 against site run 1",
        "site run 3 of other_bot: pass rate 1.00 [0.80, 1.00], average 5.00/5, gate passed, 1 question, 0 errors",
    ]
    assert (
        cli(project, capsys, "site", "pull", str(project))[1]
        == f"no new site runs in sqlite file {site.path}\n"
    )


# --- `site pull` in a terminal and in CI ----------------------------------------------------------


def averaging(*averages: float, target: str = "support_bot") -> list[SiteRow]:
    """A site run of `target` per average, in turn (one question scored that average)."""
    return [runner_row(target, {"q1": average}, run_id=number) for number, average in enumerate(averages, 1)]


def test_three_new_runs_are_three_lines_oldest_first_and_a_regression_fails_the_gate(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.insert(*averaging(4.0, 3.5, 2.9))  # -0.50, exactly the tolerance; then -0.60
    code, out, err = cli(project, capsys, "site", "pull", "--fail-on-regression")
    assert code == 1
    assert out.splitlines() == [
        "site run 1 of support_bot: pass rate 1.00 [0.80, 1.00], average 4.00/5, gate passed, 1 question, 0 errors",
        "site run 2 of support_bot: pass rate 1.00 [0.80, 1.00], average 3.50/5, gate passed, 1 question, "
        "0 errors; average -0.50 against site run 1",
        "site run 3 of support_bot regressed: pass rate 1.00 [0.80, 1.00], average 2.90/5, gate passed, "
        "1 question, 0 errors; average -0.60 against site run 2 (tolerance 0.5)",
    ]
    assert err == "error: 1 new site run regressed (--fail-on-regression)\n"
    # the runs are stored now: the next pull has nothing new, and passes
    assert cli(project, capsys, "site", "pull", "--fail-on-regression")[0] == 0
    # a regression without the flag is said, and the pull passes
    code, out, err = cli(project, capsys, "site", "pull", "--db", str(project / "other.sqlite"))
    assert (code, err) == (0, "") and "regressed" in out.splitlines()[2]


@pytest.mark.parametrize(
    ("before", "after", "tolerance", "regressed"),
    [
        (4.0, 3.5, None, False),  # a drop of exactly the default tolerance, 0.5
        (3.7, 3.2, None, False),  # the same in floats that do not subtract exactly (0.5000000000000004)
        (4.0, 3.49, None, True),
        (4.0, 3.0, 1.0, False),  # ai-eval.toml's site.regressionTolerance
        (4.0, 2.9, 1.0, True),
        (4.0, 3.9, 0.0, True),  # any drop at all
        (4.0, 4.0, 0.0, False),
    ],
)
def test_a_run_regresses_when_its_average_falls_more_than_the_tolerance(
    project: Path,
    site: SqliteSite,
    capsys: pytest.CaptureFixture[str],
    before: float,
    after: float,
    tolerance: float | None,
    regressed: bool,
) -> None:
    if tolerance is not None:
        settings = project / "ai-eval.toml"
        settings.write_text(settings.read_text() + f"site.regressionTolerance = {tolerance}\n")
    site.insert(*averaging(before, after))
    code, out, _ = cli(project, capsys, "site", "pull", "--fail-on-regression")
    assert code == (1 if regressed else 0)
    assert ("regressed" in out.splitlines()[1]) == regressed
    assert ("regressed" in out.splitlines()[0]) is False


def test_site_pull_exits_2_when_the_site_cannot_be_read(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.path.unlink()
    code, out, err = cli(project, capsys, "site", "pull", "--fail-on-regression", "--format", "github")
    assert (code, out) == (2, "")
    assert err == f"error: cannot read the site's runs from sqlite file {site.path}: there is no such file\n"


def test_site_pull_for_github_annotates_each_regression(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.insert(*averaging(4.0, 3.0, 4.0), *averaging(5.0, 3.0, target="other, bot: 100%"))
    code, out, _ = cli(project, capsys, "site", "pull", "--format", "github", "--fail-on-regression")
    assert code == 1
    assert out.splitlines() == [
        "site run 1 of support_bot: pass rate 1.00 [0.80, 1.00], average 4.00/5, gate passed, 1 question, 0 errors",
        "::error title=ai-eval-lsp%3A site run 2 of support_bot regressed::site run 2 of support_bot regressed: "
        "pass rate 1.00 [0.80, 1.00], average 3.00/5, gate passed, 1 question, 0 errors; average -1.00 against "
        "site run 1 (tolerance 0.5)",
        "site run 3 of support_bot: pass rate 1.00 [0.80, 1.00], average 4.00/5, gate passed, 1 question, "
        "0 errors; average +1.00 against site run 2",
        "site run 4 of other, bot: 100%: pass rate 1.00 [0.80, 1.00], average 5.00/5, gate passed, 1 question, "
        "0 errors",
        "::error title=ai-eval-lsp%3A site run 5 of other%2C bot%3A 100%25 regressed::site run 5 of other, bot: "
        "100%25 regressed: pass rate 1.00 [0.80, 1.00], average 3.00/5, gate passed, 1 question, 0 errors; "
        "average -2.00 against site run 4 (tolerance 0.5)",
    ]
    # without the gate, a regression is a warning
    out = cli(project, capsys, "site", "pull", "--format", "github", "--db", str(project / "b.sqlite"))[1]
    assert out.splitlines()[1].startswith(
        "::warning title=ai-eval-lsp%3A site run 2 of support_bot regressed::"
    )


def test_site_pull_as_json_gives_each_new_run_its_row_line_and_regressed(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.insert(*averaging(4.0, 3.0))
    code, out, _ = cli(project, capsys, "site", "pull", "--format", "json")
    assert code == 0
    runs = json.loads(out)
    assert [(run["siteId"], run["run_id"], run["avg_score"], run["regressed"]) for run in runs] == [
        (1, 1, 4.0, False),
        (2, 2, 3.0, True),
    ]
    assert runs[1]["summary"].startswith("site run 2 of support_bot regressed: ")
    assert json.loads(cli(project, capsys, "site", "pull", "--format", "json")[1]) == []


def test_the_first_row_of_a_table_that_was_empty_is_pulled_once(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(project, capsys, "site", "pull")[1] == f"no new site runs in sqlite file {site.path}\n"
    site.insert(*averaging(4.0))
    assert cli(project, capsys, "site", "pull")[1] == (
        "site run 1 of support_bot: pass rate 1.00 [0.80, 1.00], average 4.00/5, gate passed, 1 question, 0 errors\n"
    )
    assert cli(project, capsys, "site", "pull")[1] == f"no new site runs in sqlite file {site.path}\n"


# --- where the password comes from ----------------------------------------------------------------


def user_config(home: Path, url: str) -> None:
    """The user's own `~/.config/ai-eval-lsp/config.toml` (under `home`, as XDG_CONFIG_HOME)."""
    (home / "ai-eval-lsp").mkdir(parents=True, exist_ok=True)
    (home / "ai-eval-lsp" / "config.toml").write_text(f'[site]\ndatabase = "{url}"\n')


def test_the_user_s_config_file_names_the_site_over_the_project_and_the_environment_over_both(
    tmp_path: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "ai-eval.toml").write_text('site.database = "sqlite://localhost/nowhere.sqlite"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("AI_EVAL_SITE_DATABASE", raising=False)
    site.insert(*averaging(4.0))
    code, _, err = cli(root, capsys, "site", "pull")
    assert code == 2 and "nowhere.sqlite: there is no such file" in err  # the project's
    user_config(tmp_path / "config", f"sqlite://localhost/{site.path}")
    code, out, err = cli(root, capsys, "site", "pull")
    assert (code, err) == (0, "") and out.startswith("site run 1 of support_bot: ")  # the user's, over it
    code, out, _ = cli(root, capsys, "history", "support_bot", "--site")
    assert code == 0 and out.splitlines()[2].startswith("site 1  ")
    monkeypatch.setenv("AI_EVAL_SITE_DATABASE", "sqlite://localhost/elsewhere.sqlite")
    code, _, err = cli(root, capsys, "site", "pull")
    assert code == 2 and "elsewhere.sqlite: there is no such file" in err  # the environment's, over both


def test_a_wrong_url_in_the_user_s_config_file_is_named_by_where_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ai-eval.toml").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("AI_EVAL_SITE_DATABASE", raising=False)
    user_config(tmp_path / "config", "mariadb://reader:s3cr3t@db/shop")
    code, _, err = cli(tmp_path, capsys, "site", "pull", str(tmp_path))
    assert code == 2
    assert err == (
        f"error: no site runs: `[site] database` in {tmp_path / 'config' / 'ai-eval-lsp' / 'config.toml'} names "
        "`mariadb`; it must start with mysql://, pgsql:// or sqlite:// (the drivers Drupal core supports); "
        "write mysql:// as Drupal does\n"
    )


FORGING = "\x1b[31m\n  injected: site run 999 of support_bot: pass rate 1.00"
"""A target id that would colour a terminal red and forge a line of `site pull`."""


def test_a_row_s_text_can_neither_colour_the_terminal_nor_forge_a_line(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    question = "q\u202e1\x9b2J"  # a right-to-left override, a C1 control sequence
    site.insert(
        runner_row(FORGING, {question: 5.0, "q2": 0.0}, run_id=1, source="drush\x1b]0;owned\x07"),
        runner_row(FORGING, {question: 0.0, "q2": 0.0}, run_id=2),
    )
    said = [
        cli(project, capsys, "site", "pull"),
        cli(project, capsys, "history"),
        cli(project, capsys, "history", FORGING),
        cli(project, capsys, "history", "no_such_target"),
        cli(project, capsys, "diff", "site:1", "site:2"),
        cli(project, capsys, "diff", "site:1", "site:2", "--format", "markdown"),
    ]
    shown = "\\x1b[31m\\n  injected: site run 999 of support_bot: pass rate 1.00"
    assert said[0][1].splitlines() == [
        f"site run 1 of {shown}: pass rate 0.50 [0.30, 0.70], average 2.50/5, gate failed, 2 questions, 0 errors",
        f"site run 2 of {shown} regressed: pass rate 0.00 [0.00, 0.20], average 0.00/5, gate failed, "
        "2 questions, 0 errors; average -2.50 against site run 1 (tolerance 0.5)",
    ]
    assert said[2][1].splitlines()[0] == f"{shown}: 2 runs, newest first"
    assert said[2][1].splitlines()[3].endswith("drush\\x1b]0;owned\\x07")
    assert "q\\u202e1\\x9b2J" in said[4][1]
    for _, out, err in said:
        for line in (out + err).splitlines():
            assert line.isprintable() and not line.lstrip().startswith("injected"), line


def test_names_a_settings_file_gives_are_escaped_in_site_pull_s_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database or user name from `settings.php` could retitle the terminal or colour it."""
    default_install(
        tmp_path, Database("mysql", "d\x1b]0;TITLE\x07", "127.0.0.1", 9, "u\x1b[31mRED", "Pw-1x", "")
    )
    code, out, err = cli(tmp_path, capsys, "site", "pull")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        "error: cannot read the site's runs from mysql database `d\\x1b]0;TITLE\\x07` on 127.0.0.1:9 as "
        "`u\\x1b[31mRED`: nothing answers there (is the database server running, and the host and port right?)"
    )


def test_history_lists_local_and_site_runs_together_marked(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.insert(runner_row("refund_answer", {"q1": 5.0}, run_id=1, timestamp=1))  # long before the local run
    cli(project, capsys, "run", str(project / "refund.cases.yaml"))
    code, out, _ = cli(project, capsys, "history", "refund_answer", "--site")
    assert code == 0
    runs = [line.split()[0] for line in out.splitlines()[2:]]
    assert runs == ["1", "site"]
    assert out.splitlines()[3].startswith("site 1  1970-01-01 00:00")
    code, out, _ = cli(project, capsys, "history", "refund_answer", "--format", "json")
    rows = json.loads(out)
    assert ["siteId" in row for row in rows] == [False, True]


def test_a_site_run_and_the_local_run_mirroring_it_are_compared_question_by_question(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.insert(runner_row("support_bot", {"q1": 5.0, "q17": 0.0, "q99": 5.0}, run_id=1))
    cli(project, capsys, "site", "pull")
    cli(project, capsys, "run", str(project / "refund.cases.yaml"))
    code, out, err = cli(project, capsys, "diff", "site:latest", "latest")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("refund_answer: site run 1 (") and "-> run 1 (" in lines[0]
    assert lines[-5:] == [
        "case                             base       head       change",
        "q17 (refund_late)                fail 0.00  pass 5.00  flipped to pass",
        "q1 (polite)                      pass 5.00  pass 5.00",
        "no_question_id (no question id)  -          fail 0.00  new",
        "q99                              pass 5.00  -          gone",
    ]
    code, out, _ = cli(project, capsys, "diff", "site:1", "1", "--format", "json")
    assert json.loads(out)["flipped"] == ["q17"]


def test_a_local_run_that_mirrors_no_site_target_is_not_compared_with_a_site_run(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.insert(runner_row("support_bot", {"q1": 5.0}, run_id=1))
    cli(project, capsys, "site", "pull")
    (project / "refund.cases.yaml").write_text(CASES.replace("site_target: support_bot\n", ""))
    cli(project, capsys, "run", str(project / "refund.cases.yaml"))
    code, _, err = cli(project, capsys, "diff", "site:1", "latest")
    assert code == 2
    assert err == (
        "error: run 1 of `refund_answer` mirrors no site target, so it cannot be compared with site run 1 of "
        "`support_bot`: add `site_target: support_bot` to its cases file and run it again\n"
    )


def test_a_rubric_s_history_offers_the_site_s_runs_it_mirrors_and_the_reverse(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    """What an editor's history view offers to compare: a rubric's own runs, then the site's runs
    of the target its cases file mirrors; a site target's runs, then the local runs mirroring it.
    Any two of them compare, the view's target named."""
    site.insert(
        runner_row("support_bot", {"q17": 0.0, "q1": 5.0}, run_id=1),
        runner_row("other_bot", {"q1": 1.0}, run_id=2),
    )
    cli(project, capsys, "site", "pull")
    cli(project, capsys, "run", str(project / "refund.cases.yaml"))
    store = ResultStore(project / ".ai_eval" / "results.sqlite")
    assert history_answer(store, "refund_answer", None)["runs"] == [
        {"name": 1, "label": "run 1"},
        {"name": "site:1", "label": "site run 1 of support_bot"},
    ]
    assert history_answer(store, "support_bot", None)["runs"] == [
        {"name": "site:1", "label": "site run 1"},
        {"name": 1, "label": "run 1 of refund_answer"},
    ]
    for target in ("refund_answer", "support_bot"):
        comparison = store.diff("site:1", 1, target)
        assert comparison.flipped == ["q17"]
    with pytest.raises(StoreError, match="site run 2 of `other_bot`"):
        store.diff("site:2", 1, "refund_answer")


# --- a site question's verdict: the one its own row implies ------------------------------------------

ISSUE_ROW = {"q1": 5.0, "q2": 0.0, "q3": 4.0, "q4": 4.5}
"""The issue's row: pass rate 0.75 over four questions, so the three best passed (q1, q4 and q3),
whatever the local rubric's pass line (a full 5.0 under `all_pass`)."""


@pytest.mark.parametrize(
    ("rate", "scores", "verdicts"),
    [
        (0.75, ISSUE_ROW, {"q1": True, "q2": False, "q3": True, "q4": True}),
        (0.0, {"a": 5.0, "b": 5.0}, {"a": False, "b": False}),
        (1.0, {"a": 0.0, "b": 3.0}, {"a": True, "b": True}),
        # the line falls between two questions of one score: both unknown, the others known
        (0.5, {"a": 5.0, "b": 4.0, "c": 4.0, "d": 1.0}, {"a": True, "b": None, "c": None, "d": False}),
        (0.5, {"a": 2.0, "b": 2.0}, {"a": None, "b": None}),
        # errored questions (null) are no questions of the rate: 1 of the 2 scored passed
        (0.5, {"a": None, "b": 3.0, "c": 1.0}, {"a": None, "b": True, "c": False}),
    ],
)
def test_a_site_question_s_verdict_is_the_one_its_row_implies(
    rate: float, scores: dict[str, float | None], verdicts: dict[str, bool | None]
) -> None:
    judged = row_verdicts(question_scores(json.dumps(scores), questions=True), rate)
    assert {case.case_id: case.passed for case in judged} == verdicts
    assert {case.case_id for case in judged if case.tied} == {
        key for key, passed in verdicts.items() if passed is None and scores[key] is not None
    }
    # the verdicts give back the row's own pass rate wherever no question is tied
    scored = [case for case in judged if case.score is not None]
    if not any(case.tied for case in judged):
        assert sum(1 for case in scored if case.passed) == round(rate * len(scored))


@pytest.mark.parametrize(
    ("rate", "scored", "passing"),
    [
        (0.5, 5, 3),  # 2.5: half away from zero, as PHP's round() (Python's round() gives 2)
        (0.7, 5, 4),  # 3.5 as written, although the float 0.7 x 5 is 3.4999999999999996
        (0.3333, 3, 1),  # a rate kept to four places (PostgreSQL's NUMERIC(10,4))
        (0.6667, 3, 2),
        (1.2, 4, 4),  # a rate out of its domain: all at most
        (-0.1, 4, 0),
    ],
)
def test_how_many_questions_a_rate_passes_is_rounded_as_the_site_rounds(
    rate: float, scored: int, passing: int
) -> None:
    assert passing_count(rate, scored) == passing


def issue_site(site: SqliteSite) -> None:
    """Sixteen runs of another target, then the issue's two runs of `support_bot` as site rows
    17 and 19: q1 and q3 go from 5 and 4 to 0, both passed in row 17 (pass rate 0.75)."""
    site.insert(*(drush_row("other_bot", {"x": 5.0}) for _ in range(16)))
    site.insert(
        runner_row("support_bot", ISSUE_ROW, run_id=17),
        drush_row("other_bot", {"x": 5.0}),
        runner_row("support_bot", {"q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 4.5}, run_id=19),
    )


def test_two_site_runs_flip_as_their_rows_pass_rates_say(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    issue_site(site)
    cli(project, capsys, "site", "pull")
    code, out, _ = cli(project, capsys, "diff", "site:17", "site:19")
    assert code == 0
    assert out.splitlines()[1:] == [
        "pass rate 0.75 -> 0.25 (-0.50), average 3.38 -> 1.12 (-2.25) of 5",
        "2 verdicts flipped; exact McNemar p = 0.5, sign test on scores p = 0.5",
        "",
        "case  base       head       change",
        "q1    pass 5.00  fail 0.00  flipped to fail",
        "q2    fail 0.00  fail 0.00",
        "q3    pass 4.00  fail 0.00  flipped to fail",
        "q4    pass 4.50  pass 4.50",
    ]
    code, out, _ = cli(project, capsys, "diff", "site:17", "site:19", "--format", "json")
    found = json.loads(out)
    assert found["flipped"] == ["q1", "q3"]
    assert found["cases"][0] == {
        "caseId": "q1",
        "base": {"score": 5.0, "passed": True},
        "head": {"score": 0.0, "passed": False},
    }


def test_a_site_run_and_a_local_run_differ_only_where_the_site_s_row_says_so(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    """The local rubric passes a full 5.0 only (`all_pass`); the site passed q3 (4.0) and q4 (4.5)
    all the same: the local run's q4 (passed) is no flip, its q3 (failed) is."""
    site.insert(runner_row("support_bot", ISSUE_ROW, run_id=1))
    (project / "refund.cases.yaml").write_text(
        "rubric: refund_answer\nsite_target: support_bot\ncases:\n"
        + "".join(
            f"  - id: case_{question}\n    question: {{id: {question}}}\n    response: {response!r}\n"
            for question, response in (("q1", "Sorry."), ("q2", "No."), ("q3", "No."), ("q4", "Sorry."))
        )
    )
    cli(project, capsys, "site", "pull")
    cli(project, capsys, "run", str(project / "refund.cases.yaml"))
    code, out, _ = cli(project, capsys, "diff", "site:latest", "latest")
    assert code == 0
    assert out.splitlines()[2:] == [
        "1 verdict flipped; exact McNemar p = 1, sign test on scores p = 1",
        "",
        "case          base       head       change",
        "q1 (case_q1)  pass 5.00  pass 5.00",
        "q2 (case_q2)  fail 0.00  fail 0.00",
        "q3 (case_q3)  pass 4.00  fail 0.00  flipped to fail",
        "q4 (case_q4)  pass 4.50  pass 5.00  up",
    ]


def test_questions_tied_at_the_row_s_line_are_unknown_and_never_flip(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pass rate 0.5 over 5, 4, 4, 1: two passed, and the second and third score the same, so the
    row does not say which of q2 and q3 passed."""
    site.insert(
        runner_row("support_bot", {"q1": 5.0, "q2": 4.0, "q3": 4.0, "q4": 1.0}, run_id=1, pass_rate=0.5),
        runner_row("support_bot", {"q1": 5.0, "q2": 0.0, "q3": 4.0, "q4": 1.0}, run_id=2, pass_rate=0.25),
    )
    cli(project, capsys, "site", "pull")
    code, out, _ = cli(project, capsys, "diff", "site:1", "site:2")
    assert code == 0
    assert out.splitlines()[2:] == [
        "0 verdicts flipped; exact McNemar p = 1, sign test on scores p = 1",
        "",
        "case  base       head       change",
        "q1    pass 5.00  pass 5.00",
        "q2    tied 4.00  fail 0.00  down",
        "q3    tied 4.00  fail 4.00",
        "q4    fail 1.00  fail 1.00",
        "tied: a site question scored the same as one on the other side of its row's pass line, so the row "
        "leaves its verdict unknown (never counted as a flip)",
    ]
    found = json.loads(cli(project, capsys, "diff", "site:1", "site:2", "--format", "json")[1])
    assert found["flipped"] == []
    assert [case["base"] for case in found["cases"]] == [
        {"score": 5.0, "passed": True},
        {"score": 4.0, "passed": None},
        {"score": 4.0, "passed": None},
        {"score": 1.0, "passed": False},
    ]
    markdown = cli(project, capsys, "diff", "site:1", "site:2", "--format", "markdown")[1]
    assert "| `q2` | tied 4.00 | fail 0.00 | down |" in markdown and "_tied: a site question" in markdown

    def latest_cases() -> str:
        cli(project, capsys, "report", "-o", str(project / "report.html"))
        html = (project / "report.html").read_text()
        return html.split("<h3>Latest run's cases</h3>")[1].split("<h3>")[0]

    assert "tied" not in latest_cases()  # site run 2 has no tie
    site.insert(runner_row("support_bot", {"q1": 3.0, "q2": 3.0}, run_id=3, pass_rate=0.5))
    cli(project, capsys, "site", "pull")
    table = latest_cases()
    assert '<td>q1</td><td class="">tied</td><td>3.00</td>' in table and "<p>tied: a site question" in table


def test_a_run_name_that_names_nothing_says_what_names_runs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(project, capsys, "run", str(project / "refund.cases.yaml"))
    code, _, err = cli(project, capsys, "diff", "site:x", "latest")
    assert code == 2
    assert err == "error: `site:x` names no run: write a run id, latest, previous, site:ID or site:latest\n"
    code, _, err = cli(project, capsys, "diff", "site:latest")
    assert (code, err) == (
        2,
        "error: `site:latest` is the site's latest run: name the run to compare it with too "
        "(`diff site:latest latest`: your latest run of the cases file mirroring its target)\n",
    )
    code, _, err = cli(project, capsys, "diff", "site:4")
    assert (
        err.startswith("error: ")
        and "has no site run 4 (`ai-eval-lsp site pull` reads the site's runs)" in err
    )


def test_site_pull_without_a_site_names_the_setting_to_give(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ai-eval.toml").write_text("")
    code, _, err = cli(tmp_path, capsys, "site", "pull", str(tmp_path))
    assert code == 2
    assert err == "error: no site runs: the project is no Drupal codebase and names no site.database\n"


@pytest.mark.parametrize(
    ("url", "wrong"),
    [
        ("mysql://u:Kx7-Secret@[::1/d", "the host's IPv6 address has no closing `]` (write it as [::1])"),
        ("mysql://u:Kx7-Secret@h:99999/d", "the port is not a number from 1 to 65535"),
        ("mysql://u:Kx7-Secret%ff@h/d", "the password is percent-encoded, but not as UTF-8 text"),
    ],
)
def test_a_malformed_site_database_is_one_message_and_check_and_run_go_on(
    project: Path, capsys: pytest.CaptureFixture[str], url: str, wrong: str
) -> None:
    (project / "broken.rubric.yaml").write_text(RUBRIC.replace("must_contain_any", "no_such_kind"))

    def codes() -> tuple[int, int]:
        checked, _, _ = cli(project, capsys, "check", str(project))
        ran, _, err = cli(project, capsys, "run", str(project / "refund.cases.yaml"))
        assert "Kx7" not in err
        return checked, ran

    (project / "ai-eval.toml").write_text("")
    assert codes() == (1, 0)
    (project / "ai-eval.toml").write_text(f'site.database = "{url}"\n')
    assert codes() == (1, 0)
    code, out, err = cli(project, capsys, "site", "pull")
    assert (code, out, err) == (2, "", f"error: no site runs: the setting `site.database`: {wrong}\n")


def test_the_report_draws_site_runs_hollow_and_names_them(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.insert(
        runner_row("support_bot", {"q1": 5.0}, run_id=1), runner_row("support_bot", {"q1": 0.0}, run_id=2)
    )
    cli(project, capsys, "site", "pull")
    cli(project, capsys, "report", "-o", str(project / "report.html"))
    html = (project / "report.html").read_text()
    assert "<h2>support_bot</h2>" in html and "latest: site run 2 at" in html
    assert '<circle cx="' in html and 'fill="#ffffff" stroke="#0969da"' in html
    assert "<title>site run 1: pass rate 1.00" in html and ">s2</text>" in html
    # the legend names a run that is there, the newest site run
    assert "x: run id (hollow, s2: site run 2)</p>" in html and "412" not in html


def test_the_store_schema_1_keeps_its_runs_when_it_learns_question_ids(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            textwrap.dedent(
                """
                CREATE TABLE ai_eval_run (run_id INTEGER PRIMARY KEY AUTOINCREMENT, target_id TEXT NOT NULL, started REAL NOT NULL);
                CREATE TABLE ai_eval_case (run_id INTEGER NOT NULL, position INTEGER NOT NULL, case_id TEXT NOT NULL,
                  score REAL, passed INTEGER, reason TEXT, outcomes_json TEXT NOT NULL, PRIMARY KEY (run_id, position));
                INSERT INTO ai_eval_case VALUES (1, 0, 'a', 5.0, 1, 'ok', '[]');
                PRAGMA user_version = 1;
                """
            )
        )
    store = ResultStore(path)
    store.check_writable()
    assert store.cases({"run_id": 1})[0].case_id == "a"
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (2,)
