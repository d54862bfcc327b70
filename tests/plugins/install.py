"""Installs the test plugins (word_count, broken) beside the environment of the Python that runs
this, in `sys.prefix`/test-plugins, where tests/conftest.py finds them and puts them on
PYTHONPATH: scripts/setup runs it for .venv, and cibuildwheel before testing each compiled wheel
(pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

PLUGINS = Path(__file__).resolve().parent
TARGET = Path(sys.prefix) / "test-plugins"

if __name__ == "__main__":
    shutil.rmtree(TARGET, ignore_errors=True)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    subprocess.run(
        [*pip, "--target", str(TARGET), str(PLUGINS / "word_count"), str(PLUGINS / "broken")], check=True
    )
