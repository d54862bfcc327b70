"""The code a process generates at start, kept between starts (`cli/startup.py`): what it gives is
what `compile` gives, with the flags of the module that asked; a later process reads it and
compiles nothing again; it is bounded, and written only where bytecode is."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

from ai_eval_lsp.cli import startup
from ai_eval_lsp.cli.startup import CodeCache


@pytest.fixture(autouse=True)
def bytecode_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a process runs without `PYTHONDONTWRITEBYTECODE` (the tests' own environment sets it)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


GENERATED = "def make(x: int) -> int:\n    return x + 1\n"


def _module(source: str) -> ModuleType:
    """A module whose functions call `compile` and `exec` as attrs and dataclasses do."""
    module = ModuleType("generating")
    exec(compile(source, "<generating>", "exec", dont_inherit=True), vars(module))
    return module


ANNOTATING = _module(
    "from __future__ import annotations\n"
    "def build(source, namespace):\n"
    "    eval(compile(source, '<generated make>', 'exec'), namespace)\n"
)
PLAIN = _module("def build(source, namespace):\n    exec(source, namespace, None)\n")


def test_the_cached_code_is_what_compile_gives_with_the_flags_of_the_module_asking(tmp_path: Path) -> None:
    cache = CodeCache(tmp_path / "code.marshal")
    cache.shadow_compile(ANNOTATING)
    cache.shadow_exec(PLAIN)
    annotated: dict[str, object] = {}
    ANNOTATING.build(GENERATED, annotated)
    plain: dict[str, object] = {}
    PLAIN.build(GENERATED, plain)
    assert annotated["make"].__annotations__ == {"x": "int", "return": "int"}  # type: ignore[attr-defined]
    assert plain["make"].__annotations__ == {"x": int, "return": int}  # type: ignore[attr-defined]
    assert plain["make"](1) == 2  # type: ignore[operator]
    assert cache.added == 2

    cache.save()
    again = CodeCache(tmp_path / "code.marshal")
    again.shadow_compile(ANNOTATING)
    namespace: dict[str, object] = {}
    ANNOTATING.build(GENERATED, namespace)
    assert again.added == 0
    assert namespace["make"].__code__ == annotated["make"].__code__  # type: ignore[attr-defined]
    assert namespace["make"].__annotations__ == {"x": "int", "return": "int"}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "stored",
    [b"", b"\x00garbage", b"\xe3\x00\x00\x00", b"{" * 10, b"]" + b"\x00" * 64],
    ids=["empty", "garbage", "cut", "nested", "not-a-dict"],
)
def test_a_file_that_is_no_cache_is_read_as_none(tmp_path: Path, stored: bytes) -> None:
    path = tmp_path / "code.marshal"
    path.write_bytes(stored)
    cache = CodeCache(path)
    assert cache.stored == {}
    cache.shadow_exec(PLAIN)
    namespace: dict[str, object] = {}
    PLAIN.build(GENERATED, namespace)
    assert namespace["make"](2) == 3  # type: ignore[operator]


def test_a_cache_past_its_bound_starts_again_from_what_was_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "code.marshal"
    first = CodeCache(path)
    first.shadow_exec(PLAIN)
    for number in range(3):
        PLAIN.build(f"x = {number}\n", {})
    first.save()
    monkeypatch.setattr(startup, "ENTRIES_KEPT", 3)
    second = CodeCache(path)
    second.shadow_exec(PLAIN)
    PLAIN.build("x = 0\n", {})
    PLAIN.build("x = 'new'\n", {})
    second.save()
    assert len(CodeCache(path).stored) == 2


def test_nothing_is_written_where_bytecode_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    cache = CodeCache(tmp_path / "code.marshal")
    cache.shadow_exec(PLAIN)
    PLAIN.build("x = 1\n", {})
    cache.save()
    assert not (tmp_path / "code.marshal").exists()


def test_the_version_is_the_installed_distributions() -> None:
    """Read from its metadata folder's name at start, as `importlib.metadata` reads it."""
    import importlib.metadata

    import ai_eval_lsp

    assert ai_eval_lsp.__version__ == importlib.metadata.version("ai-eval-lsp")
