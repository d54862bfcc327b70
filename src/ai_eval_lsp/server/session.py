"""What the server knows between requests: settings, the project (plugins, combined schema), the
index of the workspace's rubrics and cases files, and the analysis of each open document.

Only the event loop changes the session; heavy work reads a snapshot of it on a worker thread.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from ai_eval_lsp.core.analysis import Analysis, analyse_cases, analyse_rubric
from ai_eval_lsp.core.problems import Problem, Span
from ai_eval_lsp.core.workspace import Role, RubricIndex, summarize
from ai_eval_lsp.core.yamltree import Node, decode, parse
from ai_eval_lsp.project import Project
from ai_eval_lsp.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DocumentState:
    """An open rubric or cases file at one version, checked."""

    uri: str
    path: Path
    role: Role
    version: int | None
    text: str
    analysis: Analysis | None  # rubrics only
    lines: list[str]
    root: Node | None


class WorkspaceFiles:
    """What the workspace's files declare: each rubric's summary and each cases file's rubric."""

    def __init__(self) -> None:
        self.index = RubricIndex()
        self.cases_refs: dict[str, str] = {}  # relative path of a cases file -> its `rubric:`

    def remember(
        self, project: Project, relative: str, role: Role | None, text: str, root: Node | None = None
    ) -> None:
        """Index a file; `root` is its tree when the caller has parsed it already."""
        if role not in ("rubric", "cases"):
            return
        if root is None:
            root = parse(text, project.rules.parser).root
        if role == "rubric":
            self.index.put(summarize(relative, root))
        else:
            ref = root.value.get("rubric") if root is not None and isinstance(root.value, dict) else None
            if isinstance(ref, str):
                self.cases_refs[relative] = ref
            else:
                self.cases_refs.pop(relative, None)

    def forget(self, relative: str) -> None:
        self.index.remove(relative)
        self.cases_refs.pop(relative, None)


class Session:
    def __init__(self) -> None:
        self.settings = Settings()
        self.root = Path.cwd()
        self.project: Project | None = None
        self.files = WorkspaceFiles()
        self.documents: dict[str, DocumentState] = {}

    @property
    def index(self) -> RubricIndex:
        return self.files.index

    @property
    def cases_refs(self) -> dict[str, str]:
        return self.files.cases_refs

    # --- set-up ---------------------------------------------------------------------------------

    def load(self, root: Path, settings: Settings) -> list[str]:
        """(Re)discover plugins, rebuild the schema and index the workspace; returns problems.

        Runs on a worker thread: everything is built aside and swapped in at the end, so requests
        meanwhile see the old workspace whole, never a half-built index.
        """
        project = Project.load(root, settings)
        files = WorkspaceFiles()
        open_texts = {state.path: state.text for state in self.documents.values()}
        for path, role in project.walk(root):
            text = open_texts.get(path)
            if text is None:
                try:
                    text, _ = decode(path.read_bytes())
                except OSError:
                    continue  # gone since the walk: nothing to index
            files.remember(project, project.relative(path), role, text)
        self.root, self.settings, self.project = root, settings, project
        self.files = files
        return project.registry.problems()

    def require_project(self) -> Project:
        if self.project is None:
            self.project = Project.load(self.root, self.settings)
        return self.project

    # --- files ----------------------------------------------------------------------------------

    def path_of(self, uri: str) -> Path | None:
        fs_path = to_fs_path(uri)
        return Path(fs_path) if fs_path else None

    def uri_of(self, relative: str) -> str:
        return from_fs_path(str(self.root / relative)) or relative

    def relative(self, path: Path) -> str:
        return self.require_project().relative(path)

    def role_of(self, uri: str, text: str) -> Role | None:
        path = self.path_of(uri)
        if path is None:
            return None
        return self.require_project().role(path, text[:4096])

    def refresh_from_disk(self, path: Path, role: Role | None = None) -> None:
        """Re-read a file that is not open, after it changed on disk (or was deleted)."""
        relative = self.relative(path)
        if any(state.path == path for state in self.documents.values()):
            return  # the open document is the truth
        try:
            text, _ = decode(path.read_bytes())
        except OSError:
            self.files.forget(relative)
            return
        project = self.require_project()
        self.files.remember(project, relative, role or project.role(path, text[:4096]), text)

    # --- open documents -------------------------------------------------------------------------

    def analyse(self, document: TextDocument) -> DocumentState | None:
        """Check an open document as it is now; None when it is no rubric or cases file.

        Reads the session but changes nothing, so it runs on a worker thread.
        """
        role = self.role_of(document.uri, document.source)
        path = self.path_of(document.uri)
        if role is None or path is None:
            return None
        project = self.require_project()
        analysis = (
            analyse_rubric(project.relative(path), document.source, project.rules)
            if role == "rubric"
            else None
        )
        text = document.source
        root = analysis.root if analysis is not None else parse(text, project.rules.parser).root
        return DocumentState(
            document.uri, path, role, document.version, text, analysis, text.split("\n"), root
        )

    def commit(self, state: DocumentState) -> bool:
        """Make a checked document current; True when what other files see of it changed."""
        relative = self.relative(state.path)
        self.documents[state.uri] = state
        if state.analysis is not None:
            changed = self.index.by_path.get(relative) != state.analysis.summary
            self.index.put(state.analysis.summary)
            return changed
        before = self.cases_refs.get(relative)
        self.files.remember(self.require_project(), relative, state.role, state.text, state.root)
        return before != self.cases_refs.get(relative)

    def problems(self, state: DocumentState) -> list[Problem]:
        """Every problem of a document, the workspace's included, as the index is now."""
        if state.analysis is not None:
            return state.analysis.problems_in(self.index)
        project = self.require_project()
        return analyse_cases(state.text, project.cases_validator, self.index, project.rules.parser)

    def close(self, uri: str) -> None:
        state = self.documents.pop(uri, None)
        if state is not None:
            self.refresh_from_disk(state.path, state.role)

    def read(self, path: Path) -> bytes:
        """A file as the editor has it: the open document's text, else the file on disk."""
        for state in self.documents.values():
            if state.path == path:
                return state.text.encode("utf-8")
        return path.read_bytes()

    def text_of(self, relative: str) -> str | None:
        try:
            return decode(self.read(self.root / relative))[0]
        except OSError:
            return None


def to_range(span: Span, lines: list[str], codec: PositionCodec) -> types.Range:
    """A core span (code points) as an LSP range in the client's position encoding."""
    start = codec.position_to_client_units(lines, types.Position(span.start.line, span.start.column))
    end = codec.position_to_client_units(lines, types.Position(span.end.line, span.end.column))
    return types.Range(start, end)


def from_position(position: types.Position, lines: list[str], codec: PositionCodec) -> tuple[int, int]:
    """An LSP position as (line, code-point column)."""
    converted = codec.position_from_client_units(lines, position)
    return converted.line, converted.character
