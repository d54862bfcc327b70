"""A repository's files, read as untrusted input (SPEC 6): every file ai-eval-lsp reads from a
project (rubrics, cases files, settings files, a codebase's YAML, PHP and JSON) is read here.

A file is read when it is a regular file (never a FIFO, a device or a socket, which could block or
never end: `stat` says so before it is opened, and the descriptor again, opened without blocking)
whose real path (links and `..` resolved) is inside the folder it must stay in, `home`, up to a
size limit. `home` is a real path (`Path.resolve()`), resolved once by the caller. The real path
of a file opened is the system's (one call); a path written outside `home`, or a link leading out
of it, is refused by `os.path.realpath` whatever is there, so no answer tells whether a file
outside exists. Anything refused raises `Refused`, an `OSError` saying why, so every caller that
already handles a file it cannot read handles these too; `Skipped` is that said once, as a note.
`read_json` and `read_toml` parse what is read, and a text that is not what it must be (invalid,
not UTF-8, nested past what the parser can follow) is an `Unreadable`, an `OSError` too.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

T = TypeVar("T")

MB = 1024 * 1024
YAML_LIMIT = 50 * MB
"""Rubrics and cases files: a generated cases file of recorded responses can be big."""
FILE_LIMIT = 1 * MB
"""Every other file: settings, `composer.json`, a module's YAML and PHP, schema fragments, `.env`."""

_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
)
_OUTSIDE = (
    "it is outside the project (a symbolic link or `..` leads out of it), and only files inside the project "
    "are read"
)
_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


class Refused(OSError):
    """A file that is not read, and why: outside its folder, not a regular file, or too big."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason
        self.strerror = reason  # what callers that say an OSError's `strerror` say

    def __str__(self) -> str:
        return f"{self.path}: not read: {self.reason}"


class Unreadable(OSError):
    """A file read whose text cannot be used: not UTF-8, not valid JSON or TOML, nested too deeply."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.strerror = reason

    def __str__(self) -> str:
        return f"{self.path}: cannot be read: {self.strerror}"


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file left out because it could not or may not be read: the note that says so."""

    path: Path
    """As the caller named it (a symbolic link's own path, never where it leads)."""
    why: str

    @classmethod
    def of(cls, path: Path, error: OSError) -> Skipped:
        return cls(path, why_not_read(error))


def why_not_read(error: OSError) -> str:
    """ "not read: " and why, for a file refused; "cannot be read: " and why, for one that failed."""
    if isinstance(error, Refused):
        return f"not read: {error.reason}"
    return f"cannot be read: {error.strerror or error}"


def read_file(path: Path, home: Path, limit: int = FILE_LIMIT) -> bytes:
    """The bytes of a regular file whose real path is inside `home`, of at most `limit` bytes;
    `Refused` (an OSError) when it may not be read, another OSError when it cannot."""
    with _opened(path, home) as file:
        size = os.fstat(file.fileno()).st_size
        if size > limit:
            raise Refused(path, _too_big(size, limit))
        data = file.read(size + 1)  # not `limit + 1`: a read allocates what it is asked for first
        if len(data) > size:  # it grew since: read on, up to the limit
            data += file.read(limit + 1 - len(data))
    if len(data) > limit:
        raise Refused(path, _too_big(len(data), limit))
    return data


def read_json(path: Path, home: Path) -> Any:
    """The JSON value of a file `read_file` reads; `Unreadable` when its text is not one."""
    return _parsed(path, read_file(path, home), json.loads)


def read_toml(path: Path, home: Path) -> dict[str, Any]:
    """The TOML document of a file `read_file` reads; `Unreadable` when its text is not one."""
    return _parsed(path, read_file(path, home), lambda data: tomllib.loads(data.decode("utf-8")))


def _parsed(path: Path, data: bytes, parse: Callable[[bytes], T]) -> T:
    """What `parse` makes of a file's bytes; whatever it raises (a parser's error, a nesting
    deeper than Python's stack) is the file's `Unreadable`, never the caller's crash."""
    try:
        return parse(data)
    except RecursionError:
        raise Unreadable(path, "it is nested too deeply to be read") from None
    except ValueError as err:  # a decoding error, JSON's and TOML's alike
        raise Unreadable(path, str(err)) from None


def read_head(path: Path, home: Path, size: int) -> bytes:
    """The first `size` bytes of a file `read_file` would read, whatever its size."""
    with _opened(path, home) as file:
        return file.read(size)


def exists(path: Path, home: Path) -> bool:
    """Whether something is at a path (what PHP's `file_exists()` asks): `Refused` for a path
    outside `home`, which is never looked at; a symbolic link leading out is there (it is the
    project's), though `read_file` refuses it."""
    _named(path)
    if not within(os.path.abspath(path), home) and not inside(path, home):
        raise Refused(path, "it is outside the project, and only the project's files are looked at")
    return os.path.exists(path) if inside(path, home) else os.path.lexists(path)


def inside(path: Path, home: Path) -> bool:
    """Whether a path's real path (symbolic links and `..` resolved) is inside `home`."""
    return within(os.path.realpath(path), home)


def within(path: str | Path, home: Path) -> bool:
    """Whether an absolute path is `home` or below it, as written (no link resolved)."""
    folder, found = os.path.normcase(os.fspath(home)), os.path.normcase(os.fspath(path))
    return found == folder or found.startswith(folder.rstrip(os.sep) + os.sep)


def _inside(path: Path, home: Path) -> None:
    """`Refused` when a path's real path is not inside `home`."""
    if not within(os.path.realpath(path), home):
        raise Refused(path, _OUTSIDE)


def _named(path: Path) -> None:
    """`Refused` for a name no file can have (the system would raise a ValueError)."""
    if "\0" in os.fspath(path):
        raise Refused(path, "its name holds a NUL character, which no file's name can")


def _opened(path: Path, home: Path) -> BinaryIO:
    _named(path)
    if not within(os.path.abspath(path), home):
        _inside(path, home)  # written outside, or through a link: its real path decides
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):  # never opened: opening a device can act
            _inside(path, home)  # outside, whatever it is, is said first
            _refuse_special(path, mode)
        descriptor = os.open(path, _OPEN_FLAGS)  # never waits for a FIFO's writer
    except Refused:
        raise
    except OSError:
        _inside(path, home)  # a link leading out is said so whether or not anything is there
        raise
    try:
        if not within(_real_path(descriptor, path), home):
            raise Refused(path, _OUTSIDE)
        _refuse_special(path, os.fstat(descriptor).st_mode)  # it may have been replaced meanwhile
        return open(descriptor, "rb")  # buffered: `read(n)` reads until n bytes or the end
    except BaseException:
        os.close(descriptor)
        raise


def _real_path(descriptor: int, path: Path) -> str:
    """The real path of an open file, as the system has it (one call; `os.path.realpath` looks at
    each folder of the path in turn, the most of what reading a small file costs)."""
    try:
        if sys.platform == "linux":
            return os.readlink(f"/proc/self/fd/{descriptor}")
        if sys.platform == "darwin":
            import fcntl

            found = fcntl.fcntl(descriptor, fcntl.F_GETPATH, bytes(1024))  # type: ignore[attr-defined]
            return os.fsdecode(found.rstrip(b"\0"))
    except OSError:
        pass  # no /proc: as everywhere else
    return os.path.realpath(path)


def _refuse_special(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise Refused(path, f"it is {kind_of(mode)}, not a regular file, and only regular files are read")


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in words: "a named pipe (FIFO)", "a device"."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _too_big(size: int, limit: int) -> str:
    what = "rubric and cases files" if limit == YAML_LIMIT else "this kind of file"
    return f"it is {_megabytes(size)}, over the {_megabytes(limit)} limit for {what}"


def _megabytes(size: int) -> str:
    return f"{size / MB:.1f} MB" if size % MB else f"{size // MB} MB"
