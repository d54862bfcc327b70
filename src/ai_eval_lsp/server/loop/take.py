"""How each reading request's snapshot is taken, on the event loop, before its handler runs (the
routes name one each, `routes.py`): a document with the analysis of its text as it is now (or as
typed, for completion; or what is under a cursor, at once where the edits since allow), once its
whole folder is too, or every project folder once loaded. What they await (the scheduler, the
folders' loads and walks) is the loop's; what they give is immutable (`query/snapshots.py`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types

from ai_eval_lsp.server.loop.session import OpenDocument, ProjectFolder
from ai_eval_lsp.server.lsp.convert import NotApplicable, path_of
from ai_eval_lsp.server.query.positions import at_position, peek
from ai_eval_lsp.server.query.snapshots import Cursor, DocumentSnapshot, WorkspaceSnapshot

if TYPE_CHECKING:
    from ai_eval_lsp.server.loop.server import AiEvalServer

LOAD_WAIT = 60.0
"""How long a request waits for the workspace's projects to load before it says what is loading."""


class AboutDocument(Protocol):
    @property
    def text_document(self) -> types.TextDocumentIdentifier: ...


class AtPosition(AboutDocument, Protocol):
    @property
    def position(self) -> types.Position: ...


# --- the snapshots of reading requests -----------------------------------------------------------


async def current(server: AiEvalServer, params: AboutDocument) -> DocumentSnapshot | None:
    """An open rubric or cases file with the analysis of its text as it is now."""
    document = await current_document(server, params.text_document.uri)
    return server.session.document_snapshot(document, server.client) if document is not None else None


async def as_typed(server: AiEvalServer, params: AboutDocument) -> DocumentSnapshot | None:
    """An open document as it is now, with whatever analysis it last had (completion's view: it
    never waits for a check), or once analysed when it has had none."""
    document = server.session.documents.get(params.text_document.uri)
    if document is not None and document.analysis is not None:
        return server.session.document_snapshot(document, server.client)
    return await current(server, params) if document is not None else None


async def under_cursor(server: AiEvalServer, params: AtPosition) -> Cursor | None:
    """An open rubric or cases file as it is now and what is under a cursor in it: at once where
    the edits since its analysis stay inside one check or case (`positions.peek`), else once it is
    analysed."""
    document = server.session.documents.get(params.text_document.uri)
    if document is not None:
        now = server.session.document_snapshot(document, server.client)
        peeked = peek(now, params.position)
        if peeked is not None:
            return Cursor(now, peeked.at)
    analysed = await current(server, params)
    return Cursor(analysed, at_position(analysed, params.position)) if analysed is not None else None


async def settled(server: AiEvalServer, params: AboutDocument) -> DocumentSnapshot | None:
    """`current`, once the document's whole folder is as the editor has it (`whole_folder`): what
    a request that lists or edits places in other files needs."""
    document = await settled_document(server, params.text_document.uri)
    return server.session.document_snapshot(document, server.client) if document is not None else None


async def whole_workspace(server: AiEvalServer, params: Any) -> WorkspaceSnapshot:
    """Every project folder once indexed, each of its open documents analysed as it is now."""
    await asyncio.gather(*(whole_folder(server, folder) for folder in list(server.session.folders.values())))
    return server.session.workspace_snapshot(list(server.session.folders.values()), None, server.client)


async def loaded_workspace(server: AiEvalServer, argument: dict[str, Any]) -> WorkspaceSnapshot:
    """Every project folder once loaded and indexed, and the one holding the argument's `uri`
    (what a command about stored runs or the schema reads). A file in none of them stays
    outside: a read adds no folder (`project_folders.folder_of`)."""
    uri = argument.get("uri")
    path = path_of(uri) if isinstance(uri, str) else None
    folders = await loaded(server)
    home = server.project_folders.folder_of(path.resolve()) if path is not None else None
    if home not in folders:
        home = None
    outside = path if path is not None and home is None else None
    return server.session.workspace_snapshot(folders, home, server.client, outside)


# --- what mutating handlers wait for -------------------------------------------------------------


async def current_document(server: AiEvalServer, uri: str) -> OpenDocument | None:
    """An open rubric or cases file with the analysis of its text as it is now; None otherwise."""
    document = await server.scheduler.current(uri)
    if document is None or document.role is None or document.analysis is None:
        return None
    return document


async def whole_folder(server: AiEvalServer, folder: ProjectFolder) -> bool:
    """Wait until the folder is indexed and every open document of it is analysed as it is now:
    what a request that edits, runs or lists places in other files needs. False when the folder
    was removed meanwhile (its documents moved to another)."""
    await folder.indexed.wait()
    documents = server.session.documents_of(folder)
    await asyncio.gather(*(server.scheduler.current(doc.uri) for doc in documents), return_exceptions=True)
    return server.session.still_has(folder)


async def settled_document(server: AiEvalServer, uri: str) -> OpenDocument | None:
    """`current_document`, once the document's whole folder is too (`whole_folder`); a document
    whose folder is removed meanwhile is settled in the folder it moved to."""
    while (document := await current_document(server, uri)) is not None:
        if await whole_folder(server, document.folder) and server.session.documents.get(uri) is document:
            return document
    return None


async def loaded(server: AiEvalServer) -> list[ProjectFolder]:
    """Every project folder once loaded and, if walked, indexed (those a walk finds meanwhile
    too): waits up to `LOAD_WAIT` seconds, then says what is still loading."""
    deadline = asyncio.get_running_loop().time() + LOAD_WAIT
    while pending := [
        f for f in server.session.folders.values() if not (f.ready.is_set() and f.indexed.is_set())
    ]:
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            roots = ", ".join(str(folder.root) for folder in pending)
            raise NotApplicable(f"still loading after {LOAD_WAIT:g} s: {roots}; ask again once it is indexed")
        waits = [asyncio.ensure_future(asyncio.gather(f.ready.wait(), f.indexed.wait())) for f in pending]
        try:
            await asyncio.wait(waits, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
    return [folder for folder in server.session.folders.values() if folder.project is not None]
