"""Problems found in a document: a code from SPEC section 5, a severity, a message and a range."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, NamedTuple


class Severity(IntEnum):
    """Ordered as LSP orders DiagnosticSeverity, so the server converts by value."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3


SEVERITY_OF_CODE: dict[str, Severity] = {
    **{
        code: Severity.ERROR
        for code in (
            "yaml-syntax",
            "schema",
            "unknown-kind",
            "unknown-key",
            "duplicate-id",
            "invalid-regex",
            "unresolved-rubric",
            "composite-cycle",
            "composite-depth",
            "unresolved-source",
            "unused-weight",
            "plugin-error",
            "duplicate-rubric-id",
        )
    },
    "judge-without-description": Severity.WARNING,
    "ignored-by-combine": Severity.WARNING,
    "not-executed": Severity.INFORMATION,
}

# The codes the schema decides; a document has none of them exactly when the combined schema accepts it.
SCHEMA_CODES = frozenset({"schema", "unknown-kind", "unknown-key"})

BREAKING_CODES = SCHEMA_CODES | {"yaml-syntax"}
"""The errors that make a rubric broken: what the site refuses to load (SPEC section 3). Every
other error is met while the rubric runs, and fails its check with the cause."""


class Position(NamedTuple):
    """0-based line and 0-based column counted in Unicode code points (a tuple: a document can
    have tens of thousands of problems, and tuples are made and sorted fastest)."""

    line: int
    column: int


class Span(NamedTuple):
    start: Position
    end: Position

    @staticmethod
    def of(line: int, column: int, end_line: int, end_column: int) -> Span:
        return Span(Position(line, column), Position(end_line, end_column))


@dataclass(frozen=True, slots=True)
class Related:
    """Another place that explains a problem, such as a rubric in a composite chain."""

    path: str
    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Problem:
    code: str
    message: str
    span: Span
    data: dict[str, Any] = field(default_factory=dict, compare=False)
    related: tuple[Related, ...] = ()

    @property
    def severity(self) -> Severity:
        return SEVERITY_OF_CODE[self.code]

    def sort_key(self) -> tuple[Position, str, str]:
        return (self.span.start, self.code, self.message)
