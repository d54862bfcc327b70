"""Rubric references, `id` or `id@version`: the one place that builds and splits them, and the
version grammar, read from the shipped rubric schema so that the code and the schema agree."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ai_eval_lsp.core.schema import core_schema

VERSION_PATTERN: str = core_schema()["properties"]["version"]["pattern"]
"""A rubric version as the schema says (`MAJOR.MINOR[.PATCH][-prerelease]`), anchored."""
_VERSION = re.compile(VERSION_PATTERN)

VersionKey = tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]


@dataclass(frozen=True, slots=True)
class RubricRef:
    """A reference to a rubric: an id, and a version when it is pinned."""

    id: str
    version: str | None = None

    def __str__(self) -> str:
        return format_ref(self.id, self.version)


def parse_ref(text: str) -> RubricRef:
    """`id` or `id@version`, split at the first `@`; an empty version pins nothing."""
    rubric_id, _, version = text.partition("@")
    return RubricRef(rubric_id, version or None)


def format_ref(rubric_id: str, version: str | None) -> str:
    """`id@version`, or the bare id when there is no version."""
    return f"{rubric_id}@{version}" if version else rubric_id


def is_version(text: str) -> bool:
    return _VERSION.match(text) is not None


def version_key(version: str | None) -> VersionKey:
    """Orders versions as semver does: a prerelease comes before its release; junk sorts first."""
    if version is None or not is_version(version):
        return (-1, -1, -1, -1, ())
    release, _, pre = version.partition("-")
    major, minor, patch = [*release.split("."), "0"][:3]
    prerelease = tuple((0, int(part)) if part.isdigit() else (1, part) for part in pre.split(".") if pre)
    return (int(major), int(minor), int(patch), 0 if pre else 1, prerelease)
