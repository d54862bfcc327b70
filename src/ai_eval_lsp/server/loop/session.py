"""What the server knows between requests: the workspace folders the editor opened, the projects
their files belong to (each a project folder: a project and an index of its files), the open
documents (their text, as the editor has it, and their last analysis), and the work under way.

Only the event loop changes the session, and only through its methods (and those of the objects
it owns): the client's settings and what it was told (`configure_client`, `show_once`), the
work it may cancel (`progress_began`, `request_began`, `save_began`), the tasks, timers and
analyses under way (`task_began`, `refresh_later`, `reload_later`, `analyses`), the folders'
lifecycle (`open_workspace_folder`, `add_folder`, `drop_folder`, `set_bases`, `configure`,
`set_project`, `changed_while_walked`, `mark_indexed`) and their sites (`watch_site`,
`site_read`, `site_failed`, `retune_site`), what the client was sent (`record_diagnostics`,
`keep_written`, for pushed and pulled diagnostics alike), and the documents (`open`, `change`,
`classify`, `close`). Work on other threads gets an `AnalysisJob`, immutable, and hands back a value
that the loop commits through `Session.commit` / `commit_disk`, the one path that updates the
indexes and says which documents' diagnostics may have changed. Reading handlers get snapshots
the session makes (`document_snapshot`, `workspace_snapshot`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from ai_eval_lsp.core.analysis import Analysis, Edit, Rules
from ai_eval_lsp.core.index import ProjectIndex, Role, RubricIndex, RubricSummary, Summary, classify
from ai_eval_lsp.core.lints import CrossFileMemo
from ai_eval_lsp.core.problems import Problem
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.disk.files import HEAD_BYTES, relative_to
from ai_eval_lsp.disk.settings import Settings
from ai_eval_lsp.drupal.site_address import SiteAddress
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.runs.run import Cancellation
from ai_eval_lsp.runs.site import SiteReader
from ai_eval_lsp.runs.store import ResultStore
from ai_eval_lsp.server.lsp.convert import path_of
from ai_eval_lsp.server.query.diagnostics import Converted
from ai_eval_lsp.server.query.snapshots import (
    Client,
    DocumentSnapshot,
    EditsSince,
    OpenText,
    ProjectSnapshot,
    WorkspaceSnapshot,
)


@dataclass(eq=False)
class WorkspaceFolder:
    """A folder the editor opened, with the editor's settings for it."""

    root: Path
    uri: str
    settings: Settings = field(default_factory=Settings)
    configured: bool = False
    """Whether `settings` are the editor's answer yet: project folders found before it wait."""


@dataclass(eq=False)
class SiteWatch:
    """What a project folder knows of its site's runs between reads (`features/site_runs.py`)."""

    reader: SiteReader
    store: ResultStore
    poll_seconds: float
    tolerance: float
    cursor: int | None = None
    """The highest site id read this session; None until the first read."""
    failing: str | None = None
    """Why the last read failed, until one succeeds: said once, not at every poll."""
    reading: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One read at a time: the reader's connection is not shared between threads."""

    @property
    def address(self) -> SiteAddress:
        return self.reader.address


@dataclass(eq=False)
class ProjectFolder:
    """A project folder (SPEC section 4, "Projects in a repository"): the project rooted there,
    and the index of its rubric and cases files inside the workspace folders (`bases`, the parts
    of them it walks; none for documents outside every workspace folder: never walked).

    `index` is the files on disk (`disk`) with the open documents' own summaries over them.
    """

    root: Path
    uri: str
    bases: tuple[Path, ...] = ()
    settings: Settings = field(default_factory=Settings)
    """The editor's settings for its files; its project's are these over its settings files."""
    scope: str | None = None
    """The workspace folder whose editor settings it takes (None: the editor's global ones)."""
    rubrics_folder: bool = False
    """Its root is no marker's, and named `rubrics`: a `rubrics` folder for its files."""
    project: Project | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once `project` is loaded: documents are analysed only against a loaded project."""
    index: ProjectIndex = field(default_factory=ProjectIndex)
    disk: dict[str, Summary] = field(default_factory=dict)
    indexed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the walk has finished: until then, problems that need other files are not
    reported, and runs and renames wait."""
    generation: int = 0
    """Counts project loads, so work started against an older project is not committed."""
    loading: asyncio.Lock = field(default_factory=asyncio.Lock)
    walking: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held by a walk and by the disk reads of watched files, one at a time."""
    changed: list[Path] = field(default_factory=list)
    """Files reported changed while the folder was walked: read once the walk is committed."""
    site: SiteWatch | None = None
    """Its project's site, whose runs are read (None: the project names none)."""
    reload: asyncio.TimerHandle | None = None
    """The reload of its project due once its files stop changing (`project_folders.reload_soon`)."""

    @property
    def walked(self) -> bool:
        return bool(self.bases)

    def relative(self, path: Path) -> str:
        return relative_to(self.root, path)

    def role(self, relative: str, text: str) -> Role | None:
        settings = self.project.settings if self.project is not None else self.settings
        head = text[:HEAD_BYTES]
        return classify(relative, head, settings.rubric_globs, settings.cases_globs, self.rubrics_folder)

    @property
    def rubrics_for_lints(self) -> RubricIndex | None:
        """The rubrics documents are checked against; None (own problems only) while the walk is
        under way, and for documents outside every workspace folder, which have no workspace."""
        return self.index.rubrics if self.walked and self.indexed.is_set() else None


@dataclass(eq=False)
class OpenDocument:
    uri: str
    path: Path | None
    folder: ProjectFolder
    relative: str
    """Its path as its folder names it (the URI for a document that is no file)."""
    lines: LineIndex
    version: int
    role: Role | None = None
    analysis: Analysis | None = None
    analysis_version: int = -1
    analysis_generation: int = -1
    """The folder's project generation the analysis was made against."""
    published: object = None
    """What was last sent to (or pulled by) the client for it, to send only what changed."""
    written: tuple[Converted, Converted] = field(default_factory=lambda: ({}, {}))
    """Its problems as written the last two times (`diagnostics_json`): each written once."""
    result_id: int = 0
    edits: list[tuple[int, Edit]] = field(default_factory=list)
    """The edits since its analysis, each with the version it made, for `update`."""
    last_parsed: tuple[Analysis, list[Edit]] | None = None
    """While its analyses read no tree (a keystroke broke its YAML): the last that did, and the
    edits since, for completion and hover (`analysis.before_broken`)."""
    cross_file_memo: CrossFileMemo = field(default_factory=CrossFileMemo)
    """What its problems against its folder's rubrics were made of last (`Analysis.problems_in`)."""

    @property
    def text(self) -> str:
        return self.lines.text

    @property
    def current(self) -> bool:
        """Whether its analysis is of the text as it is now, against the project as it is now."""
        return (
            self.analysis is not None
            and self.analysis_version == self.version
            and self.analysis_generation == self.folder.generation
        )

    @property
    def previous(self) -> Analysis | None:
        """Its last analysis, if it was made against the project as it is now: an analysis of its
        text now updates it by the edits since (`edits_since`)."""
        same_project = self.analysis_generation == self.folder.generation
        return self.analysis if same_project else None

    @property
    def edits_since(self) -> tuple[Edit, ...]:
        return tuple(edit for version, edit in self.edits if version > self.analysis_version)


@dataclass(frozen=True, slots=True)
class AnalysisJob:
    """One version of a document and what it is checked against, for a worker thread."""

    version: int
    text: str
    role: Role
    relative: str
    rules: Rules
    generation: int
    lines: LineIndex
    previous: Analysis | None = None
    """The document's last analysis, of the text before `edits`."""
    edits: tuple[Edit, ...] = ()


class Cancellable(Protocol):
    def cancel(self) -> None: ...


@dataclass(eq=False)
class Analyses:
    """The analyses of open documents, by URI, as the scheduler (`scheduler.py`) starts them: the
    timer each waits for after an edit, the opening of the document being analysed, and the
    requests waiting for the analysis of its text as it is now."""

    timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    running: dict[str, OpenDocument] = field(default_factory=dict)
    waiting: dict[str, list[asyncio.Future[None]]] = field(default_factory=dict)
    collection: asyncio.TimerHandle | None = None
    """The collector's full collection, once no analysis has landed for a while."""

    event_reader: asyncio.Future[None] | None = None
    """PyYAML's loading, begun once the first analysis landed (a first edit reads an item alone
    with it), not at the first keystroke."""

    def load_event_reader_once(self, begin: Callable[[], asyncio.Future[None]]) -> None:
        if self.event_reader is None:
            self.event_reader = begin()

    def collect_later(self, timer: asyncio.TimerHandle) -> None:
        """The full collection runs when `timer` fires (not when the one before would have)."""
        if self.collection is not None:
            self.collection.cancel()
        self.collection = timer

    def later(self, uri: str, timer: asyncio.TimerHandle) -> None:
        """The document is analysed when `timer` fires (not when the one before would have)."""
        self.due(uri)
        self.timers[uri] = timer

    def due(self, uri: str) -> None:
        """The document's timer is done with: it is analysed now, or not at all."""
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def began(self, document: OpenDocument) -> None:
        self.running[document.uri] = document

    def ended(self, document: OpenDocument) -> None:
        if self.running.get(document.uri) is document:
            del self.running[document.uri]

    def forget(self, uri: str) -> None:
        """The document closed: nothing waits to start for it, and what runs is dropped when done."""
        self.due(uri)
        self.running.pop(uri, None)

    def wait(self, uri: str) -> asyncio.Future[None]:
        """A request's wait for the document's analysis as it is now."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(uri, []).append(waiter)
        return waiter

    def woken(self, uri: str) -> list[asyncio.Future[None]]:
        """The requests waiting for the document, no longer waiting here."""
        return self.waiting.pop(uri, [])


class Session:
    def __init__(self) -> None:
        self.workspace_folders: dict[str, WorkspaceFolder] = {}
        """The editor's workspace folders, by URI."""
        self.folders: dict[str, ProjectFolder] = {}
        """Project folders by root URI; documents outside every workspace folder get a folder of
        their own root (never walked), keyed apart."""
        self.documents: dict[str, OpenDocument] = {}
        self.analyses = Analyses()
        self.save_rounds: set[Cancellable] = set()
        """The runs on save under way, by save (`on_save.Round`): a new save cancels them."""
        self.background: set[asyncio.Task[Any]] = set()
        """The tasks the server started in the background, kept alive until done."""
        self.refresh: asyncio.TimerHandle | None = None
        """When a pulling client is asked to pull again, if it has not (`AiEvalServer.publish`)."""
        self.settings = Settings()
        """The client's settings outside any folder (and until a folder has its own)."""
        self.settings_problems: Sequence[str] = ()
        """What is wrong in the settings the client started with, to tell once it is initialized."""
        self.shown_once: set[Hashable] = set()
        """What the user was shown that is shown once a session (notices)."""
        self.standing: dict[Hashable, frozenset[str]] = {}
        """The problems each source of settings (the editor's, per scope; a folder's project) had
        when last read: a problem is told when it appears, not at every read."""
        self.progress: dict[int | str, Cancellable] = {}
        """The progress under way, by token, so the client can cancel it."""
        self.requests: dict[object, Cancellation] = {}
        """The cancellable work under way, by the id of the request that started it."""

    # --- the client -----------------------------------------------------------------------------

    def configure_client(self, settings: Settings, problems: Sequence[str] = ()) -> None:
        self.settings, self.settings_problems = settings, problems

    def show_once(self, said: Hashable) -> bool:
        """Whether something shown once a session is to be shown now: the first time only."""
        shown = said in self.shown_once
        self.shown_once.add(said)
        return not shown

    def newly_standing(self, source: Hashable, problems: Sequence[str]) -> list[str]:
        """The problems `source` has now that no source had: to be told. The editor's settings are
        read per scope, again at every change, and the same problem stands in each."""
        before = frozenset().union(*self.standing.values())
        self.standing[source] = frozenset(problems)
        return [problem for problem in dict.fromkeys(problems) if problem not in before]

    def progress_began(self, token: int | str, progress: Cancellable) -> None:
        self.progress[token] = progress

    def progress_ended(self, token: int | str) -> None:
        self.progress.pop(token, None)

    def request_began(self, request: object, cancellation: Cancellation) -> None:
        self.requests[request] = cancellation

    def request_ended(self, request: object) -> None:
        self.requests.pop(request, None)

    def save_began(self, round_: Cancellable) -> None:
        """A save's runs begin: those of the saves before are cancelled."""
        for earlier in self.save_rounds:
            earlier.cancel()
        self.save_rounds.add(round_)

    def save_ended(self, round_: Cancellable) -> None:
        self.save_rounds.discard(round_)

    # --- work under way -------------------------------------------------------------------------

    def task_began(self, task: asyncio.Task[Any]) -> None:
        self.background.add(task)

    def task_ended(self, task: asyncio.Task[Any]) -> None:
        self.background.discard(task)

    def refresh_later(self, timer: asyncio.TimerHandle) -> None:
        self.refresh = timer

    def refresh_due(self) -> None:
        self.refresh = None

    def reload_later(self, folder: ProjectFolder, timer: asyncio.TimerHandle) -> None:
        """A folder's project reloads when `timer` fires (not when the one before would have)."""
        self.reload_due(folder)
        folder.reload = timer

    def reload_due(self, folder: ProjectFolder) -> None:
        """A folder's reload timer is done with: it reloads now, or not at all."""
        if folder.reload is not None:
            folder.reload.cancel()
            folder.reload = None

    # --- folders --------------------------------------------------------------------------------

    def workspace_folder_of(self, path: Path) -> WorkspaceFolder | None:
        """The innermost workspace folder holding a path."""
        holding = [w for w in self.workspace_folders.values() if path.is_relative_to(w.root)]
        return max(holding, key=lambda w: len(w.root.parts), default=None)

    def walked_folder_of(self, path: Path) -> ProjectFolder | None:
        """The walked project folder whose index holds a file, changed or gone: the innermost
        that walks it (a nested project's own folder before the one around it). Decided from the
        folders alone, with no look at the disk: a checkout reports thousands of files at once."""
        holding = [f for f in self.folders.values() if any(path.is_relative_to(base) for base in f.bases)]
        return max(holding, key=lambda f: len(f.root.parts), default=None)

    def open_workspace_folder(self, workspace: WorkspaceFolder) -> None:
        self.workspace_folders[workspace.uri] = workspace

    def close_workspace_folder(self, uri: str) -> bool:
        return self.workspace_folders.pop(uri, None) is not None

    def configure_workspace_folder(self, workspace: WorkspaceFolder, settings: Settings) -> None:
        """The editor answered for a workspace folder: project folders found later load at once."""
        workspace.settings, workspace.configured = settings, True

    def add_folder(self, folder: ProjectFolder) -> ProjectFolder:
        self.folders[folder.uri] = folder
        return folder

    def drop_folder(self, folder: ProjectFolder) -> None:
        """A folder no longer the session's: work under way for it commits nothing, and what
        waits for it goes on (and finds its documents moved)."""
        del self.folders[folder.uri]
        self.reload_due(folder)
        folder.generation += 1
        folder.ready.set()
        folder.indexed.set()

    def set_bases(self, folder: ProjectFolder, bases: tuple[Path, ...]) -> bool:
        """What the workspace folders now hold of a project folder; True when that changed."""
        changed, folder.bases = folder.bases != bases, bases
        return changed

    def configure(self, folder: ProjectFolder, settings: Settings) -> bool:
        """The editor's settings for a folder; True when its files' roles may have changed
        (then it must be walked again)."""
        globs_changed = settings.globs != folder.settings.globs
        folder.settings = settings
        if globs_changed:
            folder.indexed.clear()
        return globs_changed

    def set_project(self, folder: ProjectFolder, project: Project) -> None:
        """A folder's project (re)loaded: analyses made against the one before are dropped."""
        folder.project = project
        folder.generation += 1
        folder.ready.set()

    def watch_site(self, folder: ProjectFolder, site: SiteWatch | None) -> None:
        """The site whose runs a folder reads now (None: none)."""
        folder.site = site

    def retune_site(self, site: SiteWatch, poll_seconds: float, tolerance: float) -> None:
        """The project's settings for its site changed, not its address."""
        site.poll_seconds, site.tolerance = poll_seconds, tolerance

    def site_read(self, site: SiteWatch, cursor: int | None) -> str | None:
        """A read of the site succeeded, up to `cursor`; returns why the read before had failed."""
        failed, site.failing, site.cursor = site.failing, None, cursor
        return failed

    def site_failed(self, site: SiteWatch, why: str) -> bool:
        """A read of the site failed; True when for another reason than the read before."""
        news, site.failing = site.failing != why, why
        return news

    def changed_while_walked(self, folder: ProjectFolder, path: Path) -> None:
        """A file changed during the folder's walk: read once the walk is committed."""
        folder.changed.append(path)

    def mark_indexed(self, folder: ProjectFolder) -> list[Path]:
        """A folder's walk is committed (or it has none); returns the files reported changed
        meanwhile, to be read now."""
        folder.indexed.set()
        waiting, folder.changed = folder.changed, []
        return waiting

    def record_diagnostics(self, document: OpenDocument, items: object) -> bool:
        """Record what the client was sent (pushed) or answered (pulled) for a document; True
        when it differs from what it had, and then the document's result id moves on."""
        if items == document.published:
            return False
        document.published, document.result_id = items, document.result_id + 1
        return True

    def keep_written(self, document: OpenDocument, converted: Converted) -> None:
        """A document's problems as just written, kept with those written the time before."""
        document.written = (converted, document.written[0])

    def still_has(self, folder: ProjectFolder) -> bool:
        """Whether a folder is still the session's (not removed, nor replaced)."""
        return self.folders.get(folder.uri) is folder

    def documents_of(self, folder: ProjectFolder) -> list[OpenDocument]:
        return [doc for doc in self.documents.values() if doc.folder is folder]

    def document_at(self, path: Path) -> OpenDocument | None:
        """The open document of a file, whatever the spelling of its URI."""
        return next((doc for doc in self.documents.values() if doc.path == path), None)

    # --- documents ------------------------------------------------------------------------------

    def open(self, uri: str, text: str, version: int, folder: ProjectFolder) -> OpenDocument:
        path = path_of(uri)
        path = path.resolve() if path is not None else None
        relative = folder.relative(path) if path is not None else uri
        document = OpenDocument(uri, path, folder, relative, LineIndex(text), version)
        self.documents[uri] = document
        self.classify(document)
        return document

    def change(self, document: OpenDocument, lines: LineIndex, version: int, edits: Sequence[Edit]) -> None:
        document.lines, document.version = lines, version
        if document.role is not None:  # a document never analysed keeps none
            document.edits += [(version, edit) for edit in edits]
        if document.last_parsed is not None:
            document.last_parsed[1].extend(edits)

    def classify(self, document: OpenDocument) -> bool:
        """Decide the document's role anew (its modeline may have been typed); True if it changed.
        A document that changes role is analysed anew, and the index holds its file's summary
        from disk until then."""
        role = document.folder.role(document.relative, document.text) if document.path is not None else None
        if role == document.role:
            return False
        if document.role is not None:
            self._restore_disk(document)
        document.role, document.analysis, document.analysis_version = role, None, -1
        document.published, document.edits, document.last_parsed = None, [], None
        return True

    def close(self, uri: str) -> OpenDocument | None:
        document = self.documents.pop(uri, None)
        if document is not None and document.role is not None:
            self._restore_disk(document)
        return document

    def _restore_disk(self, document: OpenDocument) -> None:
        folder, relative = document.folder, document.relative
        on_disk = folder.disk.get(relative)
        folder.index = folder.index.put(on_disk) if on_disk else folder.index.remove(relative)

    def analysis_job(self, document: OpenDocument) -> AnalysisJob | None:
        project = document.folder.project
        if document.role is None or project is None:
            return None
        return AnalysisJob(
            document.version,
            document.text,
            document.role,
            document.relative,
            project.rules,
            document.folder.generation,
            document.lines,
            document.previous,
            document.edits_since,
        )

    # --- what reading handlers are given ----------------------------------------------------------

    def document_snapshot(self, document: OpenDocument, client: Client) -> DocumentSnapshot:
        """A document as a request sees it now: the only place a `DocumentSnapshot` is made."""
        folder = document.folder
        previous = document.previous if document.role is not None and not document.current else None
        since_analysis = (
            EditsSince(previous, document.edits_since)
            if previous is not None and folder.project is not None and previous.role == document.role
            else None
        )
        last_parsed = document.last_parsed
        since_parsed = EditsSince(last_parsed[0], tuple(last_parsed[1])) if last_parsed else since_analysis
        return DocumentSnapshot(
            document.uri,
            document.path,
            document.relative,
            document.role,
            document.version,
            document.lines,
            document.analysis,
            folder.root,
            folder.index,
            folder.indexed.is_set(),
            folder.project,
            client,
            self.open_texts(),
            since_analysis,
            since_parsed,
        )

    def workspace_snapshot(
        self,
        folders: Sequence[ProjectFolder],
        home: ProjectFolder | None,
        client: Client,
        outside: Path | None = None,
    ) -> WorkspaceSnapshot:
        """Project folders, and the one holding the file a request names (or that file, when it
        is `outside` them all), as the request sees them now: the only place a
        `WorkspaceSnapshot` is made."""
        views = {folder: _view(folder) for folder in folders}
        home_view = (views.get(home) or _view(home)) if home is not None else None
        return WorkspaceSnapshot(tuple(views.values()), home_view, self.open_texts(), client, outside)

    def open_texts(self) -> Mapping[Path, OpenText]:
        texts = {doc.path: OpenText(doc.uri, doc.lines) for doc in self.documents.values() if doc.path}
        return MappingProxyType(texts)

    # --- the one path that commits --------------------------------------------------------------

    def commit(self, document: OpenDocument, job: AnalysisJob, analysis: Analysis) -> bool:
        """Make an analysis the document's latest; True when what other files' problems read of it
        changed, so that their diagnostics may have (`_read_by_others`). One of a document since closed (or moved to another
        folder: it is another `OpenDocument` then), older than what is committed, or of an older
        project: dropped."""
        if (
            self.documents.get(document.uri) is not document
            or document.role != job.role
            or job.version < document.analysis_version
            or job.generation != document.folder.generation
        ):
            return False
        last = document.analysis
        if analysis.tree is not None:
            document.last_parsed = None
        elif (
            document.last_parsed is None
            and last is not None
            and last.tree is not None
            and last.role == analysis.role
        ):
            document.last_parsed = (last, [edit for _, edit in document.edits])
        document.analysis, document.analysis_version = analysis, job.version
        document.analysis_generation = job.generation
        document.edits = [(version, edit) for version, edit in document.edits if version > job.version]
        return self._put_summary(document.folder, analysis.summary)

    def _put_summary(self, folder: ProjectFolder, summary: Summary) -> bool:
        """Put a document's summary in its folder's index; True when what the problems of other
        files read of its rubrics changed."""
        was = folder.index.summary(summary.path)
        if was == summary:
            return False
        folder.index = folder.index.put(summary)
        return _read_by_others(was) != _read_by_others(summary)

    def commit_disk(self, folder: ProjectFolder, put: list[Summary], removed: list[str]) -> bool:
        """Files changed on disk (a whole walk's at once); open documents stay the truth for their
        own paths. True when the index changed."""
        open_paths = {doc.relative for doc in self.documents_of(folder) if doc.role is not None}
        for relative in removed:
            folder.disk.pop(relative, None)
        folder.disk.update((summary.path, summary) for summary in put)
        index = folder.index
        gone = [r for r in removed if r not in open_paths and index.summary(r) is not None]
        new = [s for s in put if s.path not in open_paths and index.summary(s.path) != s]
        if not gone and not new:
            return False
        folder.index = index.replace(put=new, remove=gone)
        return True

    def problems(self, document: OpenDocument) -> list[Problem]:
        """Every problem of a document as its folder's index is now."""
        if document.analysis is None:
            return []
        return document.analysis.problems_in(document.folder.rubrics_for_lints, document.cross_file_memo)


def _view(folder: ProjectFolder) -> ProjectSnapshot:
    return ProjectSnapshot(folder.root, folder.index, folder.project, folder.site is not None)


def _read_by_others(summary: Summary | None) -> tuple[object, ...] | None:
    """What other files' problems read of a summary: a rubric's identity, composites and sources
    and where they are written (not its check ids or kinds: typing a check's id in a rubric
    changes no other file's problems); nothing of a cases file's."""
    if not isinstance(summary, RubricSummary):
        return None
    return (
        summary.id,
        summary.version,
        summary.id_span,
        summary.composites,
        summary.sources,
        summary.unreadable,
        summary.lines,
    )
