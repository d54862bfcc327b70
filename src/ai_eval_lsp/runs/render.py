"""Runs, history and diffs in words: text, JSON, and markdown for pull requests. The CLI prints
them and the server sends them (`aiEval/runComplete`'s `summary`, `aiEval.render`), so every
client shows the same words."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from ai_eval_lsp.core.api import CheckOutcome
from ai_eval_lsp.core.compare import SITE_ID, CaseRecord, Diff, cases_file, flips, run_label
from ai_eval_lsp.core.results import EXPECTATIONS, CaseResult
from ai_eval_lsp.core.text import markdown, printable

if TYPE_CHECKING:
    from ai_eval_lsp.runs.run import RunResult


def count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def when(row: Mapping[str, Any]) -> str:
    return datetime.fromtimestamp(row["timestamp"], UTC).strftime("%Y-%m-%d %H:%M")


def interval(row: Mapping[str, Any]) -> str:
    if row["pass_rate_ci_low"] is None:
        return "[n/a]"
    return f"[{row['pass_rate_ci_low']:.2f}, {row['pass_rate_ci_high']:.2f}]"


def signed(value: float) -> str:
    return f"{value:+.2f}"


def diff_line(comparison: Diff) -> str:
    """The diff in one line: what `run` prints against the run before; runs with no case in
    common (of two cases files) have no change to tell, and the line says so."""
    if not comparison.in_common:
        other = comparison.other_cases_file
        line = f"vs {run_label(comparison.base)}: no case in common" + (f" (it ran {other})" if other else "")
        return f"{comparison.incomparable}; {line}" if comparison.incomparable else line
    flipped = comparison.flipped
    to_fail = sum(1 for _, base, head in comparison.cases if flips(base, head) and base and base.passed)
    deltas = comparison.deltas
    parts = [
        f"vs {run_label(comparison.base)}: pass rate {signed(deltas['pass_rate'])}",
        f"average {signed(deltas['avg_score'])}",
        f"{len(flipped)} flipped ({to_fail} to fail, {len(flipped) - to_fail} to pass)",
        f"McNemar p={comparison.mcnemar_p:.3g}",
        f"sign test p={comparison.sign_test_p:.3g}",
    ]
    line = ", ".join(parts)
    return f"{comparison.incomparable}; {line}" if comparison.incomparable else line


def run_json(name: str, result: RunResult) -> dict[str, Any]:
    return {
        "cases_file": name,
        "row": result.row,
        "verdicts": {c.case_id: c.verdict.to_json() if c.verdict else None for c in result.cases},
        "errors": {c.case_id: c.error for c in result.cases if c.error},
        "unmet_expectations": [c.case_id for c in result.cases if not c.expectation_met],
        "cases": cases_json(result),
        "gate_failures": result.gate_failures,
        "diff": result.previous.to_json() if result.previous else None,
        "notices": result.notices,
    }


def _gate(result: RunResult) -> str:
    return "passed" if result.row["passed_gate"] else f"FAILED ({'; '.join(result.gate_failures)})"


def _gate_markdown(result: RunResult) -> str:
    return (
        "passed" if result.row["passed_gate"] else f"**FAILED** ({markdown('; '.join(result.gate_failures))})"
    )


CaseState = Literal["passed", "failed", "errored"]


@dataclass(frozen=True, slots=True)
class CaseMessage:
    """One line of what a case got. Where it missed its `expect`, `expected` and `actual` are the
    verdicts (VS Code's Testing view shows them as a diff)."""

    text: str
    expected: str | None = None
    actual: str | None = None

    def to_json(self) -> dict[str, str]:
        shown = {"expected": self.expected, "actual": self.actual}
        return {"text": self.text, **{key: value for key, value in shown.items() if value is not None}}


def case_lines(case: CaseResult) -> list[CaseMessage]:
    """What a case got, in the words the CLI prints and every editor shows: `ERROR why`, else its
    verdict (`fail 0.00/5  reason`); then the `expect` it missed (`expected pass, which it did not
    get`) or cannot be checked against."""
    verdict = case.verdict
    if verdict is None or case.error:
        lines = [CaseMessage(f"ERROR {case.error or 'the rubric gave no verdict'}")]
    else:
        lines = [CaseMessage(f"{_word(verdict.passed)} {5 * verdict.score:.2f}/5  {verdict.reason}")]
    if case.expect is not None and case.expect not in EXPECTATIONS:
        lines.append(CaseMessage(f"`expect` must be pass or fail, not {case.expect!r}: fix the cases file"))
    elif not case.expectation_met:
        actual = None if verdict is None or case.error else _word(verdict.passed)
        lines.append(CaseMessage(f"expected {case.expect}, which it did not get", case.expect, actual))
    return lines


def outcome_line(outcome: CheckOutcome | str) -> str:
    """One check's outcome, as editors show a `runCheck`: `pass 5.00/5  found "sorry"`, or why it
    was skipped, in the words a verdict's reason names it with (`skipped (llm_judge, not
    executed)`)."""
    if isinstance(outcome, str):
        return f"skipped ({outcome})"
    return f"{_word(outcome.passed)} {5 * outcome.score:.2f}/5  {outcome.reason}"


def _word(passed: bool) -> str:
    return "pass" if passed else "fail"


def case_state(case: CaseResult) -> CaseState:
    """A case is a test: with `expect`, it passes when its verdict is the one expected (as a
    pytest assertion does); without, when the rubric passes it; one that cannot be scored errors."""
    if not case.scored or case.verdict is None:
        return "errored"
    passed = case.verdict.passed if case.expect is None else case.expectation_met
    return "passed" if passed else "failed"


def noteworthy(case: CaseResult) -> bool:
    """Whether a case is listed among those that failed, errored or missed their `expect` (a case
    that fails as its `expect: fail` says is: its verdict still says why)."""
    return not (case.scored and case.verdict is not None and case.verdict.passed and case.expectation_met)


def cases_json(result: RunResult) -> dict[str, dict[str, Any]]:
    """Each case as a client shows it: its `state` and the `messages` of `case_lines` (none for a
    case the rubric passed as expected)."""
    return {
        case.case_id: {
            "state": case_state(case),
            "messages": [line.to_json() for line in case_lines(case)] if noteworthy(case) else [],
        }
        for case in result.cases
    }


def _case_lines(result: RunResult, failed_only: bool) -> list[tuple[str, str]]:
    """(case, line) for each case's `case_lines`, or only those of noteworthy cases."""
    return [
        (case.case_id, line.text)
        for case in result.cases
        if not failed_only or noteworthy(case)
        for line in case_lines(case)
    ]


def run_line(result: RunResult) -> str:
    """A run in one line: its target, pass rate, average, gate and counts."""
    row = result.row
    return (
        f"{printable(row['target_id'])}: pass rate {row['pass_rate']:.2f} {interval(row)}, average {row['avg_score']:.2f}/5, "
        f"gate {_gate(result)}, {count(row['question_count'], 'case')}, {count(row['error_count'], 'error')}"
    )


_NAMED = 5
"""How many flipped cases a summary names before it says how many more."""


def _names(case_ids: Sequence[str]) -> str:
    named = ", ".join(case_ids[:_NAMED])
    return named + (f" and {len(case_ids) - _NAMED} more" if len(case_ids) > _NAMED else "")


def now_failing(result: RunResult) -> list[str]:
    """The cases that passed in the same cases file's run before and fail now."""
    change = result.change
    if change is None:
        return []
    return [case_id for case_id, base, head in change.cases if flips(base, head) and base and base.passed]


def summary(result: RunResult) -> str:
    """The one line a client shows for a run: what flipped against the same cases file's run
    before (`support_reply: 2 cases now fail: too_short, rude; 1 fixed`), else `run_line`."""
    change = result.change
    failing = now_failing(result)
    fixed = [case_id for case_id in change.flipped if case_id not in failing] if change else []
    if not failing and not fixed:
        return run_line(result)
    parts = []
    if failing:
        verb = "now fails" if len(failing) == 1 else "now fail"
        parts.append(f"{count(len(failing), 'case')} {verb}: {_names(failing)}")
    if fixed:
        parts.append(
            f"{len(fixed)} fixed" if failing else f"{count(len(fixed), 'case')} fixed: {_names(fixed)}"
        )
    return f"{printable(result.row['target_id'])}: " + "; ".join(parts)


def format_run(name: str, result: RunResult, every_case: bool = False) -> str:
    """A run as `run` prints it: its line, the cases that failed, errored or missed their `expect`
    (`every_case`: every case), how many of each, the diff to the run before, and the row's
    identity (`--format json` has the whole row: a big run's `scores_json` is no line to read)."""
    row = result.row
    cases, errors = row["question_count"], row["error_count"]
    lines = [f"{name}: {run_line(result)}"]
    if cases and errors == cases:
        lines.append("  warning: no case could be scored; see the errors below")
    lines += [f"  {case_id}: {text}" for case_id, text in _case_lines(result, failed_only=not every_case)]
    lines.append(f"  {_tally(result, every_case)}")
    if result.previous is not None:
        lines.append(f"  {diff_line(result.previous)}")
    lines += [f"  {notice}" for notice in result.notices]
    lines.append(
        "  row: " + json.dumps({key: row[key] for key in ROW_SHOWN}, ensure_ascii=False)[:-1] + ", ...}"
    )
    return "\n".join(lines)


ROW_SHOWN = ("id", "target_id", "run_id")
"""The fields of the row `run`'s text names it by (the rest: `--format json`)."""


def _tally(result: RunResult, every_case: bool) -> str:
    """How many cases passed, failed and errored (those of none said), how many missed their
    `expect`, and, where cases were left out, how to see them: `3 passed, 2 failed; -v lists every
    case`."""
    scored = [case for case in result.cases if case.scored and case.verdict is not None]
    passed = sum(1 for case in scored if case.verdict is not None and case.verdict.passed)
    counts = {"passed": passed, "failed": len(scored) - passed, "errored": len(result.cases) - len(scored)}
    parts = [", ".join(f"{number} {word}" for word, number in counts.items() if number) or "no case"]
    missed = sum(1 for case in result.cases if not case.expectation_met)
    if missed:
        parts.append(f"{missed} missed {'its' if missed == 1 else 'their'} `expect`")
    if not every_case and any(not noteworthy(case) for case in result.cases):
        parts.append("-v lists every case")
    return "; ".join(parts)


def site_line(
    row: Mapping[str, Any], previous: Mapping[str, Any] | None, regressed_beyond: float | None = None
) -> str:
    """A site's run in one line, as a client is told of it and `site pull` prints it: its figures
    and, after the target's previous site run, how its average moved; a run whose average fell
    more than the tolerance (`regressed_beyond`) says `regressed` first, and the tolerance last."""
    verb = " regressed:" if regressed_beyond is not None else ":"
    line = (
        f"{run_label(row)} of {printable(row['target_id'])}{verb} pass rate {row['pass_rate']:.2f} {interval(row)}, "
        f"average {row['avg_score']:.2f}/5, gate {'passed' if row['passed_gate'] else 'failed'}, "
        f"{count(row['question_count'], 'question')}, {count(row['error_count'], 'error')}"
    )
    if previous is None:
        return line
    moved = (
        f"{line}; average {signed(row['avg_score'] - previous['avg_score'])} against {run_label(previous)}"
    )
    return moved if regressed_beyond is None else f"{moved} (tolerance {regressed_beyond:g})"


def run_facts(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A run as a person reads it, fact by fact, in the words of the history's table: what an
    editor shows of a run it lists (`aiEval/runComplete` and `aiEval.siteRuns` carry them, so
    clients format no figure)."""
    return [
        ("date", f"{when(row)} UTC"),
        ("pass rate", f"{row['pass_rate']:.2f} {interval(row)}"),
        ("average", f"{row['avg_score']:.2f}/5"),
        ("gate", "passed" if row["passed_gate"] else "failed"),
        ("questions" if SITE_ID in row else "cases", str(row["question_count"])),
        ("errors", str(row["error_count"])),
        ("source", row["source"]),
    ]


def run_column(row: Mapping[str, Any]) -> str:
    """A run in a table's first column: its run id, or `site 412`."""
    return f"site {row[SITE_ID]}" if SITE_ID in row else str(row["run_id"])


def _figures(row: Mapping[str, Any]) -> tuple[str, ...]:
    """A stored row's run, when, pass rate, interval, average and gate, as history tables show them."""
    return (
        run_column(row),
        when(row),
        f"{row['pass_rate']:.2f}",
        interval(row),
        f"{row['avg_score']:.2f}/5",
        "passed" if row["passed_gate"] else "FAILED",
    )


FIGURES = ("run", "when (UTC)", "pass rate", "95% CI", "average", "gate")


def history_title(target: str, rows: Sequence[Mapping[str, Any]]) -> str:
    return f"{printable(target)}: {count(len(rows), 'run')}, newest first"


def history_table(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    """A target's rows as the history shows them, its header first, in any format."""
    header = (*FIGURES, "cases", "errors", "source")
    return [
        header,
        *(
            (*_figures(row), str(row["question_count"]), str(row["error_count"]), printable(row["source"]))
            for row in rows
        ),
    ]


def nothing_to_compare(target: str, latest: Mapping[str, Any] | None, runs: int) -> str:
    """Why a history opens on no diff: too few runs, or none of the latest's kind (local, or the
    site's) before it shares a case (a question) with it."""
    if latest is None or runs < 2:
        return f"`{printable(target)}` has {count(runs, 'run')}: nothing to compare yet."
    ran = f" (it ran {cases_file(latest)})" if cases_file(latest) else ""
    kind, cases = ("site run", "question") if SITE_ID in latest else ("run", "case")
    return (
        f"No {kind} before {run_label(latest)}{ran} has a {cases} in common with it, so there is no diff "
        f"to show: their {cases}s differ. Pick two runs to compare them all the same."
    )


def format_history(target: str, rows: Sequence[Mapping[str, Any]]) -> str:
    return history_title(target, rows) + "\n" + _columns(history_table(rows))


def format_history_markdown(target: str, rows: Sequence[Mapping[str, Any]]) -> str:
    header, *table = history_table(rows)
    lines = [
        f"### ai-eval: {markdown(history_title(target, rows))}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(markdown(cell) for cell in line) + " |" for line in table),
    ]
    return "\n".join(lines)


def format_targets(targets: Sequence[tuple[str, Mapping[str, Any] | None, int]]) -> str:
    """Every target with runs: how many, and its latest run's figures."""
    if not targets:
        return "no runs are stored yet: `ai-eval-lsp run CASES.yaml` stores them"
    header = ("target", "runs", "latest run", *FIGURES[1:])
    table = [
        (printable(target), str(runs), *_figures(row)) for target, row, runs in targets if row is not None
    ]
    return _columns([header, *table])


def _columns(table: Sequence[Sequence[str]]) -> str:
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in table
    )


def _verdict(case: CaseRecord | None) -> str:
    if case is None:
        return "-"
    if case.score is None:
        return "error"
    state = "tied " if case.tied else "" if case.passed is None else ("pass " if case.passed else "fail ")
    return f"{state}{case.score:.2f}"


TIED = (
    "tied: a site question scored the same as one on the other side of its row's pass line, so the "
    "row leaves its verdict unknown (never counted as a flip)"
)


def _tied(comparison: Diff) -> list[str]:
    """The legend of `tied`, when a case of the diff is."""
    tied = any(case is not None and case.tied for _, base, head in comparison.cases for case in (base, head))
    return [TIED] if tied else []


def _change(base: CaseRecord | None, head: CaseRecord | None) -> str:
    if flips(base, head):
        return "flipped to pass" if head is not None and head.passed else "flipped to fail"
    if base is None:
        return "new"
    if head is None:
        return "gone"
    if base.score is not None and head.score is not None and base.score != head.score:
        return "up" if head.score > base.score else "down"
    return ""


def _summary(comparison: Diff) -> list[str]:
    base, head, deltas = comparison.base, comparison.head, comparison.deltas
    lines = [line for line in (comparison.incomparable, comparison.unpaired) if line]
    return [
        *lines,
        f"pass rate {base['pass_rate']:.2f} -> {head['pass_rate']:.2f} ({signed(deltas['pass_rate'])}), "
        f"average {base['avg_score']:.2f} -> {head['avg_score']:.2f} ({signed(deltas['avg_score'])}) of 5",
        f"{count(len(comparison.flipped), 'verdict')} flipped; exact McNemar p = {comparison.mcnemar_p:.3g}, "
        f"sign test on scores p = {comparison.sign_test_p:.3g}",
    ]


def format_diff(comparison: Diff) -> str:
    base, head = comparison.base, comparison.head
    title = f"{printable(comparison.target)}: {run_label(base)} ({when(base)}) -> {run_label(head)} ({when(head)}) UTC"
    table = [("case", "base", "head", "change")] + [
        (_case_name(case_id, b, h), _verdict(b), _verdict(h), _change(b, h))
        for case_id, b, h in comparison.cases
    ]
    return "\n".join([title, *_summary(comparison), "", _columns(table), *_tied(comparison)])


def _case_name(key: str, base: CaseRecord | None, head: CaseRecord | None) -> str:
    """A case as a diff lists it: by its id; paired by question, the question's id and the local
    case's own id beside it (`q17 (refund_late)`)."""
    local = next(
        (case.case_id for case in (base, head) if case is not None and case.case_id != key),
        None,
    )
    name = f"{key} ({local})" if local is not None and not key.startswith(local) else key
    return printable(name)


def format_diff_markdown(comparison: Diff) -> str:
    """What a pull-request comment wants: the verdict first, the changed cases, the rest folded."""
    base, head = comparison.base, comparison.head
    changed = [(case_id, b, h) for case_id, b, h in comparison.cases if _change(b, h)]
    unchanged = [(case_id, b, h) for case_id, b, h in comparison.cases if not _change(b, h)]
    lines = [
        f"### ai-eval: {markdown(comparison.target, code=True)}, {run_label(base)} -> {run_label(head)}",
        "",
        *(
            f"> **Warning:** {markdown(line)}"
            for line in (comparison.incomparable, comparison.unpaired)
            if line
        ),
        "| | base | head | change |",
        "|---|---:|---:|---:|",
        f"| pass rate | {base['pass_rate']:.2f} {interval(base)} | {head['pass_rate']:.2f} {interval(head)} "
        f"| {signed(comparison.deltas['pass_rate'])} |",
        f"| average (of 5) | {base['avg_score']:.2f} | {head['avg_score']:.2f} | {signed(comparison.deltas['avg_score'])} |",
        f"| gate | {'passed' if base['passed_gate'] else 'failed'} | {'passed' if head['passed_gate'] else 'failed'} | |",
        "",
        f"{count(len(comparison.flipped), 'verdict')} flipped. Exact McNemar p = {comparison.mcnemar_p:.3g}; "
        f"sign test on scores p = {comparison.sign_test_p:.3g}.",
    ]
    for title, cases in (("Changed cases", changed), ("Unchanged cases", unchanged)):
        if not cases:
            continue
        rows = [
            f"| {markdown(_case_name(case_id, b, h), code=True, cell=True)} | {_verdict(b)} | {_verdict(h)} | {_change(b, h)} |"
            for case_id, b, h in cases
        ]
        table = ["| case | base | head | change |", "|---|---:|---:|---|", *rows]
        if title == "Unchanged cases":
            lines += ["", f"<details><summary>{title} ({len(cases)})</summary>", "", *table, "", "</details>"]
        else:
            lines += ["", f"**{title}**", "", *table]
    for line in _tied(comparison):
        lines += ["", f"_{markdown(line)}_"]
    return "\n".join(lines)


def format_runs_markdown(results: Sequence[tuple[str, RunResult]], failed: Sequence[tuple[str, str]]) -> str:
    """Runs as a pull request or a CI job summary shows them: a row per cases file (and why a file
    could not run), the cases that failed, errored or missed their `expect`, then each run's diff
    to the run before."""
    lines = [
        "| cases file | rubric | run | pass rate [95% CI] | average | gate | cases | errors |",
        "|---|---|---:|---:|---:|---|---:|---:|",
    ]
    for name, result in results:
        row = result.row
        lines.append(
            f"| {markdown(name, code=True, cell=True)} | {markdown(row['target_id'], code=True, cell=True)} "
            f"| {row['run_id']} | {row['pass_rate']:.2f} {interval(row)} | {row['avg_score']:.2f}/5 "
            f"| {_gate_markdown(result)} | {row['question_count']} "
            f"| {row['error_count']} |"
        )
    lines += [
        f"| {markdown(name, code=True, cell=True)} | | | | | could not run: {markdown(why)} | | |"
        for name, why in failed
    ]
    noted = [
        f"- {markdown(name, code=True)} {markdown(case_id, code=True)}: {markdown(text)}"
        for name, result in results
        for case_id, text in _case_lines(result, failed_only=True)
    ]
    if noted:
        summary = "Cases that failed, errored or missed their expect"
        lines += ["", f"<details><summary>{summary} ({len(noted)})</summary>", "", *noted, "", "</details>"]
    for _, result in results:
        if result.previous is not None:
            lines += ["", format_diff_markdown(result.previous)]
    return "\n".join(lines)
