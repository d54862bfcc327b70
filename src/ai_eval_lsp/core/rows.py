"""What a run's row may hold, for every reader of one (SPEC 6, "A site's rows are untrusted
input"): integers a store keeps, dates a calendar shows, and JSON read with its nesting bounded.
A site's row is checked against it as it is read, and a stored row as it is read back (a store
written before these checks may hold one that is not)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

LARGEST = 2**63 - 1
"""The largest integer a store keeps (SQLite's INTEGER is 64-bit and signed)."""
LATEST = 253_402_300_799
"""The last second a date is written with four digits (9999-12-31 23:59:59 UTC): a timestamp
of a run lies from 0 (1970) to it."""
DEPTH = 64
"""How deep a row's JSON may nest: scores and configurations nest two or three levels, and
Python's parser, recursive, stops near a thousand with an exception."""


class TooDeep(ValueError):
    """A JSON text nested deeper than `DEPTH`."""


_OUTSIDE = re.compile(r"[^\[\]{}]+")
"""What is not a bracket."""


def nesting(text: str) -> int:
    """How deep a JSON text nests, or more: never less than a parser of it would go. Strings are
    skipped as a parser reads them (escapes in pairs, from the left), by C-speed steps only: a
    batch of a site's rows is megabytes of text in strings."""
    brackets = text.count("[") + text.count("{")
    if brackets <= DEPTH:
        return brackets  # most rows: no need to look closer
    unescaped = text.replace("\\\\", "").replace('\\"', "")
    outside = _OUTSIDE.sub("", "".join(unescaped.split('"')[::2]))
    return max(accumulate(1 if bracket in "[{" else -1 for bracket in outside), default=0)


def loads(text: str | bytes) -> Any:
    """A row's JSON text read, or ValueError: not JSON, or `TooDeep`. Every row's JSON is read
    here, so no row can exhaust the parser's recursion."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if nesting(text) > DEPTH:
        raise TooDeep(f"it nests more than {DEPTH} levels deep")
    return json.loads(text)


def unreadable(row: Mapping[str, Any]) -> str | None:
    """Why a stored row cannot be shown (its timestamp has no date, its JSON nests too deep), or
    None."""
    if why := date_problem(row.get("timestamp")):
        return f"its {why}"
    for name in ("scores_json", "config_json"):
        text = row.get(name)
        if isinstance(text, str) and (why := depth_problem(name, text)):
            return f"its {why}"
    return None


def date_problem(timestamp: object) -> str | None:
    """Why a row's `timestamp` is no run's date, or None."""
    if isinstance(timestamp, int) and 0 <= timestamp <= LATEST:
        return None
    return f"`timestamp` {timestamp!r} is no date between 1970 and 9999"


def depth_problem(name: str, text: str) -> str | None:
    """Why a row's JSON column `name` cannot be read, for its depth, or None."""
    return f"`{name}` nests more than {DEPTH} levels deep" if nesting(text) > DEPTH else None
