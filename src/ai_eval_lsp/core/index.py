"""What a file is (rubric, cases or neither), what a rubric declares, and the index of rubrics."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Literal

from ai_eval_lsp.core.problems import Problem, Span
from ai_eval_lsp.core.refs import format_ref, parse_ref, version_key
from ai_eval_lsp.core.text import LineIndex, split_lines
from ai_eval_lsp.core.yamltree import Node

Role = Literal["rubric", "cases"]

_CASES_SUFFIXES = (".cases.yaml", ".cases.yml")
_RUBRIC_SUFFIXES = (".rubric.yaml", ".rubric.yml")
YAML_SUFFIXES = (".yaml", ".yml")
_MODELINE = re.compile(r"#\s*yaml-language-server:\s*\$schema=\S*rubric\.schema\.json")


@cache
def _glob_regex(glob: str) -> re.Pattern[str]:
    """`**` crosses folders, `*` and `?` stay within one; a glob without `/` matches any folder."""
    if "/" not in glob:
        glob = "**/" + glob
    out, i = "", 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif glob[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return re.compile(out + r"\Z")


def matches_any(relative_path: str, globs: Iterable[str]) -> bool:
    return any(_glob_regex(glob).match(relative_path) for glob in globs)


def classify_by_name(
    relative_path: str,
    rubric_globs: Sequence[str] = (),
    cases_globs: Sequence[str] = (),
    rubrics_root: bool = False,
) -> Role | Literal["head"] | None:
    """The role a path has by its name alone, "head" when only its first lines can tell (a YAML
    file that might carry the modeline), or None when it is no rubric or cases file. With
    `rubrics_root`, the folder the path is relative to counts as a `rubrics` folder.

    Plain string work: a walk asks this of every file of a 30,000-file tree."""
    folders, _, name = relative_path.rpartition("/")
    if name.endswith(_CASES_SUFFIXES) or (cases_globs and matches_any(relative_path, cases_globs)):
        return "cases"
    if name.endswith(_RUBRIC_SUFFIXES) or (rubric_globs and matches_any(relative_path, rubric_globs)):
        return "rubric"
    if not name.endswith(YAML_SUFFIXES):
        return None
    if rubrics_root or "rubrics" in folders.split("/"):
        return "rubric"
    return "head"


def classify(
    relative_path: str,
    head: str,
    rubric_globs: Sequence[str] = (),
    cases_globs: Sequence[str] = (),
    rubrics_root: bool = False,
) -> Role | None:
    """The role of a file by SPEC section 2; `head` is its first lines, for the modeline."""
    by_name = classify_by_name(relative_path, rubric_globs, cases_globs, rubrics_root)
    if by_name == "head":
        return "rubric" if has_modeline(head) else None
    return by_name


def has_modeline(head: str) -> bool:
    """Whether the leading comment lines carry the rubric schema's modeline."""
    for line in split_lines(head):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return False
        if _MODELINE.search(stripped):
            return True
    return False


@dataclass(frozen=True, slots=True)
class CompositeRef:
    """A composite check's `rubric:` reference."""

    check_label: str
    ref: str
    span: Span


@dataclass(frozen=True, slots=True)
class Unreadable:
    """Why a rubric file's YAML cannot be read (its first problem), so a reference that may have
    meant it says so, and the id its text declares, read line by line (`declared_id`)."""

    code: str
    message: str
    span: Span
    declared_id: str | None = None
    declared_line: int | None = None
    """The 0-based line of the declaring `id:` line."""


_ID_LINE = re.compile(
    r"""id:[ \t]+(?:([a-z][a-z0-9_]*)|"([a-z][a-z0-9_]*)"|'([a-z][a-z0-9_]*)')(?:[ \t]+#.*|[ \t]*)"""
)


_ID_LINE_START = re.compile(r"(?<![^\r\n])id:[^\r\n]*")
"""A line that starts with `id:`, without its break."""


def declared_id(text: str) -> tuple[str, int] | None:
    """The id a rubric's text declares without reading it as YAML, and its 0-based line: for a
    file whose YAML cannot be read, so that a reference to it can say where it is.

    Exact by construction: exactly one line of the file starts (at column 0, where a top-level key
    of a block mapping starts) with `id:`, a space or tab, a snake_case id (plain, or in single or
    double quotes) and at most a comment. No such line, or several, and nothing is declared."""
    found: list[tuple[str, int]] = []
    for line in _ID_LINE_START.finditer(text):  # in C: a 4 MB text is not split into lines
        match = _ID_LINE.fullmatch(line.group())
        if match is not None:
            if found:
                return None
            start = line.start()
            breaks = text.count("\n", 0, start) + text.count("\r", 0, start) - text.count("\r\n", 0, start)
            found.append((next(group for group in match.groups() if group), breaks))
    return found[0] if found else None


@dataclass(frozen=True, slots=True)
class RubricSummary:
    """What other files need to know of a rubric: identity, label, checks and composites."""

    path: str
    id: str | None
    version: str | None
    id_span: Span | None
    label: str | None
    check_ids: tuple[str, ...]
    composites: tuple[CompositeRef, ...]
    sources: tuple[tuple[str, str], ...] = ()
    """(check label, dot-path) of each `target_match` check: what it reads from a question."""
    kinds: frozenset[str] = frozenset()
    """The kinds its checks use: what a change to an executor re-runs."""
    lines: Mapping[int, str] = field(default_factory=dict)
    """The text of the lines its spans are on, so other files' features place them without
    reading this file again."""
    unreadable: Unreadable | None = None
    """Why its YAML cannot be read, when it cannot (and so its id is None)."""

    @property
    def name(self) -> str:
        return format_ref(str(self.id), self.version)


@dataclass(frozen=True, slots=True)
class CaseSummary:
    """One case of a cases file, as the workspace rules see it."""

    label: str
    """Its id, or its position (`cases[3]`) when it has none."""
    id_span: Span | None
    head: Span
    question: Mapping[str, Any] | None
    question_span: Span | None


@dataclass(frozen=True, slots=True)
class CasesSummary:
    """What a cases file declares: the rubric it runs and its cases."""

    path: str
    rubric: str | None
    rubric_span: Span | None
    cases: tuple[CaseSummary, ...]
    lines: Mapping[int, str] = field(default_factory=dict)

    @property
    def rubric_id(self) -> str | None:
        return parse_ref(self.rubric).id if self.rubric else None


Summary = RubricSummary | CasesSummary


def case_name(index: int, case: Any) -> str:
    """A case's name in results and messages: its id, or its position (`cases[3]`)."""
    case_id = case.get("id") if isinstance(case, Mapping) else None
    return case_id if isinstance(case_id, str) and case_id else f"cases[{index}]"


def check_name(index: int, check: Any) -> str:
    """A check's name in messages and results: its id, or its position (`checks[3]`)."""
    check_id = check.get("id") if isinstance(check, Mapping) else None
    return check_id if isinstance(check_id, str) and check_id else f"checks[{index}]"


def _lines(source: str | LineIndex, spans: Iterable[Span | None]) -> Mapping[int, str]:
    numbers = sorted({n for span in spans if span is not None for n in (span.start.line, span.end.line)})
    if not numbers:
        return {}
    if isinstance(source, LineIndex):
        return _LinesOf(source, frozenset(n for n in numbers if n < source.line_count))
    lines = split_lines(source)
    return {n: lines[n] for n in numbers if n < len(lines)}


class _LinesOf(Mapping[int, str]):
    """Some lines of an open document's text, read when asked for: a keystroke in one case of a
    2,000-case file need not copy 2,000 lines for its summary (the text is kept anyway)."""

    __slots__ = ("_numbers", "_source")

    def __init__(self, source: LineIndex, numbers: frozenset[int]) -> None:
        self._source, self._numbers = source, numbers

    def __getitem__(self, number: int) -> str:
        if number not in self._numbers:
            raise KeyError(number)
        return self._source.line(number)

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._numbers))

    def __len__(self) -> int:
        return len(self._numbers)


@dataclass(frozen=True, slots=True)
class CheckFacts:
    """What a rubric's summary takes from one check."""

    id: str | None
    kind: str | None
    composite: CompositeRef | None
    source: tuple[str, str] | None


def check_facts(index: int, check: Node) -> CheckFacts:
    value = check.value if isinstance(check.value, dict) else {}
    ref = check.get("rubric")
    composite = source = None
    if value.get("kind") == "composite" and ref is not None and isinstance(ref.value.value, str):
        composite = CompositeRef(check_name(index, value), ref.value.value, ref.value.span)
    if value.get("kind") == "target_match" and isinstance(value.get("source"), str):
        source = (check_name(index, value), value["source"])
    return CheckFacts(
        value["id"] if isinstance(value.get("id"), str) else None,
        value["kind"] if isinstance(value.get("kind"), str) else None,
        composite,
        source,
    )


def summarize(
    path: str, root: Node | None, text: str = "", problems: Sequence[Problem] = ()
) -> RubricSummary:
    """What other files need of a rubric; `problems` are its parser's, which say why a file whose
    `root` is None cannot be read."""
    checks = root.at(("checks",)) if root is not None else None
    facts = [check_facts(index, check) for index, check in enumerate(checks.items or [] if checks else [])]
    return rubric_summary(path, root, facts, text, problems)


def rubric_summary(
    path: str,
    root: Node | None,
    facts: Iterable[CheckFacts],
    text: str | LineIndex,
    problems: Sequence[Problem] = (),
) -> RubricSummary:
    """A rubric's summary from its checks' facts (`summarize` reads them from the tree)."""
    unreadable = None
    if root is None and problems:
        first = problems[0]
        declared = declared_id(text.text if isinstance(text, LineIndex) else text)
        unreadable = Unreadable(
            first.code, first.message, first.span, *(declared if declared is not None else (None, None))
        )
    data = root.value if root is not None and isinstance(root.value, dict) else {}
    id_entry = root.get("id") if root is not None else None
    check_ids: list[str] = []
    composites: list[CompositeRef] = []
    sources: list[tuple[str, str]] = []
    kinds: set[str] = set()
    for fact in facts:
        if fact.kind is not None:
            kinds.add(fact.kind)
        if fact.id is not None:
            check_ids.append(fact.id)
        if fact.composite is not None:
            composites.append(fact.composite)
        if fact.source is not None:
            sources.append(fact.source)
    id_span = id_entry.value.span if id_entry else None
    return RubricSummary(
        path=path,
        id=data.get("id") if isinstance(data.get("id"), str) else None,
        version=data.get("version") if isinstance(data.get("version"), str) else None,
        id_span=id_span,
        label=data.get("label") if isinstance(data.get("label"), str) else None,
        check_ids=tuple(check_ids),
        composites=tuple(composites),
        sources=tuple(sources),
        kinds=frozenset(kinds),
        lines=_lines(text, [id_span, *(c.span for c in composites), *_unreadable_spans(unreadable)]),
        unreadable=unreadable,
    )


def with_check_changed(
    summary: RubricSummary,
    earlier: Iterable[CheckFacts | None],
    before: CheckFacts,
    after: CheckFacts,
    kinds: Iterable[str],
    text: LineIndex,
) -> RubricSummary:
    """A rubric's summary after one check's facts went from `before` to `after` (no line moved);
    `earlier` are the facts of the checks before it, `kinds` those its checks now use."""
    ids = composites = sources = 0
    for fact in earlier:
        if fact is not None:
            ids += fact.id is not None
            composites += fact.composite is not None
            sources += fact.source is not None
    changed = _swapped(summary.composites, composites, before.composite, after.composite)
    lines = summary.lines
    if (before.composite and before.composite.span) != (after.composite and after.composite.span):
        spans = [summary.id_span, *(c.span for c in changed), *_unreadable_spans(summary.unreadable)]
        lines = _lines(text, spans)
    return replace(
        summary,
        check_ids=_swapped(summary.check_ids, ids, before.id, after.id),
        composites=changed,
        sources=_swapped(summary.sources, sources, before.source, after.source),
        kinds=frozenset(kinds),
        lines=lines,
    )


def _swapped(values: tuple[Any, ...], at: int, old: Any, new: Any) -> tuple[Any, ...]:
    """`values` with the one at `at` (if `old` is one) replaced by `new` (if it is one)."""
    return (*values[:at], *((new,) if new is not None else ()), *values[at + (old is not None) :])


def _unreadable_spans(unreadable: Unreadable | None) -> list[Span]:
    if unreadable is None:
        return []
    if unreadable.declared_line is None:
        return [unreadable.span]
    return [unreadable.span, Span.of(unreadable.declared_line, 0, unreadable.declared_line, 0)]


def case_summary(number: int, case: Node) -> CaseSummary | None:
    """One case as the workspace rules see it; None when it is not a mapping."""
    if case.entries is None:
        return None
    id_entry = case.get("id")
    case_id = id_entry.value.value if id_entry is not None else None
    question = case.get("question")
    return CaseSummary(
        label=case_name(number, case.value),
        id_span=id_entry.value.span if id_entry is not None and isinstance(case_id, str) else None,
        head=case.head(),
        question=question.value.value if question is not None else {},
        question_span=question.value.span if question is not None else None,
    )


def summarize_cases(path: str, root: Node | None, text: str = "") -> CasesSummary:
    cases_node = root.at(("cases",)) if root is not None else None
    found = [
        case_summary(number, case) for number, case in enumerate(cases_node.items or [] if cases_node else [])
    ]
    return cases_summary(path, root, found, text)


def cases_summary(
    path: str, root: Node | None, found: Iterable[CaseSummary | None], text: str | LineIndex
) -> CasesSummary:
    """A cases file's summary from its cases' (`summarize_cases` reads them from the tree)."""
    entry = root.get("rubric") if root is not None else None
    ref = entry.value.value if entry is not None and isinstance(entry.value.value, str) else None
    cases = tuple(case for case in found if case is not None)
    rubric_span = entry.value.span if entry is not None else None
    lines = _lines(text, [rubric_span, *(case.head for case in cases)])
    return CasesSummary(path, ref, rubric_span if ref else None, cases, lines)


class RubricIndex:
    """The rubrics of a workspace by path and by id; composite references resolve only to these.

    Immutable: `replace` makes a new index sharing what did not change, so a snapshot handed
    to a worker thread never changes under it.
    """

    __slots__ = ("_by_id", "by_path")

    def __init__(self, summaries: Iterable[RubricSummary] = ()) -> None:
        self.by_path: dict[str, RubricSummary] = {s.path: s for s in summaries}
        self._by_id: dict[str, tuple[RubricSummary, ...]] = {}
        for summary in self.by_path.values():
            if summary.id is not None:
                self._by_id[summary.id] = (*self._by_id.get(summary.id, ()), summary)
        self._by_id = {key: _by_version(found) for key, found in self._by_id.items()}

    def replace(self, put: Iterable[RubricSummary] = (), remove: Iterable[str] = ()) -> RubricIndex:
        """A new index with summaries put in (by path) and paths taken out."""
        by_path, by_id = dict(self.by_path), dict(self._by_id)
        touched: set[str] = set()

        def drop(path: str) -> None:
            old = by_path.pop(path, None)
            if old is not None and old.id is not None:
                by_id[old.id] = tuple(s for s in by_id[old.id] if s.path != path)
                touched.add(old.id)

        for path in remove:
            drop(path)
        for summary in put:
            drop(summary.path)
            by_path[summary.path] = summary
            if summary.id is not None:
                by_id[summary.id] = (*by_id.get(summary.id, ()), summary)
                touched.add(summary.id)
        for rubric_id in touched:
            if by_id[rubric_id]:
                by_id[rubric_id] = _by_version(by_id[rubric_id])
            else:
                del by_id[rubric_id]
        index = RubricIndex.__new__(RubricIndex)
        index.by_path, index._by_id = by_path, by_id
        return index

    @property
    def ids(self) -> list[str]:
        return sorted(self._by_id)

    def unreadable(self) -> list[RubricSummary]:
        """The rubric files whose YAML cannot be read (so their ids are unknown), by path."""
        return sorted((s for s in self.by_path.values() if s.unreadable is not None), key=lambda s: s.path)

    def with_id(self, rubric_id: str) -> tuple[RubricSummary, ...]:
        """Every rubric with an id, highest version first."""
        return self._by_id.get(rubric_id, ())

    def resolve(self, ref: str) -> RubricSummary | None:
        """`id` means its highest version, `id@version` that version."""
        wanted = parse_ref(ref)
        for summary in self.with_id(wanted.id):
            if wanted.version is None or summary.version == wanted.version:
                return summary
        return None

    def duplicates(self, summary: RubricSummary) -> list[RubricSummary]:
        if summary.id is None:
            return []
        return sorted(
            (s for s in self.with_id(summary.id) if s.version == summary.version and s.path != summary.path),
            key=lambda s: s.path,
        )


def _by_version(summaries: Iterable[RubricSummary]) -> tuple[RubricSummary, ...]:
    return tuple(sorted(summaries, key=lambda s: (version_key(s.version), s.path), reverse=True))


class CasesIndex:
    """The cases files of a workspace by path; `running` finds those that run a rubric. Immutable."""

    __slots__ = ("by_path",)

    def __init__(self, summaries: Iterable[CasesSummary] = ()) -> None:
        self.by_path: dict[str, CasesSummary] = {s.path: s for s in summaries}

    def replace(self, put: Iterable[CasesSummary] = (), remove: Iterable[str] = ()) -> CasesIndex:
        by_path = dict(self.by_path)
        for path in remove:
            by_path.pop(path, None)
        by_path.update((s.path, s) for s in put)
        index = CasesIndex.__new__(CasesIndex)
        index.by_path = by_path
        return index

    def running(self, rubric: RubricSummary, rubrics: RubricIndex) -> list[CasesSummary]:
        """The cases files whose `rubric:` resolves to this rubric, by path."""
        return sorted(
            (
                cases
                for cases in self.by_path.values()
                if cases.rubric_id == rubric.id and cases.rubric and rubrics.resolve(cases.rubric) == rubric
            ),
            key=lambda cases: cases.path,
        )


@dataclass(frozen=True, slots=True)
class ProjectIndex:
    """Every rubric and cases file of a workspace folder, as one immutable value."""

    rubrics: RubricIndex = field(default_factory=RubricIndex)
    cases: CasesIndex = field(default_factory=CasesIndex)

    @staticmethod
    def of(summaries: Iterable[Summary]) -> ProjectIndex:
        rubrics: list[RubricSummary] = []
        cases: list[CasesSummary] = []
        for summary in summaries:
            if isinstance(summary, RubricSummary):
                rubrics.append(summary)
            else:
                cases.append(summary)
        return ProjectIndex(RubricIndex(rubrics), CasesIndex(cases))

    def put(self, summary: Summary) -> ProjectIndex:
        """This index with one file's summary in place of what it held for that path."""
        return self.replace(put=[summary])

    def remove(self, path: str) -> ProjectIndex:
        return self.replace(remove=[path])

    def replace(self, put: Iterable[Summary] = (), remove: Iterable[str] = ()) -> ProjectIndex:
        """This index with many files' summaries put in and paths taken out, in one copy."""
        put = list(put)
        paths = [*remove, *(summary.path for summary in put)]  # a path may change role
        rubrics = [s for s in put if isinstance(s, RubricSummary)]
        cases = [s for s in put if isinstance(s, CasesSummary)]
        return ProjectIndex(
            self.rubrics.replace(put=rubrics, remove=paths), self.cases.replace(put=cases, remove=paths)
        )

    def summary(self, path: str) -> Summary | None:
        return self.rubrics.by_path.get(path) or self.cases.by_path.get(path)

    def affected(self, paths: Iterable[str]) -> list[str]:
        """The cases files a change to these files re-runs, by path: a cases file itself; for a
        rubric, every cases file whose rubric is it or reaches it through composites."""
        paths = list(paths)
        cases = {path for path in paths if path in self.cases.by_path}
        return sorted(cases | set(self._running_any(path for path in paths if path in self.rubrics.by_path)))

    def using_kinds(self, kinds: Iterable[str]) -> list[str]:
        """The cases files whose rubrics use one of these kinds, directly or through composites."""
        wanted = set(kinds)
        return sorted(self._running_any(s.path for s in self.rubrics.by_path.values() if s.kinds & wanted))

    def _running_any(self, rubric_paths: Iterable[str]) -> Iterator[str]:
        """The cases files whose rubric is one of these or reaches one through composites."""
        reached = self._reaching(rubric_paths)
        for cases in self.cases.by_path.values():
            resolved = self.rubrics.resolve(cases.rubric) if cases.rubric else None
            if resolved is not None and resolved.path in reached:
                yield cases.path

    def _reaching(self, rubric_paths: Iterable[str]) -> set[str]:
        """These rubrics and every rubric whose composites reach one of them, at any depth (a
        cycle is followed once), by path."""
        callers: dict[str, list[str]] = {}
        for summary in self.rubrics.by_path.values():
            for composite in summary.composites:
                called = self.rubrics.resolve(composite.ref)
                if called is not None:
                    callers.setdefault(called.path, []).append(summary.path)
        pending = list(rubric_paths)
        reached = set(pending)
        while pending:
            for caller in callers.get(pending.pop(), []):
                if caller not in reached:
                    reached.add(caller)
                    pending.append(caller)
        return reached
