"""A Drupal developer's commands, as they run them: the installed `ai-eval-lsp` without any Python
plugin, from the project's folders, on the fixture sites (copied: runs store results in them)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, without_test_plugins

MODULE = "web/modules/custom/my_eval_extras"


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    shutil.copytree(FIXTURES / "drupal" / "site", root)
    return root


def run(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**without_test_plugins(), "XDG_CACHE_HOME": str(where.parent / "cache")}
    command = [str(Path(sys.executable).with_name("ai-eval-lsp")), *args]
    return subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=120)


def test_a_kind_whose_definition_cannot_be_read_is_named_with_why(site: Path) -> None:
    rubric = site / MODULE / "rubrics" / "language.rubric.yaml"
    rubric.write_text(
        'id: lang\nversion: "1.0"\nchecks:\n  - {kind: language_is, language: en}\nscoring: {combine: all_pass}\n'
    )
    result = run(site, "check", "--format", "json", str(rubric))
    (problem,) = json.loads(result.stdout)
    assert problem["code"] == "unknown-kind" and problem["line"] == 4
    assert problem["message"] == (
        "unknown check kind `language_is`: module eval_mixed (Drupal\\eval_mixed\\ToneExecutor) defines it, but "
        "its definition cannot be read without running PHP (a method call `$this->languageSchema()` at line 62); "
        "declare the kind in `schemaFragments` to check it"
    )
    fragment = site / "php-kinds.json"
    fragment.write_text(
        json.dumps({"language_is": {"required": ["kind"], "properties": {"kind": {"const": "language_is"}}}})
    )
    (site / "ai-eval.toml").write_text('schemaFragments = ["php-kinds.json"]\n')
    declared = run(site, "check", str(rubric))
    assert declared.returncode == 0, declared.stdout
    assert "cannot be read" not in declared.stderr  # answered: no longer a warning


def test_a_run_without_php_says_what_it_skipped(site: Path) -> None:
    (site / "ai-eval.toml").write_text('php.command = "/nonexistent/php"\n')
    (site / MODULE / "rubrics" / "shape.cases.yaml").write_text(
        'rubric: summary_shape\ncases:\n  - {id: one, question: {id: q}, response: "see /node/1 for details"}\n'
    )
    result = run(site / MODULE, "run", str(site / MODULE / "rubrics" / "shape.cases.yaml"))
    assert result.returncode == 0  # skipped checks leave the score to the others (SPEC section 4)
    assert (
        "warning: 1 check was skipped: no PHP found: `/nonexistent/php` does not exist (set the `php.command` setting)"
        in result.stdout
    )
    listing = json.loads(run(site, "plugins", "--format", "json").stdout)
    assert listing["phpRuntime"]["unavailable"].startswith("no PHP found: `/nonexistent/php` does not exist")
    word_count = next(row for row in listing["php"] if row["module"] == "my_eval_extras")
    assert (word_count["runsInEditor"], word_count["why"]) == (
        False,
        "needs PHP, and no PHP found: `/nonexistent/php` does not exist (set the `php.command` setting)",
    )


def test_plugins_lists_the_modules_executors(site: Path) -> None:
    listing = json.loads(run(site, "plugins", "--format", "json").stdout)
    assert listing["plugins"] == []
    # the site's own ai_eval schema is the core, and its extra core kind is one nobody runs
    assert listing["core"]["schema"] == "web/modules/contrib/ai_eval/schema/rubric.schema.json"
    assert "site_vocabulary" in next(k for k in listing["core"]["kinds"] if k["runBy"] is None)["kinds"]
    assert listing["phpRuntime"]["version"].startswith("`php` runs PHP 8.")
    rows = {row["service"]: row for row in listing["php"]}
    word_count = rows["my_eval_extras.check_executor.word_count"]
    assert (word_count["module"], word_count["class"], word_count["line"]) == (
        "my_eval_extras",
        "Drupal\\my_eval_extras\\CheckExecutor\\WordCountExecutor",
        18,
    )
    assert word_count["file"] == f"{MODULE}/src/CheckExecutor/WordCountExecutor.php"
    assert word_count["kinds"] == [{"kind": "word_count", "read": True, "spliced": True, "why": None}]
    entity = next(row for row in listing["php"] if row["module"] == "eval_entity")
    assert (entity["runsInEditor"], entity["why"]) == (
        False,
        "needs the Drupal service `@entity_type.manager`",
    )
    mixed = next(row for row in listing["php"] if row["module"] == "eval_mixed")
    assert [(k["kind"], k["read"]) for k in mixed["kinds"]] == [("tone_ok", True), ("language_is", False)]
    assert "eval_unused" not in {row["module"] for row in listing["php"]}  # present, not installed


def test_without_a_configuration_export_every_module_counts_and_it_says_so(tmp_path: Path) -> None:
    site = tmp_path / "no-export"
    shutil.copytree(FIXTURES / "drupal" / "no-export", site)
    rubric = site / "docroot/modules/custom/my_eval_extras/shape.rubric.yaml"
    rubric.write_text(
        'id: s\nversion: "1.0"\nchecks:\n  - {kind: word_count, min: 1}\nscoring: {combine: all_pass}\n'
    )
    result = run(tmp_path, "check", str(rubric))
    assert result.returncode == 0, result.stdout
    assert "every module found counts" in result.stderr
