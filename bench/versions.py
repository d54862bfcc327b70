"""Another commit's code beside this checkout's, for the benches that print both side by side: its
`src` (`git archive`) in a folder put first on PYTHONPATH, run by this checkout's environment (the
dependencies are the same); this checkout's own `src` is put first alike."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LAST_ROUND = "9633efb"
"""main when issue 37 was opened: what its figures are compared with."""


def source_of(commit: str, into: Path) -> Path:
    """The `src` folder of `commit`, written under `into`."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src"], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def environment(source: Path, cache: Path) -> dict[str, str]:
    """A process running the code of `source`, as an installed copy runs: its bytecode kept (pip
    compiles it at install), its caches in `cache`."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(source), "XDG_CACHE_HOME": str(cache)}


def builds(commit: str, scratch: Path) -> dict[str, Path]:
    """The `src` of `commit` and of this checkout, by label, in the order they are run."""
    return {commit: source_of(commit, scratch / commit), "this checkout": ROOT / "src"}
