"""Whether any plugin is installed is answered without `importlib.metadata` when none is
(`hosts.python.may_declare`): never "none" where `importlib.metadata` finds one, in each layout
installers leave on the path."""

from __future__ import annotations

import sys
import zipfile
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from ai_eval_lsp.hosts.python import EXECUTOR_GROUP, may_declare

DECLARING = f"[{EXECUTOR_GROUP}]\nword_count = ai_eval_test_wordcount:WordCountExecutor\n"
OTHER = "[console_scripts]\ntool = tool:main\n"


def _metadata(folder: Path, name: str, entry_points_txt: str | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).mkdir()
    (folder / name / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name.split('-')[0]}\nVersion: 1.0\n"
    )
    if entry_points_txt is not None:
        (folder / name / "entry_points.txt").write_text(entry_points_txt)


def _layouts(root: Path) -> dict[str, tuple[list[Path], bool]]:
    """Paths by layout, and whether a plugin is installed there."""
    none = root / "none"
    _metadata(none, "tool-1.0.dist-info", OTHER)
    _metadata(none, "bare-1.0.dist-info", None)
    (none / "legacy.egg-info").write_text("Metadata-Version: 1.0\nName: legacy\nVersion: 1.0\n")
    wheel = root / "wheel"
    _metadata(wheel, "plugin-1.0.dist-info", DECLARING)
    develop = root / "develop"
    _metadata(develop, "plugin.egg-info", DECLARING)
    return {
        "no plugin": ([none, root / "missing"], False),
        "a wheel's dist-info": ([none, wheel], True),
        "a develop install's egg-info": ([root / "missing", develop], True),
    }


@pytest.mark.parametrize("layout", ["no plugin", "a wheel's dist-info", "a develop install's egg-info"])
def test_a_plugin_is_known_to_be_absent_only_where_importlib_metadata_finds_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    path, installed = _layouts(tmp_path)[layout]
    monkeypatch.setattr(sys, "path", [str(folder) for folder in path])
    assert bool(entry_points(group=EXECUTOR_GROUP)) == installed
    assert may_declare(EXECUTOR_GROUP) == installed


def test_a_zip_on_the_path_may_hold_a_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as written:
        written.writestr(
            "plugin-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: plugin\nVersion: 1.0\n"
        )
        written.writestr("plugin-1.0.dist-info/entry_points.txt", DECLARING)
    monkeypatch.setattr(sys, "path", [str(archive)])
    assert entry_points(group=EXECUTOR_GROUP)
    assert may_declare(EXECUTOR_GROUP)
