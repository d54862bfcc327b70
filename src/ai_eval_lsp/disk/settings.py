"""The `aiEval` settings, fully defaulted; from an editor, `ai-eval.toml` or `[tool.ai-eval]`."""

from __future__ import annotations

import difflib
import json
import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ai_eval_lsp.disk.reading import read_toml, why_not_read


class SettingsFileError(Exception):
    """A settings file that cannot be read: every setting in it would silently not apply."""


GROUPS = ("drupal", "php", "site")
"""Settings named `group.key` (`php.run`), sent nested by editors."""

CLIENT_SETTINGS = frozenset({"interpreter", "trace", "trace.server"})
"""Keys of the `aiEval` section that only the VS Code client reads."""

RESTRICTED = frozenset({"php_command", "php_run", "results_database", "site_database"})
"""What a workspace the editor does not trust may not set in its own files: how PHP starts,
whether it runs, where runs are written, and which database is read."""


def _setting(default: Any, description: str, **metadata: Any) -> Any:
    """A setting's default and what it does, in words the settings reference
    (`docs/settings.md`, written from these by `scripts/settings_reference.py`) shows users."""
    # a secret (a password in a URL) stays out of every repr, and so out of logs
    return field(
        default=default, repr=not metadata.get("secret"), metadata={"description": description, **metadata}
    )


@dataclass(frozen=True, slots=True)
class Settings:
    rubric_globs: tuple[str, ...] = _setting(
        (),
        "More rubric files, as globs relative to the project root, added to the default rules: a "
        "name ending in `.rubric.yaml` or `.rubric.yml`, a folder named `rubrics` at any depth, the "
        "`# yaml-language-server: $schema=...rubric.schema.json` modeline.",
    )
    cases_globs: tuple[str, ...] = _setting(
        (),
        "More cases files, as globs relative to the project root, added to `*.cases.yaml` and `*.cases.yml`.",
    )
    schema_fragments: tuple[str, ...] = _setting(
        (),
        "JSON files of kind definitions (a kind name to its JSON Schema), for kinds that exist only in "
        "a PHP site and that no executor declares readably: their kinds validate, and are shown as not "
        "executed unless an executor runs them.",
    )
    results_database: str = _setting(
        ".ai_eval/results.sqlite",
        "The SQLite file that stores every run (its row and every case), relative to the project root.",
    )
    export_envelope_on_complete: bool = _setting(
        False,
        'Write an "Every Eval Ever" style envelope to `.ai_eval/envelopes/` after every run (the shipped '
        "`envelope` run-complete subscriber).",
    )
    run_timeout_seconds: float = _setting(
        10.0,
        "How long one check may run before it fails with a timeout: a regex that backtracks too long, "
        "or a plugin or PHP executor that does not return.",
    )
    drupal_root: str = _setting(
        "",
        "The Drupal codebase whose modules' check executors are read, relative to the project root: its "
        "Drupal root, or the site's composer project. Empty: found on its own (`core/lib/Drupal.php`, "
        "a `composer.json` requiring `drupal/core`, or `*.info.yml` modules, in the root or `web/`, "
        "`docroot/` or composer's web root).",
    )
    drupal_site: str = _setting(
        "",
        "In a multisite codebase, the site (`sites/<site>/`) whose `settings.php` and configuration "
        "export decide which modules are installed. Empty: `default`, else the only site, else the "
        "first by name (you are told which).",
    )
    php_command: tuple[str, ...] = _setting(
        ("php",),
        "How to start PHP 8.1 or later to run the Drupal modules' check executors: `php`, a path, or a "
        'command in a container such as `["ddev", "exec", "--dir", "/var/www/html", "php"]`. PHP runs '
        "only for runs you start, never for diagnostics.",
        command=True,
    )
    php_run: bool = _setting(
        True,
        "Whether PHP check executors may run at all. Off: checks of PHP-only kinds are skipped, and the "
        "run's reason names them. Always off in a workspace the editor does not trust.",
    )
    workspace_trusted: bool = _setting(
        True,
        "Sent by the editor, not set by you: false in a workspace it does not trust (VS Code's "
        "Restricted Mode). Then the project's own settings files may not say how PHP starts, whether "
        "it runs, where runs are stored or which site database is read (the editor's values stand), "
        "and no Drupal settings file (`settings.php`) is read.",
    )
    run_on_save: str = _setting(
        "off",
        "`affected`: in an editor, saving a rubric or cases file that has no error that breaks it runs "
        "the cases files it affects (the saved cases file, or every cases file whose rubric is the "
        "saved one or reaches it through composites). `off`: saving runs nothing.",
        choices=("off", "affected"),
    )
    site_database: str = _setting(
        "",
        "The Drupal site's database, whose `ai_eval_result` rows are the site's own runs (read only, "
        "never written), as a URL as Drupal writes them: `mysql://USER:PASSWORD@HOST:PORT/DATABASE#PREFIX`, "
        "`pgsql://...`, `sqlite://localhost/PATH` (relative to the project root). The password may hold "
        "any character, as it is or percent-encoded (the user's part ends at the last `@`). A URL that "
        "cannot be read is one message saying what is wrong, and the rest of the project works on. "
        "Empty: read from the site's `settings.php`. Never shown, and taken out of all output, since it "
        "may hold a password: set it in your user settings.",
        secret=True,
    )
    site_poll_seconds: float = _setting(
        15.0,
        "How often the editor's server reads the site's new runs while a rubric or cases file of the "
        "project is open (it reads them once when the project loads). 0: only then and when asked: "
        "`aiEval.siteRuns`, which VS Code's \"AI Eval: Read the Site's Runs\" and Neovim's "
        "`:AiEvalSiteRuns` call.",
        minimum=0,
    )
    site_regression_tolerance: float = _setting(
        0.5,
        "How far a site run's average score may fall below the site's run before it (of the same "
        "target) before the run is flagged as a regression.",
        minimum=0,
    )

    @property
    def globs(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What decides which files are rubric and cases files, besides the default rules."""
        return self.rubric_globs, self.cases_globs

    def overlaid(self, editor: Settings) -> Settings:
        """These settings (a project's files') with the editor's on top, where the editor's
        differ from the defaults: an editor sends every key, defaulted, so only a value set
        there can be told from one it merely defaults. In a workspace the editor does not trust,
        the files' `RESTRICTED` values are not read."""
        defaults = Settings()
        changed = {
            f.name: getattr(editor, f.name)
            for f in fields(self)
            if getattr(editor, f.name) != getattr(defaults, f.name)
            or (not editor.workspace_trusted and f.name in RESTRICTED)
        }
        return replace(self, **changed)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> tuple[Settings, list[str]]:
        """Settings from camelCase keys, nested (`{php: {run: false}}`, as editors send dotted
        settings) or dotted (`"php.run"`); a wrong key or type is reported and its default kept."""
        problems: list[str] = []
        known = {_setting_name(f.name): f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in _flatten(raw):
            if key in CLIENT_SETTINGS:
                continue
            setting = known.get(key)
            if setting is None:
                close = difflib.get_close_matches(key, list(known), n=1)
                hint = (
                    f"did you mean `{close[0]}`?"
                    if close
                    else f"the settings are {', '.join(f'`{k}`' for k in known)}"
                )
                problems.append(f"unknown setting `{key}`; {hint}")
                continue
            converted = _convert(value, setting)
            if _holds_nul(converted):
                problems.append(
                    f"setting `{key}` holds a NUL character, which no path, command or URL can; using the default"
                )
                continue
            if converted is None:
                given = "" if setting.metadata.get("secret") else f", not {value!r}"
                problems.append(f"setting `{key}` must be {_describe(setting)}{given}; using the default")
                continue
            values[setting.name] = converted
        return replace(cls(), **values), problems

    @classmethod
    def for_root(cls, root: Path, strict: bool = False) -> tuple[Settings, list[str]]:
        """The settings of a project root, so CI sees what the editor sees: `ai-eval.toml` (for
        projects that are not Python), else the `[tool.ai-eval]` table of `pyproject.toml`. A
        file that cannot be read is a problem, and with `strict` a SettingsFileError."""
        own = root / "ai-eval.toml"
        if own.is_file() or os.path.lexists(own):  # one that is not a regular file is said
            return cls._from_toml(own, _own_table, root, strict)
        pyproject = root / "pyproject.toml"
        if os.path.lexists(pyproject):
            return cls._from_toml(pyproject, _tool_table, root, strict)
        return cls(), []

    @classmethod
    def _from_toml(
        cls,
        path: Path,
        table_of: Callable[[dict[str, Any]], tuple[Any, list[str]]],
        root: Path,
        strict: bool,
    ) -> tuple[Settings, list[str]]:
        try:
            table, problems = table_of(read_toml(path, root.resolve()))
        except OSError as err:
            why = why_not_read(err)
            if strict:
                raise SettingsFileError(
                    f"{path}: {why}; none of its settings would apply, so nothing is checked until it is fixed"
                ) from err
            return cls(), [f"{path}: {why}"]
        if not isinstance(table, dict):
            return cls(), [f"{path}: the ai-eval settings must be a table"]
        settings, more = cls.from_mapping(table)
        return settings, [f"{path}: {problem}" for problem in problems + more]


@dataclass(frozen=True, slots=True)
class Documented:
    """A setting as the settings reference shows it."""

    key: str
    """As `ai-eval.toml` writes it (`php.run`); editors put `aiEval.` before it."""
    accepts: str
    default: str
    """As TOML writes it."""
    description: str


def documented() -> list[Documented]:
    """Every setting, in the order the settings are defined, with what it accepts (in the words a
    wrong value's problem uses) and its default."""
    return [
        Documented(_setting_name(f.name), _describe(f), _toml(f.default), f.metadata["description"])
        for f in fields(Settings)
    ]


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(json.dumps(item) for item in value) + "]"
    return json.dumps(value)


def _own_table(data: dict[str, Any]) -> tuple[Any, list[str]]:
    """`ai-eval.toml` holds the settings at its top level; a `[tool.ai-eval]` copied from a
    `pyproject.toml` is read too, and said to be unneeded."""
    tool = data.get("tool")
    if isinstance(tool, dict) and set(tool) == {"ai-eval"} and isinstance(tool["ai-eval"], dict):
        rest = {key: value for key, value in data.items() if key != "tool"}
        return {**rest, **tool["ai-eval"]}, [
            "`[tool.ai-eval]` is for pyproject.toml; in ai-eval.toml the settings are at the top level "
            "(they are read all the same)"
        ]
    return data, []


def _tool_table(data: dict[str, Any]) -> tuple[Any, list[str]]:
    """The `[tool.ai-eval]` table of a `pyproject.toml`; a table named almost so is not read, and
    said so (a silently ignored setting is the worst kind)."""
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        return {}, []
    if "ai-eval" in tool:
        return tool["ai-eval"], []
    near = [name for name in tool if difflib.SequenceMatcher(None, _loose(name), "aieval").ratio() >= 0.85]
    return {}, [f"`[tool.{name}]` is not read; did you mean `[tool.ai-eval]`?" for name in near]


def _loose(name: str) -> str:
    """`ai_eval`, `aiEval` and `AI-Eval` are all `aieval`."""
    return "".join(ch for ch in name.casefold() if ch.isalnum())


def _setting_name(field_name: str) -> str:
    """`php_run` is `php.run`, `run_timeout_seconds` is `runTimeoutSeconds`."""
    group, _, rest = field_name.partition("_")
    if group in GROUPS:
        return f"{group}.{_camel(rest)}"
    return _camel(field_name)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _flatten(raw: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and name in (*GROUPS, "trace"):
            found.extend(_flatten(value, name + "."))
        else:
            found.append((name, value))
    return found


def _convert(value: Any, setting: Field[Any]) -> Any:
    default = setting.default
    if setting.metadata.get("command"):
        command = shlex.split(value) if isinstance(value, str) else value
        ok = isinstance(command, list) and command and all(isinstance(item, str) for item in command)
        return tuple(command) if ok else None
    if "choices" in setting.metadata:
        return value if value in setting.metadata["choices"] else None
    if isinstance(default, bool):
        return value if isinstance(value, bool) else None
    if isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and (value >= 0 if setting.metadata.get("minimum") == 0 else value > 0)
        return float(value) if ok else None
    if isinstance(default, tuple):
        ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
        return tuple(value) if ok else None
    return value if isinstance(value, str) else None


def _holds_nul(value: Any) -> bool:
    """Whether a setting's text holds a NUL, which no path, command or URL can."""
    return any(
        isinstance(item, str) and "\0" in item for item in (value if isinstance(value, tuple) else (value,))
    )


def _describe(setting: Field[Any]) -> str:
    default = setting.default
    if setting.metadata.get("command"):
        return "a command, as a string or a list of strings"
    if "choices" in setting.metadata:
        return " or ".join(f"`{choice}`" for choice in setting.metadata["choices"])
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, float):
        return "a number of at least 0" if setting.metadata.get("minimum") == 0 else "a positive number"
    if isinstance(default, tuple):
        return "a list of strings"
    return "a string"
