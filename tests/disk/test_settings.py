"""The `aiEval` settings as editors send them (nested, for dotted keys) and as projects write them
(`ai-eval.toml`, `[tool.ai-eval]`): fully defaulted, every mistake reported with the closest key."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
from conftest import ROOT

from ai_eval_lsp.disk.settings import CLIENT_SETTINGS, RESTRICTED, Settings, _setting_name


def test_editors_send_dotted_settings_nested() -> None:
    settings, problems = Settings.from_mapping(
        {
            "drupal": {"root": "web"},
            "php": {"command": ["ddev", "exec", "php"], "run": False},
            "interpreter": "x",
        }
    )
    assert (settings.drupal_root, settings.php_command, settings.php_run) == (
        "web",
        ("ddev", "exec", "php"),
        False,
    )
    assert problems == []  # `interpreter` belongs to the VS Code client


def test_a_command_may_be_one_string() -> None:
    settings, _ = Settings.from_mapping({"php.command": "ddev exec --dir /var/www/html php"})
    assert settings.php_command == ("ddev", "exec", "--dir", "/var/www/html", "php")


def test_mistakes_keep_the_default_and_say_what_was_meant() -> None:
    settings, problems = Settings.from_mapping(
        {"rubricGlob": ["x"], "php": {"command": []}, "runTimeoutSeconds": -1}
    )
    assert settings == Settings()
    assert problems == [
        "unknown setting `rubricGlob`; did you mean `rubricGlobs`?",
        "setting `php.command` must be a command, as a string or a list of strings, not []; using the default",
        "setting `runTimeoutSeconds` must be a positive number, not -1; using the default",
    ]


def test_ai_eval_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ai-eval]\nrunTimeoutSeconds = 2\n")
    (tmp_path / "ai-eval.toml").write_text(
        'runTimeoutSeconds = 3\ndrupal.root = "docroot"\nphp.run = false\n'
    )
    settings, problems = Settings.for_root(tmp_path)
    assert (settings.run_timeout_seconds, settings.drupal_root, settings.php_run) == (3.0, "docroot", False)
    assert problems == []
    (tmp_path / "ai-eval.toml").unlink()
    assert Settings.for_root(tmp_path)[0].run_timeout_seconds == 2.0


def test_a_broken_settings_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "ai-eval.toml").write_text("runTimeoutSeconds = \n")
    settings, (problem,) = Settings.for_root(tmp_path)
    assert settings == Settings() and problem.startswith(f"{tmp_path / 'ai-eval.toml'}: cannot be read:")


@pytest.mark.parametrize("table", ["ai_eval", "aiEval", "ai-evals"])
def test_a_pyproject_table_named_almost_right_is_reported(tmp_path: Path, table: str) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.ruff]\nline-length = 100\n\n[tool.{table}]\nrunTimeoutSeconds = 2\n"
    )
    settings, problems = Settings.for_root(tmp_path)
    assert settings == Settings()
    assert problems == [
        f"{tmp_path / 'pyproject.toml'}: `[tool.{table}]` is not read; did you mean `[tool.ai-eval]`?"
    ]


def test_a_tool_table_copied_into_ai_eval_toml_is_read_and_said_to_be_unneeded(tmp_path: Path) -> None:
    (tmp_path / "ai-eval.toml").write_text('[tool.ai-eval]\nrunTimeoutSeconds = 2\nrubricGlob = ["x"]\n')
    settings, problems = Settings.for_root(tmp_path)
    assert settings.run_timeout_seconds == 2.0
    assert problems == [
        f"{tmp_path / 'ai-eval.toml'}: `[tool.ai-eval]` is for pyproject.toml; in ai-eval.toml the settings "
        "are at the top level (they are read all the same)",
        f"{tmp_path / 'ai-eval.toml'}: unknown setting `rubricGlob`; did you mean `rubricGlobs`?",
    ]


def test_run_on_save_is_off_unless_set_to_affected_in_the_editor_or_the_project(tmp_path: Path) -> None:
    assert Settings().run_on_save == "off"
    assert Settings.from_mapping({"runOnSave": "affected"}) == (Settings(run_on_save="affected"), [])
    settings, problems = Settings.from_mapping({"runOnSave": "all"})
    assert settings.run_on_save == "off"
    assert problems == ["setting `runOnSave` must be `off` or `affected`, not 'all'; using the default"]
    (tmp_path / "ai-eval.toml").write_text('runOnSave = "affected"\n')
    assert Settings.for_root(tmp_path) == (Settings(run_on_save="affected"), [])


def test_vs_code_declares_every_setting_with_the_server_s_default_and_restricts_the_same() -> None:
    """VS Code sends the settings package.json declares, defaulted as declared: each is the
    server's, defaulted alike; and what Restricted Mode ignores in a workspace's own settings is
    what the server ignores in its files."""
    manifest = json.loads((ROOT / "vscode-extension" / "package.json").read_text())
    declared = {
        key.removeprefix("aiEval."): setting["default"]
        for key, setting in manifest["contributes"]["configuration"]["properties"].items()
    }
    served = {key: value for key, value in declared.items() if key not in CLIENT_SETTINGS}
    server = {_setting_name(f.name) for f in fields(Settings)} - {"workspaceTrusted"}
    assert set(served) == server
    assert Settings.from_mapping(served) == (Settings(), [])
    restricted = {
        key.removeprefix("aiEval.")
        for key in manifest["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]
    }
    assert restricted - CLIENT_SETTINGS == {_setting_name(name) for name in RESTRICTED}
