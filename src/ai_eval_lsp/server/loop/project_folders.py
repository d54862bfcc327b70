"""Which project folder each file belongs to, and their lifecycle: every project (settings, plugins,
schema) loaded off the event loop, and an index of its files walked in the background (open
documents are analysed first) and kept current from watched-file events.

A file belongs to its nearest project root (`disk.roots`), found the same way as by the CLI; a
workspace folder may hold many projects, and its walk finds the nested ones, each then loaded and
walked as its own. A project rooted above a workspace folder walks that workspace folder only.
Documents outside every workspace folder get a folder of their own project root, never walked.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types

from ai_eval_lsp.core.index import Summary
from ai_eval_lsp.disk.files import FoundFile, excluded
from ai_eval_lsp.disk.reading import Skipped
from ai_eval_lsp.disk.roots import INFO_SUFFIX, MARKERS, is_project_root, project_root
from ai_eval_lsp.disk.settings import Settings
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.server.loop.off_loop import off_loop
from ai_eval_lsp.server.loop.progress import Progress, Reporting
from ai_eval_lsp.server.loop.scheduler import Scheduler
from ai_eval_lsp.server.loop.session import OpenDocument, ProjectFolder, WorkspaceFolder
from ai_eval_lsp.server.lsp import names
from ai_eval_lsp.server.lsp.convert import path_of, uri_of

LOOSE = "loose:"
"""Key prefix of the folders of documents outside every workspace folder."""

RELOAD_DELAY = 0.3
"""How long a change to a Drupal codebase's files waits for the next before the project reloads."""

FIRST_CHECKS = 1.0
"""How long the walk of a folder waits for its open documents' first checks."""

PROJECT_FILES = ("ai-eval.toml", "pyproject.toml", "core.extension.yml", "settings.php", "composer.json")
DRUPAL_SUFFIXES = (".services.yml", ".info.yml")


class Host(Reporting, Protocol):
    """What the folders need of the language server (`server.AiEvalServer`)."""

    @property
    def scheduler(self) -> Scheduler: ...
    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...
    def publish(self, documents: Iterable[OpenDocument], always: bool = False) -> None: ...
    def clear(self, uri: str) -> None: ...
    def notify(self, method: str, params: Any) -> None: ...
    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None: ...
    def window_show_message(self, params: types.ShowMessageParams) -> None: ...


@dataclass(frozen=True, slots=True)
class Home:
    """Where the project folder of a file is, or would be: its key in the session's folders, its
    root, whether that is a `rubrics` folder, and the workspace folder holding it (None: the file
    is outside every one)."""

    key: str
    root: Path
    rubrics_folder: bool
    workspace: WorkspaceFolder | None


class ProjectFolders:
    def __init__(self, server: Host, on_load: tuple[Callable[[ProjectFolder], None], ...] = ()) -> None:
        self.server = server
        self.session = server.session
        self.on_load = on_load
        """Called on the loop once a folder's project is (re)loaded: what follows a project's
        settings (its site's runs)."""

    # --- folders come and go ---------------------------------------------------------------------

    def add(self, uri: str, settings: Settings) -> WorkspaceFolder | None:
        """A workspace folder and the project folder of its root; the caller configures it."""
        path = path_of(uri)
        if path is None:
            return None
        workspace = WorkspaceFolder(path.resolve(), uri, settings)
        self.session.open_workspace_folder(workspace)
        self.relayout()
        return workspace

    def remove(self, uri: str) -> None:
        if self.session.close_workspace_folder(uri):
            self.relayout()

    def relayout(self) -> None:
        """Workspace folders or project markers changed: each project folder walks what the
        workspace folders now hold of it (one that holds none, or no longer a project root, is
        dropped), each workspace folder's own project exists, and each open document moves to the
        folder it now belongs to. ProjectFolders whose walk changed, or that hold a folder made or
        dropped, are walked again."""
        before = set(self.session.folders)
        rewalk: set[ProjectFolder] = set()
        workspace_roots = {self._root_key(w) for w in self.session.workspace_folders.values()}
        for folder in list(self.session.folders.values()):
            if not folder.walked:
                continue
            bases = self._bases(folder.root)
            discovered = folder.uri not in workspace_roots
            if not bases or (discovered and not is_project_root(folder.root)):
                self.session.drop_folder(folder)
            elif self.session.set_bases(folder, bases):
                rewalk.add(folder)
        for workspace in self.session.workspace_folders.values():
            root = project_root(workspace.root, fallback=workspace.root)
            self._project_folder(root.folder, root.rubrics_folder, workspace)
        moved = [Path(path_of(key) or "") for key in before ^ set(self.session.folders)]
        for folder in self.session.folders.values():
            if any(root != folder.root and self._holds(folder, root) for root in moved):
                rewalk.add(folder)
        for folder in rewalk:
            if folder.project is not None:
                self.server.spawn(self.walk(folder))
        self.rehome()

    @staticmethod
    def _holds(folder: ProjectFolder, path: Path) -> bool:
        return any(path.is_relative_to(base) for base in folder.bases)

    def _root_key(self, workspace: WorkspaceFolder) -> str:
        return uri_of(project_root(workspace.root, fallback=workspace.root).folder)

    def _bases(self, root: Path) -> tuple[Path, ...]:
        """What a project rooted at `root` walks: its root when a workspace folder holds it, else
        the workspace folders it holds."""
        folders = [w.root for w in self.session.workspace_folders.values()]
        if any(root.is_relative_to(folder) for folder in folders):
            return (root,)
        return tuple(sorted(folder for folder in folders if folder.is_relative_to(root)))

    def _project_folder(self, root: Path, rubrics_folder: bool, workspace: WorkspaceFolder) -> ProjectFolder:
        """The walked project folder rooted at `root`, made and loaded when it is new."""
        key = uri_of(root)
        folder = self.session.folders.get(key)
        if folder is None:
            folder = ProjectFolder(
                root,
                key,
                bases=self._bases(root),
                settings=workspace.settings,
                scope=workspace.uri,
                rubrics_folder=rubrics_folder,
            )
            self.session.add_folder(folder)
            if workspace.configured:  # else its workspace folder's settings load it once asked for
                self.server.spawn(self.load(folder))
        return folder

    def folder_of(self, path: Path) -> ProjectFolder | None:
        """The project folder a file belongs to, if the session has one: the folder of its
        project root (what opening it would give), else the walked folder whose index holds it.
        What a read asks: it changes nothing."""
        return self.session.folders.get(self._home(path).key) or self.session.walked_folder_of(path)

    def home_of(self, path: Path | None, settings: Settings) -> ProjectFolder:
        """The project folder a file belongs to, its project root's, made and loaded when the
        session has none (outside the workspace: a folder of its own, never walked). What
        opening a document or running a file does; a read asks `folder_of`."""
        home = self._home(path)
        if home.workspace is not None:
            return self._project_folder(home.root, home.rubrics_folder, home.workspace)
        folder = self.session.folders.get(home.key)
        if folder is None:
            folder = ProjectFolder(home.root, home.key, settings=settings, rubrics_folder=home.rubrics_folder)
            self.session.add_folder(folder)
            self.server.spawn(self.load(folder))
        return folder

    def _home(self, path: Path | None) -> Home:
        """Where the project folder of a file is, or would be."""
        workspace = self.session.workspace_folder_of(path) if path is not None else None
        if path is None or workspace is None:
            root = project_root(path) if path is not None else None
            folder = root.folder if root is not None else Path.cwd()
            return Home(LOOSE + uri_of(folder), folder, root is not None and root.rubrics_folder, None)
        root = project_root(path, fallback=workspace.root)
        return Home(uri_of(root.folder), root.folder, root.rubrics_folder, workspace)

    def rehome(self) -> None:
        """Each open document moves to the folder it belongs to now."""
        for document in list(self.session.documents.values()):
            home = self.home_of(document.path, self.session.settings)
            if home is not document.folder:
                self.server.scheduler.forget(document.uri)
                self.session.close(document.uri)
                moved = self.session.open(document.uri, document.text, document.version, home)
                self.announce(moved, force=True)
                self.server.scheduler.start(moved.uri)

    # --- a folder's project and index ----------------------------------------------------------

    async def load(self, folder: ProjectFolder, walk: bool = True) -> None:
        """Load (or reload) the folder's project, analyse its documents against it, then walk it
        (again, with `walk`; at all, when it was never walked). One load at a time a folder: the
        last asked for is the one that stays."""
        async with folder.loading:
            load = partial(
                Project.load, folder.root, editor=folder.settings, rubrics_folder=folder.rubrics_folder
            )
            project = await off_loop(load)
            if not self.session.still_has(folder):
                return  # removed meanwhile
            self.session.set_project(folder, project)
        self.tell(folder, project)
        for follow in self.on_load:
            follow(folder)
        documents = self.session.documents_of(folder)
        for document in documents:
            if self.session.classify(document):
                self.announce(document, force=True)
        self.server.scheduler.restart([document.uri for document in documents])
        if not folder.walked:
            self.session.mark_indexed(folder)  # nothing to walk: its index is its open documents
        elif walk or not folder.indexed.is_set():
            # Open documents first: the walk would hold the interpreter while they are checked.
            checks = [asyncio.ensure_future(self.server.scheduler.current(doc.uri)) for doc in documents]
            if checks:
                await asyncio.wait(checks, timeout=FIRST_CHECKS)
            await self.walk(folder, again=walk)

    def tell(self, folder: ProjectFolder, project: Project) -> None:
        """What is wrong in a project's settings and plugins, in the log when it appears (not at
        every reload), and its notices, shown once a session."""
        problems = [
            f"{folder.root}: {problem}"
            for problem in (*project.setting_problems, *project.registry.problems())
        ]
        for problem in self.session.newly_standing(folder.root, problems):
            self.server.log(problem)
        for notice in project.registry.notices():  # told once a session, not at every reload
            if self.session.show_once((folder.root, notice)):
                self.server.window_show_message(
                    types.ShowMessageParams(types.MessageType.Info, f"AI Eval: {notice}")
                )

    def tell_skipped(self, folder: ProjectFolder, skipped: Iterable[Skipped]) -> None:
        """Files of the folder the walk could not or may not read (SPEC 6): logged at each read,
        shown once a session each."""
        for note in skipped:
            message = f"{os.path.relpath(note.path, folder.root)}: {note.why}"  # the link's own path
            self.server.log(f"{folder.root}: {message}", types.MessageType.Warning)
            if self.session.show_once((folder.root, message)):
                self.server.window_show_message(
                    types.ShowMessageParams(types.MessageType.Warning, f"AI Eval: {message}")
                )

    async def walk(self, folder: ProjectFolder, again: bool = True) -> None:
        """Index every rubric and cases file of the folder's bases, in the background; the
        projects nested in it are its own, each made a folder and walked once found. One walk at
        a time a folder; without `again`, a folder already indexed is not walked."""
        async with folder.walking:
            if not self.session.still_has(folder) or (folder.indexed.is_set() and not again):
                return
            project = folder.project
            assert project is not None
            bases = folder.bases
            nested: list[Path] = []
            others = [
                other.root
                for other in self.session.folders.values()
                if other is not folder and other.walked and self._holds(folder, other.root)
            ]
            progress = Progress(self.server, f"Indexing rubrics in {folder.root.name}")
            await progress.begin(cancellable=False)
            skipped: list[Skipped] = []

            def read_all() -> list[Summary]:
                found = [each for base in bases for each in project.walk(base, others, nested=nested)]
                summaries = []
                for number, summary in enumerate(project.summaries(found, skipped), 1):
                    summaries.append(summary)
                    progress.report(number, len(found), "files")
                    time.sleep(0)  # let a request waiting for the interpreter in now, not in 5 ms
                return summaries

            try:
                summaries = await off_loop(read_all)
            finally:
                progress.end("indexed")
            now = folder.project
            if (
                not self.session.still_has(folder)
                or now is None
                or now.settings.globs != project.settings.globs
            ):
                return  # removed, or its globs changed: the load that follows walks again
            found = {summary.path for summary in summaries}
            self.session.commit_disk(
                folder, summaries, [relative for relative in folder.disk if relative not in found]
            )
            self.tell_skipped(folder, skipped)
            for root in nested:  # made before this folder counts as indexed: none is missed
                workspace = self.session.workspace_folder_of(root)
                if workspace is not None:
                    self._project_folder(root, False, workspace)
            waiting = self.session.mark_indexed(folder)
        self.server.publish(self.session.documents_of(folder))
        if waiting:
            await self.files_changed(waiting)  # what changed on disk while it was walked

    async def files_changed(self, paths: Iterable[Path]) -> None:
        """Files changed on disk (watched-file events): a project marker may make or unmake a
        project (every folder holding it is walked again, and documents move); a settings file
        or a Drupal codebase's files reload the folder's project (debounced); rubric and cases
        files are read again, off the loop, one batch at a time a folder, so an older read never
        lands last. During a walk they wait."""
        by_folder: dict[ProjectFolder, list[Path]] = {}
        paths = list(paths)
        markers = [path for path in paths if path.name in MARKERS or path.name.endswith(INFO_SUFFIX)]
        if markers:
            self.relayout()
            holding = {
                each
                for each in self.session.folders.values()
                for path in markers
                if any(path.is_relative_to(base) for base in each.bases) and each.project is not None
            }
            for each in holding:
                self.server.spawn(self.walk(each))
        for path in paths:
            folder = self.session.walked_folder_of(path)
            if folder is None or folder.project is None:
                continue
            if _project_input(folder.project, path):
                self.reload_soon(folder)
            if folder.indexed.is_set():
                by_folder.setdefault(folder, []).append(path)
            else:
                self.session.changed_while_walked(folder, path)
        for folder, changed in by_folder.items():
            async with folder.walking:
                project = folder.project
                assert project is not None
                skipped: list[Skipped] = []
                put, gone = await off_loop(partial(_read_changes, project, folder, changed, skipped))
                self.tell_skipped(folder, skipped)
                if self.session.still_has(folder) and self.session.commit_disk(folder, put, gone):
                    self.server.publish(self.session.documents_of(folder))

    def reload_soon(self, folder: ProjectFolder) -> None:
        """Load the folder's project again once its files have stopped changing for a moment."""

        def reload() -> None:
            self.session.reload_due(folder)
            self.server.spawn(self.load(folder, walk=False))

        self.session.reload_later(folder, asyncio.get_running_loop().call_later(RELOAD_DELAY, reload))

    # --- documents' roles ------------------------------------------------------------------------

    def announce(self, document: OpenDocument, force: bool = False) -> None:
        """Tell the client whether a document is a rubric or cases file (SPEC section 2)."""
        self.server.notify(names.DOCUMENT_ROLE, {"uri": document.uri, "role": document.role})
        if document.role is None and force:
            self.server.clear(document.uri)


def _project_input(project: Project, path: Path) -> bool:
    """Whether a changed file may change what a project is: its settings files, or what a Drupal
    codebase contributes (its modules, services, installed list, settings, or a file an
    executor's definitions were read from)."""
    if path.name in PROJECT_FILES or path.name.endswith(DRUPAL_SUFFIXES):
        return True
    codebase = project.registry.codebase
    return codebase is not None and path in codebase.inputs


def _read_changes(
    project: Project, folder: ProjectFolder, paths: list[Path], skipped: list[Skipped]
) -> tuple[list[Summary], list[str]]:
    put: list[Summary] = []
    gone: list[str] = []
    settings = project.settings
    for path in paths:
        relative = folder.relative(path)
        role = project.role(path) if path.is_file() else None
        read = (
            list(project.summaries([FoundFile(path, relative, role)], skipped))
            if role is not None and not excluded(relative, [*settings.rubric_globs, *settings.cases_globs])
            else []
        )
        if read:
            put.extend(read)
        else:
            gone.append(relative)
    return put, gone
