"""What every end-to-end test does as an editor would: start the real server over stdio with an
editor's recorded capabilities, open and edit documents, and wait for definite events."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities


async def start(
    client: LanguageClient,
    editor: str,
    folders: list[Path],
    settings: dict[str, Any] | None = None,
    experimental: dict[str, Any] | None = None,
) -> LanguageClient:
    """Initialize as `editor` with workspace folders (and `experimental` client capabilities),
    record what a test needs, wait for indexing."""
    client.set_configuration({"runTimeoutSeconds": 5, **(settings or {})}, section="aiEval")
    registrations: list[types.Registration] = []
    roles: dict[str, str | None] = {}
    versions: dict[str, int | None] = {}

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        # pytest-lsp's client has no handler for this; real editors accept the registration.
        registrations.extend(params.registrations)

    @client.feature("aiEval/documentRole")
    def document_role(params: Any) -> None:
        roles[params.uri] = params.role

    completed: list[Any] = []
    client.feature("aiEval/runComplete")(lambda params: completed.append(params))
    lens_refreshes: list[None] = []
    client.feature(types.WORKSPACE_CODE_LENS_REFRESH)(lambda params: lens_refreshes.append(None))

    features = client.protocol.fm.features
    default = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def published(params: types.PublishDiagnosticsParams) -> None:
        versions[params.uri] = params.version
        default(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = published
    client.registrations = registrations  # type: ignore[attr-defined]
    client.roles = roles  # type: ignore[attr-defined]
    client.completed_runs = completed  # type: ignore[attr-defined]
    client.lens_refreshes = lens_refreshes  # type: ignore[attr-defined]
    client.diagnostic_versions = versions  # type: ignore[attr-defined]
    declared = capabilities(editor)
    declared.experimental = experimental
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=declared,
            workspace_folders=[types.WorkspaceFolder(f.as_uri(), f.name) for f in folders],
            root_uri=folders[0].as_uri() if folders else None,
        )
    )
    client.workspace_root = folders[0] if folders else None  # type: ignore[attr-defined]
    client.position_encoding = result.capabilities.position_encoding or "utf-16"  # type: ignore[attr-defined]
    for count in range(len(folders)):
        await indexed(client, count)
    return client


PULLING_VS_CODE = "visual_studio_code_pulling"
"""VS Code's recorded capabilities (1.65) with what today's VS Code adds: pulled diagnostics,
and `workspace/diagnostic/refresh`."""


def capabilities(editor: str) -> types.ClientCapabilities:
    if editor != PULLING_VS_CODE:
        return client_capabilities(editor)
    found = client_capabilities("visual_studio_code")
    assert found.text_document is not None and found.workspace is not None
    found.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=True)
    found.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return found


async def indexed(client: LanguageClient, before: int = 0) -> None:
    """Wait until one more folder than `before` has been indexed (its progress ended)."""
    for _ in range(600):
        if indexings(client) > before:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the workspace was never indexed")


def indexings(client: LanguageClient) -> int:
    """How many folders have been indexed: the progress titled "Indexing rubrics ..." that ended."""
    done = 0
    for reports in client.progress_reports.values():
        begun = any(
            isinstance(r, types.WorkDoneProgressBegin) and r.title.startswith("Indexing") for r in reports
        )
        done += begun and any(isinstance(r, types.WorkDoneProgressEnd) for r in reports)
    return done


def root(client: LanguageClient) -> Path:
    return client.workspace_root  # type: ignore[attr-defined,no-any-return]


def pulls(client: LanguageClient) -> bool:
    return bool(client.capabilities.text_document and client.capabilities.text_document.diagnostic)


async def open_document(
    client: LanguageClient, name: str | Path, text: str | None = None, version: int = 1
) -> str:
    path = name if isinstance(name, Path) else root(client) / name
    if text is None:
        text = path.read_text()
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "yaml", version, text))
    )
    return uri


async def current_diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """What the client has for a document now: pulled anew, or the last list pushed."""
    if pulls(client):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
        )
        return list(report.items)
    return list(client.diagnostics.get(uri, []))


async def diagnostics(client: LanguageClient, uri: str, version: int = 1) -> list[types.Diagnostic]:
    """The diagnostics of a document at a version, pulled or waited for as the client works."""
    if pulls(client):
        return await current_diagnostics(client, uri)  # the server answers for the current version
    for _ in range(400):
        if uri in client.diagnostics and client.diagnostic_versions.get(uri) == version:  # type: ignore[attr-defined]
            return await current_diagnostics(client, uri)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics for {uri} version {version}")


async def diagnostics_until(
    client: LanguageClient, uri: str, wanted: Any, timeout: float = 20
) -> list[types.Diagnostic]:
    """Wait until a document's diagnostics (pushed, or pulled again) satisfy `wanted`."""
    found: list[types.Diagnostic] = []
    for _ in range(int(timeout / 0.05)):
        found = await current_diagnostics(client, uri)
        if wanted(found):
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"the diagnostics of {uri} never became as wanted: {found}")


async def quick_fix(client: LanguageClient, uri: str, problem: types.Diagnostic) -> types.CodeAction:
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), problem.range, types.CodeActionContext([problem])
        )
    )
    return next(
        a for a in actions if isinstance(a, types.CodeAction) and a.kind == types.CodeActionKind.QuickFix
    )


def offset(text: str, position: types.Position, encoding: str) -> int:
    """Where an LSP position falls in `text`: lines end at \n, \r\n or \r, and the character
    counts units of the negotiated encoding, as editors count them."""
    at, line = 0, 0
    while line < position.line:
        breaks = [i for i in (text.find("\n", at), text.find("\r", at)) if i != -1]
        if not breaks:
            return len(text)
        at = min(breaks) + (2 if text.startswith("\r\n", min(breaks)) else 1)
        line += 1
    units = 0
    while at < len(text) and text[at] not in "\r\n" and units < position.character:
        char = text[at]
        units += {"utf-8": len(char.encode("utf-8")), "utf-16": 2 if ord(char) > 0xFFFF else 1}.get(
            encoding, 1
        )
        at += 1
    return at


def apply_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """The text after a workspace edit's edits, applied by their ranges as an editor applies them
    (all ranges refer to the text before any edit)."""
    spans = sorted(
        (
            (offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text)
            for e in edits
        ),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


async def fixed(client: LanguageClient, uri: str, text: str, problem: types.Diagnostic) -> tuple[str, str]:
    """The quick fix of a problem: its title, and the document's text once the editor applied it."""
    fix = await quick_fix(client, uri, problem)
    assert fix.edit is not None and fix.edit.changes is not None and set(fix.edit.changes) == {uri}
    encoding = client.position_encoding  # type: ignore[attr-defined]
    return fix.title, apply_edits(text, list(fix.edit.changes[uri]), encoding)


async def change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version, uri),
            [types.TextDocumentContentChangeWholeDocument(text)],
        )
    )


def edit(
    client: LanguageClient, uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str
) -> None:
    """An incremental edit, as editors send keystrokes: positions in the client's encoding."""
    where = types.Range(types.Position(*start), types.Position(*end))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version, uri),
            [types.TextDocumentContentChangePartial(range=where, text=text)],
        )
    )


async def completion_labels(client: LanguageClient, uri: str, line: int, character: int) -> list[str]:
    result = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(line, character))
    )
    items = result.items if isinstance(result, types.CompletionList) else result or []
    return [item.label for item in items]


async def hover_text(client: LanguageClient, uri: str, line: int, character: int) -> str:
    """The hover's markdown at a position; empty when there is none."""
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, character))
    )
    return (
        hover.contents.value if hover is not None and isinstance(hover.contents, types.MarkupContent) else ""
    )
