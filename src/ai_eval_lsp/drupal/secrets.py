"""The secrets this process holds (a site's password, SPEC 6 "Secrets never leave") and the one
redaction every text leaving it passes: the CLI's and the server's streams, the server's messages
to the client, stored rows, exported files. A secret is held where it is born, as a site address
is read (`site_address`); whatever raises or prints it later, it leaves as `***`."""

from __future__ import annotations

import html
import io
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO
from urllib.parse import quote, quote_plus

from ai_eval_lsp.core.text import in_table_cell, markdown, printable, workflow

MASK = "***"
SHORTEST = 4
"""Fewer characters are no secret worth garbling every line that holds them (DDEV's `db`)."""


@dataclass(frozen=True, slots=True)
class _Held:
    forms: tuple[str, ...] = ()
    """Every way a held secret may be written, longest first."""
    pattern: re.Pattern[str] | None = None
    anchors: tuple[str, ...] | None = ()
    """A part of each secret found in every form of it, or None once any secret has none (then
    every form is looked for): a text holding no anchor holds no form, found by one scan of the
    text rather than one a form (a password of punctuation has dozens of forms, and a site's
    first read is megabytes)."""

    def found_in(self, text: str) -> bool:
        """Whether `text` holds a form of a secret held."""
        if self.anchors is not None and not any(anchor in text for anchor in self.anchors):
            return False
        return any(form in text for form in self.forms)


_ALPHANUMERIC = re.compile("[A-Za-z0-9]+")


def _anchor(secret: str, forms: set[str]) -> str | None:
    """The longest run of ASCII letters and digits in `secret`, which no escaping changes, if
    each of its `forms` does hold it (checked, not assumed)."""
    anchor = max(_ALPHANUMERIC.findall(secret), key=len, default="")
    return anchor if anchor and all(anchor in form for form in forms) else None


_ESCAPES: tuple[Callable[[str], str], ...] = (
    lambda text: json.dumps(text)[1:-1],
    lambda text: json.dumps(text, ensure_ascii=False)[1:-1],
    lambda text: repr(text)[1:-1],
    html.escape,
    lambda text: html.escape(text, quote=False),
    printable,
    markdown,
    lambda text: in_table_cell(printable(text)),
    workflow,
    lambda text: workflow(text, field=True),
)
"""Every escaping a text passes on its way out, each character by character (a text's escaped
form holds its secret's): JSON, Python's repr, HTML, a terminal's line (`printable`), Markdown
(text, and a code span's inside in a table), a GitHub workflow command."""


def forms_of(secret: str) -> set[str]:
    """The ways a secret is written where it may leave: as it is, percent-encoded (upper and
    lower case), its UTF-8 bytes' repr, and each of those through any one or two of `_ESCAPES`
    (Markdown of a terminal's line, HTML of JSON): the redaction of a text is the same whichever
    format escaped it first."""
    encoded = {quote(secret, safe=""), quote(secret), quote_plus(secret)}
    encoded |= {re.sub("%[0-9A-F]{2}", lambda escape: escape[0].lower(), text) for text in encoded}
    found = {secret, *encoded}
    for _ in range(2):
        found |= {escape(text) for text in found for escape in _ESCAPES}
    found.add(repr(secret.encode("utf-8", "surrogatepass"))[2:-1])
    return {text for text in found if len(text) >= SHORTEST}


class Secrets:
    """The secrets held, and the redaction of a text. Safe to use from any thread."""

    def __init__(self) -> None:
        self._held = _Held()
        self._lock = threading.Lock()

    def hold(self, secret: str, *shown: str) -> None:
        """Keep `secret` out of every text from now on, unless it is short, or a part of what
        messages show anyway (`shown`: the site's user, database and host)."""
        if len(secret) < SHORTEST or any(secret in name for name in shown):
            return
        with self._lock:
            held, own = self._held, forms_of(secret)
            forms = set(held.forms) | own
            if len(forms) == len(held.forms):
                return
            ordered = tuple(sorted(forms, key=len, reverse=True))
            anchor = _anchor(secret, own)
            anchors = None if held.anchors is None or anchor is None else (*held.anchors, anchor)
            self._held = _Held(ordered, re.compile("|".join(map(re.escape, ordered))), anchors)

    def found_in(self, text: str) -> bool:
        """Whether `text` holds a held secret."""
        return self._held.found_in(text)

    def redact(self, text: str) -> str:
        """`text` with every held secret replaced by `***`."""
        held = self._held
        if held.pattern is None or not held.found_in(text):
            return text
        return held.pattern.sub(MASK, text)

    def redact_json(self, text: str) -> str:
        """A JSON text with every held secret replaced in its string values (never in its keys
        or structure, which a short secret could match)."""
        held = self._held
        if held.pattern is None or not held.found_in(text):
            return text

        def value(literal: re.Match[str]) -> str:
            if literal["key"] or not held.found_in(literal[0]):
                return literal[0]
            try:
                return json.dumps(self.redact(json.loads(literal[0])))
            except ValueError:  # no JSON string after all: redacted as text
                return self.redact(literal[0])

        return _STRING.sub(value, text)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"(?P<key>\s*:)?')
"""Each string of a JSON text in turn, a key's with the colon after it."""

HELD = Secrets()
"""The secrets of this process."""


def hold(secret: str, *shown: str) -> None:
    HELD.hold(secret, *shown)


def found_in(text: str) -> bool:
    return HELD.found_in(text)


def redact(text: str) -> str:
    return HELD.redact(text)


def redact_json(text: str) -> str:
    return HELD.redact_json(text)


class RedactingStream(io.TextIOBase):
    """A text stream (sys.stdout, sys.stderr) whose every line is redacted before it is written:
    a line is held until its end or a flush, so a secret printed in pieces leaves whole or not
    at all."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._pending = ""
        self._lock = threading.Lock()  # the server's threads log too

    def write(self, text: str) -> int:
        with self._lock:
            self._pending += text
            end = self._pending.rfind("\n") + 1
            if end:
                done, self._pending = self._pending[:end], self._pending[end:]
                self.stream.write(redact(done))
        return len(text)

    def flush(self) -> None:
        with self._lock:
            done, self._pending = self._pending, ""
            if done:
                self.stream.write(redact(done))
        self.stream.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self.stream.errors
