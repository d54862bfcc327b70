r"""Every example command the docs show runs, and prints what they show.

The convention (docs/development.md, "Examples in the docs"): a ```console block whose `title`
names the place its commands run in; each `$ ` line is a command, the lines after it what it
prints (stdout and stderr, as a terminal shows them). An output line `...` stands for any lines,
and `...` inside a line for any text (a date, a path); a line ending in ` \` goes on in the next,
whose indentation is dropped (long lines wrapped for the page). The commands of a
block run in turn in one fresh copy of its place, so a block can run cases and then show their
history. What cannot run here (installs, editors, a watch that never ends) goes in ```sh blocks,
which are shown and not run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, without_test_plugins

# they start PHP (the example's word_count) and many commands
pytestmark = pytest.mark.slow

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(
    r"^(?P<indent> *)```console(?P<attributes>[^\n]*)\n(?P<body>.*?)^(?P=indent)```$", re.M | re.S
)
TITLE = re.compile(r'title="(?P<title>[^"]+)"')
EXAMPLE = ROOT / "examples" / "drupal-site"


def example_site(into: Path) -> Path:
    shutil.copytree(EXAMPLE, into, ignore=shutil.ignore_patterns(".ai_eval"))
    return into


PLACES: dict[str, Callable[[Path], Path]] = {
    "examples/drupal-site": example_site,
}
"""Where a block's commands run, by the title the block shows its reader."""


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    place: str
    steps: list[tuple[str, list[str]]]
    """Each command, and the lines it shows it printing."""

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            title = TITLE.search(match["attributes"])
            place = title["title"] if title else ""
            steps: list[tuple[str, list[str]]] = []
            body = re.sub(r" \\\n *", " ", match["body"])  # a wrapped line: one line
            for shown in body.splitlines():
                shown = shown.removeprefix(match["indent"])
                if shown.startswith("$ "):
                    steps.append((shown.removeprefix("$ "), []))
                else:
                    assert steps, f"{page.name}:{line}: a console block starts with a `$ ` command"
                    steps[-1][1].append(shown)
            found.append(Block(page, line, place, steps))
    return found


def matches(printed: str, shown: list[str]) -> bool:
    pattern = "".join(
        r"(?:.*\n)*?" if line == "..." else ".*".join(map(re.escape, line.split("..."))) + r"\n"
        for line in shown
    )
    return re.fullmatch(pattern, printed) is not None


def test_the_docs_show_commands_and_every_block_says_where_it_runs() -> None:
    found = blocks()
    assert len(found) > 10
    assert {str(block): block.place for block in found if block.place not in PLACES} == {}


@pytest.mark.parametrize("block", blocks(), ids=str)
def test_every_command_shown_prints_what_the_docs_show(block: Block, tmp_path: Path) -> None:
    folder = PLACES[block.place](tmp_path / "place")
    environ = without_test_plugins()
    environ.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{environ['PATH']}",
        HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        PYTHONUNBUFFERED="1",  # stdout and stderr in the order a terminal shows them
        COLUMNS="100",  # `--help` wraps as in a terminal this wide
    )
    for command, shown in block.steps:
        done = subprocess.run(
            command,
            shell=True,
            cwd=folder,
            env=environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=300,
        )
        assert "Traceback (most recent call last)" not in done.stdout, done.stdout
        if not matches(done.stdout, shown):
            assert done.stdout.splitlines() == shown, f"{block}: `$ {command}`"
