"""Which handlers may change the session, per LSP method and command: the table a newcomer reads
before touching server state (ruff's server keeps the same split). A `mutates` handler runs on the
event loop and changes the session through its methods only; a `reads` handler reads the document
and index as they are when it runs (awaiting the current analysis first) and changes nothing but
what the client was last sent (`Session.sent`) and, for runs, the work under way the client may
cancel (`Session.request_began`, `progress_began`) and the results store off the loop.
A test checks that every registered handler is in this table."""

from __future__ import annotations

from typing import Literal

from lsprotocol import types

from ai_eval_lsp.server import names

Access = Literal["mutates", "reads"]

METHODS: dict[str, Access] = {
    types.INITIALIZE: "mutates",
    types.INITIALIZED: "mutates",
    types.WORKSPACE_DID_CHANGE_CONFIGURATION: "mutates",
    types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: "mutates",
    types.WORKSPACE_DID_CHANGE_WATCHED_FILES: "mutates",
    types.WINDOW_WORK_DONE_PROGRESS_CANCEL: "mutates",
    types.TEXT_DOCUMENT_DID_OPEN: "mutates",
    types.TEXT_DOCUMENT_DID_CHANGE: "mutates",
    types.TEXT_DOCUMENT_DID_SAVE: "mutates",
    types.TEXT_DOCUMENT_DID_CLOSE: "mutates",
    types.TEXT_DOCUMENT_DIAGNOSTIC: "reads",
    types.TEXT_DOCUMENT_COMPLETION: "reads",
    types.TEXT_DOCUMENT_HOVER: "reads",
    types.TEXT_DOCUMENT_DEFINITION: "reads",
    types.TEXT_DOCUMENT_REFERENCES: "reads",
    types.TEXT_DOCUMENT_RENAME: "reads",
    types.TEXT_DOCUMENT_DOCUMENT_SYMBOL: "reads",
    types.WORKSPACE_SYMBOL: "reads",
    types.TEXT_DOCUMENT_CODE_ACTION: "reads",
    types.TEXT_DOCUMENT_CODE_LENS: "reads",
}

COMMANDS: dict[str, Access] = {
    names.RUN_CHECK: "reads",
    names.RUN_RUBRIC: "reads",
    names.RUN_CASES: "reads",
    names.HISTORY: "reads",
    names.DIFF: "reads",
    names.RENDER: "reads",
    names.EXPORT_SCHEMA: "reads",
    names.RELOAD_PLUGINS: "mutates",
    names.SITE_RUNS: "mutates",
}
