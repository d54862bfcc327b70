"""Lifecycle and workspace: `initialize` answers at once; each workspace folder then gets its
settings, its project and its index in the background. ProjectFolders come and go, settings change,
watched files change, and the client may cancel the progress it is shown."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from lsprotocol import types

from ai_eval_lsp.disk.settings import Settings
from ai_eval_lsp.server.loop.server import AiEvalServer
from ai_eval_lsp.server.loop.session import ProjectFolder, WorkspaceFolder
from ai_eval_lsp.server.lsp.convert import path_of

SECTION = "aiEval"
WATCHED = ("**/*.yaml", "**/*.yml", "**/*.php", "**/ai-eval.toml", "**/pyproject.toml", "**/composer.json")
"""Rubric and cases files, a Drupal codebase's services, module and executor class files, and the
files that mark projects and hold their settings."""


def _folders(params: types.InitializeParams) -> list[types.WorkspaceFolder]:
    if params.workspace_folders:
        return list(params.workspace_folders)
    if params.root_uri:
        return [types.WorkspaceFolder(params.root_uri, "root")]
    return []  # no folder: nothing is walked, documents get the folder of their project root


async def fetch_settings(server: AiEvalServer, scope: str | None) -> Settings:
    """The client's `aiEval` settings for a folder (or globally); what it cannot say is defaulted."""
    workspace = server.client_capabilities.workspace
    if not (workspace and workspace.configuration):
        return server.session.settings
    try:
        values = await server.workspace_configuration_async(
            types.ConfigurationParams([types.ConfigurationItem(scope_uri=scope, section=SECTION)])
        )
    except Exception as err:
        server.log(f"could not read the {SECTION} settings: {err}", types.MessageType.Warning)
        return server.session.settings
    raw = values[0] if values and isinstance(values[0], dict) else {}
    settings, problems = Settings.from_mapping(raw)
    tell_settings_problems(server, scope, problems)
    return settings


def tell_settings_problems(server: AiEvalServer, scope: str | None, problems: Sequence[str]) -> None:
    """Log and show each settings problem once, when it appears (the settings are read per scope
    and at every change): a mistyped key read as nothing is worth a message the user sees."""
    messages = [f"{SECTION} settings: {problem}" for problem in problems]
    for message in server.session.newly_standing(("settings", scope), messages):
        server.log(message, types.MessageType.Warning)
        server.window_show_message(types.ShowMessageParams(types.MessageType.Warning, message))


async def configure(server: AiEvalServer, scope: WorkspaceFolder | None) -> None:
    """Ask the editor's settings for a workspace folder (None: outside every one, the global
    settings already asked for), then load each project folder that takes them (again, if they
    changed)."""
    uri = scope.uri if scope is not None else None
    settings = await fetch_settings(server, uri) if scope is not None else server.session.settings
    if scope is not None:
        server.session.configure_workspace_folder(scope, settings)
    folders = [folder for folder in list(server.session.folders.values()) if folder.scope == uri]
    await asyncio.gather(*(_apply(server, folder, settings) for folder in folders))


async def configure_all(server: AiEvalServer) -> None:
    server.session.configure_client(await fetch_settings(server, None))
    scopes = [None, *server.session.workspace_folders.values()]
    await asyncio.gather(*(configure(server, scope) for scope in scopes))


async def _apply(server: AiEvalServer, folder: ProjectFolder, settings: Settings) -> None:
    if settings == folder.settings and (folder.project is not None or folder.loading.locked()):
        return
    server.session.configure(folder, settings)
    await server.project_folders.load(folder, walk=not folder.indexed.is_set())


def initialize(server: AiEvalServer, params: types.InitializeParams) -> None:
    options: Any = params.initialization_options
    raw = options.get(SECTION, {}) if isinstance(options, dict) else {}
    settings, problems = Settings.from_mapping(raw if isinstance(raw, dict) else {})
    server.session.configure_client(settings, problems)
    for folder in _folders(params):
        server.project_folders.add(folder.uri, settings)


async def initialized(server: AiEvalServer, params: types.InitializedParams) -> None:
    tell_settings_problems(server, None, server.session.settings_problems)
    # Watch first: files that change while the folders are walked are read once they are.
    watched = (
        server.client_capabilities.workspace and server.client_capabilities.workspace.did_change_watched_files
    )
    if watched and watched.dynamic_registration:
        watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED]
        registration = types.Registration(
            "ai-eval-watched-files",
            types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            types.DidChangeWatchedFilesRegistrationOptions(watchers),
        )
        try:
            await server.client_register_capability_async(types.RegistrationParams([registration]))
        except Exception as err:  # the index is still kept current from open documents
            server.log(f"could not watch rubric files: {err}", types.MessageType.Warning)
    await configure_all(server)


async def configuration_changed(server: AiEvalServer, params: types.DidChangeConfigurationParams) -> None:
    pushed = params.settings.get(SECTION) if isinstance(params.settings, dict) else None
    workspace = server.client_capabilities.workspace
    if isinstance(pushed, dict) and not (workspace and workspace.configuration):
        server.session.configure_client(
            Settings.from_mapping(pushed)[0]
        )  # a client that cannot be asked tells
    await configure_all(server)


async def folders_changed(server: AiEvalServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    for removed in params.event.removed:
        server.project_folders.remove(removed.uri)
    added = [server.project_folders.add(folder.uri, server.session.settings) for folder in params.event.added]
    await asyncio.gather(*(configure(server, folder) for folder in added if folder is not None))


async def watched_files_changed(server: AiEvalServer, params: types.DidChangeWatchedFilesParams) -> None:
    paths = [path for change in params.changes if (path := path_of(change.uri)) is not None]
    await server.project_folders.files_changed(paths)


def progress_cancelled(server: AiEvalServer, params: types.WorkDoneProgressCancelParams) -> None:
    progress = server.session.progress.get(params.token)
    if progress is not None:
        progress.cancel()
