"""What a process of the command does first, so that it starts in a fraction of the time it took.

- The collector is paused while the modules load (`begin`): each class and function they define
  is an object it would scan again and again (~0.1 s of a server's start); the command resumes it
  once started (`started`), with what was loaded set aside for good (`gc.freeze`).
- The code that attrs, cattrs and dataclasses generate for each class is compiled once and kept
  between starts (`CodeCache`): lsprotocol's ~550 classes took ~0.15 s to compile at every start.
  Each module's own `compile` (dataclasses': `exec`) is shadowed by one that looks the source up
  first; the code is what `compile` gives for it, keyed by the source's digest, its file name,
  mode and flags, in a file per bytecode version, read and written as Python's `.pyc` files are
  (not written under `PYTHONDONTWRITEBYTECODE`).
"""

from __future__ import annotations
import __future__

import atexit
import dataclasses
import gc
import hashlib
import marshal
import os
import sys
import tempfile
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from ai_eval_lsp.disk.cache import default_folder

Key = tuple[bytes, str, str, int]
"""The digest of a source, its file name, the mode and the flags it is compiled with."""

FILE_LIMIT = 32 << 20
"""A cache file larger than this is not read (~1.5 MB is what a server and the commands use)."""

ENTRIES_KEPT = 20_000
"""Past this many entries, the cache starts again from what the process that writes it used
(upgrades of attrs or lsprotocol leave the code of their old classes behind)."""


class CodeCache:
    """Compiled code by source, read from `path` and written back at exit when it grew."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stored = _read(path)
        self.used: dict[Key, CodeType] = {}
        self.added = 0

    def code(self, source: str, filename: str, mode: str, flags: int) -> CodeType:
        digest = hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        key = (digest, filename, mode, flags)
        code = self.stored.get(key)
        if code is None:
            code = compile(source, filename, mode, flags, dont_inherit=True)
            self.added += 1
        self.used[key] = code
        return code

    def save(self) -> None:
        """Write what was added, atomically; a cache that cannot be written is only slower."""
        if not self.added or sys.dont_write_bytecode:
            return
        kept = {**self.stored, **self.used} if len(self.stored) + self.added <= ENTRIES_KEPT else self.used
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".code.", suffix=".tmp")
            try:
                with os.fdopen(descriptor, "wb") as file:
                    marshal.dump(kept, file)
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError:
            return
        self.stored, self.added = kept, 0

    def shadow_compile(self, module: ModuleType) -> None:
        """`module`'s calls of `compile` look their source up first."""
        inherited = _future_flags(module)

        def cached(
            source: Any,
            filename: str,
            mode: str,
            flags: int = 0,
            dont_inherit: bool = False,
            optimize: int = -1,
        ) -> Any:
            flags |= 0 if dont_inherit else inherited
            if isinstance(source, str) and optimize == -1 and not sys.flags.optimize:  # -O: not cached
                return self.code(source, filename, mode, flags)
            return compile(source, filename, mode, flags, dont_inherit=True, optimize=optimize)

        module.compile = cached  # type: ignore[attr-defined]

    def shadow_exec(self, module: ModuleType) -> None:
        """`module`'s calls of `exec` with a source and its globals (as dataclasses makes each
        class's methods) look the source up first."""
        inherited = _future_flags(module)

        def cached(source: Any, globals: dict[str, Any], locals: Any = None, /) -> None:
            if isinstance(source, str):
                source = self.code(source, "<string>", "exec", inherited)
            exec(source, globals, locals)

        module.exec = cached  # type: ignore[attr-defined]


def _read(path: Path) -> dict[Key, CodeType]:
    """The cache stored at `path`; nothing if it is missing, too large or not one."""
    try:
        with path.open("rb") as file:
            data = file.read(FILE_LIMIT + 1)
        stored = marshal.loads(data) if len(data) <= FILE_LIMIT else None
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(stored, dict) or not all(isinstance(code, CodeType) for code in stored.values()):
        return {}
    return stored


def _future_flags(module: ModuleType) -> int:
    """The compiler flags of the `from __future__` imports in effect in `module`, which its own
    calls of `compile` and `exec` inherit."""
    flags = 0
    for name in __future__.all_feature_names:
        feature = getattr(__future__, name)
        if vars(module).get(name) == feature:  # the very object (`_Feature` compares by identity)
            flags |= feature.compiler_flag
    return flags


_cache: CodeCache | None = None


def begin() -> CodeCache:
    """The collector paused, and dataclasses' generated code from the cache (saved at exit)."""
    global _cache
    gc.disable()
    if _cache is None:
        _cache = CodeCache(default_folder("code") / f"{MAGIC_NUMBER.hex()}.marshal")
        _cache.shadow_exec(dataclasses)
        atexit.register(_cache.save)
    return _cache


def cache_generated_code(*modules: ModuleType) -> None:
    """These modules' generated code (attrs', cattrs') from the cache too."""
    cache = begin()
    for module in modules:
        cache.shadow_compile(module)


def started() -> None:
    """Everything loaded so far is kept for good: set aside from the collector, which resumes."""
    gc.freeze()
    gc.enable()
