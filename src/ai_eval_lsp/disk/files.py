"""Rubric and cases files on disk: the walk of a folder, name first, and the root a path belongs to.

A Drupal codebase holds tens of thousands of files, so the walk decides by name wherever it can
and reads the first bytes only of YAML files whose name leaves their role open (the modeline).
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ai_eval_lsp.core.index import YAML_SUFFIXES, Role, classify_by_name, has_modeline
from ai_eval_lsp.disk import cache, reading
from ai_eval_lsp.disk.roots import is_project_root, marker_files

SKIPPED_FOLDERS = frozenset({"vendor", "node_modules", "__pycache__", "venv"})
"""Never walked (nor hidden folders), unless a glob names them: dependencies, not the user's files."""

HEAD_BYTES = 4096


@dataclass(frozen=True, slots=True)
class FoundFile:
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
    remember: bool = True,
    rubrics_root: bool = False,
    nested: list[Path] | None = None,
) -> Iterator[FoundFile]:
    """The rubric and cases files under `below` (default: `root`), in a stable order: a folder's
    files by name, then its folders by name (unless not `recursive`); the folders in `skip` are
    left out. Paths are relative to `root`. A folder below the start that is a project root of
    its own is another project's: it is left out, and added to `nested` when that is given (None:
    the walk does not look for projects, one root holds everything). With `rubrics_root`, the root
    counts as a `rubrics` folder. With `remember`, what the walk learns of each folder is kept for
    the next walk of the root (`WalkMemory`)."""
    globs = [*rubric_globs, *cases_globs]
    skipped = {str(path) for path in skip}
    named = _named_folders(globs)
    memory = WalkMemory(root, rubric_globs, cases_globs, rubrics_root) if remember else None
    home = root.resolve()  # what the heads read must be inside of
    started = time.time_ns()
    start = below or root
    prefix = PurePosixPath(os.path.relpath(start, root)).as_posix() if below is not None else "."
    pending = [(str(start), "" if prefix == "." else prefix + "/")]
    while pending:
        folder, relative = pending.pop()
        listing = memory.recall(folder, relative, started) if memory else None
        if listing is None:
            listing = _list(folder, relative, rubric_globs, cases_globs, named, started, rubrics_root, home)
            if listing is None:
                continue  # unreadable or gone: nothing in it to check
            if memory:
                memory.learn(relative, listing)
        if nested is not None and listing.root and folder != str(start):
            nested.append(Path(folder))
            continue
        for name, role in listing.found():
            yield FoundFile(Path(folder, name), relative + name, role)
        if recursive:
            inner = (name for name in reversed(listing.folders) if os.path.join(folder, name) not in skipped)
            pending.extend((os.path.join(folder, name), f"{relative}{name}/") for name in inner)
    if memory:
        memory.save(whole=below is None and recursive)


@dataclass(slots=True)
class Listing:
    """What a walk learnt of one folder: the folders it walks into, the files whose name decides
    their role, and the YAML files whose first bytes decide it (with the stamp each was read at
    and whether it is a rubric), all sorted by name."""

    mtime: int
    """The folder's mtime when it was listed: an entry added or removed changes it."""
    listed: int
    """When the walk that listed it (or read one of its heads) began, in ns."""
    folders: list[str]
    named: list[tuple[str, Role]]
    heads: list[tuple[str, int, int, bool]]
    """(name, mtime in ns, size, has the modeline) of each file the walk read the head of."""
    markers: list[tuple[str, int, int]]
    """(name, mtime in ns, size) of each file `root` was decided by."""
    root: bool
    """Whether the folder is a project root (`roots.is_project_root`)."""

    def found(self) -> list[tuple[str, Role]]:
        return sorted([*self.named, *((name, "rubric") for name, _, _, rubric in self.heads if rubric)])


RACY_NS = 2_000_000_000
"""A folder or file changed this close to when it was listed or read may have changed again within
the same mtime tick, unseen: it is listed or read again (git's "racy" entries)."""


class WalkMemory:
    """What earlier walks of a root (with the same globs) learnt of its folders, kept in the cache
    (`$XDG_CACHE_HOME/ai-eval-lsp/walk`). A folder whose mtime has not changed is not listed
    again, and a head whose file has not changed (mtime and size) is not read again: a warm walk
    of a 30,000-file codebase stats its folders and its undecided YAML files, and opens none."""

    def __init__(
        self, root: Path, rubric_globs: Sequence[str], cases_globs: Sequence[str], rubrics_root: bool = False
    ) -> None:
        self.home = root.resolve()
        self.folder = cache.default_folder("walk")
        globs = json.dumps([list(rubric_globs), list(cases_globs), rubrics_root])
        self.entry = cache.key("walk", str(root), globs)
        stored = cache.load(self.folder, self.entry)
        self.listings: dict[str, Any] = stored if isinstance(stored, dict) else {}
        self.visited: set[str] = set()
        self.changed = False

    def recall(self, folder: str, relative: str, started: int) -> Listing | None:
        """The folder's listing when it has not changed since, its heads read again where their
        files changed; None when it must be listed."""
        self.visited.add(relative)
        stored = self.listings.get(relative)
        if not isinstance(stored, list):
            return None
        try:
            mtime, listed, folders, named, heads, markers, root = stored
            listing = Listing(
                mtime,
                listed,
                folders,
                [tuple(n) for n in named],
                [tuple(h) for h in heads],
                [tuple(m) for m in markers],
                bool(root),
            )
            now = os.stat(folder).st_mtime_ns
        except (OSError, TypeError, ValueError):
            return None
        if now != listing.mtime or now >= listing.listed - RACY_NS:
            return None
        current = [_head(folder, head, listing.listed, self.home) for head in listing.heads]
        stamps = _stamps(folder, [name for name, _, _ in listing.markers])
        if current != listing.heads or stamps != listing.markers:
            listing.heads = [head for head in current if head is not None]
            if stamps != listing.markers:
                listing.markers, listing.root = stamps, is_project_root(Path(folder))
            listing.listed = started
            self.learn(relative, listing)
        return listing

    def learn(self, relative: str, listing: Listing) -> None:
        self.visited.add(relative)
        self.listings[relative] = [
            listing.mtime,
            listing.listed,
            listing.folders,
            listing.named,
            listing.heads,
            listing.markers,
            listing.root,
        ]
        self.changed = True

    def save(self, whole: bool) -> None:
        """Store what was learnt; after a `whole` walk of the root, only the folders it visited."""
        if whole and len(self.visited) < len(self.listings):
            self.listings = {relative: self.listings[relative] for relative in self.visited}
            self.changed = True
        if self.changed:
            cache.store(self.folder, self.entry, self.listings, {})


def _head(
    folder: str, head: tuple[str, int, int, bool], listed: int, home: Path
) -> tuple[str, int, int, bool] | None:
    """A head as it is now: the stored verdict while its file is unchanged, else read again; None
    when the file is gone or no longer a file."""
    name, mtime, size, _ = head
    path = os.path.join(folder, name)
    try:
        status = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    if (status.st_mtime_ns, status.st_size) == (mtime, size) and mtime < listed - RACY_NS:
        return head
    return name, status.st_mtime_ns, status.st_size, has_modeline(head_of(Path(path), home))


def _list(
    folder: str,
    relative: str,
    rubric_globs: Sequence[str],
    cases_globs: Sequence[str],
    named_folders: frozenset[str],
    started: int,
    rubrics_root: bool,
    home: Path,
) -> Listing | None:
    """A folder listed anew: by name wherever the name decides, by the head of YAML files where
    it does not; and whether it is a project root."""
    globs = [*rubric_globs, *cases_globs]
    folders: list[str] = []
    named: list[tuple[str, Role]] = []
    heads: list[tuple[str, int, int, bool]] = []
    names: list[str] = []
    try:
        mtime = os.stat(folder).st_mtime_ns  # before listing: a change meanwhile is seen next time
        with os.scandir(folder) as scan:
            for entry in scan:
                name = entry.name
                names.append(name)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if _walked(name, named_folders):
                            folders.append(name)
                        continue
                except OSError:
                    continue
                if not globs and not name.endswith(YAML_SUFFIXES):
                    continue  # by far most files: settled by the name alone
                role = classify_by_name(relative + name, rubric_globs, cases_globs, rubrics_root)
                if role == "head":
                    try:
                        status = entry.stat()
                    except OSError:
                        continue
                    if stat.S_ISREG(status.st_mode):
                        rubric = has_modeline(head_of(Path(entry.path), home))
                        heads.append((name, status.st_mtime_ns, status.st_size, rubric))
                elif role is not None:
                    named.append((name, role))
    except OSError:
        return None
    markers = _stamps(folder, marker_files(folder, names))
    is_root = is_project_root(Path(folder), names)
    return Listing(mtime, started, sorted(folders), sorted(named), sorted(heads), markers, is_root)


def _stamps(folder: str, names: Sequence[str]) -> list[tuple[str, int, int]]:
    """(name, mtime in ns, size) of each file that still exists."""
    stamps = []
    for name in names:
        try:
            status = os.stat(os.path.join(folder, name))
        except OSError:
            continue
        stamps.append((name, status.st_mtime_ns, status.st_size))
    return stamps


def excluded(relative: str, globs: Sequence[str]) -> bool:
    """Whether the walk leaves a path out (it lies in a hidden or skipped folder no glob names)."""
    named = _named_folders(globs)
    return not all(_walked(part, named) for part in PurePosixPath(relative).parts[:-1])


def _walked(name: str, named: frozenset[str]) -> bool:
    return (not name.startswith(".") and name not in SKIPPED_FOLDERS) or name in named


def _named_folders(globs: Sequence[str]) -> frozenset[str]:
    """Folder names a glob spells out literally: those are walked even when hidden or skipped."""
    return frozenset(part for glob in globs for part in PurePosixPath(glob).parts[:-1] if "*" not in part)


def relative_to(root: Path, path: Path) -> str:
    """A path as a project names it: relative to its root, else absolute; a symbolic link by its
    own name, as the walk names it, not by where it leads."""
    absolute = Path(os.path.abspath(path))
    named = absolute.parent.resolve() / absolute.name
    try:
        return named.relative_to(root).as_posix()
    except ValueError:
        return named.as_posix()


def head_of(path: Path, home: Path) -> str:
    """The first bytes of a file, as text, for the modeline; empty when it is not read
    (`disk.reading`: a file outside `home`, a real path, or no regular file, tells nothing of
    its role)."""
    try:
        return reading.read_head(path, home, HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""
