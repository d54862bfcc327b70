"""The `aiEval` settings, fully defaulted; read from an editor or from `[tool.ai-eval]`."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Settings:
    rubric_globs: tuple[str, ...] = ()
    """Globs of rubric files, added to the default rules of SPEC section 2."""
    cases_globs: tuple[str, ...] = ()
    schema_fragments: tuple[str, ...] = ()
    """JSON files of kind definitions, for kinds that exist only in a PHP site."""
    results_database: str = ".ai_eval/results.sqlite"
    export_envelope_on_complete: bool = False
    run_timeout_seconds: float = 10.0

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> tuple[Settings, list[str]]:
        """Settings from camelCase keys; a wrong key or type is reported and its default kept."""
        problems: list[str] = []
        known = {_camel(f.name): f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in raw.items():
            field = known.get(key)
            if field is None:
                problems.append(
                    f"unknown setting `{key}`; the settings are {', '.join(f'`{k}`' for k in known)}"
                )
                continue
            default = getattr(cls(), field.name)
            converted = _convert(value, default)
            if converted is None:
                problems.append(
                    f"setting `{key}` must be {_describe(default)}, not {value!r}; using the default"
                )
                continue
            values[field.name] = converted
        return replace(cls(), **values), problems

    @classmethod
    def from_pyproject(cls, root: Path) -> tuple[Settings, list[str]]:
        """The `[tool.ai-eval]` table of `root/pyproject.toml`, so CI sees what the editor sees."""
        path = root / "pyproject.toml"
        if not path.is_file():
            return cls(), []
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("ai-eval", {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
            return cls(), [f"{path}: cannot be read: {err}"]
        if not isinstance(table, dict):
            return cls(), [f"{path}: `[tool.ai-eval]` must be a table"]
        settings, problems = cls.from_mapping(table)
        return settings, [f"{path}: {problem}" for problem in problems]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _convert(value: Any, default: Any) -> Any:
    if isinstance(default, bool):
        return value if isinstance(value, bool) else None
    if isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
        return float(value) if ok else None
    if isinstance(default, tuple):
        ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
        return tuple(value) if ok else None
    return value if isinstance(value, str) else None


def _describe(default: Any) -> str:
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, float):
        return "a positive number"
    if isinstance(default, tuple):
        return "a list of strings"
    return "a string"
