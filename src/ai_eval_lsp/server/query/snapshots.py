"""What a reading handler is given: a document as one request sees it (`DocumentSnapshot`, with
what is under a cursor: `Cursor`) or the workspace (`WorkspaceSnapshot`), immutable values taken
on the event loop before the handler runs (`Session.document_snapshot`, `workspace_snapshot`;
`loop/take.py` awaits what they need). Nothing here can reach the session."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ai_eval_lsp.core.analysis import Analysis, Edit
from ai_eval_lsp.core.cursor import At
from ai_eval_lsp.core.index import ProjectIndex, Role
from ai_eval_lsp.core.text import Encoding, LineIndex
from ai_eval_lsp.project.project import Project


@dataclass(frozen=True, slots=True)
class Client:
    """What answers depend on of the client: the position encoding agreed, and whether it takes
    snippets in completion."""

    encoding: Encoding
    snippets: bool = False


@dataclass(frozen=True, slots=True)
class OpenText:
    """An open document's text, as the editor has it, where another file's answer places things."""

    uri: str
    lines: LineIndex


@dataclass(frozen=True, slots=True)
class EditsSince:
    """An analysis of a document's text before its latest edits, and those edits in order."""

    analysis: Analysis
    edits: tuple[Edit, ...]


@dataclass(frozen=True, slots=True)
class DocumentSnapshot:
    """An open document as one request sees it, taken in one place (`Session.document_snapshot`)
    when the request starts: its text, lines and analysis, and its project folder's index and
    project at that moment. A request that awaits (a store read) still builds its answer from
    what it was asked about: nothing here changes under it."""

    uri: str
    path: Path | None
    relative: str
    role: Role | None
    version: int
    lines: LineIndex
    analysis: Analysis | None
    root: Path
    index: ProjectIndex
    indexed: bool
    """Whether the folder's walk was done (or it has none): until then `index` holds the open
    documents only."""
    project: Project | None
    client: Client
    open: Mapping[Path, OpenText]
    """Every open document's text, by path: places in them are where the editor has them."""
    since_analysis: EditsSince | None = None
    """Its last analysis (of its role, against its project) when edits came since: what is under
    a cursor is read from the one item they stay inside (`peek`)."""
    since_parsed: EditsSince | None = None
    """Its last analysis that read a tree, and the edits since (`before_broken_item`)."""

    @property
    def text(self) -> str:
        text: str = self.lines.text
        return text


@dataclass(frozen=True, slots=True)
class Cursor:
    """A document as a request at a cursor sees it, and what is under the cursor there."""

    document: DocumentSnapshot
    at: At | None


@dataclass(frozen=True, slots=True, eq=False)
class ProjectSnapshot:
    """A project folder as a workspace-wide request sees it."""

    root: Path
    index: ProjectIndex
    project: Project | None
    reads_site: bool
    """Whether its project reads a site's runs."""


@dataclass(frozen=True, slots=True)
class WorkspaceSnapshot:
    """Every project folder as a workspace-wide request sees it (`Session.workspace_snapshot`),
    the one holding the file the request names (`home`), and the open documents' texts."""

    folders: tuple[ProjectSnapshot, ...]
    home: ProjectSnapshot | None
    open: Mapping[Path, OpenText]
    client: Client
    outside: Path | None = None
    """The file the request names, when no project folder of the session holds it."""


def project_of(document: DocumentSnapshot) -> Project:
    project = document.project
    assert project is not None, "a document is analysed only once its project is loaded"
    return project
