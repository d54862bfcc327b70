"""The layers ARCHITECTURE.md draws, kept by import-linter's contracts in `pyproject.toml`: a
folder is a layer, imports point down only, no cycles, server features never import each other
(function-level and type-checking imports count)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_the_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
