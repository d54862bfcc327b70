"""Projects in a repository (SPEC sections 4 and 5), as a Drupal developer meets them from the
command line: a site one folder down in a monorepo, a folder with no marker at all, a module
checked out with its own `.git`, a multisite codebase, a kind whose module the site does not
enable, and a configuration export that lists modules composer has not brought yet."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, monorepo, multisite, without_test_plugins

from ai_eval_lsp.disk.roots import project_root

MODULE = "web/modules/custom/support_assistant"
EXTENSION = "config/sync/core.extension.yml"

RUBRIC = 'id: {id}\nversion: "1.0"\nchecks:\n  - {check}\nscoring: {{combine: all_pass}}\n'


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def run(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = without_test_plugins()
    command = [str(Path(sys.executable).with_name("ai-eval-lsp")), *args]
    return subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=120)


def rubric(identifier: str, check: str) -> str:
    return RUBRIC.format(id=identifier, check=check)


@pytest.fixture(name="monorepo")
def monorepo_fixture(tmp_path: Path) -> Path:
    return monorepo(tmp_path)


def problems(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    found: list[dict[str, object]] = json.loads(result.stdout)
    return found


def test_check_at_a_monorepo_root_checks_the_site_one_folder_down_as_its_own_project(monorepo: Path) -> None:
    from_root = run(monorepo, "check", "--format", "json", ".")
    from_site = run(monorepo / "drupal", "check", "--format", "json", ".")
    assert from_root.returncode == from_site.returncode == 1
    at_root = problems(from_root)
    assert {(p["path"], p["code"]) for p in at_root} >= {
        ("drupal/broken/rubrics/escalation_draft.yaml", "schema")
    }
    assert {p["path"] for p in at_root} == {"drupal/broken/rubrics/escalation_draft.yaml"}
    # the module's word_count kind is known: the site's problems are exactly those of a check at its root
    prefixed = [{**p, "path": f"drupal/{p['path']}"} for p in problems(from_site)]
    assert at_root == prefixed


def test_check_of_the_examples_folder_checks_the_example_site_as_its_own_project() -> None:
    result = run(ROOT / "examples", "check", "--format", "json", ".")
    assert {p["path"] for p in problems(result)} == {"drupal-site/broken/rubrics/escalation_draft.yaml"}
    assert len(problems(result)) == 6


def test_a_folder_without_a_marker_is_the_root_and_a_rubrics_root_holds_rubrics(tmp_path: Path) -> None:
    folder = tmp_path / "loose" / "rubrics"
    folder.mkdir(parents=True)
    (folder / "main.yml").write_text(rubric("main", "{kind: composite, rubric: leaf}"))
    (folder / "leaf.yml").write_text(rubric("leaf", "{kind: regex, pattern: x}"))
    named = run(tmp_path / "loose", "check", "rubrics/main.yml")
    assert named.returncode == 0, named.stdout + named.stderr
    walked = run(tmp_path / "loose", "check", "rubrics")
    assert (walked.returncode, walked.stdout.strip()) == (0, "All checks passed: 2 files")
    inside = run(folder, "check", ".")
    assert (inside.returncode, inside.stdout.strip()) == (0, "All checks passed: 2 files")


def test_a_repository_cloned_into_a_folder_named_rubrics_is_not_all_rubrics(tmp_path: Path) -> None:
    clone = tmp_path / "rubrics"
    (clone / ".git").mkdir(parents=True)
    (clone / "docker-compose.yml").write_text("services: {}\n")
    result = run(tmp_path, "check", "rubrics")
    assert result.returncode == 0
    assert "no rubric or cases files found" in result.stderr


def test_a_module_with_its_own_git_and_settings_stays_part_of_its_site(monorepo: Path) -> None:
    module = monorepo / "drupal" / MODULE
    (module / ".git").mkdir()
    (module / "ai-eval.toml").write_text("")
    assert project_root(module / "rubrics" / "refund_answer.yaml").folder == (monorepo / "drupal").resolve()
    result = run(module, "check", "rubrics/refund_answer.yaml")
    assert result.returncode == 0, result.stdout  # word_count, the site's module kind, is known


def test_a_multisite_codebase_reads_the_site_drupal_site_names(tmp_path: Path) -> None:
    site = multisite(tmp_path)
    first = run(site, "check", "--format", "json", "uses_both.rubric.yaml")
    (unknown,) = problems(first)
    assert unknown["code"] == "unknown-kind" and unknown["line"] == 5  # char_count: beta's module
    assert "this codebase has 2 sites and no `default`; `alpha` is read (also `beta`)" in first.stderr
    assert "set `drupal.site` to choose" in first.stderr
    (site / "ai-eval.toml").write_text('drupal.site = "beta"\n')
    second = run(site, "check", "--format", "json", "uses_both.rubric.yaml")
    (unknown,) = problems(second)
    assert unknown["code"] == "unknown-kind" and unknown["line"] == 4  # word_count: alpha's module
    assert "sites" not in second.stderr  # chosen: nothing to say
    listed = run(site, "plugins")
    assert "site beta (of alpha, beta)" in listed.stdout


def test_drupal_site_is_read_even_where_there_is_a_default_site(tmp_path: Path) -> None:
    site = multisite(tmp_path, default=True)
    first = run(site, "check", "--format", "json", "uses_both.rubric.yaml")
    (unknown,) = problems(first)
    assert unknown["code"] == "unknown-kind" and unknown["line"] == 5  # char_count: default reads as alpha
    assert "sites" not in first.stderr  # `default` is the site read unless told: nothing to say
    (site / "ai-eval.toml").write_text('drupal.site = "beta"\n')
    second = run(site, "check", "--format", "json", "uses_both.rubric.yaml")
    assert second.stderr == ""  # chosen, and found: nothing to say
    (unknown,) = problems(second)
    assert unknown["code"] == "unknown-kind" and unknown["line"] == 4  # word_count: not beta's
    assert "site beta (of alpha, beta, default)" in run(site, "plugins").stdout


def test_a_kind_of_a_module_the_site_does_not_enable_says_which_module_and_how(monorepo: Path) -> None:
    site = monorepo / "drupal"
    export = site / EXTENSION
    export.write_text(export.read_text().replace("support_assistant: 0", "system: 0"))
    result = run(site, "check", "--format", "json", f"{MODULE}/rubrics/refund_answer.yaml")
    (unknown,) = (p for p in problems(result) if p["code"] == "unknown-kind")
    assert unknown["message"] == (
        "unknown check kind `word_count`: defined by module `support_assistant` "
        f"({MODULE}/src/CheckExecutor/WordCountExecutor.php:18), which this site does not enable "
        "(config/sync/core.extension.yml): `drush pm:enable support_assistant`, then export the configuration"
    )


def test_a_kind_of_a_test_module_says_the_site_never_enables_it(monorepo: Path) -> None:
    site = monorepo / "drupal"
    tests = site / MODULE / "tests/modules/support_test"
    shutil.copytree(site / MODULE, tests, ignore=shutil.ignore_patterns("rubrics", "evals", "tests"))
    for path in [*tests.rglob("*.php"), *tests.rglob("*.yml")]:
        path.write_text(
            path.read_text().replace("support_assistant", "support_test").replace("word_count", "echo_count")
        )
    for path in list(tests.glob("support_assistant.*")):
        path.rename(path.with_name(path.name.replace("support_assistant", "support_test")))
    (site / "echo.rubric.yaml").write_text(rubric("echo", "{kind: echo_count, min: 1}"))
    result = run(site, "check", "--format", "json", "echo.rubric.yaml")
    (unknown,) = problems(result)
    assert unknown["message"].startswith(
        "unknown check kind `echo_count`: defined by test module `support_test` "
        f"({MODULE}/tests/modules/support_test/src/CheckExecutor/WordCountExecutor.php:18), which a site never enables"
    )


def test_modules_missing_from_the_codebase_are_said_in_one_short_line(monorepo: Path) -> None:
    site = monorepo / "drupal"
    export = site / EXTENSION
    missing = [f"contrib_{n:03}" for n in range(200)]
    export.write_text(
        export.read_text().replace("module:\n", "module:\n" + "".join(f"  {m}: 0\n" for m in missing))
    )
    result = run(site, "check", MODULE)
    (note,) = [line for line in result.stderr.splitlines() if "not in the codebase" in line]
    assert note == (
        "note: 200 modules are listed in core.extension.yml but not in the codebase (contrib_000, "
        "contrib_001, contrib_002, contrib_003, contrib_004 and 195 more); `composer install` brings "
        "them, and their kinds are unknown until then"
    )
    assert re.search(r"contrib_005\b", result.stderr) is None
