"""Which project a path belongs to (SPEC sections 4 and 5): the nearest folder above it holding a
project marker, as ruff gives each file its closest configuration. The CLI, the server and the
walk (which leaves nested projects to themselves) all decide here.

A marker is `ai-eval.toml`, a `pyproject.toml` with `[tool.ai-eval]`, a project's `composer.json`
(not a Drupal module's, theme's or profile's own) or `.git`. A folder holding a Drupal module's
`*.info.yml` is never a root, whatever else it holds: a module checked out with its own `.git`
stays part of its site. Neither are `/` and the home folder (a dotfiles `.git` in `~`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ai_eval_lsp.disk import reading
from ai_eval_lsp.disk.reading import read_head, read_json, read_toml

SETTINGS_FILE = "ai-eval.toml"
MARKERS = frozenset({SETTINGS_FILE, "pyproject.toml", "composer.json", ".git"})
INFO_SUFFIX = ".info.yml"
RUBRICS_FOLDER = "rubrics"

_MODULE_INFO = re.compile(r"""^type:\s*(['"]?)module\1\s*(?:#.*)?$""", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Root:
    """A project's root folder, and whether a marker made it one."""

    folder: Path
    marked: bool

    @property
    def rubrics_folder(self) -> bool:
        """A root no marker made, named `rubrics`, is a `rubrics` folder for the files in it (SPEC
        section 5); a repository cloned into a folder of that name is not all rubrics."""
        return not self.marked and self.folder.name == RUBRICS_FOLDER


def project_root(path: Path, fallback: Path | None = None) -> Root:
    """The root of a path: the nearest folder at or above it, as the path is written (links not
    followed), that `is_project_root`; else `fallback` (the folder given on the command line, the
    workspace folder), else the path's own folder (the path itself for a folder). A root a link
    leads to out of a project above it is not the path's root: that project is, and its reading
    refuses what the link leads to (SPEC 6), as its walk does."""
    start = Path(os.path.abspath(path if path.is_dir() else path.parent))
    found: Path | None = None
    for folder in (start, *start.parents):
        if too_wide(folder):
            break
        if not is_project_root(folder):
            continue
        if found is not None and reading.inside(found, folder.resolve()):
            break  # nested in this project for real: the nearest stands
        found = folder
        if os.path.realpath(folder) == os.fspath(folder):
            break  # no link on its way down, so it leaves no project above
    if found is not None:
        return Root(found.resolve(), True)
    return Root((fallback or start).resolve(), False)


def too_wide(folder: Path) -> bool:
    """`/` and the home folder: no marker makes them a project root, and a project rooted there
    (a file right in `~`) indexes its own folder only, not everything below it."""
    try:
        home: Path | None = Path.home().resolve()
    except RuntimeError:  # no HOME and no passwd entry, as in some containers
        home = None
    return folder == Path(folder.anchor) or folder == home


def is_project_root(folder: Path, names: Collection[str] | None = None) -> bool:
    """Whether a folder holds a project marker and no Drupal module. `names`, the folder's
    entries when the caller has listed it already, spares the look-ups for folders with none."""
    present = (
        MARKERS.intersection(names)
        if names is not None
        else {name for name in MARKERS if os.path.lexists(folder / name)}
    )
    if not present or too_wide(folder):
        return False
    if not (
        SETTINGS_FILE in present
        or ".git" in present
        or ("composer.json" in present and _composer_project(folder / "composer.json"))
        or ("pyproject.toml" in present and _has_settings_table(folder / "pyproject.toml"))
    ):
        return False
    if names is None:
        try:
            names = os.listdir(folder)
        except OSError:
            names = ()
    return not any(name.endswith(INFO_SUFFIX) and _is_module_info(folder / name) for name in names)


def marker_files(folder: str, names: Collection[str]) -> list[str]:
    """The files of a folder whose content `is_project_root` reads: what a cached verdict is
    stamped by (markers that count by being there change the folder's own mtime)."""
    if not MARKERS.intersection(names):
        return []
    read = {"composer.json", "pyproject.toml"}
    return sorted(name for name in names if name in read or name.endswith(INFO_SUFFIX))


def _composer_project(path: Path) -> bool:
    try:
        data = read_json(path, path.parent.resolve())
    except FileNotFoundError:
        return False
    except OSError:
        return True  # a composer.json we cannot read still marks where a project is
    kind = data.get("type") if isinstance(data, dict) else None
    return not (isinstance(kind, str) and kind.startswith("drupal-") and kind != "drupal-project")


def _has_settings_table(path: Path) -> bool:
    try:
        tool = read_toml(path, path.parent.resolve()).get("tool", {})
    except OSError:
        return False
    return isinstance(tool, dict) and "ai-eval" in tool


def _is_module_info(path: Path) -> bool:
    try:
        head = read_head(path, path.parent.resolve(), 4096).decode("utf-8", "replace")
    except OSError:
        return False
    return _MODULE_INFO.search(head) is not None
