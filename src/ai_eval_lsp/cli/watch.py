"""`ai-eval-lsp run --watch` (SPEC sections 3 and 5): run cases files, then, after each change to
a rubric, a cases file or an executor source (`*.php`, `*.services.yml`) of their projects,
re-run those of them the change affects, printing each run's line and what changed since the
cases file's run before. Ctrl+C ends it; the caller turns the last round into the exit status."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ai_eval_lsp.core.index import ProjectIndex
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.render import diff_line, run_line, summary

if TYPE_CHECKING:
    from ai_eval_lsp.runs.run import RunResult

DEBOUNCE_MS = 300
"""Changes that come this close together (an editor's save in several writes) are one round."""
MISSING = (
    "error: `run --watch` needs the watchfiles package, which is not installed: "
    "pip install 'ai-eval-lsp[watch]'"
)


class ProjectsOf(Protocol):
    def of(self, path: Path) -> Project: ...


Round = list[tuple[str, "RunResult | str"]]
"""Each cases file run, by its name on the command line, with its result or why it could not run."""
RunOne = Callable[[Project, str], "RunResult | str"]


def watch(names: Sequence[str], open_projects: Callable[[], ProjectsOf], run_one: RunOne) -> Round | None:
    """Run `names`, then re-run what each change affects until interrupted; the last round (as
    far as it went, when it was interrupted after a run), or None when watchfiles is missing
    (said on stderr)."""
    try:
        import watchfiles
    except ImportError:
        print(MISSING, file=sys.stderr)
        return None

    class Sources(watchfiles.DefaultFilter):
        def __call__(self, change: Any, path: str) -> bool:
            return bool(super().__call__(change, path)) and path.endswith((".yaml", ".yml", ".php"))

    projects = open_projects()
    watched = {Path(name).resolve(): name for name in names}
    rounds: list[Round] = [[]]
    _round(projects, list(watched.values()), run_one, rounds[-1])
    roots = sorted({projects.of(path).root for path in watched})
    indexes = {root: _index(projects.of(root)) for root in roots}
    print(f"watching {', '.join(map(str, roots))} for changes (Ctrl+C ends)", file=sys.stderr, flush=True)
    try:
        for changes in watchfiles.watch(*roots, watch_filter=Sources(), debounce=DEBOUNCE_MS):
            changed = {Path(path).resolve() for _, path in changes}
            before = {root: projects.of(root) for root in roots}
            if any(_is_executor_source(path) for path in changed):
                projects = open_projects()  # the registries read PHP executors afresh
            affected: set[Path] = set()
            for root in roots:
                project, old_index = projects.of(root), indexes[root]
                indexes[root] = new_index = _index(project)
                affected |= _affected(project, before[root], [old_index, new_index], changed)
            again = [name for path, name in watched.items() if path in affected]
            if again:
                rounds.append([])
                _round(projects, again, run_one, rounds[-1])
    except KeyboardInterrupt:
        pass
    return [done for done in rounds if done][-1]


def _round(projects: ProjectsOf, names: Iterable[str], run_one: RunOne, done: Round) -> None:
    """Run each file, adding it to `done` once run (so an interrupted round keeps what it ran)."""
    for name in names:
        result = run_one(projects.of(Path(name)), name)
        done.append((name, result))
        if isinstance(result, str):
            continue
        print(f"{name}: {run_line(result)}")
        if result.change is not None:
            flipped = summary(result)
            if flipped != run_line(result):
                print(f"  {flipped}")
            print(f"  {diff_line(result.change)}")
        sys.stdout.flush()


def _index(project: Project) -> ProjectIndex:
    return project.index({}, roles=("rubric", "cases"))


def _is_executor_source(path: Path) -> bool:
    return path.suffix == ".php" or path.name.endswith(".services.yml")


def _affected(
    project: Project, before: Project, indexes: Sequence[ProjectIndex], changed: Iterable[Path]
) -> set[Path]:
    """The cases files of the project a change affects (by the index before it and after, so a
    rubric renamed or deleted still reaches the cases files that ran it)."""
    inside = [path for path in changed if project.inside(path)]
    relatives = [project.relative(path) for path in inside]
    kinds = {
        kind for path in inside if _is_executor_source(path) for kind in _kinds_of(path, project, before)
    }
    found: set[str] = set()
    for index in indexes:
        found |= set(index.affected(relatives)) | set(index.using_kinds(kinds))
    return {(project.root / relative).resolve() for relative in found}


def _kinds_of(path: Path, *projects: Project) -> set[str]:
    """The kinds an executor source defines, in any of these projects' registries: a PHP class
    file's own, or every kind of the module whose `*.services.yml` it is."""
    module = path.name.removesuffix(".services.yml") if path.name.endswith(".services.yml") else None
    return {
        kind
        for project in projects
        for kind, origin in project.registry.combined.origins.items()
        if (origin.file is not None and Path(origin.file).resolve() == path)
        or (module is not None and origin.module == module)
    }
