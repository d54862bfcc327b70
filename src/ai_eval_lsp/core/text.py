"""A document's text as editors count it: lines end at `\\n`, `\\r\\n` or `\\r` only (LSP and YAML
1.2 agree; U+2028, U+2029 and NEL are ordinary characters), and columns convert between code
points and the client's position encoding (UTF-16 by default, UTF-8 or UTF-32 when negotiated).
And a text from untrusted input as a line of a terminal, a log or a message shows it (`printable`),
as Markdown shows it (`markdown`) and as a GitHub workflow command carries it (`workflow`). Each
escapes character by character, so a secret's escaped form is in the escaped form of any text
holding it: the redaction of secrets takes each form out (`drupal/secrets.py`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]

_BREAK = re.compile(r"\r\n|\r|\n")
_NEWLINE = re.compile("\n")


_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)
"""What a terminal obeys or a reader misreads: C0 and C1 controls (ESC among them), DEL, the line
and paragraph separators, the byte order mark and the bidirectional controls that reorder what
follows them (SPEC 6, "A site's rows are untrusted input")."""


def printable(text: str) -> str:
    """`text` (a site row's target, source or question id) as one line may show it: each
    character that could colour a terminal, break the line or reorder it written as Python
    writes it escaped (`\\x1b`, `\\n`, `\\u202e`), the rest as it is."""
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(lambda control: repr(control[0])[1:-1], text)


_MARKUP = re.compile(r"[\\`*_\[\]<>|~&$!#]")
"""What Markdown (GitHub's) may read as markup in a line: code, emphasis, links and images,
HTML and entities, tables, strikethrough, math; each is written with a backslash, which every
CommonMark reader takes as the character itself."""
_MENTION = "@&#8203;"
"""`@` with a zero-width space after it: GitHub reads `@name` as a mention (notifying that user)
whatever escapes it, but not with the space between."""


def markdown(text: str, code: bool = False, cell: bool = False) -> str:
    """`text` (a row's target, a case id, a reason) as Markdown shows it, literally and on one
    line (its controls as `printable` writes them), in any inline place: no link text, image,
    HTML, mention or table column can come of it (a bare URL stays one GitHub shows as itself). `code`: as a code span (in a backtick fence longer
    than any run of backticks in it); `cell`: a code span in a table cell, where a `|` is
    written `\\|` even in code."""
    shown = printable(text)
    if not code:
        return _MARKUP.sub(lambda markup: "\\" + markup[0], shown).replace("@", _MENTION)
    if cell:
        shown = in_table_cell(shown)
    fence = "`" * (max(map(len, re.findall("`+", shown)), default=0) + 1)
    padded = f" {shown} " if shown[:1] in ("`", " ") or shown[-1:] in ("`", " ") else shown
    return f"{fence}{padded}{fence}"


def in_table_cell(text: str) -> str:
    """Text inside a code span in a GFM table cell, where a `|` is written `\\|` even in code."""
    return text.replace("|", "\\|")


def workflow(text: str, field: bool = False) -> str:
    """`text` in a GitHub workflow command (`::error file=...::message`), escaped as the runner
    reads it: a message's `%`, CR and LF; a `field`'s (a property's value) `:` and `,` too."""
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return escaped.replace(":", "%3A").replace(",", "%2C") if field else escaped


def split_lines(text: str) -> list[str]:
    """The lines of a text without their breaks; a final break starts an empty last line."""
    if "\r" not in text:
        return text.split("\n")  # the common case, ten times faster than the regex
    return _BREAK.split(text)


def _line_starts(text: str, base: int = 0) -> list[int]:
    """Where each line after the first starts: each line break's end, found by the regex engine
    (a 10 MB document is indexed on the event loop when it is opened: ~40 ms, where splitting it
    into lines takes ~85)."""
    ends = map(re.Match.end, (_NEWLINE if "\r" not in text else _BREAK).finditer(text))
    return [base + end for end in ends] if base else list(ends)


def units(text: str, encoding: Encoding) -> int:
    """How many units of `encoding` a string takes."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-16":
        return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)
    return len(text.encode("utf-8", errors="surrogatepass"))


def code_points(line: str, count: int, encoding: Encoding) -> int:
    """The code-point column `count` units of `encoding` into a line; a position inside a
    character (half a surrogate pair) rounds down to its start, past the end to the end."""
    if encoding == "utf-32" or line.isascii():
        return max(0, min(count, len(line)))
    column, used = 0, 0
    for char in line:
        width = units(char, encoding)
        if used + width > count:
            break
        used += width
        column += 1
    return column


class LineIndex:
    """Where each line of a text starts, for converting positions in both directions."""

    __slots__ = ("starts", "text")

    def __init__(self, text: str, starts: list[int] | None = None) -> None:
        self.text = text
        self.starts = starts if starts is not None else [0, *_line_starts(text)]

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line(self, number: int) -> str:
        """The text of a line without its break; empty past the end."""
        if not 0 <= number < len(self.starts):
            return ""
        end = self.starts[number + 1] if number + 1 < len(self.starts) else len(self.text)
        return self.text[self.starts[number] : end].rstrip("\r\n")

    def offset(self, line: int, units_in: int, encoding: Encoding) -> int:
        """The code-point offset of a client position, clamped to the text as editors do."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        return self.starts[line] + code_points(self.line(line), units_in, encoding)

    def to_client(self, line: int, column: int, encoding: Encoding) -> tuple[int, int]:
        """A (line, code-point column) as (line, units of `encoding`)."""
        return line, units(self.line(line)[:column], encoding)

    def from_client(self, line: int, units_in: int, encoding: Encoding) -> tuple[int, int]:
        """A client (line, units) as (line, code-point column), clamped to the text."""
        if line >= len(self.starts):
            last = len(self.starts) - 1
            return last, len(self.line(last))
        return line, code_points(self.line(max(line, 0)), units_in, encoding)

    def replace(self, start: int, end: int, new_text: str) -> LineIndex:
        """The index of the text with `[start, end)` replaced, reusing what did not change."""
        text = self.text[:start] + new_text + self.text[end:]
        delta = len(new_text) - (end - start)
        first = bisect_right(self.starts, start) - 1
        # Lines from the one holding `start` to the one after `end` are scanned again; a `\r`
        # just before that boundary could pair with a `\n` after it, so that case starts over.
        after = bisect_right(self.starts, end)
        resume = self.starts[after] if after < len(self.starts) else len(self.text)
        scan_start, scan_end = self.starts[first], resume + delta
        if "\r\n" in (text[scan_end - 1 : scan_end + 1], text[scan_start - 1 : scan_start + 1]):
            return LineIndex(text)
        middle = _line_starts(text[scan_start:scan_end], scan_start)
        if after < len(self.starts):
            middle = [s for s in middle if s < scan_end]
        tail = [s + delta for s in self.starts[after:]]
        return LineIndex(text, self.starts[: first + 1] + middle + tail)
