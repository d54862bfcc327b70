"""Which folder a path's project is rooted at (SPEC section 5): the markers, nearest first."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

SETTINGS_FILE = "ai-eval.toml"


def project_root(path: Path) -> Path:
    """The root a checked path belongs to (SPEC section 5): the nearest ancestor holding
    `pyproject.toml` with `[tool.ai-eval]`, `ai-eval.toml`, `composer.json` or `.git`, else the
    path's own folder. A Drupal module's own `composer.json` (type `drupal-module` and the like)
    does not make a root: the module belongs to the project around it. Neither does a marker in
    `/` or the home folder (a dotfiles `.git` in `~`): a root is walked, and those are no project."""
    start = path if path.is_dir() else path.parent
    start = start.resolve()
    for folder in (start, *start.parents):
        if too_wide(folder):
            break
        if is_project_root(folder):
            return folder
    return start


def too_wide(folder: Path) -> bool:
    """`/` and the home folder: no marker makes them a project root, and a project rooted there
    (a file right in `~`) indexes its own folder only, not everything below it."""
    try:
        home: Path | None = Path.home().resolve()
    except RuntimeError:  # no HOME and no passwd entry, as in some containers
        home = None
    return folder == Path(folder.anchor) or folder == home


def is_project_root(folder: Path) -> bool:
    if (folder / SETTINGS_FILE).is_file() or (folder / ".git").exists():
        return True
    if _composer_project(folder / "composer.json"):
        return True
    pyproject = folder / "pyproject.toml"
    if not pyproject.is_file():
        return False
    try:
        table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("ai-eval")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return table is not None


def _composer_project(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError, ValueError):
        return True  # a composer.json we cannot read still marks where a project is
    kind = data.get("type") if isinstance(data, dict) else None
    return not (isinstance(kind, str) and kind.startswith("drupal-") and kind != "drupal-project")
