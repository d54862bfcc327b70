"""What is kept between starts, so a start in a 30,000-file codebase does not read it all again:
Drupal discovery's findings (`drupal`) and what walks learnt of each folder (`walk`). (The code
generated at a process's start, `code`, is kept by `cli/startup.py` alike, in its own format.)

An entry is keyed by the stamp (mtime and size) of every path its maker looked at: the files it
read, the files it looked for and did not find, and every folder it listed (a folder's mtime
changes when an entry is added or removed, so a new file is noticed without listing again). A
warm start stats those paths and, when none changed, returns what was stored. Entries are JSON,
one file each, written atomically; a corrupt entry or one from another format or version is
ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ai_eval_lsp import __version__

FORMAT = 1
"""Bump when what an entry stores changes meaning."""

KEPT = 200
"""Entries kept in each cache folder; older ones are removed when one is written."""

Stamp = tuple[int, int] | None
"""(mtime in ns, size) of a path, None when it does not exist."""


def stamp(path: str | os.PathLike[str]) -> Stamp:
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status.st_mtime_ns, status.st_size


def default_folder(kind: str) -> Path:
    """`$XDG_CACHE_HOME/ai-eval-lsp/<kind>`, else `~/.cache/ai-eval-lsp/<kind>`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ai-eval-lsp" / kind


def key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def load(folder: Path, entry: str) -> Any | None:
    """The payload stored under `entry` when every stamped path is unchanged, else None."""
    try:
        stored = json.loads((folder / f"{entry}.json").read_bytes())
        if stored["format"] != FORMAT or stored["version"] != __version__:
            return None
        stamps = stored["stamps"]
        if any(stamp(path) != (tuple(was) if was is not None else None) for path, was in stamps.items()):
            return None
        return stored["payload"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def store(folder: Path, entry: str, payload: Any, stamps: Mapping[str, Stamp]) -> None:
    """Write an entry atomically; a cache that cannot be written is no error, only slower."""
    document = {"format": FORMAT, "version": __version__, "stamps": dict(stamps), "payload": payload}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{entry}.", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump(document, file, separators=(",", ":"))
            os.replace(temporary, folder / f"{entry}.json")
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _prune(folder)
    except OSError:
        return


def _prune(folder: Path) -> None:
    """Keep the `KEPT` entries written last: every project ever opened (or every temporary folder
    a CI job checked) would otherwise leave one behind for good."""
    entries = sorted(folder.glob("*.json"), key=lambda path: stamp(path) or (0, 0), reverse=True)
    for old in entries[KEPT:]:
        old.unlink(missing_ok=True)
