"""One document checked: parse, validate against its schema, lint. Problems that need the other
files of the workspace are computed from summaries, on top, for whatever index is current."""

from __future__ import annotations

from dataclasses import dataclass, field

from ai_eval_lsp.core.lints import Dispatch, lint_cases, lint_cases_workspace, lint_rubric, lint_workspace
from ai_eval_lsp.core.problems import Problem, Span
from ai_eval_lsp.core.validate import SchemaValidator
from ai_eval_lsp.core.workspace import (
    CasesSummary,
    Role,
    RubricIndex,
    Summary,
    summarize,
    summarize_cases,
)
from ai_eval_lsp.core.yamltree import Node, Parser, parse


@dataclass(frozen=True, slots=True)
class Rules:
    """What documents are checked against: the combined schema, who runs each check, and the
    cases files' schema."""

    validator: SchemaValidator
    dispatch: Dispatch
    parser: Parser = "fast"
    cases_validator: SchemaValidator = field(default_factory=SchemaValidator.for_cases)


@dataclass(frozen=True, slots=True)
class Analysis:
    """A rubric or cases file's tree, its summary, and the problems found in it alone."""

    role: Role
    path: str
    text: str
    root: Node | None
    summary: Summary
    problems: list[Problem]

    def problems_in(self, rubrics: RubricIndex | None) -> list[Problem]:
        """Its problems with those against the workspace's rubrics (None: own problems only)."""
        if rubrics is None:
            return self.problems
        if isinstance(self.summary, CasesSummary):
            found = self.problems + lint_cases_workspace(self.summary, rubrics)
        else:
            found = self.problems + lint_workspace(self.summary, rubrics)
        return sorted(found, key=Problem.sort_key)


def analyse(
    role: Role, path: str, text: str, rules: Rules, decode_problems: list[Problem] | None = None
) -> Analysis:
    """Check one document as the role it has."""
    if role == "cases":
        return analyse_cases(path, text, rules, decode_problems)
    return analyse_rubric(path, text, rules, decode_problems)


def analyse_rubric(
    path: str, text: str, rules: Rules, decode_problems: list[Problem] | None = None
) -> Analysis:
    parsed = parse(text, rules.parser)
    problems = list(decode_problems or []) + parsed.problems
    root = parsed.root
    if root is not None and root.value is not None:
        problems.extend(rules.validator.validate(root, text))
        problems.extend(lint_rubric(root, text, rules.validator.kinds, rules.dispatch))
    elif not parsed.problems:
        problems.append(_empty("rubric", "`id`, `version`, `checks` and `scoring`", root))
    problems.sort(key=Problem.sort_key)
    return Analysis("rubric", path, text, root, summarize(path, root, text, parsed.problems), problems)


def analyse_cases(
    path: str, text: str, rules: Rules, decode_problems: list[Problem] | None = None
) -> Analysis:
    """A cases file's own problems; `problems_in` adds those against the workspace's rubrics."""
    parsed = parse(text, rules.parser)
    problems = list(decode_problems or []) + parsed.problems
    summary = summarize_cases(path, parsed.root, text)
    if parsed.root is not None and parsed.root.value is not None:
        problems.extend(rules.cases_validator.validate(parsed.root, text))
        problems.extend(lint_cases(summary))
    elif not parsed.problems:
        problems.append(_empty("cases file", "`rubric` and `cases`", parsed.root))
    problems.sort(key=Problem.sort_key)
    return Analysis("cases", path, text, parsed.root, summary, problems)


def _empty(subject: str, fields: str, root: Node | None) -> Problem:
    span = root.span if root is not None else Span.of(0, 0, 0, 0)
    return Problem("schema", f"the {subject} is empty: write a mapping with {fields}", span)
