"""The user's own settings file, `$XDG_CONFIG_HOME/ai-eval-lsp/config.toml` (else
`~/.config/ai-eval-lsp/config.toml`): what belongs to the user and never to a repository, the site
database's password first. Read by the CLI and the server alike, in any workspace; a value in it
is never repeated in a message."""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LIMIT = 1 << 20
"""Bytes read of the file at most: a settings file is small."""

KEYS = {"site": ("database",)}
"""Each table of the file and its keys."""


@dataclass(frozen=True, slots=True)
class UserConfig:
    path: Path
    site_database: str = field(default="", repr=False)
    """`[site] database`: the site's database URL, password included."""
    problems: tuple[str, ...] = ()
    """What is wrong in the file, each naming it; never a value."""

    @property
    def origin(self) -> str:
        """How messages name the site database it gives."""
        return f"`[site] database` in {self.path}"


def config_path(environment: Mapping[str, str]) -> Path:
    """`$XDG_CONFIG_HOME/ai-eval-lsp/config.toml`, else `~/.config/ai-eval-lsp/config.toml`."""
    base = environment.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ai-eval-lsp" / "config.toml"


def read_user_config(environment: Mapping[str, str] | None = None) -> UserConfig:
    """The user's settings file; none (every value empty) when there is no such file."""
    path = config_path(os.environ if environment is None else environment)
    try:
        with path.open("rb") as file:
            data = file.read(LIMIT + 1)
    except FileNotFoundError:
        return UserConfig(path)
    except OSError as err:
        return UserConfig(
            path, problems=(f"{path}: cannot be read ({err.strerror}); its settings are not used",)
        )
    if len(data) > LIMIT:
        return UserConfig(
            path, problems=(f"{path}: larger than {LIMIT >> 20} MB; its settings are not used",)
        )
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as err:  # its message would show a byte, maybe of the password
        return UserConfig(
            path, problems=(f"{path}: not UTF-8 (at byte {err.start}); its settings are not used",)
        )
    except RecursionError:
        return UserConfig(
            path, problems=(f"{path}: nested too deeply to be read; its settings are not used",)
        )
    except tomllib.TOMLDecodeError as err:  # where only: tomllib's message may quote a character
        where = re.search(r"\(at ([^)]*)\)$", str(err))
        at = f" at {where[1]}" if where else ""
        return UserConfig(path, problems=(f"{path}: not valid TOML{at}; its settings are not used",))
    problems = [f"{path}: {problem}" for problem in _unknown(document)]
    site = document.get("site")
    database = site.get("database", "") if isinstance(site, dict) else ""
    if not isinstance(database, str):
        problems.append(f"{path}: `[site] database` must be a database URL in quotes; it is not used")
        database = ""
    return UserConfig(path, database.strip(), tuple(problems))


def _unknown(document: Mapping[str, Any]) -> list[str]:
    """A problem for each table or key the file does not know (a mistyped name is no silent default)."""
    found = []
    for table, value in document.items():
        if table not in KEYS:
            found.append(
                f"unknown setting `{table}`{_hint(table, list(KEYS))}: the file holds `[site] database`"
            )
            continue
        if not isinstance(value, dict):
            found.append(f"`{table}` must be a table (`[{table}]`, then its keys); it is not used")
            continue
        found += [
            f"unknown setting `{key}` in `[{table}]`{_hint(key, list(KEYS[table]))}"
            for key in value
            if key not in KEYS[table]
        ]
    return found


def _hint(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean `{close[0]}`?)" if close else ""
