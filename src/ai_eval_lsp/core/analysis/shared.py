"""The shared reading: a big text read once by its two readers in the server, the analysis of an
open document and the summary of its file read from disk (a folder's walk). A summary is taken
from the analysis, under way or done; an analysis that starts while the summary is read takes the
summary's tree over. The readings are kept by the rules they are read against (`Rules.readings`,
one per project), behind a lock: a reader gets the same result with or without them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from ai_eval_lsp.core.index import Role, Summary
from ai_eval_lsp.core.yamltree import Parser, ParseResult, parse

SHARED_FROM = 100_000
"""From this length on, a text's reading is shared by its two readers. When a folder opens with a
big document open, both read the same text at once: two full parses competing for the
interpreter, and two trees alive (a 10 MB rubric: ~2.5 s more to its first diagnostics and
~250 MB; a 0.9 MB one read again by the walk doubled the wait of the keystrokes typed meanwhile)."""
KEPT = 4
"""How many large texts' readings are kept for a summary to come (their texts, not their trees)."""


@dataclass(eq=False, slots=True)
class Reading:
    """A large text read: by an analysis (its `role`, `path` and `summary`), or for a summary
    (`handed` is then where its tree goes to the analysis that `claimed` it before it was done)."""

    text: str
    parser: Parser
    role: Role | None
    path: str | None
    handed: Future[ParseResult | None] | None = None
    claimed: bool = False
    summary: Future[Summary] = field(default_factory=Future)

    def tree(self) -> ParseResult | None:
        """The tree a summary's reading hands over once done with it (None: it failed)."""
        return self.handed.result() if self.handed is not None else None


class Readings:
    """The last few readings of large texts, for the reader of the same text that comes next."""

    def __init__(self) -> None:
        self.kept: list[Reading] = []
        self.lock = threading.Lock()

    def analysing(self, text: str, parser: Parser, role: Role, path: str) -> tuple[Reading, Reading | None]:
        """An analysis of a large text begins: its reading, kept for a summary to come (the
        analysis sets its `summary`), and the summary's reading under way whose tree it takes
        over (`Reading.tree`), if there is one."""
        reading = Reading(text, parser, role, path)
        with self.lock:
            summarizing = self._find(
                text, parser, lambda other: other.handed is not None and not other.claimed
            )
            if summarizing is not None:
                summarizing.claimed = True
            self._keep(reading)
        return reading, summarizing

    def summary(
        self, role: Role, path: str, text: str, parser: Parser, summarize: Callable[[ParseResult], Summary]
    ) -> Summary:
        """The summary of a large text: an analysis's of the same text and path, under way or
        done, else `summarize` of a reading of it, whose tree an analysis may take over."""
        with self.lock:
            analysed = self._find(text, parser, lambda other: (other.role, other.path) == (role, path))
            if analysed is None:
                reading = Reading(text, parser, None, None, Future())
                self._keep(reading)
        if analysed is not None:
            try:
                return analysed.summary.result()
            except Exception:  # that analysis failed: its caller is told; this reads the text anew
                return summarize(parse(text, parser))
        parsed: ParseResult | None = None
        try:
            parsed = parse(text, parser)
            return summarize(parsed)
        finally:
            with self.lock:  # done with the tree: an analysis that waits for it takes it over
                self._drop(reading)
                if reading.claimed:
                    assert reading.handed is not None
                    reading.handed.set_result(parsed)

    def _find(self, text: str, parser: Parser, wanted: Callable[[Reading], bool]) -> Reading | None:
        """The latest reading of this text that is `wanted` (the lock held)."""
        for reading in reversed(self.kept):
            if (
                reading.parser == parser
                and len(reading.text) == len(text)
                and wanted(reading)
                and reading.text == text
            ):
                return reading
        return None

    def _keep(self, reading: Reading) -> None:
        self.kept.append(reading)
        del self.kept[:-KEPT]

    def _drop(self, reading: Reading) -> None:
        if reading in self.kept:
            self.kept.remove(reading)
