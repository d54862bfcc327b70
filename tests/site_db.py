"""A Drupal site's `ai_eval_result` table, as seed 003 describes it, in the three databases Drupal
core supports, and rows written the way each of the seed's two paths writes them: the EvalRunner
path (admin UI, batches) with `run_id` and whole-second `duration`, and the Drush path without
`run_id` and with a two-decimal `duration`."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COLUMNS = (
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
    "scores_json",
    "source",
    "duration",
    "error_count",
    "config_json",
)
"""Seed 003's columns, in its order."""

RUBRIC = """\
id: refund_answer
version: "1.0"
checks:
  - id: apologises
    kind: must_contain_any
    values: [sorry]
scoring: {combine: all_pass}
"""
"""A rubric whose cases files mirror the site's `support_bot` in the tests."""

_TYPES = {
    # driver: id, text, integer, float, decimal duration, long text
    "mysql": (
        "INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY",
        "VARCHAR(255)",
        "INT",
        "DOUBLE",
        "DECIMAL(10,2)",
        "LONGTEXT",
    ),
    "pgsql": ("SERIAL PRIMARY KEY", "VARCHAR(255)", "INTEGER", "NUMERIC(10,4)", "NUMERIC(10,2)", "TEXT"),
    # SQLite as Drupal's driver makes it: declared types, which keep what is put in them
    "sqlite": (
        "INTEGER PRIMARY KEY AUTOINCREMENT",
        "VARCHAR(255)",
        "INTEGER",
        "FLOAT",
        "NUMERIC(10,2)",
        "TEXT",
    ),
}


def create_table(execute: Callable[[str], Any], driver: str, prefix: str = "") -> None:
    identity, text, integer, number, decimal, long_text = _TYPES[driver]
    execute(
        f"""CREATE TABLE {prefix}ai_eval_result (
            id {identity},
            target_id {text} NOT NULL,
            run_id {integer} NULL,
            timestamp {integer} NOT NULL,
            avg_score {number} NOT NULL,
            pass_rate {number} NOT NULL,
            pass_rate_ci_low {number} NULL,
            pass_rate_ci_high {number} NULL,
            passed_gate {integer} NOT NULL,
            question_count {integer} NOT NULL,
            scores_json {long_text} NOT NULL,
            source {text} NOT NULL,
            duration {decimal} NOT NULL,
            error_count {integer} NOT NULL,
            config_json {long_text} NULL
        )"""
    )


@dataclass
class SiteRow:
    """One run as the site inserts it."""

    target_id: str
    scores: dict[str, float | None]
    """Per question: its 0..5 score, None for an errored question."""
    timestamp: int = 1_780_000_000
    passing: float = 2.5
    """The 0..5 score at which a question passes (for the row's pass rate)."""
    pass_rate: float | None = None
    """The row's pass rate, where the site's graders passed other questions than `passing` says."""
    run_id: int | None = None
    duration: float = 42
    source: str = "manual"
    config: dict[str, Any] | None = field(default_factory=lambda: {"target": "support_bot", "model": "gpt-x"})

    def values(self) -> dict[str, Any]:
        scored = [score for score in self.scores.values() if score is not None]
        passed = sum(1 for score in scored if score >= self.passing)
        rate = self.pass_rate if self.pass_rate is not None else passed / len(scored) if scored else 0.0
        return {
            "target_id": self.target_id,
            "run_id": self.run_id,
            "timestamp": self.timestamp,
            "avg_score": round(sum(scored) / len(scored), 4) if scored else 0.0,
            "pass_rate": rate,
            "pass_rate_ci_low": max(0.0, rate - 0.2) if scored else None,
            "pass_rate_ci_high": min(1.0, rate + 0.2) if scored else None,
            "passed_gate": 1 if rate >= 0.8 else 0,
            "question_count": len(self.scores),
            "scores_json": json.dumps(self.scores),
            "source": self.source,
            "duration": self.duration,
            "error_count": len(self.scores) - len(scored),
            "config_json": None if self.config is None else json.dumps(self.config),
        }


def runner_row(target: str, scores: dict[str, float | None], run_id: int, **more: Any) -> SiteRow:
    """As `EvalRunner::finalizeRun()` writes it: a run id, whole seconds."""
    return SiteRow(target, scores, run_id=run_id, duration=more.pop("duration", 42), **more)


def drush_row(target: str, scores: dict[str, float | None], **more: Any) -> SiteRow:
    """As `drush ai-eval:run` writes it: no run id, two-decimal seconds."""
    return SiteRow(target, scores, run_id=None, duration=more.pop("duration", 12.34), source="drush", **more)


def insert_sql(driver: str, prefix: str = "", columns: Sequence[str] = COLUMNS[1:]) -> str:
    mark = "?" if driver == "sqlite" else "%s"
    return f"INSERT INTO {prefix}ai_eval_result ({', '.join(columns)}) VALUES ({', '.join([mark] * len(columns))})"


class SqliteSite:
    """A site whose database is an SQLite file (Drupal's installer offers it)."""

    def __init__(self, path: Path, prefix: str = "", create: bool = True) -> None:
        self.path, self.prefix = path, prefix
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._connection() as connection:
                create_table(connection.execute, "sqlite", prefix)

    def _connection(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path)

    def insert(self, *rows: SiteRow) -> list[int]:
        """Insert rows as the site does, in turn; their ids."""
        ids = []
        with self._connection() as connection:
            for row in rows:
                values = row.values()
                columns = [name for name in COLUMNS[1:] if not (name == "run_id" and values[name] is None)]
                cursor = connection.execute(
                    insert_sql("sqlite", self.prefix, columns), [values[c] for c in columns]
                )
                ids.append(int(cursor.lastrowid or 0))
        return ids

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> None:
        with self._connection() as connection:
            connection.execute(sql, parameters)


class ServerSite:
    """A site whose database is on a real MariaDB or PostgreSQL server (tests/databases.py): a
    database of its own, the table (with Drupal's table prefix) and a user that may only read."""

    def __init__(self, server: Any, name: str, password: str, prefix: str = "drupal_") -> None:
        self.server, self.name, self.prefix, self.password = server, name, prefix, password
        self.user = f"reader_{name}"
        server.create_database(name)
        create_table(lambda sql: server.execute(name, sql), server.driver, prefix)
        server.create_user(self.user, password, name)

    @property
    def url(self) -> str:
        return str(self.server.url(self.user, self.password, self.name, self.prefix))

    def insert(self, *rows: SiteRow) -> list[int]:
        ids = []
        for row in rows:
            values = row.values()
            columns = [name for name in COLUMNS[1:] if not (name == "run_id" and values[name] is None)]
            self.server.execute(
                self.name, insert_sql(self.server.driver, self.prefix, columns), [values[c] for c in columns]
            )
            ids.append(
                int(self.server.query(self.name, f"SELECT max(id) FROM {self.prefix}ai_eval_result")[0][0])
            )
        return ids

    def insert_many(self, rows: Sequence[SiteRow]) -> None:
        """Insert many rows at once, as a site with years of runs holds them."""
        columns = list(COLUMNS[1:])
        values = [[each[name] for name in columns] for each in (row.values() for row in rows)]
        statement = insert_sql(self.server.driver, self.prefix, columns)
        if self.server.driver == "mysql":
            connection = self.server._connection()
            connection.select_db(self.name)
            with connection.cursor() as cursor:
                cursor.executemany(statement, values)
            connection.commit()
        else:  # pg8000's executemany is a statement a row: many rows a statement instead
            cursor = self.server._connection(self.name).cursor()
            marks = f"({', '.join(['%s'] * len(columns))})"
            for start in range(0, len(values), 500):
                chunk = values[start : start + 500]
                many = statement.rsplit(" VALUES ", 1)[0] + " VALUES " + ", ".join([marks] * len(chunk))
                cursor.execute(many, [value for row in chunk for value in row])
            cursor.close()

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> None:
        self.server.execute(self.name, sql, parameters)

    def add_table(self, prefix: str) -> None:
        """Another `ai_eval_result` table in the site's database, with another prefix."""
        create_table(lambda sql: self.server.execute(self.name, sql), self.server.driver, prefix)

    @contextlib.contextmanager
    def locked(self, prefix: str | None = None) -> Iterator[None]:
        """The table (of `prefix`, default the site's) locked by another session, as a long
        migration or a backup locks it: a read waits until the lock goes."""
        server = self.server
        table = f"{self.prefix if prefix is None else prefix}ai_eval_result"
        admin = "root" if server.driver == "mysql" else "postgres"
        holder = server.connect(admin, server.admin_password, self.name)
        cursor = holder.cursor()
        if server.driver == "mysql":
            cursor.execute(f"LOCK TABLES {table} WRITE")
        else:
            holder.autocommit = False
            cursor.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        try:
            yield
        finally:
            holder.close()


if __name__ == "__main__":
    # `python site_db.py DATABASE ROW_JSON`: a run the site inserts, from a test's editor
    import sys

    SqliteSite(Path(sys.argv[1]), create=False).insert(SiteRow(**json.loads(sys.argv[2])))
