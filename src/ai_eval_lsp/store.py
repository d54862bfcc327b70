"""The results store: one SQLite file; each row is written in one transaction, or not at all."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ai_eval_run (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    target_id TEXT NOT NULL,
    started REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS ai_eval_result (
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
);
CREATE INDEX IF NOT EXISTS ai_eval_result_target ON ai_eval_result (target_id, id);
"""


class ResultStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA journal_mode=WAL")
        connection.executescript(_SCHEMA)
        return connection

    def insert(
        self, row: dict[str, Any], started: float, may_commit: Callable[[], bool] = lambda: True
    ) -> dict[str, Any] | None:
        """Store a row, assigning `id`, `run_id` and `timestamp`; returns the row as stored, or
        None when `may_commit`, asked last, inside the transaction, says no (a cancelled run).

        The run and its row are one transaction: a crash leaves neither, and concurrent runs
        queue on the write lock instead of losing a row.
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

    def previous(self, target_id: str, before_id: int) -> dict[str, Any] | None:
        """The row stored for the same target just before `before_id`."""
        connection = self._connect()
        try:
            found = connection.execute(
                "SELECT * FROM ai_eval_result WHERE target_id = ? AND id < ? ORDER BY id DESC LIMIT 1",
                (target_id, before_id),
            ).fetchone()
        finally:
            connection.close()
        return dict(found) if found else None

    def rows(self, target_id: str | None = None) -> list[dict[str, Any]]:
        connection = self._connect()
        try:
            query = (
                "SELECT * FROM ai_eval_result"
                + (" WHERE target_id = ?" if target_id else "")
                + " ORDER BY id"
            )
            return [dict(r) for r in connection.execute(query, (target_id,) if target_id else ())]
        finally:
            connection.close()
