"""A large text read by both of its readers at once (the analysis of an open document and the
summary of its file from disk, as when a folder opens with the document open) is parsed once, and
each gets what it would have got alone."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_eval_lsp.core import yamltree
from ai_eval_lsp.core.analysis import Analysis, Rules, analyse, document, shared, summary_of
from ai_eval_lsp.core.index import Role, RubricSummary
from ai_eval_lsp.core.yamltree import Parser, ParseResult
from ai_eval_lsp.project.project import Project

RUBRIC = (
    'id: tone\nversion: "1.0"\nchecks:\n'
    + "".join(
        f"  - id: c{i}\n    kind: composite\n    rubric: other\n"
        if i % 3 == 0
        else f"  - id: c{i}\n    kind: regexp\n"
        for i in range(30)
    )
    + "scoring: {combine: all_pass}\n"
)
CASES = "rubric: tone\ncases:\n" + "".join(
    f"  - id: case_{i}\n    question: {{id: q{i}, input: hi}}\n    expect: pass\n" for i in range(30)
)


class Parses:
    """Counts the parses of the shared readers; the first waits until `release` is set."""

    def __init__(self) -> None:
        self.count = 0
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, text: str, parser: Parser = "fast") -> ParseResult:
        self.count += 1
        if self.count == 1:
            self.started.set()
            assert self.release.wait(10)
        return yamltree.parse(text, parser)

    def afresh(self) -> None:
        """Count from now on, the next parse waiting again."""
        self.count = 0
        self.started.clear()
        self.release.clear()


@pytest.fixture
def rules(tmp_path: Path) -> Rules:
    return Project.load(tmp_path).rules


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[Parses]:
    counted = Parses()
    monkeypatch.setattr(document, "SHARED_FROM", 100)
    monkeypatch.setattr(document, "parse", counted)
    monkeypatch.setattr(shared, "parse", counted)
    yield counted
    counted.release.set()


def in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.setdefault("result", work()))
    thread.start()
    return thread, out


@pytest.mark.parametrize(("role", "text"), [("rubric", RUBRIC), ("cases", CASES)])
def test_a_summary_read_while_the_document_is_analysed_is_the_analysis_s(
    rules: Rules, parses: Parses, role: Role, text: str
) -> None:
    parses.release.set()
    alone = summary_of(role, "x.yaml", text, rules)
    parses.afresh()
    analysing, analysed = in_thread(lambda: analyse(role, "x.yaml", text, rules))
    assert parses.started.wait(10)
    summarizing, summarized = in_thread(lambda: summary_of(role, "x.yaml", text, rules))
    time.sleep(0.2)
    parses.release.set()
    analysing.join(10)
    summarizing.join(10)
    assert summarized["result"] == alone == analysed["result"].summary
    assert parses.count == 1
    # Done, it is still taken: the walk reaches the file after the analysis ended.
    assert summary_of(role, "x.yaml", text, rules) == alone
    assert parses.count == 1
    # Another path, another text, or another role is read anew.
    summary_of(role, "y.yaml", text, rules)
    summary_of(role, "x.yaml", text + "\n", rules)
    assert parses.count == 3


def test_an_analysis_that_starts_while_the_summary_is_read_takes_its_tree_over(
    rules: Rules, parses: Parses
) -> None:
    parses.release.set()
    alone = analyse("rubric", "x.yaml", RUBRIC, rules)
    rules.readings.kept.clear()  # that analysis's summary is not what is tested here
    parses.afresh()
    summarizing, summarized = in_thread(lambda: summary_of("rubric", "x.yaml", RUBRIC, rules))
    assert parses.started.wait(10)
    analysing, analysed = in_thread(lambda: analyse("rubric", "x.yaml", RUBRIC, rules))
    deadline = time.monotonic() + 10
    while not any(reading.claimed for reading in rules.readings.kept) and time.monotonic() < deadline:
        time.sleep(0.01)
    parses.release.set()
    analysing.join(10)
    summarizing.join(10)
    found = analysed["result"]
    assert isinstance(found, Analysis)
    assert found.problems == alone.problems
    assert found.summary == alone.summary == summarized["result"]
    assert parses.count == 1
    # Nothing keeps the tree once handed over, nor a summary's tree nobody asked for.
    assert all(reading.handed is None for reading in rules.readings.kept)
    summary_of("rubric", "y.yaml", RUBRIC, rules)
    assert all(reading.handed is None for reading in rules.readings.kept)


def test_a_summary_of_a_broken_text_is_read_alone(rules: Rules, parses: Parses) -> None:
    parses.release.set()
    broken = RUBRIC.replace("kind: regexp", "kind: [regexp", 1)
    found = analyse("rubric", "x.yaml", broken, rules)
    assert isinstance(found.summary, RubricSummary)
    assert found.summary.unreadable is not None
    assert summary_of("rubric", "x.yaml", broken, rules) == found.summary
