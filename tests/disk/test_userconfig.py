"""The user's own settings file (`~/.config/ai-eval-lsp/config.toml`, `[site] database`): where it
is, what it gives, and what is wrong in it said without a value from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_eval_lsp.disk.userconfig import LIMIT, config_path, read_user_config

SECRET = "Pa55:w0rd@x"


def written(home: Path, text: str | bytes) -> dict[str, str]:
    path = home / "ai-eval-lsp" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return {"XDG_CONFIG_HOME": str(home)}


def test_the_file_is_in_xdg_config_home_else_in_dot_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "ai-eval-lsp" / "config.toml"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_path({}) == tmp_path / "home" / ".config" / "ai-eval-lsp" / "config.toml"
    assert (
        config_path({"XDG_CONFIG_HOME": ""}) == tmp_path / "home" / ".config" / "ai-eval-lsp" / "config.toml"
    )


def test_site_database_is_read_and_never_shown(tmp_path: Path) -> None:
    url = f"mysql://reader:{SECRET}@127.0.0.1:3306/shop"
    config = read_user_config(written(tmp_path, f'[site]\ndatabase = "{url}"\n'))
    assert (config.site_database, config.problems) == (url, ())
    assert SECRET not in repr(config)
    assert config.origin == f"`[site] database` in {tmp_path / 'ai-eval-lsp' / 'config.toml'}"


def test_no_file_is_no_setting_and_no_problem(tmp_path: Path) -> None:
    assert read_user_config({"XDG_CONFIG_HOME": str(tmp_path)}).site_database == ""
    assert read_user_config({"XDG_CONFIG_HOME": str(tmp_path)}).problems == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            f'[site]\ndatabase = "mysql://r:{SECRET}@h/d\n',
            "not valid TOML at line 2, column 38; its settings are not used",
        ),
        (
            f"[site]\ndatabase = {{url = '{SECRET}'}}\n",
            "`[site] database` must be a database URL in quotes; it is not used",
        ),
        (
            f'[site]\ndatabse = "{SECRET}"\n',
            "unknown setting `databse` in `[site]` (did you mean `database`?)",
        ),
        (
            f'[sites]\ndatabase = "{SECRET}"\n',
            "unknown setting `sites` (did you mean `site`?): the file holds `[site] database`",
        ),
        (f'site = "{SECRET}"\n', "`site` must be a table (`[site]`, then its keys); it is not used"),
        (
            "[site]\nx = " + "[" * 100_000 + "]" * 100_000,
            "nested too deeply to be read; its settings are not used",
        ),
        (
            b'[site]\ndatabase = "\xff"\n',
            "not UTF-8 (at byte 19); its settings are not used",
        ),
    ],
)
def test_what_is_wrong_is_said_with_the_file_and_never_a_value(
    tmp_path: Path, text: str | bytes, problem: str
) -> None:
    config = read_user_config(written(tmp_path, text))
    assert config.site_database == ""
    assert config.problems == (f"{tmp_path / 'ai-eval-lsp' / 'config.toml'}: {problem}",)
    assert SECRET not in repr(config)


def test_a_file_too_big_is_not_read(tmp_path: Path) -> None:
    config = read_user_config(written(tmp_path, "#" * (LIMIT + 1)))
    assert config.problems == (
        f"{tmp_path / 'ai-eval-lsp' / 'config.toml'}: larger than 1 MB; its settings are not used",
    )


def test_a_folder_in_its_place_is_said(tmp_path: Path) -> None:
    (tmp_path / "ai-eval-lsp" / "config.toml").mkdir(parents=True)
    (problem,) = read_user_config({"XDG_CONFIG_HOME": str(tmp_path)}).problems
    assert (
        problem
        == f"{tmp_path / 'ai-eval-lsp' / 'config.toml'}: cannot be read (Is a directory); its settings are not used"
    )
