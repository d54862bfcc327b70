"""Problems as text, JSON, GitHub workflow annotations or SARIF 2.1.0; 1-based lines and columns.

Files that were not read (`FileNote`) are said on stderr in every format; GitHub annotations and
SARIF carry them in their output too (an annotation on the file; a tool execution notification)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ai_eval_lsp import __version__
from ai_eval_lsp.core.problems import Problem, Severity
from ai_eval_lsp.core.text import printable, workflow

FORMATS = ("text", "json", "github", "sarif")


@dataclass(frozen=True, slots=True)
class FileProblem:
    path: str
    problem: Problem


@dataclass(frozen=True, slots=True)
class FileNote:
    """A file not checked, and why: an error for one named on the command line, else a warning."""

    path: str
    message: str
    error: bool

    def line(self) -> str:
        return printable(f"{'error' if self.error else 'warning'}: {self.path}: {self.message}")


_SEVERITY_NAMES = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "info"}
_GITHUB_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "notice"}
_SARIF_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note"}


def render(
    found: Sequence[FileProblem], form: str, files_checked: int, notes: Sequence[FileNote] = ()
) -> str:
    if form == "github":
        return _github(found, notes)
    if form == "sarif":
        return _sarif(found, notes)
    return {"text": _text, "json": _json}[form](found, files_checked)


def _region(problem: Problem) -> dict[str, int]:
    span = problem.span
    return {
        "startLine": span.start.line + 1,
        "startColumn": span.start.column + 1,
        "endLine": span.end.line + 1,
        "endColumn": span.end.column + 1,
    }


def text_line(found: FileProblem) -> str:
    """`path:line:column: code message`, 1-based, as compilers and ruff print problems; one line
    whatever a file's name or a value quoted holds (a repository's text: `printable`)."""
    start = found.problem.span.start
    return printable(
        f"{found.path}:{start.line + 1}:{start.column + 1}: {found.problem.code} {found.problem.message}"
    )


def _text(found: Sequence[FileProblem], files_checked: int) -> str:
    lines = [text_line(f) for f in found]
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


def annotation(level: str, message: str, **properties: str | int) -> str:
    """A GitHub Actions workflow command that annotates the job (`::error file=...::message`),
    escaped as the runner reads it."""
    listed = ",".join(f"{name}={workflow(str(value), field=True)}" for name, value in properties.items())
    return f"::{level} {listed}::{workflow(message)}"


def _github(found: Sequence[FileProblem], notes: Sequence[FileNote]) -> str:
    lines = [
        annotation(
            "error" if note.error else "warning", note.message, file=note.path, title="ai-eval file not read"
        )
        for note in notes
    ]
    for f in found:
        r = _region(f.problem)
        lines.append(
            annotation(
                _GITHUB_LEVELS[f.problem.severity],
                f.problem.message,
                file=f.path,
                line=r["startLine"],
                col=r["startColumn"],
                endLine=r["endLine"],
                endColumn=r["endColumn"],
                title="ai-eval " + f.problem.code,
            )
        )
    return "\n".join(lines)


def _sarif(found: Sequence[FileProblem], notes: Sequence[FileNote]) -> str:
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
                "invocations": [
                    {
                        "executionSuccessful": not any(note.error for note in notes),
                        "toolExecutionNotifications": [
                            {
                                "level": "error" if note.error else "warning",
                                "message": {"text": note.message},
                                "locations": [{"physicalLocation": {"artifactLocation": {"uri": note.path}}}],
                            }
                            for note in notes
                        ],
                    }
                ],
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False)
