"""One rubric document, checked: parse, validate against the combined schema, lint."""

from __future__ import annotations

from dataclasses import dataclass

from ai_eval_lsp.core.lints import Dispatch, lint_cases, lint_rubric, lint_workspace
from ai_eval_lsp.core.problems import Problem, Span
from ai_eval_lsp.core.validate import SchemaValidator
from ai_eval_lsp.core.workspace import RubricIndex, RubricSummary, summarize
from ai_eval_lsp.core.yamltree import Node, Parser, parse


@dataclass(frozen=True, slots=True)
class Rules:
    """What rubrics are checked against: the combined schema and who runs each check."""

    validator: SchemaValidator
    dispatch: Dispatch
    parser: Parser = "fast"


@dataclass(frozen=True, slots=True)
class Analysis:
    """A rubric's tree and the problems found in it alone; workspace problems come on top."""

    path: str
    text: str
    root: Node | None
    summary: RubricSummary
    problems: list[Problem]

    def problems_in(self, index: RubricIndex) -> list[Problem]:
        found = self.problems + lint_workspace(self.summary, index)
        return sorted(found, key=Problem.sort_key)


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
    return Analysis(path, text, root, summarize(path, root), problems)


def analyse_cases(
    text: str, validator: SchemaValidator, index: RubricIndex, parser: Parser = "fast"
) -> list[Problem]:
    """The problems of a cases file: its own, and against the rubrics of the workspace."""
    parsed = parse(text, parser)
    problems = list(parsed.problems)
    if parsed.root is not None and parsed.root.value is not None:
        problems.extend(validator.validate(parsed.root, text))
        problems.extend(lint_cases(parsed.root, index))
    elif not parsed.problems:
        problems.append(_empty("cases file", "`rubric` and `cases`", parsed.root))
    return sorted(problems, key=Problem.sort_key)


def _empty(subject: str, fields: str, root: Node | None) -> Problem:
    span = root.span if root is not None else Span.of(0, 0, 0, 0)
    return Problem("schema", f"the {subject} is empty: write a mapping with {fields}", span)
