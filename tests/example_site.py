"""The shipped example Drupal site as the `php.run` tests use it: its module's PHP `word_count`
check (`readable_length` in `refund_answer`, reached through the `content` composite of
`support_reply`, which the cases file runs)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml
from conftest import ROOT

from ai_eval_lsp.project.registry import PHP_OFF

MODULE = "web/modules/custom/support_assistant"
CASES = f"{MODULE}/evals/refunds.cases.yaml"
RUBRIC = f"{MODULE}/rubrics/refund_answer.yaml"
SKIPPED = f"skipped: readable_length (word_count, {PHP_OFF})"
"""How the `content` composite's reason names the PHP check it skipped."""


def copy_example(into: Path) -> Path:
    shutil.copytree(ROOT / "examples" / "drupal-site", into)
    return into


def many_cases(site: Path, copies: int) -> Path:
    """A cases file beside the example's, holding `copies` of each of its cases (ids numbered):
    a run large enough is graded in case workers."""
    data = yaml.safe_load((site / CASES).read_text())
    data["cases"] = [{**case, "id": f"{case['id']}_{n}"} for n in range(copies) for case in data["cases"]]
    path = site / MODULE / "evals" / "many.cases.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def content_outcomes(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Each case's `content` outcome, from a run's `verdicts`."""
    return [
        outcome
        for verdict in run["verdicts"].values()
        for outcome in verdict["outcomes"]
        if outcome["checkId"] == "content"
    ]
