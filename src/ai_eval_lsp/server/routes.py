"""Every LSP method and `workspace/executeCommand` command the server answers, declared once with
its access (the registration: `dispatch.register`). `Mutates`: the handler runs on the event loop
with the server, the session's owner. `Reads`: the handler gets an immutable snapshot taken on the
loop first (`snapshots.py`) and cannot reach the session. Runs mutate (they register what the
client may cancel, show progress and notify); so does a pull of diagnostics, which records what
the client was answered (its result id, and what a refresh compares with)."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from ai_eval_lsp.server import (
    actions,
    completion,
    diagnostics,
    documents,
    hover,
    lenses,
    names,
    navigation,
    onsave,
    plugins,
    results,
    run_commands,
    siteruns,
    snapshots,
    workspace,
)
from ai_eval_lsp.server.dispatch import Mutates, Reads, Route
from ai_eval_lsp.server.server import AiEvalServer
from ai_eval_lsp.server.session import Folder

METHODS: tuple[Route, ...] = (
    Mutates(types.INITIALIZE, workspace.initialize),
    Mutates(types.INITIALIZED, workspace.initialized),
    Mutates(types.WORKSPACE_DID_CHANGE_CONFIGURATION, workspace.configuration_changed),
    Mutates(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, workspace.folders_changed),
    Mutates(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, workspace.watched_files_changed),
    Mutates(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, workspace.progress_cancelled),
    Mutates(types.TEXT_DOCUMENT_DID_OPEN, documents.did_open),
    Mutates(types.TEXT_DOCUMENT_DID_CHANGE, documents.did_change),
    Mutates(types.TEXT_DOCUMENT_DID_SAVE, onsave.did_save),
    Mutates(types.TEXT_DOCUMENT_DID_CLOSE, documents.did_close),
    Mutates(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        diagnostics.pull,
        types.DiagnosticOptions(
            identifier=names.SOURCE, inter_file_dependencies=True, workspace_diagnostics=False
        ),
    ),
    Reads(
        types.TEXT_DOCUMENT_COMPLETION,
        snapshots.as_typed,
        completion.completion,
        options=types.CompletionOptions(trigger_characters=[":", " ", "-", "@"]),
    ),
    Reads(types.TEXT_DOCUMENT_HOVER, snapshots.under_cursor, hover.hover),
    Reads(types.TEXT_DOCUMENT_DEFINITION, snapshots.current, navigation.definition),
    Reads(types.TEXT_DOCUMENT_REFERENCES, snapshots.settled, navigation.references, list),
    Reads(types.TEXT_DOCUMENT_RENAME, snapshots.settled, navigation.rename),
    Reads(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, snapshots.current, navigation.document_symbols, list),
    Reads(types.WORKSPACE_SYMBOL, snapshots.whole_workspace, navigation.workspace_symbols, list),
    Reads(
        types.TEXT_DOCUMENT_CODE_ACTION,
        snapshots.current,
        actions.code_actions,
        list,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Source]
        ),
    ),
    Reads(types.TEXT_DOCUMENT_CODE_LENS, snapshots.current, lenses.code_lens, list),
)

COMMANDS: tuple[Route, ...] = (
    Mutates(names.RUN_CHECK, run_commands.run_check),
    Mutates(names.RUN_RUBRIC, run_commands.run_rubric),
    Mutates(names.RUN_CASES, run_commands.run_cases),
    Reads(names.HISTORY, snapshots.loaded_workspace, results.history),
    Reads(names.DIFF, snapshots.loaded_workspace, results.diff),
    Reads(names.RENDER, snapshots.loaded_workspace, results.render),
    Reads(names.EXPORT_SCHEMA, snapshots.loaded_workspace, plugins.export_schema),
    Mutates(names.RELOAD_PLUGINS, plugins.reload_plugins),
    Mutates(names.SITE_RUNS, siteruns.site_runs),
)

ON_LOAD: tuple[Callable[[AiEvalServer, Folder], None], ...] = (siteruns.watch,)
"""What follows a project folder's (re)load, on the loop: its site's runs are read."""
