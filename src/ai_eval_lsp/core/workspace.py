"""What a file is (rubric, cases or neither), what a rubric declares, and the index of rubrics."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath
from typing import Any, Literal

from ai_eval_lsp.core.problems import Span
from ai_eval_lsp.core.yamltree import Node

Role = Literal["rubric", "cases"]

_MODELINE = re.compile(r"#\s*yaml-language-server:\s*\$schema=\S*rubric\.schema\.json")


@cache
def _glob_regex(glob: str) -> re.Pattern[str]:
    """`**` crosses folders, `*` and `?` stay within one; a glob without `/` matches any folder."""
    if "/" not in glob:
        glob = "**/" + glob
    out, i = "", 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif glob[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return re.compile(out + r"\Z")


def matches_any(relative_path: str, globs: Iterable[str]) -> bool:
    return any(_glob_regex(glob).match(relative_path) for glob in globs)


def classify(
    relative_path: str,
    head: str,
    rubric_globs: Sequence[str] = (),
    cases_globs: Sequence[str] = (),
) -> Role | None:
    """The role of a file by SPEC section 2; `head` is its first lines, for the modeline."""
    name = PurePosixPath(relative_path).name
    if re.search(r"\.cases\.ya?ml\Z", name) or matches_any(relative_path, cases_globs):
        return "cases"
    if not re.search(r"\.ya?ml\Z", name) and not matches_any(relative_path, rubric_globs):
        return None
    if re.search(r"\.rubric\.ya?ml\Z", name) or "rubrics" in PurePosixPath(relative_path).parts[:-1]:
        return "rubric"
    if matches_any(relative_path, rubric_globs) or _has_modeline(head):
        return "rubric"
    return None


def _has_modeline(head: str) -> bool:
    for line in head.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return False
        if _MODELINE.search(stripped):
            return True
    return False


_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?(?:-([0-9A-Za-z.-]+))?\Z")


def version_key(version: str | None) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]:
    """Orders versions as semver does: a prerelease comes before its release; junk sorts first."""
    match = _VERSION.match(version or "")
    if not match:
        return (-1, -1, -1, -1, ())
    major, minor, patch, pre = match.groups()
    prerelease = tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in (pre.split(".") if pre else ())
    )
    return (int(major), int(minor), int(patch or 0), 0 if pre else 1, prerelease)


@dataclass(frozen=True, slots=True)
class CompositeRef:
    """A composite check's `rubric:` reference."""

    check_label: str
    ref: str
    span: Span


@dataclass(frozen=True, slots=True)
class RubricSummary:
    """What other files need to know of a rubric: identity, label, checks and composites."""

    path: str
    id: str | None
    version: str | None
    id_span: Span | None
    label: str | None
    check_ids: tuple[str, ...]
    composites: tuple[CompositeRef, ...]
    sources: tuple[tuple[str, str], ...] = ()
    """(check label, dot-path) of each `target_match` check: what it reads from a question."""

    @property
    def name(self) -> str:
        return f"{self.id}@{self.version}" if self.version else str(self.id)


def check_name(index: int, check: Any) -> str:
    """A check's name in messages and results: its id, or its position (`checks[3]`)."""
    check_id = check.get("id") if isinstance(check, Mapping) else None
    return check_id if isinstance(check_id, str) and check_id else f"checks[{index}]"


def summarize(path: str, root: Node | None) -> RubricSummary:
    data = root.value if root is not None and isinstance(root.value, dict) else {}
    id_entry = root.get("id") if root is not None else None
    checks = root.at(("checks",)) if root is not None else None
    check_ids: list[str] = []
    composites: list[CompositeRef] = []
    sources: list[tuple[str, str]] = []
    for index, check in enumerate(checks.items or [] if checks else []):
        value = check.value if isinstance(check.value, dict) else {}
        if isinstance(value.get("id"), str):
            check_ids.append(value["id"])
        ref = check.get("rubric")
        if value.get("kind") == "composite" and ref is not None and isinstance(ref.value.value, str):
            composites.append(CompositeRef(check_name(index, value), ref.value.value, ref.value.span))
        if value.get("kind") == "target_match" and isinstance(value.get("source"), str):
            sources.append((check_name(index, value), value["source"]))
    return RubricSummary(
        path=path,
        id=data.get("id") if isinstance(data.get("id"), str) else None,
        version=data.get("version") if isinstance(data.get("version"), str) else None,
        id_span=id_entry.value.span if id_entry else None,
        label=data.get("label") if isinstance(data.get("label"), str) else None,
        check_ids=tuple(check_ids),
        composites=tuple(composites),
        sources=tuple(sources),
    )


class RubricIndex:
    """The rubrics of a workspace by id; composite references resolve only to these."""

    def __init__(self, summaries: Iterable[RubricSummary] = ()) -> None:
        self.by_path: dict[str, RubricSummary] = {}
        for summary in summaries:
            self.by_path[summary.path] = summary

    def put(self, summary: RubricSummary) -> None:
        self.by_path[summary.path] = summary

    def remove(self, path: str) -> None:
        self.by_path.pop(path, None)

    def with_id(self, rubric_id: str) -> list[RubricSummary]:
        found = [s for s in self.by_path.values() if s.id == rubric_id]
        return sorted(found, key=lambda s: (version_key(s.version), s.path), reverse=True)

    def resolve(self, ref: str) -> RubricSummary | None:
        """`id` means its highest version, `id@version` that version."""
        rubric_id, _, version = ref.partition("@")
        candidates = self.with_id(rubric_id)
        if version:
            candidates = [s for s in candidates if s.version == version]
        return candidates[0] if candidates else None

    def duplicates(self, summary: RubricSummary) -> list[RubricSummary]:
        if summary.id is None:
            return []
        return sorted(
            (s for s in self.with_id(summary.id) if s.version == summary.version and s.path != summary.path),
            key=lambda s: s.path,
        )
