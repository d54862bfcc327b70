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
import stat
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ai_eval_lsp.core.compare import SITE_ID, score_of
from ai_eval_lsp.core.rows import DEPTH, LARGEST, date_problem, depth_problem, loads
from ai_eval_lsp.core.text import printable
from ai_eval_lsp.disk.reading import kind_of
from ai_eval_lsp.drupal.secrets import redact
from ai_eval_lsp.drupal.site_address import SiteAddress
from ai_eval_lsp.runs.render import site_line
from ai_eval_lsp.runs.store import ROW_FIELDS, ResultStore

TIMEOUT = 5.0
"""Seconds a connection and each query may take before the site counts as unreachable."""
BATCH = 5000
"""Rows read per query at most: a first read of a site with years of runs goes in steps."""
BATCH_BYTES = 16 * 2**20
"""The most a batch's rows weigh, or the server's own limit where that is lower (MariaDB's
`max_allowed_packet`, 16 MB by default): a batch's JSON is one value the server sends whole."""
ROW_BYTES = 64 * 2**20
"""The most one row may weigh, or the server's own limit where that is lower: a larger row is
skipped, named, rather than read into memory."""


_Read = TypeVar("_Read")


class SiteError(Exception):
    """The site's runs cannot be read; the message names the database, never the password."""


class BadRow(ValueError):
    """A row that cannot be read as seed 003 describes it."""


class _Cut(Exception):
    """A batch's JSON the server cut short (it outgrew the server's limit), or one nesting past
    what the parser reads (`deep`: a number column the site made JSON): read again a row at a
    time."""

    def __init__(self, deep: bool = False) -> None:
        super().__init__()
        self.deep = deep


class _Connection(Protocol):
    limit: int
    """The most bytes the database sends as one value."""
    limit_name: str
    """The server's setting of that limit, which a site's administrator may raise."""

    def summary_after(self, last_id: int) -> Summary:
        """The rows above `last_id`, at most `BATCH`, in sum."""
        ...

    def sizes_after(self, last_id: int) -> list[list[int]]:
        """The ids above `last_id` and their rows' weight in bytes, by id, at most `BATCH`."""
        ...

    def rows_through(self, last_id: int, end_id: int) -> Any:
        """The JSON document of the rows above `last_id` up to `end_id`, as the database gives it
        (`_rows_of` reads it)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Summary:
    """The rows following an id, at most `BATCH`: how many, their weight in bytes, the last id."""

    count: int
    weight: int
    end_id: int


@dataclass
class Batch:
    """What one step of a read brought: its rows' JSON document, the rows it could not read,
    where it ended."""

    document: Any = None
    """The JSON document of its rows as the database gave it, or None for none: read by
    `_rows_of` where the rows are converted, while the next batch is asked for."""
    after: int = 0
    """The id its rows follow."""
    unread: list[tuple[int, str]] = field(default_factory=list)
    """The id of each row skipped before it could be read (its size, its nesting), and why."""
    last_id: int = 0
    """The highest id read or skipped."""
    more: bool = False
    """Whether rows may follow."""


class SiteReader:
    """Reads one site's rows, connecting when first asked and again after a failure."""

    def __init__(self, address: SiteAddress) -> None:
        self.address = address
        self._connection: _Connection | None = None

    def batch_after(self, last_id: int) -> Batch:
        """The rows with an id above `last_id`, as many as fit a batch (by count, and by weight:
        their weight is asked in sum first, each row's only where they outweigh a batch)."""
        return self._connected(lambda connection: _batch(connection, last_id))

    def one_by_one(self, batch: Batch) -> tuple[list[list[Any]], list[tuple[int, str]]]:
        """A batch's rows, each read alone, and the rows that cannot be read, with why: for a
        batch whose document cannot be read (heavier than its sizes said, from escaped control
        characters, or nesting too deep)."""
        return self._connected(lambda connection: _one_by_one(connection, batch))

    def _connected(self, read: Callable[[_Connection], _Read]) -> _Read:
        """What `read` reads through the connection; SiteError when it cannot (the connection
        is then dropped, to be made again next time)."""
        try:
            if self._connection is None:
                self._connection = _connect(self.address)
            return read(self._connection)
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


def _weight(size: int, rows: int = 1) -> int:
    """What `rows` rows of `size` bytes of text weigh in a batch's JSON, at most: each character
    escaped, and the numbers around them."""
    return 2 * size + 512 * rows


def _batch(connection: _Connection, last_id: int) -> Batch:
    following = connection.summary_after(last_id)
    budget = min(connection.limit, BATCH_BYTES)
    if following.count == 0:
        return Batch(after=last_id, last_id=last_id)
    if _weight(following.weight, following.count) <= budget:  # most batches: no row's size is needed
        end_id = following.end_id
        document = connection.rows_through(last_id, end_id)
        return Batch(document, after=last_id, last_id=end_id, more=following.count == BATCH)
    sizes = connection.sizes_after(last_id)
    if not sizes:  # gone meanwhile
        return Batch(after=last_id, last_id=last_id)
    first_id, first_size = sizes[0]
    count, weight = 1, _weight(first_size)  # the first row goes alone if heavier than a batch
    if first_size > min(connection.limit, ROW_BYTES):  # unless the server cannot send it at all
        unread = [(first_id, _too_large(connection, first_size))]
        return Batch(after=last_id, unread=unread, last_id=first_id, more=len(sizes) > 1)
    while count < len(sizes) and weight + _weight(sizes[count][1]) <= budget:
        weight += _weight(sizes[count][1])
        count += 1
    end_id = sizes[count - 1][0]
    more = len(sizes) == BATCH or count < len(sizes)
    return Batch(connection.rows_through(last_id, end_id), after=last_id, last_id=end_id, more=more)


def _one_by_one(connection: _Connection, batch: Batch) -> tuple[list[list[Any]], list[tuple[int, str]]]:
    rows, unread, after = [], list(batch.unread), batch.after
    for row_id, size in connection.sizes_after(after):  # asked again: a row deleted since is none
        if row_id > batch.last_id:
            break
        try:
            rows += _rows_of(connection.rows_through(after, row_id))
        except _Cut as cut:
            why = (
                f"its values nest more than {DEPTH} levels deep" if cut.deep else _too_large(connection, size)
            )
            unread.append((row_id, why))
        after = row_id
    return rows, unread


def _too_large(connection: _Connection, size: int) -> str:
    if connection.limit < ROW_BYTES:
        return (
            f"its {_megabytes(size)} of text are more than the server sends at once (its "
            f"`{connection.limit_name}`, {_megabytes(connection.limit)}); raise that setting to read it"
        )
    return (
        f"its {_megabytes(size)} of text are more than ai-eval-lsp reads of one row ({_megabytes(ROW_BYTES)})"
    )


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.1f} MB"


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
    waits for it on another thread, holding neither the interpreter nor the work at hand: its
    document is read (parsed) here, not there, so the database builds the next one meanwhile."""
    site = reader.address.identity
    table = reader.address.table
    pulled = Pulled(last_id=after if after is not None else store.last_site_id(site) or 0)
    ahead = _ReadAhead(reader)
    ahead.start(pulled.last_id)
    try:
        with store.site_writer(site) as write:
            while True:
                batch = ahead.result()
                pulled.last_id = max(pulled.last_id, batch.last_id)
                if batch.more:
                    ahead.start(pulled.last_id)
                try:
                    rows, unread = _rows_of(batch.document), batch.unread
                except _Cut:
                    ahead.wait()  # the connection is free once the read ahead is done
                    rows, unread = reader.one_by_one(batch)
                pulled.skipped += [
                    f"site row {row_id} of `{table}` is skipped: {why}" for row_id, why in unread
                ]
                converted = []
                for values in rows:
                    try:
                        converted.append(site_row(values))
                    except BadRow as err:
                        pulled.skipped.append(
                            f"site row {_shown(values[0], quoted=False)} of `{table}` is skipped: {err}"
                        )
                if converted:
                    write(converted)
                    pulled.stored += converted
                if not batch.more:
                    return pulled
    finally:
        ahead.wait()  # the connection is the caller's again only once no read is under way


class _ReadAhead:
    """One read of a batch at a time, on a daemon thread of its own."""

    def __init__(self, reader: SiteReader) -> None:
        self.reader = reader
        self._done = threading.Event()
        self._done.set()
        self._batch = Batch()
        self._error: BaseException | None = None

    def start(self, last_id: int) -> None:
        self.wait()
        self._done.clear()

        def read() -> None:
            try:
                self._batch, self._error = self.reader.batch_after(last_id), None
            except BaseException as err:
                self._batch, self._error = Batch(), err
            finally:
                self._done.set()

        threading.Thread(target=read, name="ai-eval site read", daemon=True).start()

    def result(self) -> Batch:
        self.wait()
        if self._error is not None:
            raise self._error
        return self._batch

    def wait(self) -> None:
        self._done.wait()


@dataclass(frozen=True, slots=True)
class SiteRun:
    """A new site row as a client is told of it: the row, its line and whether it regressed."""

    row: dict[str, Any]
    summary: str
    regressed: bool


PLACES = 9
"""Decimal places a drop in average is compared at: 3.7 - 3.2 is 0.5000000000000004 in floats,
and a drop of exactly the tolerance is no regression."""


def _regressed(previous: Mapping[str, Any] | None, row: Mapping[str, Any], tolerance: float) -> bool:
    """Whether a site run's average fell more than `tolerance` below the target's previous site
    run, as seed 003's example subscriber decides (`$drop <= TOLERANCE` is no regression)."""
    return previous is not None and round(previous["avg_score"] - row["avg_score"], PLACES) > tolerance


def announce(
    store: ResultStore, site: str, rows: Sequence[dict[str, Any]], tolerance: float
) -> list[SiteRun]:
    """Each row with its line and `regressed`: its average fell more than `tolerance` below
    the site's previous row of the same target, as seed 003's example subscriber decides. `rows`
    hold each target's rows without a gap (a pull's new rows, a history's newest), in any order:
    a row's previous one is the one before it among them, else the store's."""
    before: dict[str, dict[str, Any] | None] = {}
    told: dict[int, SiteRun] = {}
    for row in sorted(rows, key=lambda found: int(found["id"])):
        target = row["target_id"]
        previous = before[target] if target in before else store.previous_site_row(site, target, row["id"])
        before[target] = row
        fell = _regressed(previous, row, tolerance)
        told[id(row)] = SiteRun(row, site_line(row, previous, tolerance if fell else None), fell)
    return [told[id(row)] for row in rows]


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
    questions, errors = _integer(questions, "question_count"), _integer(errors, "error_count")
    if questions < 0:
        raise BadRow(f"`question_count` {questions} is negative")
    if not 0 <= errors <= questions:
        raise BadRow(f"`error_count` {errors} is not between 0 and `question_count` {questions}")
    scores, config = _json(scores, "scores_json"), _json(config, "config_json")
    _scores_within(scores)
    return (
        _integer(row_id, "id"),
        _target(target),
        None if run_id is None else _integer(run_id, "run_id"),
        _timestamp(timestamp),
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
        config,
    )


def _target(value: Any) -> str:
    if type(value) is str and value:  # what JSON gives, most often
        return value
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str | int) or isinstance(value, bool) or str(value) == "":
        raise BadRow(f"`target_id` is {_shown(value)}, not a target id")
    return str(value)


def _within(number: float | None, name: str, most: float) -> float | None:
    """A number of the row within its domain (SPEC 6): a score of 0..5, a rate of 0..1."""
    if number is not None and not 0 <= number <= most:
        raise BadRow(f"`{name}` {number:.15g} is not between 0 and {most:g}")
    return number


_OUT_OF_RANGE = re.compile(r":\s*+(?![0-4](?:\.[0-9]*+)?+[\s,}]|5(?:\.0*+)?+[\s,}]|null[\s,}])")
"""A value in a JSON object that may be a score outside 0..5: any but 0 to 4 with any decimals,
5 with zeros only, or `null` (a sign, 6 to 9, 10 and more, past 5.0, an exponent, a string, NaN,
Infinity: a string, an array or an object may hold one). Only a row with one is parsed; most
rows have none."""


def _scores_within(scores: str | None) -> None:
    """A question's score outside 0..5 makes the row unreadable (SPEC 6); `scores_json` of any
    other shape than an object leaves the row its aggregates only, as before."""
    if scores is None or _OUT_OF_RANGE.search(scores) is None:
        return
    try:
        read = loads(scores)
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
        raise BadRow(f"`{name}` is {_shown(value)}, not a number") from None
    if not math.isfinite(number):
        raise BadRow(f"`{name}` is {_shown(value)}, not a number")
    return number


def _integer(value: Any, name: str) -> int:
    """A whole number a store keeps (SQLite's are 64-bit: MariaDB's BIGINT UNSIGNED and a float
    such as 1e19 go past it)."""
    if type(value) is int:
        whole = value
    else:
        number = _number(value, name)
        if number != int(number):
            raise BadRow(f"`{name}` is {_shown(value)}, not a whole number")
        whole = int(number)
    if not -LARGEST - 1 <= whole <= LARGEST:
        raise BadRow(f"`{name}` {whole} is out of range: a results store keeps at most {LARGEST}")
    return whole


def _timestamp(value: Any) -> int:
    """A run's time, a date from 1970 to 9999 (as every reader of the store writes it)."""
    timestamp = _integer(value, "timestamp")
    if why := date_problem(timestamp):
        raise BadRow(why)
    return timestamp


def _json(value: Any, name: str) -> str | None:
    """A JSON column's text, bounded in depth: no reader of the store can be made to recurse
    without end (a text that is no JSON is read as before: the run keeps its aggregates)."""
    text = _text(value)
    if text is not None and (why := depth_problem(name, text)):
        raise BadRow(why)
    return text


def _text(value: Any) -> str | None:
    """A text field's value: a string or null, as the query reads each (a SQLite column, of any
    type, may hold a number)."""
    if value is None or type(value) is str:  # what JSON gives, most often
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _shown(value: Any, quoted: bool = True) -> str:
    """A row's value in a message, as Python writes it; an array or an object (a number column the
    site made JSON) by its kind alone, as it may nest deeper than writing it could recurse."""
    if isinstance(value, list | dict):
        return f"a JSON {'array' if isinstance(value, list) else 'object'}"
    return printable(repr(value) if quoted else str(value))


# --- the drivers ---------------------------------------------------------------------------------


def _connect(address: SiteAddress) -> _Connection:
    drivers: dict[str, Callable[[SiteAddress], _Connection]] = {
        "mysql": _MySql,
        "pgsql": _Postgres,
        "sqlite": _Sqlite,
    }
    return drivers[address.driver](address)


@dataclass(frozen=True, slots=True)
class _Dialect:
    """How a database writes what the reads ask of it."""

    quote: str
    """An identifier's quote."""
    aggregate: str
    """The JSON array of a query's rows, a template of each row's JSON."""
    array: str
    """The JSON array of some values, by name."""
    length: str
    """A value's weight in bytes, a template."""
    text: str
    """A value as text, a template: a column the site made JSON (PostgreSQL's `json`, MySQL's
    JSON) would go into a document as JSON, nested as deep as it is, not as the text it is."""
    mark: Callable[[int], str]
    """The marker of a query's n-th parameter."""


_TEXT_FIELDS = ("target_id", "scores_json", "source", "config_json")
"""The fields of a row whose weight varies: its text, read as text whatever the column's type."""


class _Queries:
    """The queries of a read: how many rows follow an id (at most `BATCH`), their weight in all
    and the last id; the ids above one and their rows' weight, asked only where those rows weigh
    more than a batch; the rows of a range of ids. The last two give one JSON document the
    database builds: a batch costs a pure-Python driver one value, not fifteen a row."""

    def __init__(self, table: str, dialect: _Dialect) -> None:
        def quoted(name: str) -> str:
            return dialect.quote + name.replace(dialect.quote, dialect.quote * 2) + dialect.quote

        key, source, mark = quoted("id"), quoted(table), dialect.mark
        fields = ", ".join(quoted(name) for name in ROW_FIELDS)
        values = ", ".join(
            dialect.text.format(quoted(name)) if name in _TEXT_FIELDS else quoted(name) for name in ROW_FIELDS
        )
        weight = " + ".join(f"COALESCE({dialect.length.format(quoted(name))}, 0)" for name in _TEXT_FIELDS)
        following = f"(SELECT {key}, {weight} AS weight FROM {source} WHERE {key} > {mark(0)} ORDER BY {key} LIMIT {BATCH})"
        self.sizes = (
            f"SELECT {dialect.aggregate.format(f'{dialect.array}({key}, weight)')} FROM {following} AS sizes"
        )
        self.summary = f"SELECT COUNT(*), SUM(weight), MAX({key}) FROM {following} AS page"
        self.rows = (
            f"SELECT {dialect.aggregate.format(f'{dialect.array}({values})')} FROM (SELECT {fields} "
            f"FROM {source} WHERE {key} > {mark(0)} AND {key} <= {mark(1)} ORDER BY {key}) AS batch"
        )


def _rows_of(document: Any) -> list[list[Any]]:
    """A JSON document of rows (None: no rows), each its values (by id: an aggregate's order is
    the database's); _Cut where the server cut it short (MariaDB ends it mid-value, or gives a
    row as null; MySQL gives none at all, which `rows_through` makes an empty text). The
    database builds it two levels deep, of the rows' values: its nesting is left to the parser
    (which stops a value nesting past its recursion, from a number column the site made JSON,
    with RecursionError), since counting it would cost a batch as much as parsing it; a row's
    JSON texts are bounded as they are converted (`site_row`)."""
    if isinstance(document, bytes):
        document = document.decode("utf-8", "replace")
    try:
        found = [] if document is None else json.loads(document)
    except RecursionError:
        raise _Cut(deep=True) from None
    except ValueError:
        raise _Cut from None
    if not isinstance(found, list) or not all(isinstance(values, list) and values for values in found):
        raise _Cut
    found.sort(key=lambda values: values[0] if type(values[0]) is int else 0)
    return found


class _Reads:
    """The reads every driver makes, through its `first_row` of a query."""

    queries: _Queries

    def first_row(self, query: str, parameters: tuple[int, ...]) -> Sequence[Any]:
        """The row an aggregate query gives (there is always one)."""
        raise NotImplementedError

    def summary_after(self, last_id: int) -> Summary:
        count, weight, end_id = self.first_row(self.queries.summary, (last_id,))
        return Summary(int(count), int(weight or 0), int(end_id or last_id))

    def sizes_after(self, last_id: int) -> list[list[int]]:
        document = _rows_of(self.first_row(self.queries.sizes, (last_id,))[0])
        return [[int(row_id), int(weight)] for row_id, weight in document]

    def rows_through(self, last_id: int, end_id: int) -> Any:
        document = self.first_row(self.queries.rows, (last_id, end_id))[0]
        return "" if document is None else document  # MySQL's null: more than max_allowed_packet


class _MySql(_Reads):
    """MySQL 5.7.22+ and MariaDB 10.5+ through PyMySQL: autocommit, so each poll sees the rows
    inserted since (a transaction left open would read one snapshot forever), a read-only
    session, room for a batch's JSON (MariaDB builds it as a GROUP_CONCAT), and batches within
    the server's `max_allowed_packet`."""

    limit_name = "max_allowed_packet"

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
            cursor.execute("SELECT @@max_allowed_packet")
            found = cursor.fetchone()
        self.limit = int(found[0]) if found else 16 * 2**20
        self.queries = _Queries(
            address.table,
            _Dialect(
                "`", "JSON_ARRAYAGG({})", "JSON_ARRAY", "LENGTH({})", "CAST({} AS CHAR)", lambda n: "%s"
            ),
        )

    def first_row(self, query: str, parameters: tuple[int, ...]) -> Sequence[Any]:
        with self.connection.cursor() as cursor:
            cursor.execute(query, parameters)
            return cursor.fetchone() or ()

    def close(self) -> None:
        self.connection.close()


class _Postgres(_Reads):
    """PostgreSQL through pg8000: the session read-only and each statement limited from the start."""

    limit = 2**30
    limit_name = "field size limit"

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
        dialect = _Dialect(
            '"',
            "json_agg({})::text",
            "json_build_array",
            "octet_length({}::text)",
            "{}::text",
            lambda n: f":p{n}",
        )
        self.queries = _Queries(address.table, dialect)

    def first_row(self, query: str, parameters: tuple[int, ...]) -> Sequence[Any]:
        found = self.connection.run(query, **{f"p{n}": value for n, value in enumerate(parameters)})
        return found[0]  # type: ignore[no-any-return]

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


class _Sqlite(_Reads):
    """A site's SQLite file, opened read-only for each query (a file replaced or removed meanwhile
    is seen at once); a query that outlives the limit is interrupted."""

    limit = 10**9
    limit_name = "SQLITE_MAX_LENGTH"

    def __init__(self, address: SiteAddress) -> None:
        self.address = address
        dialect = _Dialect(  # a column's value is never JSON to SQLite's json_array: no cast
            '"', "json_group_array({})", "json_array", "length(CAST({} AS BLOB))", "{}", lambda n: "?"
        )
        self.queries = _Queries(address.table, dialect)

    def first_row(self, query: str, parameters: tuple[int, ...]) -> Sequence[Any]:
        path = Path(self.address.database)
        try:
            mode = path.stat().st_mode
        except (OSError, ValueError):
            raise SiteError(
                f"cannot read the site's runs from {self.address}: there is no such file"
            ) from None
        if not stat.S_ISREG(mode):  # SQLite would wait on a FIFO, or take a device for a database
            raise SiteError(
                f"cannot read the site's runs from {self.address}: it is {kind_of(mode)}, not a regular file"
            )
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=TIMEOUT)
        try:
            connection.execute("PRAGMA query_only = ON")
            deadline = time.monotonic() + TIMEOUT
            connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
            return connection.execute(query, parameters).fetchone() or ()
        finally:
            connection.close()

    def close(self) -> None:
        pass  # nothing stays open between reads


# --- what went wrong, in words -------------------------------------------------------------------

_NOTHING_ANSWERS = "nothing answers there (is the database server running, and the host and port right?)"

_CAUSES: Sequence[tuple[Callable[[Exception, str], bool], Callable[[SiteAddress], str]]] = (
    (
        lambda err, text: _chained(err, socket.gaierror),
        lambda a: f"the host `{printable(a.host)}` is not known",
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
        lambda a: f"the user `{printable(a.username)}` or its password is refused",
    ),
    (
        lambda err, text: _code(err) in (1049, "3D000") or "unknown database" in text,
        lambda a: f"there is no database `{printable(a.database)}`",
    ),
    (
        # MySQL and MariaDB say the same to a user without access, whether the database exists or not
        lambda err, text: _code(err) == 1044,
        lambda a: (
            f"there is no database `{printable(a.database)}`, or the user `{printable(a.username)}` may not use it "
            "(MySQL and MariaDB do not tell which): check the name, or grant the user SELECT on its table"
        ),
    ),
    (
        lambda err, text: _code(err) in (1146, "42P01") or "no such table" in text or "doesn't exist" in text,
        lambda a: (
            f"there is no table `{printable(a.table)}`: is ai_eval installed on the site (and the table prefix right)?"
        ),
    ),
    (
        lambda err, text: _code(err) in (1142, "42501") or "denied" in text,
        lambda a: (
            f"the user `{printable(a.username)}` may not read `{printable(a.table)}`; grant it SELECT on that table"
        ),
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
    # the names a settings file gave, a server's own words: untrusted too
    return printable(f"cannot read the site's runs from {address}: {cause}")
