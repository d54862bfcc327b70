"""Every LSP method and `workspace/executeCommand` command the server answers, declared once with
its access (the registration: `dispatch.register`). `Mutates`: the handler runs on the event loop
with the server, the session's owner. `Reads`: the handler gets an immutable snapshot taken on the
loop first (`loop/take.py`) and cannot reach the session. Runs mutate (they register what the
client may cancel, show progress and notify); so does a pull of diagnostics, which records what
the client was answered (its result id, and what a refresh compares with)."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from ai_eval_lsp.server.features import (
    actions,
    completion,
    diagnostics,
    hover,
    lenses,
    navigation,
    plugins,
    results,
    site_runs,
)
from ai_eval_lsp.server.features.runs import commands, on_save
from ai_eval_lsp.server.loop import lifecycle, take, text_sync
from ai_eval_lsp.server.loop.dispatch import Mutates, Reads, Route
from ai_eval_lsp.server.loop.server import AiEvalServer
from ai_eval_lsp.server.loop.session import ProjectFolder
from ai_eval_lsp.server.lsp import names

METHODS: tuple[Route, ...] = (
    Mutates(types.INITIALIZE, lifecycle.initialize),
    Mutates(types.INITIALIZED, lifecycle.initialized),
    Mutates(types.WORKSPACE_DID_CHANGE_CONFIGURATION, lifecycle.configuration_changed),
    Mutates(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, lifecycle.folders_changed),
    Mutates(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, lifecycle.watched_files_changed),
    Mutates(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, lifecycle.progress_cancelled),
    Mutates(types.TEXT_DOCUMENT_DID_OPEN, text_sync.did_open),
    Mutates(types.TEXT_DOCUMENT_DID_CHANGE, text_sync.did_change),
    Mutates(types.TEXT_DOCUMENT_DID_SAVE, on_save.did_save),
    Mutates(types.TEXT_DOCUMENT_DID_CLOSE, text_sync.did_close),
    Mutates(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        diagnostics.pull,
        types.DiagnosticOptions(
            identifier=names.SOURCE, inter_file_dependencies=True, workspace_diagnostics=False
        ),
    ),
    Reads(
        types.TEXT_DOCUMENT_COMPLETION,
        take.as_typed,
        completion.completion,
        options=types.CompletionOptions(trigger_characters=[":", " ", "-", "@"]),
    ),
    Reads(types.TEXT_DOCUMENT_HOVER, take.under_cursor, hover.hover),
    Reads(types.TEXT_DOCUMENT_DEFINITION, take.current, navigation.definition),
    Reads(types.TEXT_DOCUMENT_REFERENCES, take.settled, navigation.references, list),
    Reads(types.TEXT_DOCUMENT_RENAME, take.settled, navigation.rename),
    Reads(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, take.current, navigation.document_symbols, list),
    Reads(types.WORKSPACE_SYMBOL, take.whole_workspace, navigation.workspace_symbols, list),
    Reads(
        types.TEXT_DOCUMENT_CODE_ACTION,
        take.current,
        actions.code_actions,
        list,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Source]
        ),
    ),
    Reads(types.TEXT_DOCUMENT_CODE_LENS, take.current, lenses.code_lens, list),
)

COMMANDS: tuple[Route, ...] = (
    Mutates(names.RUN_CHECK, commands.run_check),
    Mutates(names.RUN_RUBRIC, commands.run_rubric),
    Mutates(names.RUN_CASES, commands.run_cases),
    Reads(names.HISTORY, take.loaded_workspace, results.history),
    Reads(names.DIFF, take.loaded_workspace, results.diff),
    Reads(names.RENDER, take.loaded_workspace, results.render),
    Reads(names.EXPORT_SCHEMA, take.loaded_workspace, plugins.export_schema),
    Mutates(names.RELOAD_PLUGINS, plugins.reload_plugins),
    Mutates(names.SITE_RUNS, site_runs.site_runs),
)

ON_LOAD: tuple[Callable[[AiEvalServer, ProjectFolder], None], ...] = (site_runs.watch,)
"""What follows a project folder's (re)load, on the loop: its site's runs are read."""
