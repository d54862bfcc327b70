"""Grading one case: an evaluator over a library of rubrics, with the run's plugin host and PHP
worker, and a case's verdict or why it has none. Shared by a run in one process and the case
workers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from ai_eval_lsp.core.evaluate import Evaluator, RubricError, RubricSource
from ai_eval_lsp.core.results import CaseResult
from ai_eval_lsp.hosts.python import PluginHost
from ai_eval_lsp.project.project import Project


@contextlib.contextmanager
def evaluating(project: Project, library: RubricSource) -> Iterator[Evaluator]:
    """An evaluator over a library of rubrics; its Python plugins run in one plugin host and its
    PHP executors in one PHP worker, each stopped when the evaluator is done."""
    timeout = project.settings.run_timeout_seconds
    with PluginHost(timeout) as host, project.php_worker() or contextlib.nullcontext() as php:
        yield Evaluator(project.registry.runners(timeout, host, php), library)


def grade(evaluator: Evaluator, rubrics: RubricSource, ref: str, name: str, case: Any) -> CaseResult:
    """One case graded: its verdict, or why it has none."""
    if not isinstance(case, Mapping):
        return CaseResult(name, None, "the case is not a mapping", None)
    expect = None if case.get("expect") is None else str(case["expect"])
    response, question = case.get("response"), case.get("question", {})
    asked = question_id(question) if isinstance(question, Mapping) else None
    if not isinstance(response, str):
        return CaseResult(name, None, "the case has no `response` string", expect, asked)
    if not isinstance(question, Mapping):
        return CaseResult(name, None, "`question` must be a mapping", expect)
    try:
        rubric = rubrics(ref)
        if rubric is None:
            return CaseResult(name, None, f"no rubric `{ref}` in the workspace", expect, asked)
        verdict = evaluator.evaluate(rubric, response, question)
    except RubricError as err:
        return CaseResult(name, None, str(err), expect, asked)
    if verdict is None:
        return CaseResult(name, None, f"rubric `{ref}` has no executable check: no verdict", expect, asked)
    return CaseResult(name, verdict, None, expect, asked)


def question_id(question: Mapping[str, Any]) -> str | None:
    """A question's `id` as the site keys its scores (`scores_json`): a string, or a number written out."""
    found = question.get("id")
    if isinstance(found, bool) or not isinstance(found, str | int):
        return None
    return str(found)
