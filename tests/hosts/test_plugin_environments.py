"""Plugins in real environments: the installed `ai-eval-lsp` command with the test plugins on its
PYTHONPATH, and the same command as a user has it, without them. Nothing patches discovery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, without_test_plugins

from ai_eval_lsp.core.schema import core_schema

COMMAND = Path(sys.executable).with_name("ai-eval-lsp")
PLUGIN_RUBRIC = FIXTURES / "problems" / "plugin_kind.rubric.yaml"


def run(plugins: bool, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMMAND), "--root", str(FIXTURES / "problems"), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ if plugins else without_test_plugins(),
    )


WITH_PLUGINS, WITHOUT_PLUGINS = True, False


def test_with_the_plugin_its_kind_is_clean() -> None:
    result = run(WITH_PLUGINS, "check", PLUGIN_RUBRIC)
    assert result.returncode == 0, result.stdout
    assert "All checks passed" in result.stdout


def test_with_the_plugin_the_schema_carries_its_kind_and_core_is_unchanged() -> None:
    schema = json.loads(run(WITH_PLUGINS, "schema").stdout)
    assert schema["$defs"]["check_word_count"]["allOf"][1]["properties"]["kind"]["const"] == "word_count"
    assert {"$ref": "#/$defs/check_word_count"} in schema["properties"]["checks"]["items"]["oneOf"]
    # the plugin also offers a `regex` definition: the core one stays canonical
    assert schema["$defs"]["check_regex"] == core_schema()["$defs"]["check_regex"]


def test_without_the_plugin_the_same_rubric_gets_unknown_kind() -> None:
    result = run(WITHOUT_PLUGINS, "check", PLUGIN_RUBRIC)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if "unknown-kind" in line]
    # line 5 of the file is `    kind: word_count`; the value starts at column 11
    assert len(lines) == 1
    assert lines[0].startswith(f"{PLUGIN_RUBRIC}:5:11: unknown-kind unknown check kind `word_count`")
    schema = json.loads(run(WITHOUT_PLUGINS, "schema").stdout)
    assert "check_word_count" not in schema["$defs"]
    assert "No executor plugins installed" in run(WITHOUT_PLUGINS, "plugins").stdout


def test_broken_plugins_are_reported_and_isolated() -> None:
    report = json.loads(run(WITH_PLUGINS, "plugins", "--format", "json").stdout)
    by_name = {row["name"]: row for row in report["plugins"]}
    assert not by_name["explodes_on_import"]["loaded"]
    assert "ImportError: this plugin cannot be imported" in by_name["explodes_on_import"]["problems"][0]
    assert "definitions are on fire" in by_name["raises_in_definitions"]["problems"][0]
    assert "is not a check executor" in by_name["not_an_executor"]["problems"][0]
    malformed = " ".join(by_name["malformed_definitions"]["problems"])
    for kind in ("unpinned", "not_required", "not_a_schema", "bad_keyword", "dangling_ref", "Bad-Name"):
        assert kind in malformed
    assert "core kind" in " ".join(by_name["word_count"]["problems"])
    assert by_name["word_count"]["kinds"] == ["word_count"]
    # every other plugin still works: word_count is clean beside them
    assert run(WITH_PLUGINS, "check", PLUGIN_RUBRIC).returncode == 0
