"""The site's own runs from real MariaDB and PostgreSQL servers (tests/databases.py), read-only:
every way a Drupal project names its database, the rows of both of seed 003's paths, a row the
site inserts while the editor is open, an untrusted workspace that never connects, the notes of
a wrong password, a stopped server, a missing table and a malformed row, and a password that
appears in nothing printed or stored."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from databases import mysql_identifier, postgres_identifier, postgres_literal
from lsprotocol import types
from pytest_lsp import LanguageClient
from site_db import RUBRIC, ServerSite, SiteRow, drush_row, runner_row
from site_shapes import SHAPES, SITE_OF_SHAPE, Database

from ai_eval_lsp.cli import main
from ai_eval_lsp.drupal.site_address import parse_url
from ai_eval_lsp.runs.site import SiteReader, pull
from ai_eval_lsp.runs.store import ResultStore
from e2e.conftest import SERVER
from e2e.helpers import open_document, start

PASSWORD = "Pa55-w0rd:@/%#x"
"""Every site user's password: awkward for a URL, and easy to find in anything printed."""
POLL = 0.5
names = itertools.count()


@pytest.fixture(params=["mariadb", "postgres"])
def server(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


@pytest.fixture
def site(server: Any) -> Iterator[ServerSite]:
    found = ServerSite(server, f"site_{next(names)}", PASSWORD)
    found.insert(
        runner_row("support_bot", {"q1": 5.0, "q17": 1.0, "q3": None}, run_id=41, timestamp=1_780_000_000),
        drush_row("support_bot", {"q1": 4.0, "q17": 0.0}, timestamp=1_780_000_600, duration=7.25),
    )
    yield found
    server.drop_database(found.name)


def cli(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = main(list(arguments))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("shape", SHAPES)
def test_every_way_a_project_names_its_database_reaches_the_server(
    site: ServerSite,
    shape: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = site.server
    database = Database(server.driver, site.name, server.host, server.port, site.user, PASSWORD, site.prefix)
    for name, value in SHAPES[shape](tmp_path, database).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AI_EVAL_SITE_DATABASE", raising=False)
    if shape in SITE_OF_SHAPE:
        (tmp_path / "ai-eval.toml").write_text(f'drupal.site = "{SITE_OF_SHAPE[shape]}"\n')
    code, out, err = cli(capsys, "site", "pull", str(tmp_path))
    assert code == 0 and "error" not in err and "warning" not in err, err
    assert [line.split(", average")[0] for line in out.splitlines()] == [
        "site run 1 of support_bot: pass rate 0.50 [0.30, 0.70]",
        "site run 2 of support_bot regressed: pass rate 0.50 [0.30, 0.70]",  # 3.00 to 2.00
    ]
    code, out, _ = cli(capsys, "--root", str(tmp_path), "history", "support_bot", "--format", "json")
    rows = [
        {key: row[key] for key in ("siteId", "run_id", "duration", "source", "avg_score")}
        for row in json.loads(out)
    ]
    assert rows == [
        {"siteId": 2, "run_id": None, "duration": 7.25, "source": "drush", "avg_score": 2.0},
        {"siteId": 1, "run_id": 41, "duration": 42.0, "source": "manual", "avg_score": 3.0},
    ]


@pytest.fixture
def empty_site(server: Any) -> Iterator[ServerSite]:
    """A site whose ai_eval table has no row yet."""
    found = ServerSite(server, f"site_{next(names)}", PASSWORD)
    yield found
    server.drop_database(found.name)


def averaging(*averages: float) -> list[SiteRow]:
    """A run of `support_bot` per average, in turn (one question scored that average)."""
    return [
        runner_row("support_bot", {"q1": average}, run_id=number)
        for number, average in enumerate(averages, 1)
    ]


def test_site_pull_in_ci_reads_an_empty_table_then_its_new_runs_and_gates_on_a_regression(
    empty_site: ServerSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AI_EVAL_SITE_DATABASE", empty_site.url)
    (tmp_path / "ai-eval.toml").write_text("")
    pull = ("site", "pull", str(tmp_path), "--fail-on-regression", "--format", "github")
    server = empty_site.server
    nothing = f"no new site runs in {server.driver} database `{empty_site.name}` on 127.0.0.1:{server.port} as `{empty_site.user}`\n"
    assert cli(capsys, *pull) == (0, nothing, "")
    empty_site.insert(*averaging(4.0, 3.5, 2.9))  # -0.50, exactly the tolerance; then -0.60
    code, out, err = cli(capsys, *pull)
    assert code == 1
    assert out.splitlines() == [
        "site run 1 of support_bot: pass rate 1.00 [0.80, 1.00], average 4.00/5, gate passed, 1 question, 0 errors",
        "site run 2 of support_bot: pass rate 1.00 [0.80, 1.00], average 3.50/5, gate passed, 1 question, "
        "0 errors; average -0.50 against site run 1",
        "::error title=ai-eval-lsp%3A site run 3 of support_bot regressed::site run 3 of support_bot regressed: "
        "pass rate 1.00 [0.80, 1.00], average 2.90/5, gate passed, 1 question, 0 errors; average -0.60 against "
        "site run 2 (tolerance 0.5)",
    ]
    assert err == "error: 1 new site run regressed (--fail-on-regression)\n"
    assert cli(capsys, *pull) == (0, nothing, "")


def test_site_runs_flip_as_their_rows_pass_rates_say_whatever_the_server_s_number_types(
    empty_site: ServerSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The issue's rows, and a pass rate of 2/3 as PostgreSQL's NUMERIC(10,4) keeps it (0.6667):
    each question's verdict is the one its row implies."""
    empty_site.insert(
        runner_row("support_bot", {"q1": 5.0, "q2": 0.0, "q3": 4.0, "q4": 4.5}, run_id=17),
        runner_row("support_bot", {"q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 4.5}, run_id=19),
        runner_row("support_bot", {"q1": 1.0, "q2": 3.0, "q3": 2.0}, run_id=20, pass_rate=2 / 3),
    )
    monkeypatch.setenv("AI_EVAL_SITE_DATABASE", empty_site.url)
    (tmp_path / "ai-eval.toml").write_text("")
    assert cli(capsys, "site", "pull", str(tmp_path))[0] == 0
    code, out, _ = cli(capsys, "--root", str(tmp_path), "diff", "site:1", "site:2", "--format", "json")
    assert code == 0
    found = json.loads(out)
    assert found["flipped"] == ["q1", "q3"]
    assert [case["base"]["passed"] for case in found["cases"]] == [True, False, True, True]
    code, out, _ = cli(capsys, "--root", str(tmp_path), "diff", "site:2", "site:3", "--format", "json")
    heads = {case["caseId"]: case["head"] for case in json.loads(out)["cases"]}
    assert heads == {
        "q1": {"score": 1.0, "passed": False},
        "q2": {"score": 3.0, "passed": True},
        "q3": {"score": 2.0, "passed": True},
        "q4": None,  # site run 3 did not ask it
    }


def test_the_password_comes_from_the_user_s_config_file_and_is_never_printed(
    site: ServerSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "ai-eval.toml").write_text("")  # the repository names no database
    config = tmp_path / "config" / "ai-eval-lsp" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f"[site]\ndatabase = {json.dumps(site.url)}\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("AI_EVAL_SITE_DATABASE", raising=False)
    code, out, err = cli(capsys, "site", "pull", str(project))
    assert (code, err) == (0, "") and len(out.splitlines()) == 2
    wrong = site.server.url(site.user, "not-" + PASSWORD, site.name, site.prefix)
    config.write_text(f"[site]\ndatabase = {json.dumps(wrong)}\n")
    code, out, err = cli(capsys, "site", "pull", str(project))
    assert code == 2 and "or its password is refused" in err
    stored = (project / ".ai_eval" / "results.sqlite").read_bytes().decode("latin-1")
    for output in (out, err, stored):
        assert PASSWORD not in output


def test_the_site_is_read_in_a_read_only_session(site: ServerSite, tmp_path: Path) -> None:
    from ai_eval_lsp.drupal.site_address import parse_url
    from ai_eval_lsp.runs.site import SiteReader

    # even as a user that could write, the session refuses to
    writer = f"writer_{site.name}"
    site.server.create_user(writer, PASSWORD, site.name, read_only=False)
    address = parse_url(site.server.url(writer, PASSWORD, site.name, site.prefix), tmp_path)
    reader = SiteReader(address)
    assert reader.batch_after(0).last_id == 2
    connection = reader._connection
    statement = f"INSERT INTO {site.prefix}ai_eval_result (target_id, timestamp, avg_score, pass_rate, passed_gate, question_count, scores_json, source, duration, error_count) VALUES ('x', 1, 1, 1, 1, 1, '{{}}', 'x', 1, 0)"
    with pytest.raises(Exception, match=r"(?i)read.only"):
        if site.server.driver == "mysql":
            with connection.connection.cursor() as cursor:  # type: ignore[union-attr]
                cursor.execute(statement)
        else:
            connection.connection.run(statement)  # type: ignore[union-attr]
    reader.close()


def test_each_trouble_gives_its_note_and_never_the_password(
    site: ServerSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = site.server
    where = f"{server.driver} database `{site.name}` on 127.0.0.1:{server.port} as `{site.user}`"
    said = []

    def pull(url: str) -> str:
        monkeypatch.setenv("AI_EVAL_SITE_DATABASE", url)
        code, out, err = cli(capsys, "site", "pull", str(tmp_path))
        said.append(out + err)
        return err if code else out

    wrong = server.url(site.user, "not-" + PASSWORD, site.name, site.prefix)
    assert (
        pull(wrong)
        == f"error: cannot read the site's runs from {where}: the user `{site.user}` or its password is refused\n"
    )
    missing = server.url(site.user, PASSWORD, site.name, "nope_")
    assert pull(missing) == (
        f"error: cannot read the site's runs from {where}: there is no table `nope_ai_eval_result`: is ai_eval "
        "installed on the site (and the table prefix right)?\n"
    )
    site.execute(f"UPDATE {site.prefix}ai_eval_result SET target_id = '' WHERE id = 2")
    site.insert(drush_row("support_bot", {"q1": 5.0}))
    assert pull(site.url).splitlines() == [
        "site run 1 of support_bot: pass rate 0.50 [0.30, 0.70], average 3.00/5, gate failed, 3 questions, 1 error",
        "site run 3 of support_bot: pass rate 1.00 [0.80, 1.00], average 5.00/5, gate passed, 1 question, 0 errors; average +2.00 against site run 1",
    ]
    assert (
        "warning: site row 2 of `drupal_ai_eval_result` is skipped: `target_id` is '', not a target id"
        in said[-1]
    )
    server.stop()
    try:
        assert (
            pull(site.url)
            == f"error: cannot read the site's runs from {where}: nothing answers there (is the database server running, and the host and port right?)\n"
        )
    finally:
        server.start()
    stored = (tmp_path / ".ai_eval" / "results.sqlite").read_bytes()
    cli(capsys, "--root", str(tmp_path), "report", "-o", str(tmp_path / "report.html"))
    for output in [*said, stored.decode("latin-1"), (tmp_path / "report.html").read_text()]:
        assert PASSWORD not in output


UNICODE_PASSWORDS = [
    "pässwort",
    "€uro-Kx7",
    "Kx7\uff03Secret",
    "emoji-\U0001f600-pw",
    "\uff41\uff42\uff43\uff44",
]
"""Latin-1, beyond Latin-1, a fullwidth `#` (the issue's), an emoji (unassigned in SASLprep's
Unicode 3.2: PostgreSQL then uses the text as it is), fullwidth letters (SASLprep maps them)."""


def test_a_password_of_any_unicode_logs_in_written_as_it_is_or_percent_encoded(
    site: ServerSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = site.server
    for number, password in enumerate(UNICODE_PASSWORDS):
        user = f"unicode_{number}_{site.name}"
        server.create_user(user, password, site.name)
        encoded = server.url(user, password, site.name, site.prefix)
        written = f"{server.driver}://{user}:{password}@{server.host}:{server.port}/{site.name}#{site.prefix}"
        for url in (encoded, written):
            monkeypatch.setenv("AI_EVAL_SITE_DATABASE", url)
            code, out, err = cli(capsys, "site", "pull", str(tmp_path / user))
            assert (code, err) == (0, ""), password
            assert out.startswith("site run 1 of support_bot: ") or out.startswith("no new site runs"), out
            assert password not in out


def causes(server: Any, site: ServerSite) -> dict[str, tuple[str, str]]:
    """Each trouble a site can give, as a URL, and what `site pull` says of it."""
    port, user, name = server.port, site.user, site.name
    where = f"{server.driver} database `{name}` on 127.0.0.1:{port} as `{user}`"
    stranger = f"stranger_{name}"  # logs in, and may read another table of the site's only
    if server.driver == "mysql":
        site.execute("CREATE TABLE other (id INT)")
        site.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", [stranger, PASSWORD])
        site.execute(f"GRANT SELECT ON {mysql_identifier(name)}.other TO %s@'%%'", [stranger])
    else:
        site.execute(
            f"CREATE ROLE {postgres_identifier(stranger)} LOGIN PASSWORD {postgres_literal(PASSWORD)}"
        )
    unknown_database = (
        f"there is no database `nope_{name}`, or the user `{user}` may not use it (MySQL and MariaDB do "
        "not tell which): check the name, or grant the user SELECT on its table"
        if server.driver == "mysql"
        else f"there is no database `nope_{name}`"
    )
    return {
        "unknown host": (
            site.url.replace("@127.0.0.1:", "@nohost.invalid:"),
            f"{where.replace('127.0.0.1', 'nohost.invalid')}: the host `nohost.invalid` is not known",
        ),
        "unknown database": (
            server.url(user, PASSWORD, f"nope_{name}", site.prefix),
            f"{where.replace(name, f'nope_{name}', 1)}: {unknown_database}",
        ),
        "refused password": (
            server.url(user, "not-" + PASSWORD, name, site.prefix),
            f"{where}: the user `{user}` or its password is refused",
        ),
        "missing table": (
            server.url(user, PASSWORD, name, "nope_"),
            f"{where}: there is no table `nope_ai_eval_result`: is ai_eval installed on the site (and the "
            "table prefix right)?",
        ),
        "missing grant": (
            server.url(stranger, PASSWORD, name, site.prefix),
            f"{where.replace(user, stranger)}: the user `{stranger}` may not read `drupal_ai_eval_result`; "
            "grant it SELECT on that table",
        ),
    }


def test_each_cause_of_trouble_says_its_own(
    site: ServerSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for cause, (url, said) in causes(site.server, site).items():
        monkeypatch.setenv("AI_EVAL_SITE_DATABASE", url)
        code, out, err = cli(capsys, "site", "pull", str(tmp_path))
        assert (code, out, err) == (2, "", f"error: cannot read the site's runs from {said}\n"), cause


def test_a_site_that_answers_too_slowly_says_so(
    site: ServerSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("ai_eval_lsp.runs.site.TIMEOUT", 1.0)  # the 5 s limit, shorter for the test
    monkeypatch.setenv("AI_EVAL_SITE_DATABASE", site.url)
    server = site.server
    where = f"{server.driver} database `{site.name}` on 127.0.0.1:{server.port} as `{site.user}`"
    with site.locked():
        began = time.monotonic()
        code, out, err = cli(capsys, "site", "pull", str(tmp_path))
    assert time.monotonic() - began < 30
    assert (code, out) == (2, "")
    assert err == (
        f"error: cannot read the site's runs from {where}: no answer within 1 s (is the server overloaded, "
        "or the table locked?)\n"
    )


def test_a_site_of_any_size_is_read_whole(site: ServerSite, tmp_path: Path) -> None:
    """3,000 runs of 400 questions: ~25 MB of `scores_json`, more than MariaDB sends at once by
    default (`max_allowed_packet`, 16 MB), where one batch's JSON was cut (`Unterminated string`)."""
    scores = {f"question_{number}": float(number % 6) for number in range(400)}
    site.insert_many([runner_row("big_bot", scores, run_id=number) for number in range(3000)])
    reader = SiteReader(parse_url(site.url, tmp_path))
    pulled = pull(ResultStore(tmp_path / "results.sqlite"), reader)
    reader.close()
    assert (pulled.skipped, len(pulled.stored)) == ([], 3002)
    assert all(len(json.loads(values[11])) == 400 for values in pulled.stored[2:])


def test_many_batches_of_rows_are_read_each_once_in_order_and_the_next_pull_reads_what_came_since(
    site: ServerSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of 1,000 rows (5,000 as shipped), each asked in sum first, then read by its ids: no
    row is read twice or missed where one batch ends and the next begins."""
    monkeypatch.setattr("ai_eval_lsp.runs.site.BATCH", 1000)
    rows = [
        runner_row(f"bot_{number % 3}", {"q1": float(number % 6)}, run_id=number) for number in range(4321)
    ]
    site.insert_many(rows)
    store, reader = ResultStore(tmp_path / "results.sqlite"), SiteReader(parse_url(site.url, tmp_path))
    try:
        first = pull(store, reader)
        assert first.skipped == []
        assert [values[0] for values in first.stored] == list(range(1, 4324))  # the fixture's two first
        assert [values[2] for values in first.stored[2:]] == list(range(4321))
        site.insert(*(runner_row("bot_0", {"q1": 4.0}, run_id=number) for number in (5000, 5001)))
        assert [values[2] for values in pull(store, reader).stored] == [5000, 5001]
        assert pull(store, reader).stored == []
    finally:
        reader.close()


def test_a_row_larger_than_the_server_sends_at_once_is_skipped_and_named(
    mariadb: Any, tmp_path: Path
) -> None:
    site = ServerSite(mariadb, f"site_{next(names)}", PASSWORD)
    controls = "\x01" * 100_000  # 100 KB of text, 600 KB once escaped as JSON (`\u0001`)
    ids = site.insert(*(runner_row("support_bot", {"q1": 5.0}, run_id=number) for number in range(8)))
    table = f"{site.prefix}ai_eval_result"
    for row_id, config in zip(ids[1:7], ["x" * 2**21, *[controls] * 4, controls * 2], strict=True):
        site.execute(f"UPDATE {table} SET config_json = %s WHERE id = %s", [config, row_id])
    try:
        mariadb.execute(site.name, "SET GLOBAL max_allowed_packet = 1048576")  # new sessions: 1 MB
        reader = SiteReader(parse_url(site.url, tmp_path))
        pulled = pull(ResultStore(tmp_path / "results.sqlite"), reader)
        reader.close()
    finally:
        mariadb.execute(site.name, "SET GLOBAL max_allowed_packet = 16777216")
        mariadb.drop_database(site.name)
    assert [values[0] for values in pulled.stored] == [ids[0], *ids[2:6], ids[7]]
    assert [values[14] for values in pulled.stored[1:5]] == [controls] * 4
    limit = (
        "more than the server sends at once (its `max_allowed_packet`, 1.0 MB); raise that setting to read it"
    )
    assert pulled.skipped == [
        f"site row {ids[1]} of `{table}` is skipped: its 2.0 MB of text are {limit}",
        f"site row {ids[6]} of `{table}` is skipped: its 0.2 MB of text are {limit}",
    ]


def test_numbers_past_what_a_store_keeps_skip_their_row_and_later_pulls_go_on(
    mariadb: Any, tmp_path: Path
) -> None:
    """MariaDB's BIGINT UNSIGNED holds 2^64 - 1, which no SQLite integer does: such an id or
    run id stopped every pull (OverflowError as it was stored, the whole batch lost)."""
    site = ServerSite(mariadb, f"site_{next(names)}", PASSWORD)
    table = f"{site.prefix}ai_eval_result"
    site.execute(f"ALTER TABLE {table} MODIFY id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT")
    site.execute(f"ALTER TABLE {table} MODIFY run_id BIGINT UNSIGNED NULL")
    first, bad = site.insert(*(runner_row("support_bot", {"q1": 5.0}, run_id=n) for n in range(2)))
    largest = 2**64 - 1
    site.execute(f"UPDATE {table} SET run_id = %s WHERE id = %s", [largest, bad])
    site.execute(f"UPDATE {table} SET id = %s WHERE id = %s", [largest, first])
    store = ResultStore(tmp_path / "results.sqlite")
    reader = SiteReader(parse_url(site.url, tmp_path))
    try:
        pulled = pull(store, reader)
        out_of_range = "is out of range: a results store keeps at most 9223372036854775807"
        assert pulled.skipped == [
            f"site row {bad} of `{table}` is skipped: `run_id` {largest} {out_of_range}",
            f"site row {largest} of `{table}` is skipped: `id` {largest} {out_of_range}",
        ]
        site.execute(f"UPDATE {table} SET run_id = 7 WHERE id = %s", [bad])
        site.execute(f"UPDATE {table} SET id = %s WHERE id = %s", [bad + 1, bad])  # read again: a new id
        assert [values[0] for values in pull(store, reader, after=bad).stored] == [bad + 1]
    finally:
        reader.close()
        mariadb.drop_database(site.name)


def test_json_columns_are_read_as_their_text_and_any_nesting_skips_its_row_alone(
    postgres: Any, tmp_path: Path
) -> None:
    """A site whose columns are PostgreSQL `json`: the server would put their values into its
    document as JSON, nested as deep as they are. Its text columns are read as their text (they
    were stored as Python's writing of a dict, a lone surrogate's escape stopped every pull), and
    a number column nesting past the parser skips its row alone, with its cause (it was "too
    large")."""
    site = ServerSite(postgres, f"site_{next(names)}", PASSWORD)
    table = f"{site.prefix}ai_eval_result"
    for column in ("scores_json", "config_json"):
        site.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE json USING {column}::json")
    site.execute(f"ALTER TABLE {table} ALTER COLUMN avg_score TYPE json USING to_json(avg_score)")
    ids = site.insert(*(runner_row("support_bot", {"q1": 4.0, "q2": None}, run_id=n) for n in range(5)))
    first, deep, deeper, lone, last = ids
    site.execute(f"UPDATE {table} SET scores_json = %s WHERE id = %s", ["[" * 100 + "]" * 100, deep])
    site.execute(f"UPDATE {table} SET avg_score = %s WHERE id = %s", ["[" * 5000 + "]" * 5000, deeper])
    site.execute(f"UPDATE {table} SET config_json = %s WHERE id = %s", ['{"model": "\\ud800"}', lone])
    site.execute(
        f"UPDATE {table} SET config_json = %s WHERE id = %s", ['{"model": "gpt-x", "seed": true}', last]
    )
    reader = SiteReader(parse_url(site.url, tmp_path))
    try:
        pulled = pull(ResultStore(tmp_path / "results.sqlite"), reader)
    finally:
        reader.close()
        postgres.drop_database(site.name)
    assert pulled.skipped == [
        f"site row {deeper} of `{table}` is skipped: its values nest more than 64 levels deep",
        f"site row {deep} of `{table}` is skipped: `scores_json` nests more than 64 levels deep",
    ]
    assert [values[0] for values in pulled.stored] == [first, lone, last]
    assert [json.loads(values[11]) for values in pulled.stored] == [{"q1": 4.0, "q2": None}] * 3
    assert [json.loads(values[14]) for values in pulled.stored[1:]] == [
        {"model": "\ud800"},
        {"model": "gpt-x", "seed": True},
    ]


# --- the editor ------------------------------------------------------------------------------------


def project(root: Path, url: str | None, poll: float = POLL) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    settings = f"site.pollSeconds = {poll}\n" + (f'site.database = "{url}"\n' if url else "")
    (root / "ai-eval.toml").write_text(settings)
    (root / "refund.rubric.yaml").write_text(RUBRIC)
    return root


def site_notes(client: LanguageClient) -> list[Any]:
    return [note for note in client.completed_runs if note.trigger == "site"]  # type: ignore[attr-defined]


async def until(condition: Any, timeout: float) -> float:
    began = time.monotonic()
    while not condition():
        assert time.monotonic() - began < timeout, "it never came"
        await asyncio.sleep(0.02)
    return time.monotonic() - began


@pytest_lsp.fixture(config=SERVER)
async def editor(lsp_client: LanguageClient, site: ServerSite, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = project(tmp_path / "project", site.url)
    client = await start(
        lsp_client, "visual_studio_code", [root], experimental={"aiEval": {"runComplete": True}}
    )
    client.project = root  # type: ignore[attr-defined]
    yield client
    await lsp_client.shutdown_session()


async def command(client: LanguageClient, name: str, argument: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(name, [argument]))


async def test_a_row_the_site_inserts_reaches_the_editor_within_a_poll_and_a_regression_is_flagged(
    editor: LanguageClient, site: ServerSite
) -> None:
    root: Path = editor.project  # type: ignore[attr-defined]
    await open_document(editor, root / "refund.rubric.yaml")
    first = await command(editor, "aiEval.siteRuns", {"target": "support_bot"})
    assert [row["siteId"] for row in first["rows"]] == [2, 1] and site_notes(editor) == []
    site.insert(runner_row("support_bot", {"q1": 0.0, "q17": 0.0}, run_id=42, timestamp=1_780_001_200))
    waited = await until(lambda: site_notes(editor), POLL + 10)
    assert waited < POLL + 10
    (note,) = site_notes(editor)
    assert (note.siteId, note.run_id, note.regressed) == (3, 42, True)
    assert note.summary.startswith("site run 3 of support_bot regressed: ") and note.summary.endswith(
        "average 0.00/5, gate failed, 2 questions, 0 errors; average -2.00 against site run 2 (tolerance 0.5)"
    )
    assert PASSWORD not in repr(note) and not [m for m in editor.log_messages if PASSWORD in m.message]


@pytest_lsp.fixture(config=SERVER)
async def watching(lsp_client: LanguageClient, empty_site: ServerSite, tmp_path: Path):  # type: ignore[no-untyped-def]
    """An editor on a project whose site's table is empty when it loads, with its own tolerance."""
    root = project(tmp_path / "project", empty_site.url)
    (root / "ai-eval.toml").write_text(
        (root / "ai-eval.toml").read_text() + "site.regressionTolerance = 2.5\n"
    )
    client = await start(
        lsp_client, "visual_studio_code", [root], experimental={"aiEval": {"runComplete": True}}
    )
    client.project = root  # type: ignore[attr-defined]
    yield client
    await lsp_client.shutdown_session()


async def test_the_first_rows_of_an_empty_table_are_each_announced_once_by_the_project_s_tolerance(
    watching: LanguageClient, empty_site: ServerSite
) -> None:
    root: Path = watching.project  # type: ignore[attr-defined]
    await open_document(watching, root / "refund.rubric.yaml")
    assert await command(watching, "aiEval.siteRuns", {}) == {"rows": []}  # the first read: none
    empty_site.insert(*averaging(5.0))
    await until(lambda: len(site_notes(watching)) == 1, POLL + 10)
    # several rows in one poll, each against the one before: -2.00, +2.00, -2.50 (exactly the
    # tolerance of ai-eval.toml), +2.50, -2.60
    empty_site.insert(*averaging(3.0, 5.0, 2.5, 5.0, 2.4))
    await until(lambda: len(site_notes(watching)) == 6, POLL + 10)
    await asyncio.sleep(3 * POLL)
    notes = site_notes(watching)
    assert [(note.siteId, note.regressed) for note in notes] == [
        (1, False),
        (2, False),
        (3, False),
        (4, False),
        (5, False),
        (6, True),
    ]
    assert notes[5].summary.endswith("average -2.60 against site run 5 (tolerance 2.5)")
    assert not [m for m in watching.log_messages if "site runs read" in m.message]  # nothing read at first


@pytest_lsp.fixture(config=SERVER)
async def untrusted(lsp_client: LanguageClient, mariadb: Any, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A workspace VS Code does not trust, whose own files name a site twice: an `ai-eval.toml`
    and a Drupal settings.php."""
    site = ServerSite(mariadb, f"site_{next(names)}", PASSWORD)
    root = project(tmp_path / "project", site.url)
    database = Database("mysql", site.name, "127.0.0.1", mariadb.port, site.user, PASSWORD, site.prefix)
    SHAPES["default install"](root, database)
    before = mariadb.connections()
    client = await start(lsp_client, "visual_studio_code", [root], settings={"workspaceTrusted": False})
    client.project, client.before, client.server = root, before, mariadb  # type: ignore[attr-defined]
    yield client
    await lsp_client.shutdown_session()
    mariadb.drop_database(site.name)


async def test_an_untrusted_workspace_never_connects(untrusted: LanguageClient) -> None:
    root: Path = untrusted.project  # type: ignore[attr-defined]
    await open_document(untrusted, root / "refund.rubric.yaml")
    answer = await command(untrusted, "aiEval.siteRuns", {})
    assert answer["rows"] == [] and "not read in a workspace the editor does not trust" in answer["note"]
    await asyncio.sleep(4 * POLL)
    assert untrusted.server.connections() == untrusted.before  # type: ignore[attr-defined]
