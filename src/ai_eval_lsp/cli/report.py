"""Problems as text, JSON, GitHub workflow annotations or SARIF 2.1.0; 1-based lines and columns."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ai_eval_lsp import __version__
from ai_eval_lsp.core.problems import Problem, Severity

if TYPE_CHECKING:
    from ai_eval_lsp.runs import RunResult

FORMATS = ("text", "json", "github", "sarif")


@dataclass(frozen=True, slots=True)
class FileProblem:
    path: str
    problem: Problem


_SEVERITY_NAMES = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "info"}
_GITHUB_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "notice"}
_SARIF_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note"}


def render(found: Sequence[FileProblem], form: str, files_checked: int) -> str:
    return {"text": _text, "json": _json, "github": _github, "sarif": _sarif}[form](found, files_checked)


def _region(problem: Problem) -> dict[str, int]:
    span = problem.span
    return {
        "startLine": span.start.line + 1,
        "startColumn": span.start.column + 1,
        "endLine": span.end.line + 1,
        "endColumn": span.end.column + 1,
    }


def _text(found: Sequence[FileProblem], files_checked: int) -> str:
    lines = [
        f"{f.path}:{f.problem.span.start.line + 1}:{f.problem.span.start.column + 1}: {f.problem.code} {f.problem.message}"
        for f in found
    ]
    counts = {severity: sum(1 for f in found if f.problem.severity == severity) for severity in Severity}
    summary = (
        f"{counts[Severity.ERROR]} error{'s' * (counts[Severity.ERROR] != 1)}, "
        f"{counts[Severity.WARNING]} warning{'s' * (counts[Severity.WARNING] != 1)}, "
        f"{counts[Severity.INFORMATION]} info in {files_checked} file{'s' * (files_checked != 1)}"
    )
    return "\n".join(
        [*lines, summary if found else f"All checks passed: {files_checked} file{'s' * (files_checked != 1)}"]
    )


def _json(found: Sequence[FileProblem], files_checked: int) -> str:
    items: list[dict[str, Any]] = []
    for f in found:
        region = _region(f.problem)
        items.append(
            {
                "path": f.path,
                "code": f.problem.code,
                "severity": _SEVERITY_NAMES[f.problem.severity],
                "message": f.problem.message,
                "line": region["startLine"],
                "column": region["startColumn"],
                "end_line": region["endLine"],
                "end_column": region["endColumn"],
            }
        )
    return json.dumps(items, indent=2, ensure_ascii=False)


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _github(found: Sequence[FileProblem], files_checked: int) -> str:
    lines = []
    for f in found:
        r = _region(f.problem)
        properties = ",".join(
            [
                f"file={_escape_property(f.path)}",
                f"line={r['startLine']}",
                f"col={r['startColumn']}",
                f"endLine={r['endLine']}",
                f"endColumn={r['endColumn']}",
                f"title={_escape_property('ai-eval ' + f.problem.code)}",
            ]
        )
        lines.append(
            f"::{_GITHUB_LEVELS[f.problem.severity]} {properties}::{_escape_data(f.problem.message)}"
        )
    return "\n".join(lines)


def _sarif(found: Sequence[FileProblem], files_checked: int) -> str:
    codes = sorted({f.problem.code for f in found})
    results = [
        {
            "ruleId": f.problem.code,
            "ruleIndex": codes.index(f.problem.code),
            "level": _SARIF_LEVELS[f.problem.severity],
            "message": {"text": f.problem.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path},
                        "region": _region(f.problem),
                    }
                }
            ],
        }
        for f in found
    ]
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ai-eval-lsp",
                        "version": __version__,
                        "rules": [{"id": code, "shortDescription": {"text": code}} for code in codes],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def run_json(name: str, result: RunResult) -> dict[str, Any]:
    return {
        "cases_file": name,
        "row": result.row,
        "verdicts": {c.case_id: c.verdict.to_json() if c.verdict else None for c in result.cases},
        "errors": {c.case_id: c.error for c in result.cases if c.error},
        "unmet_expectations": [c.case_id for c in result.cases if not c.expectation_met],
        "notices": result.notices,
    }


def format_run(name: str, result: RunResult) -> str:
    row = result.row
    interval = (
        f"[{row['pass_rate_ci_low']:.2f}, {row['pass_rate_ci_high']:.2f}]"
        if row["pass_rate_ci_low"] is not None
        else "[n/a]"
    )
    cases, errors = row["question_count"], row["error_count"]
    lines = [
        f"{name}: {row['target_id']}: pass rate {row['pass_rate']:.2f} {interval}, average {row['avg_score']:.2f}/5, "
        f"gate {'passed' if row['passed_gate'] else 'FAILED'}, {_count(cases, 'case')}, {_count(errors, 'error')}"
    ]
    if cases and errors == cases:
        lines.append("  warning: no case could be scored; see the errors below")
    for case in result.cases:
        if case.error:
            lines.append(f"  {case.case_id}: ERROR {case.error}")
        elif case.verdict is not None:
            state = "pass" if case.verdict.passed else "fail"
            lines.append(f"  {case.case_id}: {state} {5 * case.verdict.score:.2f}/5  {case.verdict.reason}")
        if not case.expectation_met:
            lines.append(f"  {case.case_id}: expected {case.expect}, which it did not get")
    lines += [f"  {notice}" for notice in result.notices]
    lines.append("  row: " + json.dumps(row, ensure_ascii=False))
    return "\n".join(lines)
