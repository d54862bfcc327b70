"""The site's own runs (SPEC 3): its `ai_eval_result` rows read from its database, read-only, and
kept in the local results store beside the local runs.

`SiteReader` holds one connection (MySQL/MariaDB through PyMySQL, PostgreSQL through pg8000,
SQLite through the standard library: the two servers' drivers are pure Python, so the VS Code
bundle stays small and the same on every platform), in a read-only session with a 5 s limit on
connecting and on each query. `pull` reads the rows above the last one read, converts each as
seed 003 says to read them, and stores the new ones. Nothing here knows of editors.
"""

from __future__ import annotations

import contextlib
import decimal
import json
import math
import re
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ai_eval_lsp.core.compare import SITE_ID, score_of
from ai_eval_lsp.core.text import printable
from ai_eval_lsp.drupal.secrets import redact
from ai_eval_lsp.drupal.site_address import SiteAddress
from ai_eval_lsp.runs.render import site_line
from ai_eval_lsp.runs.store import ROW_FIELDS, ResultStore

TIMEOUT = 5.0
"""Seconds a connection and each query may take before the site counts as unreachable."""
BATCH = 5000
"""Rows read per query: a first read of a site with years of runs goes in steps of this."""


class SiteError(Exception):
    """The site's runs cannot be read; the message names the database, never the password."""


class BadRow(ValueError):
    """A row that cannot be read as seed 003 describes it."""


class _Connection(Protocol):
    def rows_after(self, last_id: int, limit: int) -> list[list[Any]]: ...
    def close(self) -> None: ...


class SiteReader:
    """Reads one site's rows, connecting when first asked and again after a failure."""

    def __init__(self, address: SiteAddress) -> None:
        self.address = address
        self._connection: _Connection | None = None

    def rows_after(self, last_id: int, limit: int = BATCH) -> list[list[Any]]:
        """The raw rows with an id above `last_id` (their values in `ROW_FIELDS` order), by id;
        SiteError when they cannot be read (the connection is then dropped, to be made again
        next time)."""
        try:
            if self._connection is None:
                self._connection = _connect(self.address)
            return self._connection.rows_after(last_id, limit)
        except SiteError:
            self.close()
            raise
        except Exception as err:
            self.close()
            raise SiteError(why_unreadable(self.address, err)) from None

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):  # a connection that is gone is closed
                connection.close()


@dataclass
class Pulled:
    """What one read of the site brought."""

    stored: list[tuple[Any, ...]] = field(default_factory=list)
    """The new rows, oldest first, as stored: seed 003's fields in `ROW_FIELDS` order."""
    skipped: list[str] = field(default_factory=list)
    """A note for each row that could not be read."""
    last_id: int = 0
    """The highest id read, rows skipped included: where the next read starts."""

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The new rows as the store gives a site's rows back (each with `siteId`); made when
        asked, since a first read of years of runs needs none of them."""
        return [as_row(values) for values in self.stored]


def as_row(values: Sequence[Any]) -> dict[str, Any]:
    """A site's row from its stored fields, with `siteId`."""
    return {**dict(zip(ROW_FIELDS, values, strict=True)), SITE_ID: values[0]}


def pull(store: ResultStore, reader: SiteReader, after: int | None = None) -> Pulled:
    """The site's rows above `after` (default: the last one stored), each converted and stored
    whole; SiteError when the site cannot be read (rows stored before the trouble stay). Rows
    stored meanwhile by another reader of the site (the CLI) are read again and kept once. The
    next batch is read while one is converted and stored: the database builds it and the socket
    waits for it on another thread, holding neither the interpreter nor the work at hand."""
    site = reader.address.identity
    pulled = Pulled(last_id=after if after is not None else store.last_site_id(site) or 0)
    ahead = _ReadAhead(reader)
    ahead.start(pulled.last_id)
    try:
        with store.site_writer(site) as write:
            while True:
                raw = ahead.result()
                pulled.last_id = max([pulled.last_id, *(_id_of(values) for values in raw)])
                if len(raw) == BATCH:
                    ahead.start(pulled.last_id)
                converted = []
                for values in raw:
                    try:
                        converted.append(site_row(values))
                    except BadRow as err:
                        pulled.skipped.append(
                            f"site row {printable(str(values[0]))} of `{reader.address.table}` is skipped: {err}"
                        )
                if converted:
                    write(converted)
                    pulled.stored += converted
                if len(raw) < BATCH:
                    return pulled
    finally:
        ahead.wait()  # the connection is the caller's again only once no read is under way


class _ReadAhead:
    """One read of a batch at a time, on a daemon thread of its own."""

    def __init__(self, reader: SiteReader) -> None:
        self.reader = reader
        self._done = threading.Event()
        self._done.set()
        self._rows: list[list[Any]] = []
        self._error: BaseException | None = None

    def start(self, last_id: int) -> None:
        self.wait()
        self._done.clear()

        def read() -> None:
            try:
                self._rows, self._error = self.reader.rows_after(last_id), None
            except BaseException as err:
                self._rows, self._error = [], err
            finally:
                self._done.set()

        threading.Thread(target=read, name="ai-eval site read", daemon=True).start()

    def result(self) -> list[list[Any]]:
        self.wait()
        if self._error is not None:
            raise self._error
        return self._rows

    def wait(self) -> None:
        self._done.wait()


def _id_of(values: Sequence[Any]) -> int:
    try:
        return _integer(values[0], "id")
    except BadRow:
        return 0


@dataclass(frozen=True, slots=True)
class SiteRun:
    """A new site row as a client is told of it: the row, its line and whether it regressed."""

    row: dict[str, Any]
    summary: str
    regressed: bool


def announce(
    store: ResultStore, site: str, rows: Sequence[dict[str, Any]], tolerance: float
) -> list[SiteRun]:
    """Each new row with its line and `regressed`: its average fell more than `tolerance` below
    the site's previous row of the same target, as seed 003's example subscriber decides."""
    runs = []
    for row in rows:
        previous = store.previous_site_row(site, row["target_id"], row["id"])
        drop = None if previous is None else previous["avg_score"] - row["avg_score"]
        runs.append(SiteRun(row, site_line(row, previous), drop is not None and drop > tolerance))
    return runs


# --- a row read as seed 003 says ---------------------------------------------------------------


def site_row(values: Sequence[Any]) -> tuple[Any, ...]:
    """A site's `ai_eval_result` row (seed 003's fields in `ROW_FIELDS` order) as the store keeps
    it: `run_id` may be null (the Drush path), numbers may come as decimals or strings,
    `duration` as an integer, a float or a decimal; `config_json` may be null. BadRow says what
    cannot be read."""
    (
        row_id,
        target,
        run_id,
        timestamp,
        average,
        rate,
        low,
        high,
        gate,
        questions,
        errors,
        scores,
        source,
        duration,
        config,
    ) = values
    if isinstance(target, bytes):
        target = target.decode("utf-8", "replace")
    if not isinstance(target, str | int) or isinstance(target, bool) or str(target) == "":
        raise BadRow(f"`target_id` is {target!r}, not a target id")
    questions, errors = _integer(questions, "question_count"), _integer(errors, "error_count")
    if questions < 0:
        raise BadRow(f"`question_count` {questions} is negative")
    if not 0 <= errors <= questions:
        raise BadRow(f"`error_count` {errors} is not between 0 and `question_count` {questions}")
    scores = _text(scores)
    _scores_within(scores)
    return (
        _integer(row_id, "id"),
        str(target),
        None if run_id is None else _integer(run_id, "run_id"),
        _integer(timestamp, "timestamp"),
        _within(_number(average, "avg_score"), "avg_score", 5),
        _within(_number(rate, "pass_rate"), "pass_rate", 1),
        _within(_number(low, "pass_rate_ci_low", True), "pass_rate_ci_low", 1),
        _within(_number(high, "pass_rate_ci_high", True), "pass_rate_ci_high", 1),
        1 if _integer(gate, "passed_gate") else 0,
        questions,
        errors,
        scores,
        _text(source) or "",
        _number(duration, "duration"),
        _text(config),
    )


def _within(number: float | None, name: str, most: float) -> float | None:
    """A number of the row within its domain (SPEC 6): a score of 0..5, a rate of 0..1."""
    if number is not None and not 0 <= number <= most:
        raise BadRow(f"`{name}` {number:.15g} is not between 0 and {most:g}")
    return number


_OUT_OF_RANGE = re.compile(r":\s*(?:[-+\"NI]|[6-9]|[1-9][0-9]|5\.[0-9]*[1-9]|[0-9.]+[eE])")
"""A value in a JSON object that may be a score outside 0..5 (negative, 6 and more, past 5.0, an
exponent, a string, NaN or Infinity): what a row's scores are read for; most rows have none."""


def _scores_within(scores: str | None) -> None:
    """A question's score outside 0..5 makes the row unreadable (SPEC 6); `scores_json` of any
    other shape than an object leaves the row its aggregates only, as before."""
    if scores is None or _OUT_OF_RANGE.search(scores) is None:
        return
    try:
        read = json.loads(scores)
    except ValueError:
        return
    for question, value in read.items() if isinstance(read, dict) else ():
        score = score_of(value)
        if score is not None and not 0 <= score <= 5:
            raise BadRow(f"question `{printable(question)}` of `scores_json` scores {score:.15g}, not 0..5")


def _number(value: Any, name: str, optional: bool = False) -> Any:
    kind = type(value)
    if (kind is float and math.isfinite(value)) or kind is int:  # what JSON gives, most often
        return float(value)
    if value is None and optional:
        return None
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    try:
        if isinstance(value, bool) or value is None:
            raise ValueError
        number = float(value) if isinstance(value, int | float | decimal.Decimal | str) else math.nan
    except (ValueError, decimal.InvalidOperation):
        raise BadRow(f"`{name}` is {value!r}, not a number") from None
    if not math.isfinite(number):
        raise BadRow(f"`{name}` is {value!r}, not a number")
    return number


def _integer(value: Any, name: str) -> int:
    if type(value) is int:
        return value
    number = _number(value, name)
    if number != int(number):
        raise BadRow(f"`{name}` is {value!r}, not a whole number")
    return int(number)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


# --- the drivers ---------------------------------------------------------------------------------


def _connect(address: SiteAddress) -> _Connection:
    drivers: dict[str, Callable[[SiteAddress], _Connection]] = {
        "mysql": _MySql,
        "pgsql": _Postgres,
        "sqlite": _Sqlite,
    }
    return drivers[address.driver](address)


def _batch_query(table: str, quote: str, aggregate: str, row: str, last: str, limit: str) -> str:
    """The rows above an id as one JSON document the database builds (`aggregate`, a template,
    of `row` of the fields): a batch costs a pure-Python driver one value, not fifteen a row."""
    fields = ", ".join(_quoted(name, quote) for name in ROW_FIELDS)
    document = aggregate.format(f"{row}({fields})")
    return (
        f"SELECT {document} FROM (SELECT {fields} FROM {_quoted(table, quote)} "
        f"WHERE {_quoted('id', quote)} > {last} ORDER BY {_quoted('id', quote)} LIMIT {limit}) AS batch"
    )


def _rows(document: Any) -> list[list[Any]]:
    """The rows of a batch's JSON document, each its values in `ROW_FIELDS` order, by id (an
    aggregate's order is the database's)."""
    if isinstance(document, bytes):
        document = document.decode("utf-8", "replace")
    rows: list[list[Any]] = json.loads(document) if document else []
    rows.sort(key=lambda values: values[0] if type(values[0]) is int else 0)
    return rows


def _quoted(name: str, quote: str) -> str:
    return quote + name.replace(quote, quote * 2) + quote


class _MySql:
    """MySQL 5.7.22+ and MariaDB 10.5+ through PyMySQL: autocommit, so each poll sees the rows
    inserted since (a transaction left open would read one snapshot forever), a read-only
    session, and room for a batch's JSON (MariaDB builds it as a GROUP_CONCAT)."""

    def __init__(self, address: SiteAddress) -> None:
        import pymysql

        self.connection = pymysql.connect(
            host=address.host,
            port=address.port or 3306,
            user=address.username,
            password=address.password.encode(),  # as UTF-8: PyMySQL would encode a str as Latin-1
            database=address.database,
            connect_timeout=TIMEOUT,
            read_timeout=TIMEOUT,
            write_timeout=TIMEOUT,
            autocommit=True,
            charset="utf8mb4",
            program_name="ai-eval-lsp",
        )
        with self.connection.cursor() as cursor:
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
            cursor.execute("SET SESSION group_concat_max_len = 1073741824")
        self.query = _batch_query(address.table, "`", "JSON_ARRAYAGG({})", "JSON_ARRAY", "%s", "%s")

    def rows_after(self, last_id: int, limit: int) -> list[list[Any]]:
        with self.connection.cursor() as cursor:
            cursor.execute(self.query, (last_id, limit))
            found = cursor.fetchone()
        return _rows(found[0] if found else None)

    def close(self) -> None:
        self.connection.close()


class _Postgres:
    """PostgreSQL through pg8000: the session read-only and each statement limited from the start."""

    def __init__(self, address: SiteAddress) -> None:
        import pg8000.native

        _password_as_libpq_sends_it()
        self.connection = pg8000.native.Connection(
            address.username,
            host=address.host,
            database=address.database,
            port=address.port or 5432,
            password=address.password,
            timeout=TIMEOUT,
            application_name="ai-eval-lsp",
            startup_params={
                "default_transaction_read_only": "on",
                "statement_timeout": str(int(TIMEOUT * 1000)),
            },
        )
        self.query = _batch_query(
            address.table, '"', "json_agg({})::text", "json_build_array", ":last", ":limit"
        )

    def rows_after(self, last_id: int, limit: int) -> list[list[Any]]:
        found = self.connection.run(self.query, last=last_id, limit=limit)
        return _rows(found[0][0] if found else None)

    def close(self) -> None:
        self.connection.close()


def _password_as_libpq_sends_it() -> None:
    """SCRAM's password is the SASLprep of the UTF-8 text (RFC 5802), and where SASLprep refuses
    it (an emoji is unassigned in its Unicode 3.2 tables), PostgreSQL's server and libpq use the
    text as it is; scramp, under pg8000, refuses to log in. Its password is made as libpq's is."""
    import scramp.core

    refusing = scramp.core.Password
    if getattr(refusing, "as_libpq", False):
        return

    class AsLibpq(refusing):  # type: ignore[misc, valid-type]
        as_libpq = True

        def __init__(self, password: str) -> None:
            try:
                super().__init__(password)
            except scramp.core.ScramException:
                self.password = password

    scramp.core.Password = AsLibpq


class _Sqlite:
    """A site's SQLite file, opened read-only for each read (a file replaced or removed meanwhile
    is seen at once); a query that outlives the limit is interrupted."""

    def __init__(self, address: SiteAddress) -> None:
        self.address = address
        self.query = _batch_query(address.table, '"', "json_group_array({})", "json_array", "?", "?")

    def rows_after(self, last_id: int, limit: int) -> list[list[Any]]:
        path = Path(self.address.database)
        if not path.is_file():
            raise SiteError(f"cannot read the site's runs from {self.address}: there is no such file")
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=TIMEOUT)
        try:
            connection.execute("PRAGMA query_only = ON")
            deadline = time.monotonic() + TIMEOUT
            connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
            found = connection.execute(self.query, (last_id, limit)).fetchone()
            return _rows(found[0] if found else None)
        finally:
            connection.close()

    def close(self) -> None:
        pass  # nothing stays open between reads


# --- what went wrong, in words -------------------------------------------------------------------

_NOTHING_ANSWERS = "nothing answers there (is the database server running, and the host and port right?)"

_CAUSES: Sequence[tuple[Callable[[Exception, str], bool], Callable[[SiteAddress], str]]] = (
    (
        lambda err, text: _chained(err, socket.gaierror),
        lambda a: f"the host `{a.host}` is not known",
    ),
    (
        lambda err, text: (
            _chained(err, TimeoutError)
            or _code(err) == "57014"  # PostgreSQL's statement_timeout
            or "timed out" in text
            or "interrupted" in text
        ),
        lambda a: f"no answer within {TIMEOUT:g} s (is the server overloaded, or the table locked?)",
    ),
    (
        lambda err, text: _chained(err, ConnectionRefusedError) or _code(err) == 2003 or "refused" in text,
        lambda a: _NOTHING_ANSWERS,
    ),
    (
        lambda err, text: _code(err) in (1045, "28P01", "28000") or "authentication failed" in text,
        lambda a: f"the user `{a.username}` or its password is refused",
    ),
    (
        lambda err, text: _code(err) in (1049, "3D000") or "unknown database" in text,
        lambda a: f"there is no database `{a.database}`",
    ),
    (
        # MySQL and MariaDB say the same to a user without access, whether the database exists or not
        lambda err, text: _code(err) == 1044,
        lambda a: (
            f"there is no database `{a.database}`, or the user `{a.username}` may not use it "
            "(MySQL and MariaDB do not tell which): check the name, or grant the user SELECT on its table"
        ),
    ),
    (
        lambda err, text: _code(err) in (1146, "42P01") or "no such table" in text or "doesn't exist" in text,
        lambda a: (
            f"there is no table `{a.table}`: is ai_eval installed on the site (and the table prefix right)?"
        ),
    ),
    (
        lambda err, text: _code(err) in (1142, "42501") or "denied" in text,
        lambda a: f"the user `{a.username}` may not read `{a.table}`; grant it SELECT on that table",
    ),
    (
        lambda err, text: (
            isinstance(err, OSError) or "can't connect" in text or "can't create a connection" in text
        ),
        lambda a: _NOTHING_ANSWERS,
    ),
)


def _chained(err: BaseException, kind: type[BaseException]) -> bool:
    """Whether `err` is, or was raised from or during, an exception of `kind`."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _code(err: Exception) -> object:
    arguments = getattr(err, "args", ())
    if arguments and isinstance(arguments[0], int):
        return arguments[0]  # PyMySQL: (code, message)
    if arguments and isinstance(arguments[0], dict):
        return arguments[0].get("C")  # pg8000: the server's fields, `C` its SQLSTATE
    return None


def why_unreadable(address: SiteAddress, err: Exception) -> str:
    """Why the site cannot be read, in words: the driver's own message where no cause fits, with
    the password taken out in every form it may take there (a driver may quote its bytes)."""
    text = str(err).lower()
    cause = next((describe(address) for matches, describe in _CAUSES if matches(err, text)), None)
    if cause is None:
        cause = redact(str(err))
    return f"cannot read the site's runs from {address}: {cause}"
