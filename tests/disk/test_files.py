"""Finding rubric and cases files on disk: by name first, heads read only where the name leaves
the role open, the folders users do not write skipped, and the root a checked path belongs to."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import lay_out_roots
from contract import ROLE_GLOBS, ROLE_TABLE

from ai_eval_lsp.disk.files import walk
from ai_eval_lsp.disk.roots import project_root
from ai_eval_lsp.project.project import Project


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
    assert project_root(deep / "x.rubric.yaml").folder == (tmp_path / "project").resolve()


def test_the_roots_table_holds_for_the_cli_and_the_server(tmp_path: Path) -> None:
    for path, expected in lay_out_roots(tmp_path).items():
        found = project_root(path)
        assert (found.folder, found.marked) == ((expected, True) if expected else (path.parent, False)), path


def test_a_drupal_modules_own_composer_json_is_no_root(tmp_path: Path) -> None:
    module = tmp_path / "site" / "web" / "modules" / "custom" / "m"
    (module / "rubrics").mkdir(parents=True)
    (tmp_path / "site" / "composer.json").write_text(json.dumps({"type": "project"}))
    (module / "composer.json").write_text(json.dumps({"type": "drupal-module"}))
    assert project_root(module / "rubrics" / "r.yaml").folder == (tmp_path / "site").resolve()


def test_without_a_marker_the_root_is_the_paths_own_folder(tmp_path: Path) -> None:
    (tmp_path / "loose").mkdir()
    assert project_root(tmp_path / "loose" / "r.rubric.yaml").folder == (tmp_path / "loose").resolve()
    assert project_root(tmp_path / "loose").folder == (tmp_path / "loose").resolve()


def test_a_marker_in_the_home_folder_makes_no_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dotfiles repository makes `~` hold `.git`; the whole home folder is still no project."""
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / "notes").mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert project_root(home / "notes" / "r.rubric.yaml").folder == (home / "notes").resolve()
    assert project_root(home / "r.rubric.yaml").folder == home.resolve()


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
    project = Project.load(project_root(home / "near.rubric.yaml").folder)
    assert sorted(project.index({}).rubrics.by_path) == ["near.rubric.yaml"]
    deep = Project.load(project_root(home / "deep" / "far.rubric.yaml").folder)
    assert sorted(deep.index({}).rubrics.by_path) == ["far.rubric.yaml"]


# --- what walks remember ----------------------------------------------------------------------------

MODELINE = "# yaml-language-server: $schema=rubric.schema.json\nid: r\n"


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "ai-eval-lsp" / "walk"


def age(*paths: Path, seconds: float = 100) -> int:
    """Set the paths' mtimes `seconds` into the past (out of the racy window); returns it in ns."""
    then = time.time_ns() - int(seconds * 1e9)
    for path in paths:
        os.utime(path, ns=(then, then))
    return then


def found(root: Path) -> list[tuple[str, str]]:
    return [(f.relative, f.role) for f in walk(root)]


def test_a_warm_walk_sees_every_change_made_since(tmp_path: Path, cache_home: Path) -> None:
    root = tmp_path / "project"
    (root / "rubrics").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "rubrics" / "a.yaml").write_text("id: a\n")
    (root / "docs" / "plain.yaml").write_text("just: yaml\n")
    (root / "docs" / "marked.yaml").write_text(MODELINE)
    age(root, root / "rubrics", root / "docs", *root.glob("*/*.yaml"))
    cold = found(root)
    assert cold == [("docs/marked.yaml", "rubric"), ("rubrics/a.yaml", "rubric")]
    assert len(list(cache_home.glob("*.json"))) == 1
    assert found(root) == cold  # warm, from what the first walk learnt
    (root / "rubrics" / "b.yaml").write_text("id: b\n")  # added
    (root / "docs" / "marked.yaml").unlink()  # removed
    (root / "docs" / "plain.yaml").write_text(MODELINE)  # its head now decides otherwise
    (root / "new" / "rubrics").mkdir(parents=True)  # a new folder, deeper
    (root / "new" / "rubrics" / "c.yaml").write_text("id: c\n")
    assert found(root) == [
        ("docs/plain.yaml", "rubric"),
        ("new/rubrics/c.yaml", "rubric"),
        ("rubrics/a.yaml", "rubric"),
        ("rubrics/b.yaml", "rubric"),
    ]


def test_a_folder_whose_mtime_is_unchanged_is_not_listed_again(tmp_path: Path, cache_home: Path) -> None:
    """What makes a warm walk fast: an old folder's mtime stands for its entries. (Outside the
    walk's reach, a change that keeps the mtime, as here, is not seen.)"""
    root = tmp_path / "project"
    (root / "rubrics").mkdir(parents=True)
    (root / "rubrics" / "a.yaml").write_text("id: a\n")
    then = age(root / "rubrics")
    assert found(root) == [("rubrics/a.yaml", "rubric")]
    (root / "rubrics" / "b.yaml").write_text("id: b\n")
    os.utime(root / "rubrics", ns=(then, then))
    assert found(root) == [("rubrics/a.yaml", "rubric")]


def test_a_folder_changed_just_before_it_was_listed_is_listed_again(tmp_path: Path, cache_home: Path) -> None:
    """A change within the same mtime tick as the listing would keep the mtime: a folder listed
    within two seconds of its change is not trusted (git's racy entries)."""
    root = tmp_path / "project"
    (root / "rubrics").mkdir(parents=True)
    (root / "rubrics" / "a.yaml").write_text("id: a\n")
    recent = (root / "rubrics").stat().st_mtime_ns
    assert found(root) == [("rubrics/a.yaml", "rubric")]
    (root / "rubrics" / "b.yaml").write_text("id: b\n")
    os.utime(root / "rubrics", ns=(recent, recent))  # the same tick: the mtime did not move
    assert found(root) == [("rubrics/a.yaml", "rubric"), ("rubrics/b.yaml", "rubric")]


def test_a_corrupt_memory_is_ignored_and_a_walk_without_memory_leaves_none(
    tmp_path: Path, cache_home: Path
) -> None:
    root = tmp_path / "project"
    (root / "rubrics").mkdir(parents=True)
    (root / "rubrics" / "a.yaml").write_text("id: a\n")
    assert [f.relative for f in walk(root, remember=False)] == ["rubrics/a.yaml"]
    assert not cache_home.exists()
    found(root)
    (entry,) = cache_home.glob("*.json")
    stored = json.loads(entry.read_text())
    stored["payload"] = {"": [1, 2, "three"], "rubrics/": None}
    entry.write_text(json.dumps(stored))
    assert found(root) == [("rubrics/a.yaml", "rubric")]
    entry.write_text("{not json")
    assert found(root) == [("rubrics/a.yaml", "rubric")]
