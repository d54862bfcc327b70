"""The results store: one SQLite file; each run (its row and its cases) is written in one
transaction, or not at all."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ai_eval_lsp.core.compare import (
    SITE_ID,
    CaseRecord,
    Diff,
    diff,
    mirrored_target,
    question_scores,
    row_verdicts,
    run_label,
)
from ai_eval_lsp.core.rows import loads, unreadable
from ai_eval_lsp.core.text import printable
from ai_eval_lsp.disk.reading import inside, within
from ai_eval_lsp.drupal.secrets import found_in, redact

ROW_FIELDS = (
    "id",
    "target_id",
    "run_id",
    "timestamp",
    "avg_score",
    "pass_rate",
    "pass_rate_ci_low",
    "pass_rate_ci_high",
    "passed_gate",
    "question_count",
    "error_count",
    "scores_json",
    "source",
    "duration",
    "config_json",
)

SCHEMA_VERSION = 2
"""`PRAGMA user_version`: 0 is the first release's database (rows only), 1 keeps each case, 2
keeps each case's question id and the site's rows."""


_TABLES = (
    """CREATE TABLE IF NOT EXISTS ai_eval_run (
        run_id INTEGER PRIMARY KEY AUTOINCREMENT,
        target_id TEXT NOT NULL,
        started REAL NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS ai_eval_result (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        target_id TEXT NOT NULL,
        run_id INTEGER NOT NULL REFERENCES ai_eval_run (run_id),
        timestamp INTEGER NOT NULL,
        avg_score REAL NOT NULL,
        pass_rate REAL NOT NULL,
        pass_rate_ci_low REAL,
        pass_rate_ci_high REAL,
        passed_gate INTEGER NOT NULL,
        question_count INTEGER NOT NULL,
        error_count INTEGER NOT NULL,
        scores_json TEXT NOT NULL,
        source TEXT NOT NULL,
        duration REAL NOT NULL,
        config_json TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS ai_eval_result_target ON ai_eval_result (target_id, id)",
    """CREATE TABLE IF NOT EXISTS ai_eval_case (
        run_id INTEGER NOT NULL REFERENCES ai_eval_run (run_id),
        position INTEGER NOT NULL,
        case_id TEXT NOT NULL,
        score REAL,
        passed INTEGER,
        reason TEXT,
        outcomes_json TEXT NOT NULL,
        question_id TEXT,
        PRIMARY KEY (run_id, position)
    )""",
    # The site's rows as the site wrote them (`id` is the site's, kept as `site_id`), keyed by
    # the site they were read from (`SiteAddress.identity`) and that id: never stored twice.
    """CREATE TABLE IF NOT EXISTS ai_eval_site_result (
        site TEXT NOT NULL,
        site_id INTEGER NOT NULL,
        target_id TEXT NOT NULL,
        run_id INTEGER,
        timestamp INTEGER NOT NULL,
        avg_score REAL NOT NULL,
        pass_rate REAL NOT NULL,
        pass_rate_ci_low REAL,
        pass_rate_ci_high REAL,
        passed_gate INTEGER NOT NULL,
        question_count INTEGER NOT NULL,
        error_count INTEGER NOT NULL,
        scores_json TEXT,
        source TEXT NOT NULL,
        duration REAL NOT NULL,
        config_json TEXT,
        PRIMARY KEY (site, site_id)
    )""",
    "CREATE INDEX IF NOT EXISTS ai_eval_site_result_target ON ai_eval_site_result (target_id, timestamp)",
)

_COLUMNS = ", ".join(ROW_FIELDS)
_LOCAL = "(SELECT * FROM ai_eval_result WHERE readable('ai_eval_result', rowid, timestamp, scores_json, config_json))"
_SITE = (
    "(SELECT * FROM ai_eval_site_result "
    "WHERE readable('ai_eval_site_result', rowid, timestamp, scores_json, config_json))"
)
"""The local and the site's rows a reader can show (`unreadable`): a query's FROM, so its LIMIT
counts those only. A row is named by its table's rowid: SQLite may call `readable` with a value
the query compares a column with in place of that column."""
_RUNS = (
    f"(SELECT {_COLUMNS}, NULL AS {SITE_ID} FROM {_LOCAL} UNION ALL "
    f"SELECT site_id AS id, {', '.join(ROW_FIELDS[1:])}, site_id AS {SITE_ID} FROM {_SITE})"
)
"""Every run, local and the site's, in one shape: a query's FROM."""
_NEWEST_FIRST = "ORDER BY timestamp DESC, id DESC"
_SCORED = "CASE WHEN json_valid({0}) THEN CASE json_type({0}) WHEN 'object' THEN {0} END END"
"""A row's `scores_json` where it maps case or question ids to scores, else NULL (no cases): a
site's row may hold any shape."""


PAGE_BYTES = 16384
"""The page size of a database this version creates."""

WHERE = "; name another with --db (or the `resultsDatabase` setting)"
"""How to get past a database that cannot be used, said after each such trouble."""


def without_secrets(rows: Sequence[Sequence[Any]]) -> Sequence[Sequence[Any]]:
    """Rows as stored: with no secret the process holds in their text (SPEC 6), looked for in
    the whole batch at once (a site's first read stores years of rows)."""
    texts = "\x00".join([value for row in rows for value in row if type(value) is str])
    if not found_in(texts):
        return rows
    return [[redact(value) if isinstance(value, str) else value for value in row] for row in rows]


class StoreError(Exception):
    """The database cannot be used (written by a newer ai-eval-lsp, not a results database), or
    does not hold the runs asked for."""


class ResultStore:
    def __init__(self, path: Path, home: Path | None = None) -> None:
        self.path = path
        self.home = home
        """The project a database named inside it must really be inside of (a real path), never
        written through a link leading out (SPEC 6); None for a place the user named (`--db`)."""
        self.skipped: list[str] = []
        """A note for each stored row left out of what was read: one no reader can show (a
        store written before rows were checked as they are today may hold one)."""

    def check_writable(self) -> None:
        """Raise StoreError now if a run could not be stored here, before any case is graded;
        creates nothing (a run cancelled later leaves no file)."""
        if self.path.exists():
            self._connect().close()
            return
        folder = self._check_place()
        if not os.access(folder, os.W_OK):
            raise StoreError(
                f"{self.path}: the results database cannot be created ({folder} cannot be written){WHERE}"
            )

    def _check_place(self) -> Path:
        """The nearest folder above the path that exists; StoreError for a path that can never be
        a database file: a folder, or a path below a file."""
        home = self.home
        if home is not None and within(os.path.abspath(self.path), home) and not inside(self.path, home):
            raise StoreError(
                f"{self.path}: the results database is not written there: a symbolic link leads out of the "
                f"project, and only files inside it are written{WHERE}"
            )
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a folder: the results database is a file{WHERE}")
        above = next(folder for folder in self.path.parents if folder.exists())
        if not above.is_dir():
            raise StoreError(f"{self.path}: {above} is a file, not a folder{WHERE}")
        return above

    def _connect(self, read_only: bool = False) -> sqlite3.Connection:
        """A connection to the database, created and brought to SCHEMA_VERSION when needed; for
        reading only, a database where nothing can be written (a read-only mount, a folder that
        is not yours) is opened as it is."""
        self._check_place()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        except (OSError, sqlite3.Error) as err:
            raise StoreError(
                f"{self.path}: the results database cannot be created ({_cause(err)}){WHERE}"
            ) from err
        connection.row_factory = sqlite3.Row
        try:
            # A new database's pages hold 16 KiB (SQLite's default is 4): a site's first read of
            # years of runs costs a fifth less (D135). An existing database keeps its own (in WAL
            # mode the setting applies to a new file only).
            connection.execute(f"PRAGMA page_size = {PAGE_BYTES}")
            connection.execute("PRAGMA journal_mode=WAL")
            self._migrate(connection)
        except sqlite3.OperationalError as err:
            connection.close()
            if read_only and self.path.is_file():
                return self._connect_as_it_is()
            raise StoreError(f"{self.path}: the results database cannot be written ({err}){WHERE}") from err
        except sqlite3.DatabaseError as err:
            connection.close()
            raise StoreError(f"{self.path}: not a results database ({err}){WHERE}") from err
        except BaseException:
            connection.close()
            raise
        return connection

    def _connect_as_it_is(self) -> sqlite3.Connection:
        """A database that cannot be written, read without locks or journal (SQLite's
        `immutable`): fine for a copy nobody writes, such as a CI artifact on a read-only mount."""
        uri = f"{self.path.resolve().as_uri()}?immutable=1"
        try:
            connection = sqlite3.connect(uri, uri=True, isolation_level=None)
            connection.row_factory = sqlite3.Row
            version = connection.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.Error as err:
            raise StoreError(f"{self.path}: not a results database ({err})") from err
        if version != SCHEMA_VERSION:
            connection.close()
            raise StoreError(
                f"{self.path} has store schema {version}, and this ai-eval-lsp reads {SCHEMA_VERSION}; it "
                "cannot be upgraded where it is (nothing can be written there): copy it somewhere writable"
            )
        return connection

    def _migrate(self, connection: sqlite3.Connection) -> None:
        """Bring the file to SCHEMA_VERSION in one transaction; rows already stored are kept."""
        if connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        connection.execute("BEGIN IMMEDIATE")
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} was written by a newer ai-eval-lsp (store schema {version}; this one "
                    f"knows {SCHEMA_VERSION}): upgrade ai-eval-lsp, or name another file with --db"
                )
            for statement in _TABLES:
                connection.execute(statement)
            columns = {row[1] for row in connection.execute("PRAGMA table_info(ai_eval_case)")}
            if "question_id" not in columns:  # a schema 1 database's cases
                connection.execute("ALTER TABLE ai_eval_case ADD COLUMN question_id TEXT")
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    def insert(
        self,
        row: dict[str, Any],
        started: float,
        cases: Sequence[CaseRecord] = (),
        may_commit: Callable[[], bool] = lambda: True,
    ) -> dict[str, Any] | None:
        """Store a row and its cases, assigning `id`, `run_id` and `timestamp`; returns the row as
        stored, or None when `may_commit`, asked last, inside the transaction, says no (a
        cancelled run).

        The run, its row and its cases are one transaction: a crash leaves none of them, and
        concurrent runs queue on the write lock instead of losing a row.
        """
        connection = self._connect()
        try:
            connection.execute("BEGIN IMMEDIATE")
            run_id = connection.execute(
                "INSERT INTO ai_eval_run (target_id, started) VALUES (?, ?)", (row["target_id"], started)
            ).lastrowid
            stored = {**row, "run_id": run_id, "timestamp": int(time.time())}
            columns = [name for name in ROW_FIELDS if name != "id"]
            (values,) = without_secrets([[stored[name] for name in columns]])
            stored.update(zip(columns, values, strict=True))
            row_id = connection.execute(
                f"INSERT INTO ai_eval_result ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                values,
            ).lastrowid
            connection.executemany(
                "INSERT INTO ai_eval_case (run_id, position, case_id, score, passed, reason, outcomes_json, "
                "question_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                without_secrets(
                    [
                        (
                            run_id,
                            position,
                            case.case_id,
                            case.score,
                            None if case.passed is None else int(case.passed),
                            case.reason,
                            json.dumps(list(case.outcomes), ensure_ascii=False),
                            case.question_id,
                        )
                        for position, case in enumerate(cases)
                    ]
                ),
            )
            if not may_commit():
                connection.execute("ROLLBACK")
                return None
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        finally:
            connection.close()
        return {"id": row_id, **{name: stored[name] for name in ROW_FIELDS if name != "id"}}

    @contextlib.contextmanager
    def site_writer(self, site: str) -> Iterator[Callable[[Sequence[Sequence[Any]]], int]]:
        """A writer of rows read from a site (`site`: its identity; each row its fields in
        `ROW_FIELDS` order): each call stores its rows in
        one transaction, each row whole, none twice (a row already stored is left as it is), and
        returns how many were new. One connection serves every call: a first read of years of
        runs writes in many batches, and closing a connection copies its writes back."""
        opened: list[sqlite3.Connection] = []  # on the first write: a poll that brings nothing opens none
        columns = ["site", "site_id", *ROW_FIELDS[1:]]
        statement = (
            f"INSERT OR IGNORE INTO ai_eval_site_result ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))})"
        )

        def write(rows: Sequence[Sequence[Any]]) -> int:
            if not opened:
                opened.append(self._connect())
                # A site's rows can be read again: their commits need not wait for the disk
                # (WAL keeps each transaction whole either way).
                opened[0].execute("PRAGMA synchronous = NORMAL")
            connection = opened[0]
            try:
                connection.execute("BEGIN IMMEDIATE")
                before = connection.total_changes
                connection.executemany(statement, [(site, *row) for row in without_secrets(rows)])
                added = connection.total_changes - before
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
            return added

        try:
            yield write
        finally:
            for connection in opened:
                connection.close()

    def last_site_id(self, site: str) -> int | None:
        """The highest id of the rows read from a site: the next read starts above it."""
        found = self._select("SELECT MAX(site_id) AS last FROM ai_eval_site_result WHERE site = ?", (site,))
        return found[0]["last"] if found else None

    def site_history(
        self, site: str, target: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """A site's rows (of one target, or of every one), newest first."""
        where = "site = ?" + (" AND target_id = ?" if target is not None else "")
        parameters = (site, target) if target is not None else (site,)
        return self._runs(
            f"SELECT site_id AS id, {', '.join(ROW_FIELDS[1:])}, site_id AS {SITE_ID} FROM {_SITE} "
            f"WHERE {where} ORDER BY site_id DESC LIMIT ?",
            (*parameters, -1 if limit is None else limit),
        )

    def previous_site_row(self, site: str, target: str, before_id: int) -> dict[str, Any] | None:
        """The site's row of a target just before `before_id`, as the seed's subscriber finds it."""
        found = self._runs(
            f"SELECT site_id AS id, {', '.join(ROW_FIELDS[1:])}, site_id AS {SITE_ID} FROM {_SITE} "
            "WHERE site = ? AND target_id = ? AND site_id < ? ORDER BY site_id DESC LIMIT 1",
            (site, target, before_id),
        )
        return found[0] if found else None

    def _select(self, query: str, parameters: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a query; none when there is no database yet (reading never creates one). The
        rows `readable` left out are named in `skipped`."""
        if not self.path.exists():
            return []
        connection = self._connect(read_only=True)
        left_out: dict[tuple[str, int], str] = {}

        def readable(table: str, rowid: int, timestamp: Any, scores: Any, config: Any) -> bool:
            why = unreadable({"timestamp": timestamp, "scores_json": scores, "config_json": config})
            if why is not None:
                left_out[table, rowid] = why
            return why is None

        connection.create_function("readable", 5, readable, deterministic=True)
        try:
            found = [dict(row) for row in connection.execute(query, parameters)]
            for (table, rowid), why in left_out.items():
                named = "run_id" if table == "ai_eval_result" else f"site_id AS {SITE_ID}"
                (row,) = connection.execute(
                    f"SELECT {named}, target_id FROM {table} WHERE rowid = ?", (rowid,)
                )
                note = f"{self.path}: {run_label(dict(row))} of `{printable(str(row['target_id']))}` is skipped: {why}"
                if note not in self.skipped:
                    self.skipped.append(note)
            return found
        finally:
            connection.close()

    def _runs(self, query: str, parameters: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of runs: a local row exactly as stored, a site's with its `siteId`."""
        rows = self._select(query, parameters)
        for row in rows:
            if row.get(SITE_ID, 0) is None:
                del row[SITE_ID]
        return rows

    def previous(self, target_id: str, before_id: int) -> dict[str, Any] | None:
        """The row stored for the same target just before `before_id`."""
        found = self._runs(
            f"SELECT * FROM {_LOCAL} WHERE target_id = ? AND id < ? ORDER BY id DESC LIMIT 1",
            (target_id, before_id),
        )
        return found[0] if found else None

    def previous_of_file(self, target_id: str, cases_file: str, before_id: int) -> dict[str, Any] | None:
        """The row stored for the same target and cases file (`config_json`'s `cases_file`) just
        before `before_id`: another cases file of the same rubric has other cases."""
        found = self._runs(
            f"SELECT * FROM {_LOCAL} WHERE target_id = ? AND id < ? "
            "AND json_extract(config_json, '$.cases_file') = ? ORDER BY id DESC LIMIT 1",
            (target_id, before_id, cases_file),
        )
        return found[0] if found else None

    def history(self, target_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """A target's runs, local and the site's, newest first."""
        return self._runs(
            f"SELECT * FROM {_RUNS} WHERE target_id = ? {_NEWEST_FIRST} LIMIT ?",
            (target_id, -1 if limit is None else limit),
        )

    def sharing_cases(self, head: Mapping[str, Any]) -> dict[str, Any] | None:
        """The newest run of `head`'s target and kind (local, or the site's) before it with a case
        of `head`'s (by id; a site's run: a question of its `scores_json`): the run a history
        compares its latest with, since runs of another cases file pair no case."""
        site = SITE_ID in head
        found = self._runs(
            f"SELECT * FROM {_RUNS} AS earlier WHERE target_id = ?1 AND id < ?2 "
            f"AND {SITE_ID} IS {'NOT ' if site else ''}NULL AND EXISTS ("
            f"SELECT 1 FROM json_each({_SCORED.format('earlier.scores_json')}) "
            f"WHERE key IN (SELECT key FROM json_each({_SCORED.format('?3')}))) ORDER BY id DESC LIMIT 1",
            (head["target_id"], head["id"], head["scores_json"]),
        )
        return found[0] if found else None

    def mirroring(self, target_id: str) -> list[dict[str, Any]]:
        """The runs a target's runs are compared with across the site, newest first: for a site's
        target, the local runs of the cases files that mirror it (`site_target`); for a rubric,
        the site's runs of the targets its cases files mirror."""
        return self._runs(
            f"SELECT * FROM {_RUNS} WHERE {SITE_ID} IS NULL AND json_extract(config_json, '$.site_target') = ?1 "
            f"OR {SITE_ID} IS NOT NULL AND target_id IN (SELECT json_extract(config_json, '$.site_target') "
            f"FROM ai_eval_result WHERE target_id = ?1) {_NEWEST_FIRST}",
            (target_id,),
        )

    def last_run(self, target_id: str) -> tuple[dict[str, Any] | None, int]:
        """A target's latest run and how many runs it has."""
        found = self._runs(
            f"SELECT *, (SELECT count(*) FROM {_RUNS} WHERE target_id = ?1) AS runs "
            f"FROM {_RUNS} WHERE target_id = ?1 {_NEWEST_FIRST} LIMIT 1",
            (target_id,),
        )
        if not found:
            return None, 0
        row = found[0]
        return row, int(row.pop("runs"))

    def latest(self) -> dict[str, Any] | None:
        """The latest local run."""
        found = self._runs(f"SELECT * FROM {_LOCAL} ORDER BY id DESC LIMIT 1")
        return found[0] if found else None

    def run(self, run_id: int) -> dict[str, Any] | None:
        found = self._runs(f"SELECT * FROM {_LOCAL} WHERE run_id = ?", (run_id,))
        return found[0] if found else None

    def site_run(self, site_id: int) -> dict[str, Any] | None:
        """The site's row of that id (the one read last, should two sites have one)."""
        found = self._runs(
            f"SELECT site_id AS id, {', '.join(ROW_FIELDS[1:])}, site_id AS {SITE_ID} FROM {_SITE} "
            "WHERE site_id = ? ORDER BY rowid DESC LIMIT 1",
            (site_id,),
        )
        return found[0] if found else None

    def targets(self) -> list[str]:
        """Every target with a run, local or the site's, most recently run first."""
        found = self._select(
            f"SELECT target_id, MAX(timestamp) AS last FROM {_RUNS} GROUP BY target_id ORDER BY last DESC"
        )
        return [str(row["target_id"]) for row in found]

    def cases(self, row: Mapping[str, Any]) -> list[CaseRecord]:
        """A row's cases in run order. A site's row gives its questions' scores from
        `scores_json`, with the verdicts the row's pass rate implies (`row_verdicts`); a row stored
        before cases were kept (schema 0) gives its cases' scores, with no verdict."""
        found = (
            []
            if SITE_ID in row
            else self._select(
                "SELECT case_id, score, passed, reason, outcomes_json, question_id FROM ai_eval_case "
                "WHERE run_id = ? ORDER BY position",
                (row["run_id"],),
            )
        )
        if found:
            return [
                CaseRecord(
                    str(case["case_id"]),
                    case["score"],
                    None if case["passed"] is None else bool(case["passed"]),
                    case["reason"],
                    self._outcomes(row, case),
                    case["question_id"],
                )
                for case in found
            ]
        if SITE_ID in row:
            return row_verdicts(question_scores(row.get("scores_json"), questions=True), row["pass_rate"])
        return question_scores(row.get("scores_json"), questions=False)

    def _outcomes(self, row: Mapping[str, Any], case: Mapping[str, Any]) -> tuple[Any, ...]:
        """A stored case's check outcomes; none, with a note in `skipped`, when a store written by
        other hands holds ones no reader can read (SPEC 6)."""
        try:
            return tuple(loads(case["outcomes_json"]))
        except ValueError as err:
            note = (
                f"{self.path}: the check outcomes of case `{printable(str(case['case_id']))}` of "
                f"{run_label(dict(row))} are left out: {err}"
            )
            if note not in self.skipped:
                self.skipped.append(note)
            return ()

    def diff(self, base: RunName = None, head: RunName = None, target: str | None = None) -> Diff:
        """Two runs of one target compared: by default the target's latest run and the one before;
        the target by default is the one run last; a base alone is compared with its target's
        latest. A run is named by its local run id, `latest`, `previous`, `site:ID` or
        `site:latest` (`RunName`). A local run of a cases file with `site_target` and a site's
        run of that target are compared question by question."""
        base_ref, head_ref = _reference(base), _reference(head)
        if base_ref is None and head_ref is None:
            head_row, base_row = self._latest_two(target)
        else:
            if base_ref is None:
                raise StoreError("name the base run too: a diff of one run compares it with a later one")
            if base_ref == "site:latest" and head_ref is None:
                raise StoreError(
                    "`site:latest` is the site's latest run: name the run to compare it with too "
                    "(`diff site:latest latest`: your latest run of the cases file mirroring its target)"
                )
            targets = _Targets(target)
            named: dict[tuple[str, int] | str, dict[str, Any]] = {}
            # the runs named by id first, then the local runs named `latest` or `previous`, each
            # telling the target of the names after it
            for ref in sorted({base_ref, head_ref} - {None}, key=_resolution_order):
                assert ref is not None
                row = self._fixed(ref, targets) if isinstance(ref, tuple) else self._relative(ref, targets)
                named[ref] = row
                targets.learn(row)
            base_row = named[base_ref]
            head_row = self._latest_of(base_row) if head_ref is None else named[head_ref]
            if _same(base_row, head_row):
                raise StoreError(
                    f"{run_label(base_row)} is the latest run of `{base_row['target_id']}`: name a head run "
                    "to compare it with"
                    if head_ref is None
                    else f"the base and the head are both {run_label(base_row)}: name two runs"
                )
        return self._compare(base_row, head_row)

    def _latest_two(self, target: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
        if target is None:
            latest = self._runs(f"SELECT * FROM {_RUNS} {_NEWEST_FIRST} LIMIT 1")
            if not latest:
                raise StoreError(f"{self.path} holds no runs yet: run a cases file first")
            target = str(latest[0]["target_id"])
        rows = self.history(target, 2)
        if len(rows) < 2:
            raise StoreError(
                f"`{target}` has {len(rows)} run{'s' * (len(rows) != 1)} in {self.path}; a diff needs two"
            )
        return rows[0], rows[1]

    def _fixed(self, ref: tuple[str, int], targets: _Targets) -> dict[str, Any]:
        kind, number = ref
        row = self.site_run(number) if kind == "site" else self.run(number)
        if row is None:
            named = f"site run {number}" if kind == "site" else f"run {number}"
            pulled = " (`ai-eval-lsp site pull` reads the site's runs)" if kind == "site" else ""
            raise StoreError(f"{self.path} has no {named}{pulled}")
        # a site's run named beside a rubric's target is checked against the local run it is
        # compared with (`_compare`): the rubric's cases file may mirror it
        if (
            targets.named is not None
            and SITE_ID not in row
            and row["target_id"] != targets.named
            and mirrored_target(row) != targets.named
        ):
            raise StoreError(
                f"{run_label(row)} is of `{row['target_id']}`, not `{targets.named}`: a diff compares runs of one target"
            )
        return row

    def _relative(self, ref: str, targets: _Targets) -> dict[str, Any]:
        """`latest`, `previous` (local runs) or `site:latest`, of the target the other run or
        `--target` names; a local run of a site target is one whose cases file mirrors it."""
        if ref == "site:latest":
            site_target = targets.site or targets.named
            rows = (
                self._runs(
                    f"SELECT * FROM {_RUNS} WHERE target_id = ? AND {SITE_ID} IS NOT NULL {_NEWEST_FIRST} LIMIT 1",
                    (site_target,),
                )
                if site_target
                else []
            )
            if not rows:
                raise StoreError(
                    f"no site run of `{site_target}` is stored in {self.path} (`ai-eval-lsp site pull` reads them)"
                    if site_target
                    else "`site:latest` of which site target? name it with --target, or compare with a run "
                    "whose cases file has `site_target`"
                )
            return rows[0]
        parameters: tuple[str, ...] = ()
        where = "1"
        if targets.local is not None or (targets.site is None and targets.named is not None):
            where, parameters = "target_id = ?", (targets.local or targets.named or "",)
        elif targets.site is not None:
            where, parameters = "json_extract(config_json, '$.site_target') = ?", (targets.site,)
        found = self._runs(f"SELECT * FROM {_LOCAL} WHERE {where} ORDER BY id DESC LIMIT 2", parameters)
        if not found and targets.site is not None and targets.local is None:
            # no run mirrors the site's target: the latest run, which `_compare` says cannot be compared
            found = self._runs(f"SELECT * FROM {_LOCAL} ORDER BY id DESC LIMIT 2")
        wanted = 0 if ref == "latest" else 1
        if len(found) <= wanted:
            which = f"of `{parameters[0]}` " if parameters else ""
            raise StoreError(f"{self.path} has no {ref} local run {which}to compare")
        return found[wanted]

    def _latest_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The latest run of the same target and kind (local or the site's) as `row`."""
        site = SITE_ID in row
        found = self._runs(
            f"SELECT * FROM {_RUNS} WHERE target_id = ? AND {SITE_ID} IS {'NOT ' if site else ''}NULL "
            f"{_NEWEST_FIRST} LIMIT 1",
            (row["target_id"],),
        )
        return found[0]

    def _compare(self, base: dict[str, Any], head: dict[str, Any]) -> Diff:
        """Two runs compared: of one target, or a local run and a site's run it mirrors."""
        sites = [row for row in (base, head) if SITE_ID in row]
        local = [row for row in (base, head) if SITE_ID not in row]
        if len(sites) == 1:
            mirrored = mirrored_target(local[0])
            if mirrored != sites[0]["target_id"]:
                mirrors = f"mirrors `{mirrored}`" if mirrored else "mirrors no site target"
                raise StoreError(
                    f"{run_label(local[0])} of `{local[0]['target_id']}` {mirrors}, so it cannot be compared with "
                    f"{run_label(sites[0])} of `{sites[0]['target_id']}`: add `site_target: "
                    f"{sites[0]['target_id']}` to its cases file and run it again"
                )
        elif base["target_id"] != head["target_id"]:
            raise StoreError(
                f"{run_label(base)} is of `{base['target_id']}` and {run_label(head)} of `{head['target_id']}`: "
                "a diff compares runs of one target"
            )
        return diff(base, head, self.cases(base), self.cases(head), by_question=len(sites) == 1)


RunName = int | str | None
"""A run as commands name it: a local run id, `latest`, `previous`, `site:ID`, `site:latest`."""

_RELATIVE = ("latest", "previous", "site:latest")


def _reference(name: RunName) -> tuple[str, int] | str | None:
    """A run name read: ("run", id), ("site", id), one of `_RELATIVE`, or None."""
    if name is None or (isinstance(name, int) and not isinstance(name, bool)):
        return None if name is None else ("run", name)
    text = str(name).strip()
    if text in _RELATIVE:
        return text
    kind, _, number = text.rpartition(":")
    if kind in ("", "site") and number.isdigit():
        return ("site" if kind else "run", int(number))
    raise StoreError(f"`{name}` names no run: write a run id, latest, previous, site:ID or site:latest")


def _resolution_order(ref: tuple[str, int] | str | None) -> int:
    return 0 if isinstance(ref, tuple) else 2 if ref == "site:latest" else 1


def _same(base: Mapping[str, Any], head: Mapping[str, Any]) -> bool:
    return (SITE_ID in base) == (SITE_ID in head) and base["id"] == head["id"]


class _Targets:
    """What a diff's runs are of: the target named (`--target`), the local one (a rubric) and
    the site's one, learnt from the runs named."""

    def __init__(self, named: str | None) -> None:
        self.named = named
        self.local: str | None = None
        self.site: str | None = None

    def learn(self, row: Mapping[str, Any]) -> None:
        if SITE_ID in row:
            self.site = self.site or str(row["target_id"])
        else:
            self.local = self.local or str(row["target_id"])
            self.site = self.site or mirrored_target(row)


def _cause(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        return f"{err.strerror}: {err.filename}" if err.filename else err.strerror
    return str(err)
