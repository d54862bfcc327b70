"""What a large analysis leaves goes to the collector's oldest generation at once (a young
collection would scan all of it first, ~0.5 s for a 10 MB rubric), and is still collected there."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_eval_lsp.core.analysis import analyse
from ai_eval_lsp.core.yamltree import PROMOTED_FROM, collector_paused
from ai_eval_lsp.project.project import Project

CHECKS = 10_000
RUBRIC = (
    'id: big\nversion: "1.0"\nchecks:\n'
    + "".join(f"  - id: c{i}\n    kind: regex\n    pattern: '^a+$'\n" for i in range(CHECKS))
    + "scoring: {combine: all_pass}\n"
)


@pytest.fixture
def collecting() -> Iterator[None]:
    """The collector on, as the CLI and the server run (the suite may have paused it)."""
    was = gc.isenabled()
    gc.enable()
    gc.collect()
    yield
    if not was:
        gc.disable()


def test_a_large_analysis_is_in_the_oldest_generation_as_it_ends(tmp_path: Path, collecting: None) -> None:
    found = analyse("rubric", "big.rubric.yaml", RUBRIC, Project.load(tmp_path).rules)
    oldest = {id(thing) for thing in gc.get_objects(generation=2)}
    assert found.tree is not None and found.tree.entries is not None
    checks = found.tree.entries["checks"].value.items
    assert checks is not None and len(checks) == CHECKS
    assert all(id(check) in oldest for check in checks)


class Cyclic:
    def __init__(self) -> None:
        self.me = self


def test_a_cycle_dropped_during_a_large_analysis_is_still_collected(collecting: None) -> None:
    with collector_paused():
        cycle = Cyclic()
        gone = weakref.ref(cycle)
        del cycle
        kept = [[n] for n in range(PROMOTED_FROM)]  # as many objects as a large analysis leaves
    assert gone() is not None  # promoted, not collected yet
    gc.collect()
    assert gone() is None
    assert len(kept) == PROMOTED_FROM
