"""A run of a cases file: every case evaluated, one result row stored, subscribers told.

Shared by `ai-eval-lsp run` and the language server's run commands.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_eval_lsp import __version__
from ai_eval_lsp.core.api import CheckOutcome
from ai_eval_lsp.core.compare import CaseRecord, Diff, diff
from ai_eval_lsp.core.compare import cases_file as cases_file_of
from ai_eval_lsp.core.evaluate import LoadedRubric, RubricError
from ai_eval_lsp.core.index import RubricIndex, case_name
from ai_eval_lsp.core.lints import missing_rubric
from ai_eval_lsp.core.problems import BREAKING_CODES, Problem, Severity
from ai_eval_lsp.core.refs import parse_ref
from ai_eval_lsp.core.results import METRICS, CaseResult, build_row, gate_failures
from ai_eval_lsp.core.yamltree import decode, parse
from ai_eval_lsp.disk.reading import Skipped, why_not_read
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.grading import evaluating, grade
from ai_eval_lsp.runs.store import ResultStore, StoreError
from ai_eval_lsp.runs.workers import Cancelled, Prepared, grade_in_workers, workers_for

SUBSCRIBER_GROUP = "ai_eval.run_complete"
REGRESSION_TOLERANCE = 0.5

log = logging.getLogger(__name__)


class RunError(Exception):
    """The cases file cannot be run at all (unreadable, or not a cases file)."""


class RunCancelled(Exception):
    """The run was cancelled: no row is stored and nobody is told."""


class Cancellation:
    """Whether a run is cancelled or stored, decided once: whichever is asked first wins, so a
    cancel that comes too late is refused rather than leaving a stored row behind."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._decided: str | None = None

    def cancel(self) -> bool:
        """Cancel the run; False when its row is already stored."""
        with self._lock:
            if self._decided is None:
                self._decided = "cancelled"
            return self._decided == "cancelled"

    @property
    def cancelled(self) -> bool:
        return self._decided == "cancelled"

    def store(self) -> bool:
        """Whether the row may be stored now; after this, the run can no longer be cancelled."""
        with self._lock:
            if self._decided is None:
                self._decided = "stored"
            return self._decided == "stored"


@dataclass(frozen=True, slots=True)
class RunContext:
    """What a subscriber may take as its second argument: where and how the run happened."""

    root: Path
    cases_path: Path
    export_envelope: bool


@dataclass(slots=True)
class RunResult:
    row: dict[str, Any]
    cases: list[CaseResult]
    gate: dict[str, float] | None = None
    previous: Diff | None = None
    """This run against the target's run before it, when there is one."""
    change: Diff | None = None
    """This run against the same cases file's run before it, when there is one."""
    notices: list[str] = field(default_factory=list)
    subscribers: threading.Thread | None = None
    cases_path: Path | None = None
    """The cases file it ran (for a response run in the editor, the rubric)."""

    @property
    def gate_failures(self) -> list[str]:
        row = self.row
        metrics = {name: row[name] for name in METRICS}
        return gate_failures(self.gate, metrics, row["question_count"] - row["error_count"])

    @property
    def expectations_met(self) -> bool:
        return all(case.expectation_met for case in self.cases)

    @property
    def ok(self) -> bool:
        """What `run` exits 0 on: the gate passed and every case met its `expect`."""
        return bool(self.row["passed_gate"]) and self.expectations_met


Reader = Callable[[Path], bytes]
"""How a run reads files: from disk for the CLI (`Project.read`); the editor prefers its open documents."""


class RubricLibrary:
    """The workspace's rubrics, each read once per run; a broken one (what the site would refuse
    to load) cannot be run, while one with other errors runs and its checks fail with the cause."""

    def __init__(self, project: Project, index: RubricIndex, read: Reader | None = None) -> None:
        self.project, self.index, self.read = project, index, read or project.read
        self.loaded: dict[str, LoadedRubric] = {}

    def __call__(self, ref: str) -> LoadedRubric | None:
        summary = self.index.resolve(ref)
        if summary is None:
            # what the workspace knows of it: a file that declares it but cannot be read
            raise RubricError(missing_rubric(ref, self.index))
        if summary.path not in self.loaded:
            path = self.project.root / summary.path
            try:
                analysis = self.project.analyse(path, self.read(path))
            except OSError as err:
                raise RubricError(f"rubric `{ref}` ({summary.path}): {why_not_read(err)}") from err
            breaking = [p for p in analysis.problems if p.code in BREAKING_CODES]
            if breaking or analysis.root is None:
                first, errors = breaking[0], f"{len(breaking)} error{'s' * (len(breaking) != 1)}"
                raise RubricError(
                    f"rubric `{summary.name}` ({summary.path}) cannot be loaded: {errors}; "
                    f"first, at line {first.span.start.line + 1}: {first.message}"
                )
            self.loaded[summary.path] = LoadedRubric(str(summary.id), summary.version, analysis.root.value)
        return self.loaded[summary.path]

    def prepare(self, ref: str) -> Prepared:
        """Every reference a run of `ref` may meet (the rubric and, transitively, its composites'),
        resolved now: what a case worker is given instead of the workspace."""
        prepared: dict[str, Mapping[str, Any] | str | None] = {}
        pending = [ref]
        while pending:
            wanted = pending.pop()
            if wanted in prepared:
                continue
            try:
                rubric = self(wanted)
            except RubricError as err:
                prepared[wanted] = str(err)
                continue
            prepared[wanted] = (
                {"id": rubric.id, "version": rubric.version, "data": rubric.data} if rubric else None
            )
            checks = rubric.data.get("checks") if rubric else None
            pending += [
                check["rubric"]
                for check in (checks if isinstance(checks, list) else [])
                if isinstance(check, Mapping)
                and check.get("kind") == "composite"
                and isinstance(check.get("rubric"), str)
            ]
        return prepared


def read_cases(
    path: Path,
    project: Project,
    read: Reader | None = None,
    errors: Callable[[list[Problem]], None] | None = None,
) -> dict[str, Any]:
    """A cases file's data, or RunError when it cannot be run at all; with `errors`, the file is
    checked as it is read, and told its own errors first. `read`: the project's files on disk."""
    try:
        raw = (read or project.read)(path)
    except OSError as err:
        raise RunError(f"{path}: {why_not_read(err)}") from err
    if errors is None:
        root = parse(decode(raw)[0], project.rules.parser).root
    else:
        analysis = project.analyse(path, raw, "cases")
        errors([problem for problem in analysis.problems if problem.severity == Severity.ERROR])
        root = analysis.root
    data = root.value if root is not None else None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("rubric"), str)
        or not isinstance(data.get("cases"), list)
    ):
        if isinstance(data, dict) and "checks" in data:
            raise RunError(
                f"{path}: a rubric, not a cases file: `run` runs a cases file (`*.cases.yaml`), which names "
                f"a rubric (`rubric: {data.get('id') or 'my_rubric'}`) and lists `cases` of recorded responses"
            )
        raise RunError(
            f"{path}: not a cases file: it needs `rubric` and a list of `cases` (run `ai-eval-lsp check` on it)"
        )
    return data


@dataclass(frozen=True, slots=True)
class RunOptions:
    source: str = "cli"
    database: Path | None = None
    progress: Callable[[int, int], None] | None = None
    cancellation: Cancellation | None = None
    read: Reader | None = None
    """How files are read; None: the project's files on disk (`Project.read`)."""
    index: RubricIndex | None = None
    """The rubrics to resolve against; by default every rubric under the project's root."""
    cases_errors: Callable[[list[Problem]], None] | None = None
    """Told the cases file's own errors before any case is graded (the run goes on); None: the
    file is not checked, only read."""
    skipped: list[Skipped] | None = None
    """Where the files the run's rubric index could not read are added (without `index`)."""


def check_response(
    project: Project,
    rubric: LoadedRubric,
    index: int,
    response: str,
    question: Mapping[str, Any],
    options: RunOptions = RunOptions(),
) -> CheckOutcome | str:
    """One check of a rubric on one response, as a run would run it: its outcome, or why it was
    skipped. Not a run: nothing is stored."""
    with evaluating(project, _library(project, options)) as evaluator:
        return evaluator.run_check(rubric, index, response, question)


def check_cases(
    project: Project,
    rubric: LoadedRubric,
    index: int,
    cases_paths: list[Path],
    options: RunOptions = RunOptions(),
) -> list[tuple[Path, str, CheckOutcome | str]]:
    """One check of a rubric on every case (that has a response) of some cases files: (cases
    file, case id, outcome or why it was skipped). Not a run: nothing is stored; cancellable
    between cases."""
    found: list[tuple[Path, str, CheckOutcome | str]] = []
    cancellation = options.cancellation or Cancellation()
    with evaluating(project, _library(project, options)) as evaluator:
        for path in cases_paths:
            for number, case in enumerate(read_cases(path, project, options.read)["cases"]):
                if cancellation.cancelled:
                    raise RunCancelled
                if not isinstance(case, Mapping) or not isinstance(case.get("response"), str):
                    continue
                question = case.get("question")
                outcome = evaluator.run_check(
                    rubric, index, case["response"], question if isinstance(question, Mapping) else {}
                )
                found.append((path, case_name(number, case), outcome))
    return found


def _library(project: Project, options: RunOptions) -> RubricLibrary:
    index = options.index or project.index({}, skipped=options.skipped).rubrics
    return RubricLibrary(project, index, options.read)


def run_cases(
    project: Project,
    cases_path: Path,
    options: RunOptions = RunOptions(),
    case_ids: Sequence[str] | None = None,
) -> RunResult:
    """A run of a cases file (of the cases named by `case_ids` only, when given): every case
    graded, one row stored, subscribers told."""
    data = read_cases(cases_path, project, options.read, options.cases_errors)
    gate = data.get("gate") if isinstance(data.get("gate"), dict) else None
    cases, names = data["cases"], case_names(data["cases"])
    if case_ids is not None:
        known = {case_name(number, case) for number, case in enumerate(cases)}
        unknown = [wanted for wanted in case_ids if wanted not in known]
        if unknown:
            raise RunError(
                f"{cases_path}: no case with id {', '.join(f'`{u}`' for u in unknown)}; "
                f"its cases are {', '.join(f'`{k}`' for k in sorted(known))}"
            )
        # named as in a run of the whole file: `cases[3]` stays `cases[3]` when run alone
        chosen = [n for n, case in enumerate(cases) if case_name(n, case) in case_ids]
        cases, names = [cases[n] for n in chosen], [names[n] for n in chosen]
    site_target = data.get("site_target")
    mirrored = site_target if isinstance(site_target, str) else None
    return run(project, data["rubric"], cases, gate, cases_path, options, names, mirrored)


def run(
    project: Project,
    ref: str,
    cases: list[Any],
    gate: dict[str, float] | None,
    cases_path: Path,
    options: RunOptions = RunOptions(),
    names: Sequence[str] | None = None,
    site_target: str | None = None,
) -> RunResult:
    """A run of `cases` against the rubric `ref`; `cases_path` names where they come from, and
    `names` what the results call each case (by default, `case_names`); `site_target`, the site's
    evaluation target they mirror (the cases file's `site_target`)."""
    started, clock = time.time(), time.perf_counter()
    store = (
        ResultStore(options.database)
        if options.database
        else ResultStore(project.results_database, project.root)
    )
    try:
        store.check_writable()  # now, not once every case is graded
    except StoreError as err:
        raise RunError(str(err)) from None
    library = _library(project, options)
    cancellation = options.cancellation or Cancellation()
    named = list(zip(names if names is not None else case_names(cases), cases, strict=True))
    workers = workers_for(len(cases))
    if workers > 1:
        try:
            results, cannot_run = grade_in_workers(
                project.root,
                project.settings,
                ref,
                named,
                library.prepare(ref),
                workers,
                lambda done: options.progress(done, len(cases)) if options.progress else None,
                lambda: cancellation.cancelled,
            )
        except Cancelled:
            raise RunCancelled from None
    else:
        results = []
        with evaluating(project, library) as evaluator:
            for number, (name, case) in enumerate(named):
                if cancellation.cancelled:
                    raise RunCancelled
                results.append(grade(evaluator, library, ref, name, case))
                if options.progress is not None:
                    options.progress(number + 1, len(cases))
        cannot_run = evaluator.cannot_run
    config: dict[str, Any] = {
        "cases_file": project.relative(cases_path),
        "rubrics": sorted(
            ({"id": r.id, "version": r.version} for r in library.loaded.values()),
            key=lambda r: (r["id"], str(r["version"])),
        ),
        "plugins": [
            {"name": p.name, "distribution": p.origin.distribution, "version": p.origin.version}
            for p in project.registry.executors
        ]
        + [{"module": p.origin.module, "class": p.origin.name} for p in project.registry.php],
        "ai_eval_lsp": __version__,
    }
    if site_target is not None:
        config["site_target"] = site_target
    row = build_row(parse_ref(ref).id, results, gate, options.source, time.perf_counter() - clock, config)
    records = [case.record() for case in results]
    try:
        stored = store.insert(row, started, records, cancellation.store)
    except StoreError as err:
        raise RunError(str(err)) from None
    if stored is None:
        raise RunCancelled
    previous = store.previous(stored["target_id"], stored["id"])
    comparison = diff(previous, stored, store.cases(previous), records) if previous else None
    change = _change(store, stored, comparison, project.relative(cases_path), records)
    skipped = [
        f"warning: {count} check{'s were' if count != 1 else ' was'} skipped: {reason}"
        for reason, count in cannot_run.items()
    ]
    result = RunResult(
        stored,
        results,
        gate,
        comparison,
        change,
        [*skipped, *(f"warning: {note}" for note in store.skipped), *_regression(comparison)],
        cases_path=cases_path,
    )
    context = RunContext(project.root, cases_path, project.settings.export_envelope_on_complete)
    result.subscribers = notify_subscribers(stored, context)
    return result


def case_names(cases: Sequence[Any]) -> list[str]:
    """Each case's name in the results: `case_name`, and a repeated one told apart by its place
    (`check` reports the duplicate; the row keeps both cases)."""
    names: list[str] = []
    seen: set[str] = set()
    for number, case in enumerate(cases):
        name = case_name(number, case)
        names.append(f"{name} (cases[{number}])" if name in seen else name)
        seen.add(name)
    return names


def _change(
    store: ResultStore,
    stored: dict[str, Any],
    comparison: Diff | None,
    cases_file: str,
    records: list[CaseRecord],
) -> Diff | None:
    """The run against the same cases file's run before it: the target's run before, when that
    one ran the same file (the common case, read once), else the store's."""
    if comparison is not None and cases_file_of(comparison.base) == cases_file:
        return comparison
    before = store.previous_of_file(stored["target_id"], cases_file, stored["id"])
    return diff(before, stored, store.cases(before), records) if before else None


def _regression(comparison: Diff | None) -> list[str]:
    """The seed's subscriber example, built in: a drop of more than half a point is noticed.
    Runs with no case in common (of two cases files of one rubric) are not compared: their
    averages are of different cases."""
    if comparison is None or comparison.incomparable or not comparison.in_common:
        return []
    previous, row = comparison.base, comparison.head
    # A run that scored no case has no average to compare, and is not one to compare with.
    if row["error_count"] == row["question_count"] or previous["error_count"] == previous["question_count"]:
        return []
    drop = previous["avg_score"] - row["avg_score"]
    if drop <= REGRESSION_TOLERANCE:
        return []
    return [
        f"regression: {row['target_id']} dropped {drop:.2f} points, from {previous['avg_score']:.2f} to "
        f"{row['avg_score']:.2f} over {row['question_count']} cases"
    ]


def notify_subscribers(row: dict[str, Any], context: RunContext) -> threading.Thread:
    """Call every run-complete subscriber once, in the background: the row is already stored,
    so a slow subscriber delays nothing and one that raises is logged and forgotten."""

    from importlib.metadata import entry_points

    def call_all() -> None:
        for entry in sorted(
            entry_points(group=SUBSCRIBER_GROUP), key=lambda e: (e.dist.name if e.dist else "", e.name)
        ):
            try:
                subscriber = entry.load()
                takes_context = len(inspect.signature(subscriber).parameters) >= 2
                subscriber(dict(row), context) if takes_context else subscriber(dict(row))
            except Exception:
                log.exception("run-complete subscriber %s failed; the run is not affected", entry.name)

    worker = threading.Thread(target=call_all, name="ai-eval run-complete subscribers")
    worker.start()
    return worker
