"""Shared helpers: the fixture folders and a loaded project over them."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

from ai_eval_lsp.project import Project

# CI replays the same examples every run, so a green build stays green; local runs explore.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

FIXTURES = Path(__file__).parent / "fixtures"
EXPECT = re.compile(
    r"# expect: (?P<code>\S+) (?P<sl>\d+):(?P<sc>\d+)-(?P<el>\d+):(?P<ec>\d+) ?(?P<fragment>.*)"
)


@dataclass(frozen=True)
class Expected:
    """A problem a fixture declares in its `# expect:` lines: 1-based, as `check` prints."""

    code: str
    start: tuple[int, int]
    end: tuple[int, int]
    fragment: str


def expectations(path: Path) -> list[Expected]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = EXPECT.match(line)
        if match:
            found.append(
                Expected(
                    match["code"],
                    (int(match["sl"]), int(match["sc"])),
                    (int(match["el"]), int(match["ec"])),
                    match["fragment"],
                )
            )
    return found


@pytest.fixture(scope="session")
def project() -> Project:
    """The fixtures folder as a workspace, with the plugins installed in this environment."""
    return Project.load(FIXTURES)
