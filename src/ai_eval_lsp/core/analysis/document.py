"""One document checked whole: parse, validate against its schema, lint. Problems that need the
other files of the workspace are computed from summaries, on top, for whatever index is current
(`Analysis.problems_in`). A large text is read once by its analysis and its summary
(`shared.py`); an edit is read in proportion to it (`incremental.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ai_eval_lsp.core.analysis.shared import SHARED_FROM, Readings
from ai_eval_lsp.core.cursor import At, locate
from ai_eval_lsp.core.index import (
    CasesSummary,
    Role,
    RubricIndex,
    Summary,
    case_summary,
    cases_summary,
    check_facts,
    rubric_summary,
    summarize,
    summarize_cases,
)
from ai_eval_lsp.core.items import CONTAINERS, ItemFindings, Layout, Listed, flatten, layout_of
from ai_eval_lsp.core.lints import (
    CrossFileMemo,
    Dispatch,
    check_id,
    check_lints,
    lint_cases,
    lint_cases_workspace,
    lint_workspace,
    rubric_lints,
)
from ai_eval_lsp.core.problems import Problem, Span
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.core.validate import SchemaValidator
from ai_eval_lsp.core.yamltree import Node, Parser, ParseResult, collector_paused, parse


@dataclass(frozen=True, slots=True)
class Rules:
    """What documents are checked against: the combined schema, who runs each check, and the
    cases files' schema."""

    validator: SchemaValidator
    dispatch: Dispatch
    parser: Parser = "fast"
    cases_validator: SchemaValidator = field(default_factory=SchemaValidator.for_cases)
    readings: Readings = field(default_factory=Readings, compare=False, repr=False)
    """The readings of large texts, shared by the analysis and the summary of one (`shared.py`)."""

    def validator_for(self, role: Role) -> SchemaValidator:
        return self.cases_validator if role == "cases" else self.validator


@dataclass(frozen=True, slots=True, eq=False)
class Analysis:
    """A rubric or cases file's tree, its summary, and the problems found in it alone. Nothing
    reading it changes it: an item an edit did not touch is shared with the analyses before, and
    placed where this text has it as it is read (`core/items.py`)."""

    role: Role
    path: str
    text: str
    tree: Node | None
    """The tree as read: its top level where this text has it, its checks or cases where the text
    each was read in had it (`root`, `at`, `item` and `listed` place them where this one does)."""
    summary: Summary
    problems: list[Problem]
    layout: Layout | None = None
    """Its items, for `update`; None when an edit must read the document whole."""

    @property
    def value(self) -> Any:
        """The document as plain data (None when it did not read)."""
        return self.tree.value if self.tree is not None else None

    @property
    def root(self) -> Node | None:
        """The tree with every node where this text has it: the checks or cases an edit moved
        are copies, moved (after an edit near the top, most of the tree: `at`, `item` and
        `listed` read what they need alone)."""
        if self.layout is not None and self.tree is not None:
            return self.layout.placed_root()
        return self.tree

    def at(self, line: int, column: int) -> At | None:
        """What is under a cursor: `locate` on the tree, placing only the check or case under it
        (hover right after a keystroke in a 10,000-check rubric places none of the others)."""
        if self.tree is None:
            return None
        return locate(self.tree, line, column, self.layout.item_at if self.layout is not None else None)

    def item(self, number: int) -> Node | None:
        """Check or case `number`, where this text has it."""
        if self.tree is None:
            return None
        if self.layout is None:
            return self.tree.at((CONTAINERS[self.role], number))
        return self.layout.placed(number) if 0 <= number < len(self.layout.items) else None

    def listed(self) -> list[Listed]:
        """The checks or cases, each with its range where this text has it and its value."""
        if self.layout is not None and self.tree is not None:
            return self.layout.listed()
        items = self.tree.at((CONTAINERS[self.role],)) if self.tree is not None else None
        return [Listed.of(node) for node in (items.items or [] if items is not None else [])]

    def problems_in(self, rubrics: RubricIndex | None, memo: CrossFileMemo | None = None) -> list[Problem]:
        """Its problems with those against the workspace's rubrics (None: own problems only);
        `memo`: what they were made of for this document's analyses before (its owner's, which
        this updates), so what did not change is not made again."""
        if rubrics is None:
            return self.problems
        if isinstance(self.summary, CasesSummary):
            across = lint_cases_workspace(self.summary, rubrics, memo)
        else:
            across = lint_workspace(self.summary, rubrics, memo)
        return sorted(self.problems + across, key=Problem.sort_key) if across else self.problems


def analyse(
    role: Role, path: str, text: str, rules: Rules, decode_problems: list[Problem] | None = None
) -> Analysis:
    """Check one document as the role it has."""
    if len(text) < SHARED_FROM:
        with collector_paused():
            return _analyse(role, path, text, rules, decode_problems, None)
    reading, summarizing = rules.readings.analysing(text, rules.parser, role, path)
    try:
        parsed = summarizing.tree() if summarizing is not None else None
        with collector_paused():
            found = _analyse(role, path, text, rules, decode_problems, parsed)
    except BaseException as err:
        reading.summary.set_exception(err)
        raise
    reading.summary.set_result(found.summary)
    return found


def summary_of(role: Role, path: str, text: str, rules: Rules) -> Summary:
    """What other files need to know of a document, from its text: the summary `analyse` gives
    (taken from an analysis of the same text under way or done, for a large text)."""
    if len(text) < SHARED_FROM:
        return _summarized(role, path, text, parse(text, rules.parser))
    return rules.readings.summary(role, path, text, rules.parser, partial(_summarized, role, path, text))


def _summarized(role: Role, path: str, text: str, parsed: ParseResult) -> Summary:
    if role == "cases":
        return summarize_cases(path, parsed.root, text)
    return summarize(path, parsed.root, text, parsed.problems)


def _analyse(
    role: Role,
    path: str,
    text: str,
    rules: Rules,
    decode_problems: list[Problem] | None,
    parsed: ParseResult | None,
) -> Analysis:
    if parsed is None:
        parsed = parse(text, rules.parser)
    problems = list(decode_problems or []) + parsed.problems
    root = parsed.root
    if root is None or root.value is None:
        if not parsed.problems:
            problems.append(_empty(role, root))
        return Analysis(
            role, path, text, root, bare_summary(role, path, root, text, parsed.problems), problems
        )
    validator = rules.validator_for(role)
    top = validator.top_problems(root, text)
    found = [
        item_found(role, number, item, text, rules) for number, item in enumerate(validator.items_of(root))
    ]
    problems += top
    summary = assemble(role, path, root, found, text, problems, parsed.problems)
    layout = layout_of(role, root, text, parsed, top, found) if not decode_problems else None
    return Analysis(role, path, text, root, summary, problems, layout)


def analyse_rubric(
    path: str, text: str, rules: Rules, decode_problems: list[Problem] | None = None
) -> Analysis:
    return analyse("rubric", path, text, rules, decode_problems)


def analyse_cases(
    path: str, text: str, rules: Rules, decode_problems: list[Problem] | None = None
) -> Analysis:
    """A cases file's own problems; `problems_in` adds those against the workspace's rubrics."""
    return analyse("cases", path, text, rules, decode_problems)


def item_found(
    role: Role, number: int, item: Node, text: str, rules: Rules, parsed: Sequence[Problem] = ()
) -> ItemFindings:
    """What one check or case holds, with the parser's problems in it (`parsed`)."""
    # Most items have no problem: one empty tuple stands for all their empty lists.
    if role == "cases":
        schema = rules.cases_validator.item_problems(number, item, text) or ()
        return ItemFindings(parsed, schema, (), None, case_summary(number, item))
    return ItemFindings(
        parsed,
        rules.validator.item_problems(number, item, text) or (),
        check_lints(number, item, text, rules.validator.kinds, rules.dispatch) or (),
        check_id(item),
        check_facts(number, item),
    )


def assemble(
    role: Role,
    path: str,
    root: Node,
    found: Sequence[ItemFindings],
    text: str | LineIndex,
    problems: list[Problem],
    parsed: Sequence[Problem],
) -> Summary:
    """The summary, and `problems` completed (its parser's and top-level ones given) and sorted,
    from what each item holds: the same steps for a document read whole or item by item."""
    problems += flatten(item.schema for item in found)
    summary: Summary
    if role == "cases":
        summary = cases_summary(path, root, [item.facts for item in found], text)  # type: ignore[misc]
        problems += lint_cases(summary)
    else:
        problems += rubric_lints(root, [item.check_id for item in found], [item.lints for item in found])
        summary = rubric_summary(path, root, [item.facts for item in found], text, parsed)  # type: ignore[misc]
    problems.sort(key=Problem.sort_key)
    return summary


def bare_summary(
    role: Role, path: str, root: Node | None, text: str | LineIndex, parsed: Sequence[Problem]
) -> Summary:
    """The summary of a document without items."""
    if role == "cases":
        return cases_summary(path, root, [], text)
    return rubric_summary(path, root, [], text, parsed)


def _empty(role: Role, root: Node | None) -> Problem:
    subject, fields = (
        ("cases file", "`rubric` and `cases`")
        if role == "cases"
        else ("rubric", "`id`, `version`, `checks` and `scoring`")
    )
    span = root.span if root is not None else Span.of(0, 0, 0, 0)
    return Problem("schema", f"the {subject} is empty: write a mapping with {fields}", span)
