"""The kinds of routes (ruff's server's split) and their registration with pygls: the table in
`routes.py` is the only registration. A `Mutates` handler runs on the event loop with the
session's owner, the server; a `Reads` handler is given an immutable snapshot its route takes on
the loop first, and the request's params (a command's argument), and nothing else."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ai_eval_lsp.server.loop.server import AiEvalServer  # at run time: pygls reads the handlers' hints
from ai_eval_lsp.server.lsp.convert import NotApplicable

S = TypeVar("S")

Argument = dict[str, Any]
"""A command's one object argument."""


def _nothing() -> None:
    return None


@dataclass(frozen=True, slots=True)
class Mutates:
    """A handler given the server, on the event loop: it changes the session through its methods,
    sends to the client and starts work (`handler(server, params)`)."""

    name: str
    handler: Callable[[AiEvalServer, Any], Any]
    options: object = None


@dataclass(frozen=True, slots=True)
class Reads(Generic[S]):
    """A handler given the snapshot `take` makes on the event loop, and the params: it has no
    reference to the session or the server (`handler(snapshot, params)`). Where `take` finds
    nothing to read (no such document open), the request is answered `empty()`."""

    name: str
    take: Callable[[AiEvalServer, Any], Awaitable[S | None]]
    handler: Callable[[S, Any], Any]
    empty: Callable[[], Any] = _nothing
    options: object = None


Route = Mutates | Reads[Any]


def register(server: AiEvalServer, methods: Sequence[Route], commands: Sequence[Route]) -> None:
    """Each LSP method and command of the table registered with pygls, once."""
    for route in methods:
        server.feature(route.name, route.options)(_method(route))
    for route in commands:
        server.command(route.name)(_command(route))


def argument_of(arguments: Sequence[object]) -> Argument:
    """A command's one object argument ({} when it is given none)."""
    if not arguments:
        return {}
    first = arguments[0]
    if isinstance(first, dict):
        return first
    raise NotApplicable("the command takes one object argument")


# pygls passes the server to a handler whose first parameter is named `ls`.


def _method(route: Route) -> Callable[..., Any]:
    if isinstance(route, Reads):

        async def reads(ls: AiEvalServer, params: Any) -> Any:
            return await _read(route, ls, params)

        return reads
    handler = route.handler
    if inspect.iscoroutinefunction(handler):

        async def mutates_awaiting(ls: AiEvalServer, params: Any) -> Any:
            return await handler(ls, params)

        return mutates_awaiting

    def mutates(ls: AiEvalServer, params: Any) -> Any:  # text sync: applied in order, at once
        return handler(ls, params)

    return mutates


def _command(route: Route) -> Callable[..., Awaitable[Any]]:
    if isinstance(route, Reads):

        async def reads(ls: AiEvalServer, *arguments: Any) -> Any:
            return await _read(route, ls, argument_of(arguments))

        return reads
    handler = route.handler

    async def mutates(ls: AiEvalServer, *arguments: Any) -> Any:
        return await handler(ls, argument_of(arguments))

    return mutates


async def _read(route: Reads[Any], server: AiEvalServer, params: Any) -> Any:
    snapshot = await route.take(server, params)
    if snapshot is None:
        return route.empty()
    answer = route.handler(snapshot, params)
    return await answer if inspect.isawaitable(answer) else answer
