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
from site_db import RUBRIC, SqliteSite, drush_row, runner_row

from ai_eval_lsp.cli import main
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
            "site run 3 of support_bot: pass rate 1.00 [0.80, 1.00], average 3.30/5, gate passed, 2 questions, "
            "0 errors; average -0.70 against site run 1",
            True,
        ),
        (
            "site run 4 of support_bot: pass rate 0.50 [0.30, 0.70], average 3.00/5, gate failed, 3 questions, "
            "1 error; average -0.30 against site run 3",
            False,
        ),
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


def test_site_pull_says_what_came_per_target_and_nothing_twice(
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
        "support_bot: 2 new site runs; latest: site run 2 of support_bot: pass rate 0.50 [0.30, 0.70], average "
        "3.00/5, gate failed, 2 questions, 0 errors; average +0.50 against site run 1",
        "other_bot: 1 new site run; latest: site run 3 of other_bot: pass rate 1.00 [0.80, 1.00], average 5.00/5, "
        "gate passed, 1 question, 0 errors",
    ]
    assert (
        cli(project, capsys, "site", "pull", str(project))[1]
        == f"no new site runs in sqlite file {site.path}\n"
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
        f"{shown}: 2 new site runs; latest: site run 2 of {shown}: pass rate 0.00 [0.00, 0.20], average "
        "0.00/5, gate failed, 2 questions, 0 errors; average -2.50 against site run 1"
    ]
    assert said[2][1].splitlines()[0] == f"{shown}: 2 runs, newest first"
    assert said[2][1].splitlines()[3].endswith("drush\\x1b]0;owned\\x07")
    assert "q\\u202e1\\x9b2J" in said[4][1]
    for _, out, err in said:
        for line in (out + err).splitlines():
            assert line.isprintable() and not line.lstrip().startswith("injected"), line


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


def test_two_site_runs_are_compared_by_the_pass_line_of_the_cases_file_mirroring_them(
    project: Path, site: SqliteSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.insert(
        runner_row("support_bot", {"q1": 5.0, "q17": 5.0}, run_id=1),
        runner_row("support_bot", {"q1": 5.0, "q17": 0.0}, run_id=2),
    )
    cli(project, capsys, "site", "pull")
    code, out, _ = cli(project, capsys, "diff", "--target", "support_bot")
    assert code == 0 and "0 verdicts flipped" in out  # no local run says where a question passes
    cli(project, capsys, "run", str(project / "refund.cases.yaml"))
    code, out, _ = cli(project, capsys, "diff", "site:1", "site:2")
    assert "1 verdict flipped" in out and "q17   pass 5.00  fail 0.00  flipped to fail" in out


def test_a_run_name_that_names_nothing_says_what_names_runs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(project, capsys, "run", str(project / "refund.cases.yaml"))
    code, _, err = cli(project, capsys, "diff", "site:x", "latest")
    assert code == 2
    assert err == "error: `site:x` names no run: write a run id, latest, previous, site:ID or site:latest\n"
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
