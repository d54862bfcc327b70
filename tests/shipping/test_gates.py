"""The gates a change must pass, in the suite, so the test command (`scripts/test`, which `.ci/run`
runs) fails on them: ruff's lint and its formatter over src/, tests/ and bench/, and mypy strict
over what `pyproject.toml` gives it. The import contracts are the other gate, in
`test_architecture.py`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT

TOOLS = Path(sys.executable).parent
CODE = ["src", "tests", "bench"]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing_to_fix() -> None:
    done = run(str(TOOLS / "ruff"), "check", "--no-cache", *CODE)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_code_is_formatted_as_ruff_formats_it() -> None:
    done = run(str(TOOLS / "ruff"), "format", "--check", "--no-cache", *CODE)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_finds_no_error() -> None:
    # `files` and `strict` come from pyproject.toml's [tool.mypy], as a developer's `mypy` reads them
    done = run(str(TOOLS / "mypy"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found"), done.stdout
