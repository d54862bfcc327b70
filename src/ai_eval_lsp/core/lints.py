"""Rules beyond the schema: within one rubric, and across the rubrics of a workspace."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import regex

from ai_eval_lsp.core.api import Services
from ai_eval_lsp.core.index import CasesSummary, RubricIndex, RubricSummary, check_name
from ai_eval_lsp.core.problems import Problem, Related, Span
from ai_eval_lsp.core.refs import parse_ref
from ai_eval_lsp.core.yamltree import Node


@dataclass(frozen=True, slots=True)
class Claim:
    """Who runs a check: the runner's name, or None when nobody claims it; `skipped`: why the
    runner that claims it cannot run it here; `error`: why dispatch failed (an `applies()` raised)."""

    runner: str | None = None
    skipped: str | None = None
    error: str | None = None


Dispatch = Callable[[Mapping[str, Any]], Claim]
"""Who runs a check, as the evaluator decides it."""

MAX_COMPOSITE_HOPS = 3
_LISTED_IDS = 12
"""Up to this many rubrics, an unresolved reference lists them all; past it, the closest."""
_LISTED_UNREADABLE = 3
"""Up to this many unreadable rubric files an unresolved reference names; past it, a count."""

_FLAGS = {
    "i": regex.IGNORECASE,
    "m": regex.MULTILINE,
    "s": regex.DOTALL,
    "x": regex.VERBOSE,
    "u": regex.UNICODE,
}
_NUMERIC_MODES = ("weighted_avg", "min", "max", "median")


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str, flags: str) -> regex.Pattern[str]:
    """Compile a regex check's pattern as the runtime does; raises `regex.error`. Kept: a big
    rubric repeats its patterns, and `regex`'s own cache is small."""
    value = regex.V0
    for flag in flags:
        value |= _FLAGS.get(flag, 0)
    return regex.compile(pattern, value)


def lint_rubric(root: Node, text: str, kinds: Mapping[str, Any], dispatch: Dispatch) -> list[Problem]:
    """The rules of one rubric that need no other file."""
    if root.entries is None:
        return []
    checks = root.at(("checks",))
    found = list(checks.items or [] if checks else [])
    own = [check_lints(index, check, text, kinds, dispatch) for index, check in enumerate(found)]
    return rubric_lints(root, [check_id(check) for check in found], own)


CheckId = tuple[str, int, int, int, int]
"""A check's id and where it is written: line, column, end line, end column (plain ints: a rubric
of 66,000 checks keeps one per check)."""


def rubric_lints(
    root: Node, ids: Sequence[CheckId | None], own: Sequence[Sequence[Problem]]
) -> list[Problem]:
    """A rubric's lints from each check's id and own lints: repeated ids, then scoring's rules."""
    problems: list[Problem] = []
    first: dict[str, int] = {}
    for found, check_problems in zip(ids, own, strict=True):
        if found is not None:
            name, line, *_ = found
            earlier = first.get(name)
            if earlier is None:
                first[name] = line
            else:
                problems.append(repeated_id(found, earlier))
        problems.extend(check_problems)
    problems.extend(scoring_lints(root, first))
    return problems


def repeated_id(found: CheckId, first_line: int) -> Problem:
    """The problem of a check whose id an earlier check, on `first_line`, holds."""
    return Problem(
        "duplicate-id",
        f"the check id `{found[0]}` is already used at line {first_line + 1}; "
        "check ids must be unique in a rubric",
        Span.of(*found[1:]),
    )


def check_id(check: Node) -> CheckId | None:
    """A check's id and where it is written, when it is a string."""
    entry = check.get("id")
    if entry is None or not isinstance(entry.value.value, str):
        return None
    node = entry.value
    return node.value, node.line, node.column, node.end_line, node.end_column


def check_lints(
    index: int, check: Node, text: str, kinds: Mapping[str, Any], dispatch: Dispatch
) -> list[Problem]:
    """The lints of one check that need no other check."""
    return list(_lint_check(index, check, text, kinds, dispatch)) if check.entries is not None else []


def _lint_check(
    index: int, check: Node, text: str, kinds: Mapping[str, Any], dispatch: Dispatch
) -> Iterator[Problem]:
    value: dict[str, Any] = check.value
    kind_entry = check.get("kind")
    kind = value.get("kind")
    if kind_entry is None or not isinstance(kind, str) or kind not in kinds:
        return  # the schema reports it
    # Its name and the range of its kind are made for a message only: most checks have none.
    claimed = dispatch(value)
    if claimed.error:
        yield Problem(
            "plugin-error",
            f"check `{check_name(index, value)}` cannot be dispatched: {claimed.error}",
            kind_entry.value.span,
        )
    elif claimed.runner is None:
        yield Problem(
            "not-executed",
            f"`{kind}` checks are not executed at run time: `{check_name(index, value)}` is skipped "
            "and named in the rubric's reason",
            kind_entry.value.span,
        )
    elif claimed.skipped:
        yield Problem(
            "not-executed",
            f"`{kind}` checks run on the site ({claimed.runner}) but not in ai-eval-lsp's runs: it "
            f"{claimed.skipped}; `{check_name(index, value)}` is skipped there and named in the "
            "rubric's reason",
            kind_entry.value.span,
        )
    if kind == "llm_judge" and not (
        isinstance(value.get("description"), str) and value["description"].strip()
    ):
        yield Problem(
            "judge-without-description",
            f"llm_judge check `{check_name(index, value)}` has no `description`: only the "
            "description reaches the judges, so this check contributes nothing; add one",
            kind_entry.value.span,
        )
    if kind == "regex":
        yield from _lint_pattern(check, text, index)


def _lint_pattern(check: Node, text: str, index: int) -> Iterator[Problem]:
    entry = check.get("pattern")
    flags = check.value.get("flags", "")
    if entry is None or not isinstance(entry.value.value, str) or not isinstance(flags, str):
        return
    pattern = entry.value.value
    try:
        compile_pattern(pattern, flags)
    except regex.error as err:
        position = getattr(err, "pos", None)
        where = f" at position {position}" if isinstance(position, int) else ""
        yield Problem(
            "invalid-regex",
            f"regex check `{check_name(index, check.value)}`: the pattern does not compile: "
            f"{getattr(err, 'msg', err)}{where}",
            _pattern_span(entry.value, text, position if isinstance(position, int) else None),
        )


def _pattern_span(node: Node, text: str, position: int | None) -> Span:
    """The character at fault where the source spells the pattern literally, else the whole value."""
    source = text[node.start_index : node.end_index]
    quote = 1 if node.style in ("'", '"') else 0
    literal = source[quote : len(source) - quote] if quote else source
    single_line = node.span.start.line == node.span.end.line
    if position is None or literal != node.value or not single_line:
        return node.span
    column = node.span.start.column + quote + min(position, max(len(literal) - 1, 0))
    return Span.of(node.span.start.line, column, node.span.start.line, column + 1)


def scoring_lints(root: Node, ids: Mapping[str, int]) -> Iterator[Problem]:
    """The rules of `scoring`; `ids` are the check ids in the order they are first written."""
    scoring = root.at(("scoring",))
    if scoring is None or scoring.entries is None:
        return
    combine = scoring.value.get("combine")
    weights = scoring.get("weights")
    if weights is not None and weights.value.entries is not None:
        for name, entry in weights.value.entries.items():
            if name not in ids:
                yield Problem(
                    "unused-weight",
                    f"the weight `{name}` names no check of this rubric"
                    + (f"; the check ids are {', '.join(f'`{i}`' for i in ids)}" if ids else ""),
                    entry.key.span,
                    {"weight": name},
                )
    if not isinstance(combine, str):
        return
    if (
        weights is not None
        and combine != "weighted_avg"
        and combine in (*_NUMERIC_MODES, "all_pass", "any_pass")
    ):
        yield Problem(
            "ignored-by-combine",
            f"`weights` have no effect with `combine: {combine}`; only `weighted_avg` uses them",
            weights.key.span,
        )
    threshold = scoring.get("threshold")
    if threshold is not None and combine in ("all_pass", "any_pass"):
        yield Problem(
            "ignored-by-combine",
            f"`threshold` has no effect with `combine: {combine}`; only {', '.join(f'`{m}`' for m in _NUMERIC_MODES)} use it",
            threshold.key.span,
        )


def lint_workspace(
    summary: RubricSummary, index: RubricIndex, memo: CrossFileMemo | None = None
) -> list[Problem]:
    """The rules that need the other rubrics: duplicate identities and composite chains."""
    problems: list[Problem] = []
    duplicates = index.duplicates(summary)
    if duplicates and summary.id_span is not None:
        where = ", ".join(d.path for d in duplicates)
        problems.append(
            Problem(
                "duplicate-rubric-id",
                f"rubric `{summary.name}` is also defined in {where}; change the id or the version",
                summary.id_span,
                related=tuple(
                    Related(d.path, d.id_span, f"`{summary.name}` defined here")
                    for d in duplicates
                    if d.id_span is not None
                ),
            )
        )
    # A rubric names a few rubrics, many times: each is judged once, each problem made once and
    # kept for the analyses after this one (what they say changes with the workspace only).
    judged: dict[str, Problem | None] = {}
    kept = memo.by_composite if memo is not None else {}
    made: dict[tuple[str, Span], Problem] = {}
    for composite in summary.composites:
        ref = composite.ref
        if ref not in judged:
            judged[ref] = _composite_problem(summary, ref, composite.span, index)
        problem = judged[ref]
        if problem is None:
            continue
        key = (ref, composite.span)
        same = kept.get(key)
        if same is None or (same.code, same.message, same.related) != (
            problem.code,
            problem.message,
            problem.related,
        ):
            same = replace(problem, span=composite.span)
        made[key] = same
        problems.append(same)
    if memo is not None:
        memo.by_composite = made
    return problems


def _composite_problem(summary: RubricSummary, ref: str, span: Span, index: RubricIndex) -> Problem | None:
    target = index.resolve(ref)
    if target is None:
        reason, related = _unresolved_reason(ref, index)
        return Problem("unresolved-rubric", f"composite check `{ref}`: {reason}", span, {"ref": ref}, related)
    chain = _first_bad_chain(summary, target, index)
    if chain is None:
        return None
    names = " → ".join(str(s.id) for s in chain)
    related = tuple(Related(s.path, s.id_span, f"`{s.name}`") for s in chain[1:] if s.id_span is not None)
    if chain[-1] in chain[:-1]:
        return Problem(
            "composite-cycle",
            f"composite cycle: {names}; evaluating it fails this check",
            span,
            related=related,
        )
    return Problem(
        "composite-depth",
        f"composites nest too deep: {names} takes {len(chain) - 1} hops and at most "
        f"{MAX_COMPOSITE_HOPS} run, so this check fails",
        span,
        related=related,
    )


def _unresolved_reason(ref: str, index: RubricIndex) -> tuple[str, tuple[Related, ...]]:
    """Why `ref` names no rubric of the workspace, what it could have named, and the rubric files
    that cannot be read and may be the one it means (with where each fails, as related places)."""
    wanted = parse_ref(ref)
    rubric_id, version = wanted.id, wanted.version
    declaring, unknown = _unreadable(rubric_id, index)
    if version and index.with_id(rubric_id):
        versions = ", ".join(str(s.version) for s in index.with_id(rubric_id))
        reason = f"there is no version {version} of `{rubric_id}` in the workspace (it has {versions})"
        return reason + _may_be_it([*declaring, *unknown]), _related([*declaring, *unknown])
    if declaring:
        return _declared_unreadable(rubric_id, declaring), _related(declaring)
    known = index.ids
    if len(known) <= _LISTED_IDS:
        listing = f"; the rubrics are {', '.join(f'`{k}`' for k in known)}" if known else ""
    else:
        close = difflib.get_close_matches(rubric_id, known, n=3)
        listing = f"; did you mean {' or '.join(f'`{k}`' for k in close)}?" if close else ""
    reason = f"there is no rubric `{rubric_id}` in the workspace{listing}"
    return reason + _may_be_it(unknown), _related(unknown)


def missing_rubric(ref: str, index: RubricIndex) -> str:
    """Why a run cannot resolve `ref` (a composite's or a cases file's rubric): no rubric of the
    workspace has it, or the file that declares it cannot be read."""
    rubric_id = parse_ref(ref).id
    declaring, unknown = _unreadable(rubric_id, index)
    if declaring and not index.with_id(rubric_id):
        return f"rubric `{ref}`: {_declared_unreadable(rubric_id, declaring)}"
    return f"no rubric `{ref}` in the workspace{_may_be_it([*declaring, *unknown])}"


def _unreadable(rubric_id: str, index: RubricIndex) -> tuple[list[RubricSummary], list[RubricSummary]]:
    """The rubric files whose YAML cannot be read and whose text declares `rubric_id` (see
    `declared_id`), and those whose text declares no id: any of these may be the one meant."""
    declaring: list[RubricSummary] = []
    unknown: list[RubricSummary] = []
    for summary in index.unreadable():
        declared = summary.unreadable.declared_id if summary.unreadable is not None else None
        if declared == rubric_id:
            declaring.append(summary)
        elif declared is None:
            unknown.append(summary)
    return declaring, unknown


def _failure(summary: RubricSummary) -> str:
    """Where a file cannot be read, as `check` prints a place: `yaml-syntax at 9:3`."""
    unreadable = summary.unreadable
    if unreadable is None:
        return "unknown"
    start = unreadable.span.start
    return f"{unreadable.code} at {start.line + 1}:{start.column + 1}"


def _declared_unreadable(rubric_id: str, declaring: list[RubricSummary]) -> str:
    if len(declaring) == 1:
        (summary,) = declaring
        line = summary.unreadable.declared_line if summary.unreadable is not None else None
        at = f" (line {line + 1})" if line is not None else ""
        return (
            f"{summary.path} declares `id: {rubric_id}`{at} but cannot be read: {_failure(summary)}; "
            "fix its YAML"
        )
    files = ", ".join(f"{s.path} ({_failure(s)})" for s in declaring)
    return f"{len(declaring)} files declare `id: {rubric_id}` but cannot be read: {files}; fix their YAML"


def _may_be_it(unknown: list[RubricSummary]) -> str:
    if not unknown:
        return ""
    listed = ", ".join(f"{s.path} ({_failure(s)})" for s in unknown[:_LISTED_UNREADABLE])
    more = f" and {len(unknown) - _LISTED_UNREADABLE} more" if len(unknown) > _LISTED_UNREADABLE else ""
    if len(unknown) == 1:
        return f"; 1 rubric file cannot be read and may be it: {listed}"
    return f"; {len(unknown)} rubric files cannot be read, and one may be it: {listed}{more}"


def _related(unreadable: list[RubricSummary]) -> tuple[Related, ...]:
    return tuple(
        Related(s.path, s.unreadable.span, f"cannot be read: {s.unreadable.message}")
        for s in unreadable[:_LISTED_UNREADABLE]
        if s.unreadable is not None
    )


def _first_bad_chain(
    start: RubricSummary, first_hop: RubricSummary, index: RubricIndex
) -> list[RubricSummary] | None:
    """The first chain of composites from `start` through `first_hop` that cycles or is too deep."""
    stack: list[list[RubricSummary]] = [[start, first_hop]]
    while stack:
        chain = stack.pop()
        last = chain[-1]
        if last in chain[:-1]:
            return chain
        if len(chain) - 1 > MAX_COMPOSITE_HOPS:
            return chain
        following = [index.resolve(c.ref) for c in last.composites]
        stack.extend([*chain, hop] for hop in reversed(following) if hop is not None)
    return None


def lint_cases(summary: CasesSummary) -> list[Problem]:
    """A cases file's own rules: unique case ids."""
    problems: list[Problem] = []
    seen: dict[str, Span] = {}
    for case in summary.cases:
        if case.id_span is None:
            continue
        first = seen.setdefault(case.label, case.id_span)
        if first != case.id_span:
            problems.append(
                Problem(
                    "duplicate-id",
                    f"the case id `{case.label}` is already used at line {first.start.line + 1}; "
                    "case ids must be unique in a cases file",
                    case.id_span,
                )
            )
    return problems


@dataclass(eq=False, slots=True)
class _Questioned:
    """What one case's question holds of the paths its rubric reads, and its problems."""

    question: Mapping[str, Any]
    resolves: dict[str, bool]
    problems: tuple[Problem, ...] = ()
    made_for: object = None
    """What `problems` were made for: the case's label and place, and what reads each path."""


class CrossFileMemo:
    """What a document's problems against the workspace were made of last, kept between its
    analyses by whoever asks for them (the server's `OpenDocument`, on the loop): a cases file's
    questions as checked against its rubric's sources, by question (the value its analyses share
    for every case an edit did not touch), so that a keystroke in one case re-resolves that case
    and an edited `source` that path in each case; a rubric's composites' problems, so that what
    did not change is not made (nor sent) again."""

    __slots__ = ("by_composite", "by_question")

    def __init__(self) -> None:
        self.by_question: dict[int, _Questioned] = {}
        self.by_composite: dict[tuple[str, Span], Problem] = {}


def lint_cases_workspace(
    summary: CasesSummary, index: RubricIndex, memo: CrossFileMemo | None = None
) -> list[Problem]:
    """A cases file against the workspace: a rubric that exists, and questions that hold what
    its `target_match` checks (composites included) read."""
    if summary.rubric is None or summary.rubric_span is None:
        return []
    rubric = index.resolve(summary.rubric)
    if rubric is None:
        reason, related = _unresolved_reason(summary.rubric, index)
        return [
            Problem(
                "unresolved-rubric",
                f"rubric `{summary.rubric}`: {reason}",
                summary.rubric_span,
                {"ref": summary.rubric},
                related,
            )
        ]
    readers: dict[str, list[tuple[str, str]]] = {}
    for owner, label, path in _sources(rubric, index):
        readers.setdefault(path, []).append((owner, label))
    kept = memo.by_question if memo is not None else {}
    checked: dict[int, _Questioned] = {}
    problems: list[Problem] = []
    for case in summary.cases:
        question = case.question
        if not isinstance(question, Mapping):
            continue  # the schema reports it
        known = kept.get(id(question))
        if known is None or known.question is not question:
            known = _Questioned(question, {})
        checked[id(question)] = known
        resolves = known.resolves
        unresolved = []
        for path in readers:
            found = resolves.get(path)
            if found is None:
                found = resolves[path] = Services.resolve(path, question) is not None
            if not found:
                unresolved.append(path)
        if not unresolved:
            continue
        made_for = (
            case.label,
            case.question_span or case.head,
            [(path, readers[path]) for path in unresolved],
        )
        if known.made_for != made_for:
            known.problems = tuple(
                Problem(
                    "unresolved-source",
                    f"case `{case.label}`: the question has no string or list of strings at `{path}`, which "
                    f"target_match check `{label}` of `{owner}` reads",
                    case.question_span or case.head,
                    {"path": path},
                )
                for path in unresolved
                for owner, label in readers[path]
            )
            known.made_for = made_for
        problems.extend(known.problems)
    if memo is not None:
        memo.by_question = checked
    return problems


def _sources(rubric: RubricSummary, index: RubricIndex) -> list[tuple[str, str, str]]:
    """(rubric, check, dot-path) read by a rubric and the rubrics its composites reach."""
    found: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    pending = [rubric]
    while pending:
        current = pending.pop()
        if current.path in seen:
            continue
        seen.add(current.path)
        found += [(current.name, label, path) for label, path in current.sources]
        refs = dict.fromkeys(c.ref for c in current.composites)  # a rubric names a few, many times
        pending += [hop for hop in map(index.resolve, refs) if hop is not None]
    return found
