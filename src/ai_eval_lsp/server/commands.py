"""`workspace/executeCommand`: each command's one object argument checked once, then handed to
its handler (`run_commands.py`, `results.py`, `plugins.py`, `siteruns.py`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ai_eval_lsp.server import names, plugins, results, run_commands, siteruns
from ai_eval_lsp.server.query import NotApplicable
from ai_eval_lsp.server.server import AiEvalServer

Argument = dict[str, Any]


def argument_of(arguments: Sequence[object]) -> Argument:
    """A command's one object argument ({} when it is given none)."""
    if not arguments:
        return {}
    first = arguments[0]
    if isinstance(first, dict):
        return first
    raise NotApplicable("the command takes one object argument")


HANDLERS: dict[str, Callable[[AiEvalServer, Argument], Awaitable[Any]]] = {
    names.RUN_CHECK: run_commands.run_check,
    names.RUN_RUBRIC: run_commands.run_rubric,
    names.RUN_CASES: run_commands.run_cases,
    names.HISTORY: results.history,
    names.DIFF: results.diff,
    names.RENDER: results.render,
    names.EXPORT_SCHEMA: plugins.export_schema,
    names.RELOAD_PLUGINS: plugins.reload_plugins,
    names.SITE_RUNS: siteruns.site_runs,
}


def register(server: AiEvalServer) -> None:
    for name, handler in HANDLERS.items():
        server.command(name)(_command(handler))


def _command(handler: Callable[[AiEvalServer, Argument], Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def command(ls: AiEvalServer, *arguments: Any) -> Any:  # pygls passes `ls`, the server
        return await handler(ls, argument_of(arguments))

    return command
