"""What SPEC fixes and several tests check: written out here once, by hand, not taken from the code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORE_KINDS = [
    "must_contain_any",
    "must_not_contain",
    "regex",
    "target_match",
    "composite",
    "llm_judge",
    "tool_usage",
    "command",
    "score_delta",
    "json_schema",
    "php_lint",
    "markdown_structure",
    "format",
    "fact_match",
]

RESULT_ROW_FIELDS = {
    "id",
    "target_id",
    "run_id",
    "timestamp",
    "avg_score",
    "pass_rate",
    "pass_rate_ci_low",
    "pass_rate_ci_high",
    "passed_gate",
    "question_count",
    "error_count",
    "scores_json",
    "source",
    "duration",
    "config_json",
}

# A rubric written up to cursors, for completion: trailing spaces are where the cursors stand.
CURSOR_RUBRIC = """id: x
version: "1.0"
checks:
  - id: a
    kind: regex
    
  - kind: 
  - 
  - {kind: regex, pa}
scoring:
  combine: 
  weights:
    
"""


def _rubric(rubric_id: str) -> str:
    return f'id: {rubric_id}\nversion: "1.0"\nchecks:\n  - {{kind: must_contain_any, values: [a]}}\nscoring: {{combine: all_pass}}\n'


ROLE_GLOBS = {"rubricGlobs": ["evals/**/*.check.yml"]}
# Paths under a project, what SPEC section 2 says they are (with `ROLE_GLOBS`), and a text. Every
# client and the CLI must agree on this table: the server decides for all of them.
ROLE_TABLE: dict[str, tuple[str | None, str]] = {
    "evals/deep/tone.yaml": (
        "rubric",
        "# yaml-language-server: $schema=https://x.invalid/rubric.schema.json\n" + _rubric("modeline"),
    ),
    "x/rubrics/y/z.yaml": ("rubric", _rubric("nested")),
    "evals/more/polite.check.yml": ("rubric", _rubric("globbed")),
    "support.rubric.yml": ("rubric", _rubric("named")),
    "support.cases.yaml": ("cases", "rubric: named\ncases: []\n"),
    "config.yml": (None, "services:\n  web: {kind: regexp}\n"),
    "web/modules/custom/m/m.services.yml": (None, "services:\n  m.thing:\n    class: Drupal\\m\\Thing\n"),
}


ROOT_CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "fixtures" / "roots.json").read_text()
)["cases"]
"""Project-root markers (SPEC section 5): one table that the Python implementation
(tests/test_files.py) and the Neovim plugin's Lua one (tests/test_neovim.py) both answer."""


def write_root_case(base: Path, case: dict[str, Any]) -> tuple[Path, Path]:
    """A case of ROOT_CASES written under `base`: the path asked for, and the root expected."""
    for relative, text in case["files"].items():
        (base / relative).parent.mkdir(parents=True, exist_ok=True)
        (base / relative).write_text(text)
    return base / case["path"], base / case["root"]
