"""Finding rubric and cases files on disk: by name first, heads read only where the name leaves
the role open, the folders users do not write skipped, and the root a checked path belongs to."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from contract import ROLE_GLOBS, ROLE_TABLE

from ai_eval_lsp.files import project_root, walk
from ai_eval_lsp.project import Project


def test_the_walk_finds_what_the_role_table_says(tmp_path: Path) -> None:
    for relative, (_, text) in ROLE_TABLE.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    found = {f.relative: f.role for f in walk(tmp_path, ROLE_GLOBS["rubricGlobs"])}
    assert found == {relative: role for relative, (role, _) in ROLE_TABLE.items() if role is not None}


def test_dependencies_and_hidden_folders_are_skipped_unless_a_glob_names_them(tmp_path: Path) -> None:
    for folder in ("vendor/acme", "node_modules/x", ".hidden", "web/core/modules/m"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "a.rubric.yaml").write_text("id: a\n")
    assert sorted(f.relative for f in walk(tmp_path)) == ["web/core/modules/m/a.rubric.yaml"]
    named = sorted(f.relative for f in walk(tmp_path, ["vendor/acme/*.rubric.yaml"]))
    assert named == ["vendor/acme/a.rubric.yaml", "web/core/modules/m/a.rubric.yaml"]


def test_only_regular_yaml_files_are_opened(tmp_path: Path) -> None:
    """A FIFO named like a YAML file would block a reader for ever: the walk never opens it."""
    os.mkfifo(tmp_path / "trap.yaml")
    os.mkfifo(tmp_path / "notes.txt")
    (tmp_path / "real.yaml").write_text("# yaml-language-server: $schema=rubric.schema.json\nid: r\n")
    started = time.monotonic()
    assert [f.relative for f in walk(tmp_path)] == ["real.yaml"]
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("marker", "content"),
    [
        ("ai-eval.toml", ""),
        ("pyproject.toml", "[tool.ai-eval]\n"),
        ("composer.json", '{"type": "project"}'),
        (".git", None),
    ],
)
def test_the_root_is_the_nearest_folder_with_a_marker(
    tmp_path: Path, marker: str, content: str | None
) -> None:
    deep = tmp_path / "project" / "a" / "b"
    deep.mkdir(parents=True)
    if content is None:
        (tmp_path / "project" / marker).mkdir()
    else:
        (tmp_path / "project" / marker).write_text(content)
    (deep / "x.rubric.yaml").write_text("")
    assert project_root(deep / "x.rubric.yaml") == (tmp_path / "project").resolve()


def test_a_drupal_modules_own_composer_json_is_no_root(tmp_path: Path) -> None:
    module = tmp_path / "site" / "web" / "modules" / "custom" / "m"
    (module / "rubrics").mkdir(parents=True)
    (tmp_path / "site" / "composer.json").write_text(json.dumps({"type": "project"}))
    (module / "composer.json").write_text(json.dumps({"type": "drupal-module"}))
    assert project_root(module / "rubrics" / "r.yaml") == (tmp_path / "site").resolve()


def test_without_a_marker_the_root_is_the_paths_own_folder(tmp_path: Path) -> None:
    (tmp_path / "loose").mkdir()
    assert project_root(tmp_path / "loose" / "r.rubric.yaml") == (tmp_path / "loose").resolve()
    assert project_root(tmp_path / "loose") == (tmp_path / "loose").resolve()


def test_a_marker_in_the_home_folder_makes_no_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dotfiles repository makes `~` hold `.git`; the whole home folder is still no project."""
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / "notes").mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert project_root(home / "notes" / "r.rubric.yaml") == (home / "notes").resolve()
    assert project_root(home / "r.rubric.yaml") == home.resolve()


def test_a_project_rooted_at_home_indexes_its_own_folder_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rubric right in `~` is checked against the rubrics beside it, not a walk of all of `~`."""
    home = tmp_path / "home"
    (home / "deep").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    rubric = (
        'id: {}\nversion: "1.0"\nchecks:\n  - {{kind: regex, pattern: x}}\nscoring: {{combine: all_pass}}\n'
    )
    (home / "near.rubric.yaml").write_text(rubric.format("near"))
    (home / "deep" / "far.rubric.yaml").write_text(rubric.format("far"))
    project = Project.load(project_root(home / "near.rubric.yaml"))
    assert sorted(project.index({}).rubrics.by_path) == ["near.rubric.yaml"]
    deep = Project.load(project_root(home / "deep" / "far.rubric.yaml"))
    assert sorted(deep.index({}).rubrics.by_path) == ["far.rubric.yaml"]
