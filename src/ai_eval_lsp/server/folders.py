"""Workspace folders: each a project (settings, plugins, schema) loaded off the event loop, and an
index of its files walked in the background (open documents are analysed first) and kept current
from watched-file events. Documents outside every folder get a folder of their own project root,
which is never walked."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from ai_eval_lsp.core.workspace import Summary
from ai_eval_lsp.disk.files import Found, excluded, read_head
from ai_eval_lsp.disk.roots import project_root
from ai_eval_lsp.disk.settings import Settings
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.server import names
from ai_eval_lsp.server.progress import Progress
from ai_eval_lsp.server.session import Folder, OpenDocument, path_of, uri_of

if TYPE_CHECKING:
    from ai_eval_lsp.server.server import AiEvalServer

LOOSE = "loose:"
"""Key prefix of the folders of documents outside every workspace folder."""

RELOAD_DELAY = 0.3
"""How long a change to a Drupal codebase's files waits for the next before the project reloads."""

FIRST_CHECKS = 1.0
"""How long the walk of a folder waits for its open documents' first checks."""

DRUPAL_FILES = ("core.extension.yml", "settings.php", "composer.json")
DRUPAL_SUFFIXES = (".services.yml", ".info.yml")


class Folders:
    def __init__(self, server: AiEvalServer) -> None:
        self.server = server
        self.session = server.session
        self.reloads: dict[Folder, asyncio.TimerHandle] = {}
        self.told: set[tuple[Path, str]] = set()

    # --- folders come and go ---------------------------------------------------------------------

    def add(self, uri: str, settings: Settings) -> Folder | None:
        """A workspace folder; the caller loads its project once it has the folder's settings."""
        path = path_of(uri)
        if path is None:
            return None
        folder = Folder(path.resolve(), uri, walked=True, settings=settings)
        self.session.folders[uri] = folder
        self.rehome()
        self.rewalk_around(folder)
        return folder

    def remove(self, uri: str) -> None:
        folder = self.session.folders.pop(uri, None)
        if folder is None:
            return
        folder.generation += 1  # work under way for it is no longer committed
        folder.ready.set()  # what waits for it goes on, and finds its documents moved
        folder.indexed.set()
        reload = self.reloads.pop(folder, None)
        if reload is not None:
            reload.cancel()
        self.rehome()
        self.rewalk_around(folder)

    def rewalk_around(self, nested: Folder) -> None:
        """A folder inside another came or went: the outer one's files change hands."""
        for outer in list(self.session.folders.values()):
            if (
                outer.walked
                and outer is not nested
                and nested.root.is_relative_to(outer.root)
                and outer.project
            ):
                self.server.spawn(self.walk(outer))

    def loose(self, path: Path | None, settings: Settings) -> Folder:
        """The folder of a document outside every workspace folder: its project root's."""
        root = project_root(path).folder if path is not None else Path.cwd()
        key = LOOSE + uri_of(root)
        folder = self.session.folders.get(key)
        if folder is None:
            folder = Folder(root, key, walked=False, settings=settings)
            self.session.folders[key] = folder
            self.server.spawn(self.load(folder))
        return folder

    def home_of(self, path: Path | None, settings: Settings) -> Folder:
        return self.session.folder_for(path) or self.loose(path, settings)

    def rehome(self) -> None:
        """Folders were added or removed: each open document moves to its innermost folder."""
        for document in list(self.session.documents.values()):
            home = self.home_of(document.path, document.folder.settings)
            if home is not document.folder:
                self.server.scheduler.forget(document.uri)
                self.session.close(document.uri)
                moved = self.session.open(document.uri, document.text, document.version, home)
                self.announce(moved, force=True)
                self.server.scheduler.start(moved.uri)

    # --- a folder's project and index ----------------------------------------------------------

    async def load(self, folder: Folder, walk: bool = True) -> None:
        """Load (or reload) the folder's project, analyse its documents against it, then walk it
        (again, with `walk`; at all, when it was never walked). One load at a time a folder: the
        last asked for is the one that stays."""
        async with folder.loading:
            project = await asyncio.to_thread(Project.load, folder.root, folder.settings)
            if not self.session.holds(folder):
                return  # removed meanwhile
            folder.project = project
            folder.generation += 1
            folder.ready.set()
        self.tell(folder, project)
        documents = self.session.documents_of(folder)
        for document in documents:
            if self.session.classify(document):
                self.announce(document, force=True)
        self.server.scheduler.restart([document.uri for document in documents])
        if not folder.walked:
            folder.indexed.set()  # nothing to walk: its index is its open documents
        elif walk or not folder.indexed.is_set():
            # Open documents first: the walk would hold the interpreter while they are checked.
            checks = [asyncio.ensure_future(self.server.scheduler.current(doc.uri)) for doc in documents]
            if checks:
                await asyncio.wait(checks, timeout=FIRST_CHECKS)
            await self.walk(folder, again=walk)

    def tell(self, folder: Folder, project: Project) -> None:
        for problem in [*project.setting_problems, *project.registry.problems()]:
            self.server.log(f"{folder.root}: {problem}")
        for notice in project.registry.notices():  # told once a session, not at every reload
            if (folder.root, notice) not in self.told:
                self.told.add((folder.root, notice))
                self.server.window_show_message(
                    types.ShowMessageParams(types.MessageType.Info, f"AI Eval: {notice}")
                )

    async def walk(self, folder: Folder, again: bool = True) -> None:
        """Index every rubric and cases file of the folder, in the background; a nested
        workspace folder's files are its own. One walk at a time a folder; without `again`, a
        folder already indexed is not walked."""
        async with folder.walking:
            if not self.session.holds(folder) or (folder.indexed.is_set() and not again):
                return
            project = folder.project
            assert project is not None
            nested = [
                f.root
                for f in self.session.folders.values()
                if f.walked and f is not folder and f.root.is_relative_to(folder.root)
            ]
            progress = Progress(self.server, f"Indexing rubrics in {folder.root.name}")
            await progress.begin(cancellable=False)

            def read_all() -> list[Summary]:
                found = list(project.walk(skip=nested))
                summaries = []
                for number, summary in enumerate(project.summaries(found), 1):
                    summaries.append(summary)
                    progress.report(number, len(found), "files")
                    time.sleep(0)  # let a request waiting for the interpreter in now, not in 5 ms
                return summaries

            try:
                summaries = await asyncio.to_thread(read_all)
            finally:
                progress.end("indexed")
            if not self.session.holds(folder) or project.settings.globs != folder.settings.globs:
                return  # removed, or its globs changed: the load that follows walks again
            found = {summary.path for summary in summaries}
            self.session.commit_disk(
                folder, summaries, [relative for relative in folder.disk if relative not in found]
            )
            folder.indexed.set()
            waiting, folder.changed = folder.changed, []
        self.server.publish(self.session.documents_of(folder))
        if waiting:
            await self.files_changed(waiting)  # what changed on disk while it was walked

    async def files_changed(self, paths: Iterable[Path]) -> None:
        """Files changed on disk (watched-file events): a Drupal codebase's files reload the
        folder's project (debounced); rubric and cases files are read again, off the loop, one
        batch at a time a folder, so an older read never lands last. During a walk they wait."""
        by_folder: dict[Folder, list[Path]] = {}
        for path in paths:
            folder = self.session.folder_for(path)
            if folder is None or folder.project is None:
                continue
            if _drupal_input(folder.project, path):
                self.reload_soon(folder)
            if folder.indexed.is_set():
                by_folder.setdefault(folder, []).append(path)
            else:
                folder.changed.append(path)
        for folder, changed in by_folder.items():
            async with folder.walking:
                project = folder.project
                assert project is not None
                put, gone = await asyncio.to_thread(_read_changes, project, folder, changed)
                if self.session.holds(folder) and self.session.commit_disk(folder, put, gone):
                    self.server.publish(self.session.documents_of(folder))

    def reload_soon(self, folder: Folder) -> None:
        """Load the folder's project again once its files have stopped changing for a moment."""
        timer = self.reloads.pop(folder, None)
        if timer is not None:
            timer.cancel()

        def reload() -> None:
            self.reloads.pop(folder, None)
            self.server.spawn(self.load(folder, walk=False))

        self.reloads[folder] = asyncio.get_running_loop().call_later(RELOAD_DELAY, reload)

    # --- documents' roles ------------------------------------------------------------------------

    def announce(self, document: OpenDocument, force: bool = False) -> None:
        """Tell the client whether a document is a rubric or cases file (SPEC section 2)."""
        self.server.protocol.notify(names.DOCUMENT_ROLE, {"uri": document.uri, "role": document.role})
        if document.role is None and force:
            self.server.clear(document.uri)


def _drupal_input(project: Project, path: Path) -> bool:
    """Whether a changed file may change what a Drupal codebase contributes: its modules, services,
    installed list, settings, or a file an executor's definitions were read from."""
    if path.name in DRUPAL_FILES or path.name.endswith(DRUPAL_SUFFIXES):
        return True
    codebase = project.registry.codebase
    return codebase is not None and path in codebase.inputs


def _read_changes(project: Project, folder: Folder, paths: list[Path]) -> tuple[list[Summary], list[str]]:
    put: list[Summary] = []
    gone: list[str] = []
    settings = project.settings
    for path in paths:
        relative = folder.relative(path)
        role = project.role(path, read_head(path)) if path.is_file() else None
        read = (
            list(project.summaries([Found(path, relative, role)]))
            if role is not None and not excluded(relative, [*settings.rubric_globs, *settings.cases_globs])
            else []
        )
        if read:
            put.extend(read)
        else:
            gone.append(relative)
    return put, gone
