"""Rubric and cases files on disk: the walk of a folder, name first, and the root a path belongs to.

A Drupal codebase holds tens of thousands of files, so the walk decides by name wherever it can
and reads the first bytes only of YAML files whose name leaves their role open (the modeline).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ai_eval_lsp.core.workspace import Role, classify_by_name, has_modeline

SKIPPED_FOLDERS = frozenset({"vendor", "node_modules", "__pycache__", "venv"})
"""Never walked (nor hidden folders), unless a glob names them: dependencies, not the user's files."""

HEAD_BYTES = 4096
_YAML_SUFFIXES = (".yaml", ".yml")

SETTINGS_FILE = "ai-eval.toml"


@dataclass(frozen=True, slots=True)
class Found:
    path: Path
    relative: str
    """The path relative to the walk's root, with `/`: what globs and rubric paths use."""
    role: Role


def walk(
    root: Path,
    rubric_globs: Sequence[str] = (),
    cases_globs: Sequence[str] = (),
    below: Path | None = None,
    skip: Iterable[Path] = (),
    recursive: bool = True,
) -> Iterator[Found]:
    """The rubric and cases files under `below` (default: `root`), in a stable order: a folder's
    files by name, then its folders by name (unless not `recursive`); the folders in `skip` are
    left out. Paths are relative to `root`."""
    globs = [*rubric_globs, *cases_globs]
    skipped = {str(path) for path in skip}
    named = _named_folders(globs)
    start = below or root
    prefix = PurePosixPath(os.path.relpath(start, root)).as_posix() if below is not None else "."
    pending = [(start, "" if prefix == "." else prefix + "/")]
    while pending:
        folder, relative = pending.pop()
        folders: list[tuple[str, str]] = []
        found: list[tuple[str, Role, str]] = []
        try:
            with os.scandir(folder) as scan:
                for entry in scan:
                    name = entry.name
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if _walked(name, named) and entry.path not in skipped:
                                folders.append((name, entry.path))
                            continue
                    except OSError:
                        continue
                    if not globs and not name.endswith(_YAML_SUFFIXES):
                        continue  # by far most files: settled by the name alone
                    role = classify_by_name(relative + name, rubric_globs, cases_globs)
                    if role == "head":
                        role = (
                            "rubric"
                            if _is_regular_file(entry) and has_modeline(read_head(entry.path))
                            else None
                        )
                    if role is not None:
                        found.append((name, role, entry.path))
        except OSError:
            continue  # unreadable or gone: nothing in it to check
        for name, role, path in sorted(found):
            yield Found(Path(path), relative + name, role)
        if recursive:
            pending.extend((Path(path), f"{relative}{name}/") for name, path in sorted(folders, reverse=True))


def excluded(relative: str, globs: Sequence[str]) -> bool:
    """Whether the walk leaves a path out (it lies in a hidden or skipped folder no glob names)."""
    named = _named_folders(globs)
    return not all(_walked(part, named) for part in PurePosixPath(relative).parts[:-1])


def _walked(name: str, named: frozenset[str]) -> bool:
    return (not name.startswith(".") and name not in SKIPPED_FOLDERS) or name in named


def _named_folders(globs: Sequence[str]) -> frozenset[str]:
    """Folder names a glob spells out literally: those are walked even when hidden or skipped."""
    return frozenset(part for glob in globs for part in PurePosixPath(glob).parts[:-1] if "*" not in part)


def _is_regular_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def relative_to(root: Path, path: Path) -> str:
    """A path as a project names it: relative to its root, else absolute."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def read_head(path: str | Path) -> str:
    """The first bytes of a file, as text, for the modeline; empty when it cannot be read."""
    try:
        with open(path, "rb") as file:
            return file.read(HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


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
