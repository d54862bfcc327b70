"""The VS Code extension: its own logic under node's test runner, and the packaged .vsix (with its
bundled server) in the real editor (code-server in headless Chromium). One end-to-end run serves
every test below; each checks one thing a user sees. A missing toolchain is a failure, not a skip."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import TEST_PLUGINS, without_test_plugins
from site_db import SqliteSite, drush_row, runner_row

EXTENSION = Path(__file__).resolve().parents[2] / "vscode-extension"
ARTIFACTS = Path(os.environ.get("AI_EVAL_E2E_ARTIFACTS", EXTENSION / "e2e-artifacts"))
SITE_DB = Path(__file__).parents[1] / "site_db.py"
SITE_RUN = (
    "site run 3 of support_bot regressed: pass rate 0.00 [0.00, 0.20], average 1.50/5, gate failed, "
    "2 questions, 0 errors; average -2.50 against site run 2 (tolerance 0.5)"
)
"""The server's line for the run the site inserts while VS Code is open: its average fell 2.50."""


def test_the_extension_logic_passes_its_unit_tests() -> None:
    result = subprocess.run(["npm", "test"], cwd=EXTENSION, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "# fail 0" in result.stdout and "# pass 47" in result.stdout


@pytest.fixture(scope="module")
def e2e(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    # The Drupal site's database (SQLite), with two runs before VS Code opens; the site inserts a
    # third, which regressed, while it is open.
    site = SqliteSite(tmp_path_factory.mktemp("site") / "site.sqlite")
    site.insert(
        runner_row("support_bot", {"q17": 5.0, "q1": 4.0}, run_id=1, timestamp=1_780_000_000),
        drush_row("support_bot", {"q17": 4.0, "q1": 4.0}, timestamp=1_780_000_600),
    )
    regressed = {
        "target_id": "support_bot",
        "scores": {"q17": 1.0, "q1": 2.0},
        "run_id": 2,
        "timestamp": 1_780_001_200,
    }
    # The editor's environment is a user's: the test plugins reach window 1's interpreter only.
    env = {
        **without_test_plugins(),
        "AI_EVAL_PYTHON": sys.executable,
        "AI_EVAL_TEST_PLUGINS": str(TEST_PLUGINS),
        "AI_EVAL_E2E_ARTIFACTS": str(ARTIFACTS),
        "AI_EVAL_SITE_DATABASE": f"sqlite://localhost/{site.path}",
        "AI_EVAL_SITE_INSERT": json.dumps(
            [sys.executable, str(SITE_DB), str(site.path), json.dumps(regressed)]
        ),
    }
    process = subprocess.run(
        ["node", "scripts/e2e.mjs"], cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=600
    )
    lines = process.stdout.strip().splitlines()
    assert lines, process.stderr[-3000:]
    result: dict[str, Any] = json.loads(lines[-1])
    assert "error" not in result, (result["error"], result.get("serverLog"))
    return result


def expectation(result: dict[str, Any], name: str) -> None:
    record = result["expectations"][name]
    assert record["ok"], (record.get("error"), result.get("serverLog"))


def screenshot(name: str) -> None:
    assert (ARTIFACTS / name).stat().st_size > 10_000


def test_problems_status_completion_and_a_run(e2e: dict[str, Any]) -> None:
    for name in ("problems", "completion", "runComplete"):
        expectation(e2e, name)
    problems = "\n".join(e2e["problems"])
    assert "regex check: `patern` is not a field of regex" in problems
    assert "word_count" not in problems  # the plugin's kind is accepted
    assert "AI Eval: 16 kinds: 14 core, 2 from plugins" in e2e["status"]  # the test plugins' kinds
    assert any(label.startswith("word_count") for label in e2e["completion"]), e2e["completion"]
    shown = e2e["notifications"]
    complete = [n for n in shown if n.startswith("AI Eval: support_tone: pass rate")]
    assert complete and "pass rate 0.50 [0.09, 0.91]" in complete[0] and "gate passed" in complete[0], shown
    for name in ("problems.png", "completion.png", "run-complete.png"):
        screenshot(name)


def test_a_rubric_marked_only_by_its_modeline_in_a_nested_folder_is_checked_and_switched(
    e2e: dict[str, Any],
) -> None:
    expectation(e2e, "modelineRubric")  # its diagnostic shows, and it is now "AI Eval YAML"
    assert any("`lable` is not a field of a rubric" in row for row in e2e["problems"])
    screenshot("modeline-rubric.png")


def test_a_drupal_services_file_gets_nothing(e2e: dict[str, Any]) -> None:
    expectation(e2e, "servicesYmlLeftAlone")  # still "YAML", and no problem
    screenshot("services-yml.png")


def test_an_interpreter_without_the_server_runs_the_bundled_one_and_says_so_in_a_sentence(
    e2e: dict[str, Any],
) -> None:
    assert not e2e["bareHasServer"]
    expectation(e2e, "bundledServer")  # its diagnostics came, and it said what it did
    version = json.loads((EXTENSION / "package.json").read_text())["version"]
    # one sentence, shown whole, without the paths (~600 characters of them before)
    assert e2e["bundledMessage"] == (
        f"AI Eval runs its bundled ai-eval-lsp {version}, as the aiEval.interpreter Python has none installed."
    )
    assert e2e["bundledMessageShownWhole"] and "Show Output" in e2e["bundledButtons"]
    screenshot("bundled-server.png")
    # the details, in the output channel Show Output opens
    details = e2e["bundledDetails"]
    assert (
        "/bare/bin/python (setting) has no ai-eval-lsp, so the extension unpacked the ai-eval-lsp" in details
    )
    assert "Nothing was downloaded" in details and "-m pip install --no-index --find-links " in details
    screenshot("bundled-details.png")
    screenshot("bundled-problems.png")


def test_the_status_bar_counts_a_drupal_modules_kinds_as_the_modules(e2e: dict[str, Any]) -> None:
    expectation(e2e, "bundledServer")
    assert "AI Eval: 23 kinds: 15 core, 8 from Drupal modules" in e2e["drupalStatus"]  # not "from plugins"


def test_a_drupal_modules_php_kind_is_known(e2e: dict[str, Any]) -> None:
    expectation(e2e, "drupalPhpKind")  # the seed rubric shows no error for `word_count`
    assert "my_eval_extras" in e2e["drupalHover"]
    screenshot("drupal-php-kind.png")


def test_cases_files_are_tests_and_a_failure_shows_at_its_case(e2e: dict[str, Any]) -> None:
    expectation(e2e, "testing")
    # too_short expects pass and fails its length check: the server's lines, `ai-eval-lsp run`'s
    # words, say its verdict and why, then the missed expect with both verdicts
    assert e2e["testMessage"].startswith("expected pass, which it did not get")
    assert "fail 0.00/5 all_pass: 1 of 2 checks passed" in " ".join(e2e["testInline"].split())
    reasons = " ".join(e2e["testReasons"].split())
    assert reasons.startswith(
        "fail 0.00/5 all_pass: 1 of 2 checks passed | failed: length (1 words, minimum 3)"
    )
    assert "Expected" in e2e["testDiff"] and "pass" in e2e["testDiff"]
    rows = e2e["testRows"]
    assert any(row.startswith("testing.cases.yaml") for row in rows), rows
    assert any(row.startswith("kind_reply") and "Passed" in row for row in rows), rows
    assert any(row.startswith("too_short") and "Failed" in row for row in rows), rows
    screenshot("testing.png")


def test_the_history_panel_and_the_last_run_lens(e2e: dict[str, Any]) -> None:
    expectation(e2e, "history")
    assert "last run: pass 0.50 [0.09-0.91], 2.5/5, " in e2e["lens"]
    history = e2e["history"]
    # the server's words and picture (`aiEval.render`), as `ai-eval-lsp history` and `report` show them
    # Run Cases, the Testing view's runs of tone.cases.yaml and testing.cases.yaml, Run Cases again
    assert history["title"] == "support_tone: 4 runs, newest first" and history["runs"] == 4
    assert history["bandPoints"] == 2 * 4  # every run scored cases: a band point above and below each
    # it opens on the latest run and the newest before it with its cases (tone.cases.yaml's), never
    # on two runs with no case in common; the picker shows the same two
    base, head = int(history["picked"]["base"]), int(history["picked"]["head"])
    assert head == 4 and base in (2, 3)
    diff = history["diff"]
    assert diff.startswith(f"support_tone: run {base} (") and f"-> run {head} (" in diff.splitlines()[0]
    assert "no case in common" not in diff and "polite" in diff and "curt" in diff
    assert history["diffWraps"] and history["diffShownWhole"]  # nothing cut off at the right
    assert history["trendDrawnWhole"]  # the picture scaled down to the panel, every run's point in it
    screenshot("history.png")


def own_runs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs view's rows of the project's own runs (not the site's, not a run's details)."""
    return [row for row in rows if row["level"] == 1 and row["label"] != "The site's runs"]


def test_one_notification_per_run(e2e: dict[str, Any]) -> None:
    """`aiEval/runComplete` comes once per run; the extension lists each, notifies those not run
    from the Testing view, and the server, told so, sends no message of its own."""
    expectation(e2e, "oneNotificationPerRun")
    # one Run Cases, and the Testing view's run of its two cases files: three runs, newest first,
    # each listed by which run it was, with its date beside it and its gate as its icon
    listed = own_runs(e2e["runsListed"])
    assert [row["label"] for row in listed] == [f"run {n} of support_tone" for n in (3, 2, 1)], listed
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", row["description"]) for row in listed)
    assert all("codicon-pass" in row["icon"].split() for row in listed)
    shown = e2e["allNotifications"]
    # the Testing view's runs show in Test Results: only the Run Cases run raised a notification
    assert len([n for n in shown if n.startswith("AI Eval: support_tone")]) == 1, shown
    assert not [n for n in shown if n.startswith("support_tone: pass rate")], shown


def test_the_universal_vsix_runs_the_server_pip_installed_for_the_interpreter(e2e: dict[str, Any]) -> None:
    expectation(e2e, "universalVsix")  # the broken rubric's diagnostics came
    assert "AI Eval: 16 kinds: 14 core, 2 from plugins" in e2e["universalStatus"]
    assert not [n for n in e2e["universalNotifications"] if "has no ai-eval-lsp" in n]
    screenshot("universal.png")


def test_a_save_that_makes_a_case_fail_says_so_once_and_the_testing_view_shows_it(
    e2e: dict[str, Any],
) -> None:
    """`aiEval.runOnSave: "affected"`: testing.cases.yaml saved with kind_reply no longer
    apologising runs it; one notification says what flipped, with a button to the diff, and the
    Testing view shows the case failed."""
    expectation(e2e, "flipOnSave")
    assert e2e["flipNotification"] == "AI Eval: support_tone: 1 case now fails: kind_reply"
    assert "Show Diff" in e2e["flipButtons"]
    rows = e2e["flipTestRows"]
    assert any(row.startswith("kind_reply") and "Failed" in row for row in rows), rows
    screenshot("flip-on-save.png")


def test_a_run_the_site_inserts_is_a_warning_whose_show_history_opens_the_site_target_s_runs(
    e2e: dict[str, Any],
) -> None:
    """The workspace's settings name the Drupal site's database (`aiEval.site.database`, read
    every second): its two runs there when the project loaded were read without a word, and the
    regressed run it inserts later is one warning that says it regressed, with the server's line
    and "Show History", which opens the site target's history, its site runs marked, on the diff
    of its two latest."""
    expectation(e2e, "oneNotificationPerRun")
    assert not [n for n in e2e["allNotifications"] if "site run" in n]  # the first read told nothing
    expectation(e2e, "siteRun")
    assert e2e["siteNotification"] == f"AI Eval: {SITE_RUN}"
    assert e2e["siteNotificationShownWhole"]
    assert "codicon-warning" in e2e["siteNotificationIcon"].split() and e2e["siteButtons"] == ["Show History"]
    screenshot("site-run.png")
    history = e2e["siteHistory"]
    assert history["title"] == "support_bot: 3 runs, newest first"
    assert history["runColumn"] == ["site 3", "site 2", "site 1"]
    assert history["options"] == [
        ["site:3", "site run 3"],
        ["site:2", "site run 2"],
        ["site:1", "site run 1"],
    ]
    assert history["picked"] == {"base": "site:2", "head": "site:3"}
    # the trend scaled down to the panel, the site's runs marked on its axis, and the legend names one
    assert history["trendDrawnWhole"] and history["trendLabels"][-3:] == ["s1", "s2", "s3"]
    assert history["legend"].endswith("x: run id (hollow, s3: site run 3)")
    first = history["diff"].splitlines()[0]
    assert first.startswith("support_bot: site run 2 (") and "-> site run 3 (" in first
    screenshot("site-history.png")
    assert history["pickedDiff"].startswith("support_bot: site run 1 (")  # another pair, picked by name


def test_read_the_site_s_runs_lists_them_newest_first_a_regression_marked_and_readable(
    e2e: dict[str, Any],
) -> None:
    """ "AI Eval: Read the Site's Runs" (`aiEval.siteRuns`) shows the runs view with the site's runs
    read at load; the run the site inserts later joins them first, marked regressed; expanded, it
    shows what a person reads, never the row's columns."""
    expectation(e2e, "siteRun")
    read = e2e["siteRunsRead"]
    assert read[0]["label"] == "The site's runs" and read[0]["description"] == "2 runs, newest first"
    site = [row for row in read if row["level"] == 2]
    assert [row["label"] for row in site] == ["site run 2 of support_bot", "site run 1 of support_bot"]
    assert [row["description"] for row in site] == ["2026-05-28 20:36 UTC", "2026-05-28 20:26 UTC"]
    listed = e2e["runsListedAfterSite"]
    assert listed[0]["description"] == "3 runs, newest first"
    newest, *details = [row for row in listed if row["level"] >= 2][:8]
    assert (newest["label"], newest["description"]) == (
        "site run 3 of support_bot",
        "regressed, 2026-05-28 20:46 UTC",
    )
    assert e2e["regressedShown"]  # at the side bar's first width too
    assert "codicon-warning" in newest["icon"].split()
    assert [(row["label"], row["description"]) for row in details] == [
        ("date", "2026-05-28 20:46 UTC"),
        ("pass rate", "0.00 [0.00, 0.20]"),
        ("average", "1.50/5"),
        ("gate", "failed"),
        ("questions", "2"),
        ("errors", "0"),
        ("source", "manual"),
    ]
    shown = json.dumps(listed)
    assert not any(
        column in shown for column in ("timestamp", "run_id", "scores_json", "passed_gate", "1780001200")
    )
    assert len(own_runs(listed)) >= 3  # the project's own runs after the site's
    assert e2e["runsShownWhole"]  # with the side bar widened, for the picture
    screenshot("runs-view.png")


def test_show_run_history_offers_the_cases_file_s_rubric_and_site_target_and_reads_at_half_width(
    e2e: dict[str, Any],
) -> None:
    expectation(e2e, "historyPicker")
    assert e2e["historyOffers"] == [
        ["support_tone", "the rubric these cases run"],
        ["support_bot", "the site target these cases mirror"],
    ]
    screenshot("history-picker.png")
    half = e2e["halfWidth"]
    assert 0.4 < half["panelWidth"] / half["windowWidth"] <= 0.5, half
    assert half["wrappedCells"] == [] and half["tableShownWhole"], half  # every cell on one line
    assert half["trendDrawnWhole"] and half["legend"].endswith("x: run id (hollow, s3: site run 3)")
    screenshot("history-half-width.png")


def test_read_the_site_s_runs_without_a_site_says_why_and_where_to_give_it(e2e: dict[str, Any]) -> None:
    expectation(e2e, "siteRunsNote")
    assert e2e["siteRunsNote"].startswith("AI Eval: ") and "site" in e2e["siteRunsNote"]
    assert e2e["siteRunsNoteButtons"] == ["Open Settings"]
    screenshot("site-runs-note.png")
