"""The results store: one SQLite file; each run (its row and its cases) is written in one
transaction, or not at all."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ai_eval_lsp.core.compare import CaseRecord, Diff, diff

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

SCHEMA_VERSION = 1
"""`PRAGMA user_version`: 0 is the first release's database (rows only), 1 keeps each case."""

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
        PRIMARY KEY (run_id, position)
    )""",
)


WHERE = "; name another with --db (or the `resultsDatabase` setting)"
"""How to get past a database that cannot be used, said after each such trouble."""


class StoreError(Exception):
    """The database cannot be used (written by a newer ai-eval-lsp, not a results database), or
    does not hold the runs asked for."""


class ResultStore:
    def __init__(self, path: Path) -> None:
        self.path = path

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
            row_id = connection.execute(
                f"INSERT INTO ai_eval_result ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                [stored[name] for name in columns],
            ).lastrowid
            connection.executemany(
                "INSERT INTO ai_eval_case (run_id, position, case_id, score, passed, reason, outcomes_json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        run_id,
                        position,
                        case.case_id,
                        case.score,
                        None if case.passed is None else int(case.passed),
                        case.reason,
                        json.dumps(list(case.outcomes), ensure_ascii=False),
                    )
                    for position, case in enumerate(cases)
                ],
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

    def _select(self, query: str, parameters: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a query; none when there is no database yet (reading never creates one)."""
        if not self.path.exists():
            return []
        connection = self._connect(read_only=True)
        try:
            return [dict(found) for found in connection.execute(query, parameters)]
        finally:
            connection.close()

    def previous(self, target_id: str, before_id: int) -> dict[str, Any] | None:
        """The row stored for the same target just before `before_id`."""
        found = self._select(
            "SELECT * FROM ai_eval_result WHERE target_id = ? AND id < ? ORDER BY id DESC LIMIT 1",
            (target_id, before_id),
        )
        return found[0] if found else None

    def previous_of_file(self, target_id: str, cases_file: str, before_id: int) -> dict[str, Any] | None:
        """The row stored for the same target and cases file (`config_json`'s `cases_file`) just
        before `before_id`: another cases file of the same rubric has other cases."""
        found = self._select(
            "SELECT * FROM ai_eval_result WHERE target_id = ? AND id < ? "
            "AND json_extract(config_json, '$.cases_file') = ? ORDER BY id DESC LIMIT 1",
            (target_id, before_id, cases_file),
        )
        return found[0] if found else None

    def history(self, target_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """A target's rows, newest first."""
        return self._select(
            "SELECT * FROM ai_eval_result WHERE target_id = ? ORDER BY id DESC LIMIT ?",
            (target_id, -1 if limit is None else limit),
        )

    def sharing_cases(self, head: Mapping[str, Any]) -> dict[str, Any] | None:
        """The newest run of `head`'s target before it with a case (by id) of `head`'s: the run a
        history compares its latest with, since runs of another cases file pair no case."""
        found = self._select(
            "SELECT * FROM ai_eval_result AS earlier WHERE target_id = ? AND id < ? AND EXISTS ("
            "SELECT 1 FROM json_each(CASE WHEN json_valid(earlier.scores_json) THEN earlier.scores_json END)"
            " WHERE key IN (SELECT key FROM json_each(?))) ORDER BY id DESC LIMIT 1",
            (head["target_id"], head["id"], head["scores_json"]),
        )
        return found[0] if found else None

    def last_run(self, target_id: str) -> tuple[dict[str, Any] | None, int]:
        """A target's latest row and how many runs it has."""
        found = self._select(
            "SELECT *, (SELECT count(*) FROM ai_eval_result WHERE target_id = ?1) AS runs "
            "FROM ai_eval_result WHERE target_id = ?1 ORDER BY id DESC LIMIT 1",
            (target_id,),
        )
        if not found:
            return None, 0
        row = found[0]
        return row, int(row.pop("runs"))

    def latest(self) -> dict[str, Any] | None:
        found = self._select("SELECT * FROM ai_eval_result ORDER BY id DESC LIMIT 1")
        return found[0] if found else None

    def run(self, run_id: int) -> dict[str, Any] | None:
        found = self._select("SELECT * FROM ai_eval_result WHERE run_id = ?", (run_id,))
        return found[0] if found else None

    def targets(self) -> list[str]:
        """Every target with a row, most recently run first."""
        found = self._select(
            "SELECT target_id, MAX(id) AS last FROM ai_eval_result GROUP BY target_id ORDER BY last DESC"
        )
        return [str(row["target_id"]) for row in found]

    def cases(self, row: Mapping[str, Any]) -> list[CaseRecord]:
        """A row's cases in run order. A row stored before cases were kept (schema 0) gives its
        scores from `scores_json`, with no verdict."""
        found = self._select(
            "SELECT case_id, score, passed, reason, outcomes_json FROM ai_eval_case WHERE run_id = ? ORDER BY position",
            (row["run_id"],),
        )
        if found:
            return [
                CaseRecord(
                    str(case["case_id"]),
                    case["score"],
                    None if case["passed"] is None else bool(case["passed"]),
                    case["reason"],
                    tuple(json.loads(case["outcomes_json"])),
                )
                for case in found
            ]
        scores = json.loads(row.get("scores_json") or "{}")
        return [CaseRecord(str(case_id), score, None) for case_id, score in scores.items()]

    def diff(
        self, base_run: int | None = None, head_run: int | None = None, target: str | None = None
    ) -> Diff:
        """Two runs of one target compared: by default the target's latest run and the one before;
        the target by default is the one run last; a base alone is compared with its target's latest."""
        if base_run is not None:
            base = self._run_of(base_run, target)
            head = (
                self._run_of(head_run, base["target_id"])
                if head_run is not None
                else self.history(base["target_id"], 1)[0]
            )
            if head["run_id"] == base["run_id"]:
                raise StoreError(
                    f"run {base_run} is the latest run of `{base['target_id']}`: name a head run to compare it with"
                )
        else:
            if target is None:
                latest = self.latest()
                if latest is None:
                    raise StoreError(f"{self.path} holds no runs yet: run a cases file first")
                target = str(latest["target_id"])
            rows = self.history(target, 2)
            if len(rows) < 2:
                raise StoreError(
                    f"`{target}` has {len(rows)} run{'s' * (len(rows) != 1)} in {self.path}; a diff needs two"
                )
            head, base = rows
        return diff(base, head, self.cases(base), self.cases(head))

    def _run_of(self, run_id: int, target: str | None) -> dict[str, Any]:
        row = self.run(run_id)
        if row is None:
            raise StoreError(f"{self.path} has no run {run_id}")
        if target is not None and row["target_id"] != target:
            raise StoreError(
                f"run {run_id} is of `{row['target_id']}`, not `{target}`: a diff compares runs of one target"
            )
        return row


def _cause(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        return f"{err.strerror}: {err.filename}" if err.filename else err.strerror
    return str(err)
