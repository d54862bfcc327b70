"""Lifecycle and workspace: settings, plugin loading, the workspace index and watched files."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import Any

from lsprotocol import types

from ai_eval_lsp.server import diagnostics
from ai_eval_lsp.server.server import AiEvalServer
from ai_eval_lsp.settings import Settings

SECTION = "aiEval"
WATCHED = ["**/*.yaml", "**/*.yml"]


def root_of(params: types.InitializeParams, server: AiEvalServer) -> Path:
    folders = params.workspace_folders or []
    path = server.session.path_of(folders[0].uri) if folders else None
    if path is None and params.root_uri:
        path = server.session.path_of(params.root_uri)
    return path or Path.cwd()


async def fetch_settings(server: AiEvalServer) -> Settings:
    workspace = server.client_capabilities.workspace
    if not (workspace and workspace.configuration):
        return server.session.settings
    try:
        values = await server.workspace_configuration_async(
            types.ConfigurationParams([types.ConfigurationItem(section=SECTION)])
        )
    except Exception as err:
        server.log(f"could not read the {SECTION} settings: {err}", types.MessageType.Warning)
        return server.session.settings
    raw = values[0] if values and isinstance(values[0], dict) else {}
    settings, problems = Settings.from_mapping(raw)
    for problem in problems:
        server.log(problem, types.MessageType.Warning)
    return settings


async def reload(server: AiEvalServer, settings: Settings) -> list[str]:
    """Rediscover plugins, rebuild the schema and index, and check every open document again."""
    importlib.invalidate_caches()
    problems = await asyncio.to_thread(server.session.load, server.session.root, settings)
    log_plugin_problems(server, problems)
    diagnostics.schedule_all(server, list(server.workspace.text_documents))
    diagnostics.refresh_pulled(server)
    return problems


def log_plugin_problems(server: AiEvalServer, problems: list[str]) -> None:
    for problem in problems:
        server.log(f"plugin problem: {problem}", types.MessageType.Warning)


def register(server: AiEvalServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: AiEvalServer, params: types.InitializeParams) -> None:
        options: Any = params.initialization_options
        settings, _ = Settings.from_mapping(options.get(SECTION, {}) if isinstance(options, dict) else {})
        ls.session.load(root_of(params, ls), settings)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: AiEvalServer, params: types.InitializedParams) -> None:
        settings = await fetch_settings(ls)
        if settings != ls.session.settings:
            await reload(ls, settings)
        else:
            log_plugin_problems(ls, ls.session.require_project().registry.problems())
        watched = (
            ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
        )
        if watched and watched.dynamic_registration:
            watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED]
            registration = types.Registration(
                "ai-eval-watched-files",
                types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                types.DidChangeWatchedFilesRegistrationOptions(watchers),
            )
            try:
                await ls.client_register_capability_async(types.RegistrationParams([registration]))
            except Exception as err:  # the index is still kept current from open documents
                ls.log(f"could not watch rubric files: {err}", types.MessageType.Warning)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(ls: AiEvalServer, params: types.DidChangeConfigurationParams) -> None:
        settings = await fetch_settings(ls)
        if settings != ls.session.settings:
            await reload(ls, settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(ls: AiEvalServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = ls.session.path_of(change.uri)
            if path is not None and path.suffix in (".yaml", ".yml"):
                ls.session.refresh_from_disk(path)
        diagnostics.refresh_others(ls)
