"""What SPEC fixes and several tests check: written out here once, by hand, not taken from the code."""

from __future__ import annotations

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
