"""The server's state rule (ARCHITECTURE.md, "The server"), checked from the routing table and the
handlers themselves, so that it cannot drift from the code: a reading handler is given a snapshot
(immutable, holding nothing of the session, and only immutable values of the core) and the
request's params, and its module cannot reach the session or the server; a mutating handler is given the server; nothing is registered but the
table; and state is the session's: no other module keeps or writes any."""

from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import typing
from collections.abc import Iterator, MutableMapping, MutableSequence, MutableSet
from pathlib import Path
from types import ModuleType
from typing import Any

from lsprotocol import types

import ai_eval_lsp
from ai_eval_lsp.core.analysis import Analysis
from ai_eval_lsp.core.cursor import At
from ai_eval_lsp.core.index import CasesIndex, ProjectIndex, RubricIndex, RubricSummary
from ai_eval_lsp.core.items import Item, ItemFindings, Layout
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.core.yamltree import Entry, Node
from ai_eval_lsp.server import create_server
from ai_eval_lsp.server.loop import session
from ai_eval_lsp.server.loop.dispatch import Argument, Mutates, Reads, Route
from ai_eval_lsp.server.loop.server import AiEvalServer
from ai_eval_lsp.server.query import snapshots
from ai_eval_lsp.server.routes import COMMANDS, METHODS

SOURCE = Path(ai_eval_lsp.__file__).resolve().parent
SNAPSHOTS = (snapshots.DocumentSnapshot, snapshots.Cursor, snapshots.WorkspaceSnapshot)
LOOP_ONLY = ("ai_eval_lsp.server.loop.session", "ai_eval_lsp.server.loop.server")
"""The modules of the session and its owner: what a reading handler's module never imports."""
CHANGES = {
    "append",
    "extend",
    "insert",
    "add",
    "discard",
    "remove",
    "pop",
    "popitem",
    "clear",
    "update",
    "setdefault",
}
"""What changes a container in place."""
STATE_OWNERS = {
    "loop/server.py": "AiEvalServer",
    "loop/scheduler.py": "Scheduler",
    "loop/project_folders.py": "ProjectFolders",
}
"""The classes that act on the session: they keep nothing of their own once made."""


def routes() -> Iterator[tuple[Route, bool]]:
    """Every route, and whether it is a command's."""
    yield from ((route, False) for route in METHODS)
    yield from ((route, True) for route in COMMANDS)


def hint(function: Any, name: str) -> Any:
    """One annotation of a function, evaluated where the function is (and with the server's
    class, which handlers may import for type checking only)."""
    annotation = inspect.signature(function).parameters[name].annotation if name != "return" else None
    if name == "return":
        annotation = inspect.signature(function).return_annotation
    if not isinstance(annotation, str):
        return annotation
    return eval(annotation, function.__globals__, {"AiEvalServer": AiEvalServer})


def parameters(handler: Any) -> list[tuple[str, Any]]:
    return [(name, hint(handler, name)) for name in inspect.signature(handler).parameters]


def params_type_is_right(annotation: Any, command: bool) -> bool:
    """A method's params are lsprotocol's; a command's, its one object argument."""
    if command:
        return bool(annotation == Argument)
    return inspect.isclass(annotation) and bool(annotation.__module__ == types.__name__)


def taken(route: Reads[Any]) -> Any:
    """The snapshot type a route's `take` gives (its return type, less None)."""
    returned = hint(route.take, "return")
    kinds = [kind for kind in typing.get_args(returned) or (returned,) if kind is not type(None)]
    return kinds[0] if len(kinds) == 1 else returned


def runtime_imports(module: str) -> set[str]:
    """The `ai_eval_lsp` modules a module imports when it runs (type-checking imports aside),
    function-level imports included; `from package import module` names that module."""
    path = SOURCE.parent / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = path.with_suffix("") / "__init__.py"
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for otherwise in node.orelse:
                visit(otherwise)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("ai_eval_lsp"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ai_eval_lsp"):
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                as_module = SOURCE.parent / submodule.replace(".", "/")
                is_module = as_module.with_suffix(".py").exists() or (as_module / "__init__.py").exists()
                found.add(submodule if is_module else node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def reachable(module: str) -> set[str]:
    """Every module a module's runtime imports reach, itself included."""
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += runtime_imports(name)
    return seen


def classes_in(annotation: Any) -> Iterator[type]:
    """Every class an annotation names, inside unions and generics too."""
    for kind in (annotation, typing.get_origin(annotation)):
        if inspect.isclass(kind):
            yield kind
    for argument in typing.get_args(annotation):
        yield from classes_in(argument)


def frozen(kind: type) -> bool:
    return dataclasses.is_dataclass(kind) and bool(kind.__dataclass_params__.frozen)  # type: ignore[attr-defined]


def snapshot_faults(snapshot: type, seen: set[type]) -> list[str]:
    """What makes a snapshot type other than an immutable value holding nothing of the session:
    a field that can change, or that names the session's (or its owner's) classes, in it or in
    the values of ours it holds (the core's, `core_faults`)."""
    if snapshot in seen:
        return []
    seen.add(snapshot)
    if not frozen(snapshot):
        return [f"{snapshot.__name__} is not a frozen dataclass"]
    faults = []
    # the session's names too: a snapshot may name them for type checking only
    for name, annotation in typing.get_type_hints(snapshot, localns=vars(session)).items():
        for kind in classes_in(annotation):
            if kind.__module__ in LOOP_ONLY or kind.__module__.startswith(LOOP_ONLY[0]):
                faults.append(f"{snapshot.__name__}.{name} holds a {kind.__name__}")
            elif kind.__module__.startswith("ai_eval_lsp.server") and dataclasses.is_dataclass(kind):
                faults += snapshot_faults(kind, seen)
            elif kind.__module__.startswith("ai_eval_lsp.core"):
                faults += core_faults(kind, seen)
            elif kind in (dict, list, set) or issubclass(kind, MutableMapping | MutableSequence | MutableSet):
                faults.append(f"{snapshot.__name__}.{name} is a {kind.__name__}, which can change")
    return faults


MADE_ONCE = (Node, Entry, LineIndex, RubricIndex, CasesIndex)
"""The core's values that are no frozen dataclasses (a node per value of a document, made fast;
indexes copied on change): nothing changes them once made, which
`tests/core/test_immutable_analysis.py` checks of an analysis after every read of it."""


def core_faults(kind: type, seen: set[type]) -> list[str]:
    """What makes a value of the core that a snapshot holds (an analysis, its items, a summary,
    an index) other than immutable: a class neither a frozen dataclass nor made once (a memo, a
    cache, a value set after it is made), in it or in what its fields hold."""
    if kind in seen or kind in MADE_ONCE or issubclass(kind, tuple | enum.Enum):
        return []
    seen.add(kind)
    if not frozen(kind):
        return [f"{kind.__module__}.{kind.__qualname__} is not a frozen dataclass"]
    return [
        fault
        for annotation in typing.get_type_hints(kind).values()
        for held in classes_in(annotation)
        if held.__module__.startswith("ai_eval_lsp.core")
        for fault in core_faults(held, seen)
    ]


def named(annotation: Any) -> str:
    return str(getattr(annotation, "__name__", annotation))


def reading_faults(route: Reads[Any], command: bool) -> list[str]:
    handler, name = route.handler, f"{route.name} ({route.handler.__module__}.{route.handler.__name__})"
    faults = []
    snapshot = taken(route)
    if snapshot not in SNAPSHOTS:
        faults.append(f"{name}: its route takes a {named(snapshot)}, not a snapshot")
    given = parameters(handler)
    if len(given) != 2:
        faults.append(
            f"{name} takes {[p for p, _ in given]}: a reading handler takes a snapshot and the params"
        )
    else:
        (first, first_type), (second, second_type) = given
        if first_type is not snapshot:
            faults.append(
                f"{name} reads `{first}: {named(first_type)}`, not the {named(snapshot)} its route takes"
            )
        if not params_type_is_right(second_type, command):
            faults.append(f"{name} is given `{second}: {named(second_type)}`, not the request's params")
    for module in sorted(reachable(handler.__module__)):
        if module in LOOP_ONLY:
            faults.append(f"{name}: its module reaches {module} at run time")
    return faults


def mutating_faults(route: Mutates, command: bool) -> list[str]:
    given = parameters(route.handler)
    name = f"{route.name} ({route.handler.__module__}.{route.handler.__name__})"
    if len(given) != 2 or given[0][1] is not AiEvalServer or not params_type_is_right(given[1][1], command):
        said = ", ".join(f"{p}: {named(t)}" for p, t in given)
        return [f"{name} takes ({said}): a mutating handler takes the server and the params"]
    return []


def handler_faults(access: type[Reads[Any]] | type[Mutates]) -> list[str]:
    """What is wrong with the handlers of the routes of one access."""
    check: Any = reading_faults if access is Reads else mutating_faults
    return [
        fault for route, command in routes() if isinstance(route, access) for fault in check(route, command)
    ]


def test_reading_handlers_get_a_snapshot_and_cannot_reach_the_session() -> None:
    faults = handler_faults(Reads)
    assert not faults, "\n".join(faults)


def test_mutating_handlers_get_the_server() -> None:
    faults = handler_faults(Mutates)
    assert not faults, "\n".join(faults)


def test_snapshots_are_values_holding_nothing_of_the_session() -> None:
    seen: set[type] = set()
    faults = [fault for snapshot in SNAPSHOTS for fault in snapshot_faults(snapshot, seen)]
    assert not faults, "\n".join(faults)
    assert {
        snapshots.Client,
        snapshots.OpenText,
        snapshots.EditsSince,
        snapshots.ProjectSnapshot,
    } <= seen  # what they hold was checked
    assert {
        Analysis,
        Layout,
        Item,
        ItemFindings,
        At,
        RubricSummary,
        ProjectIndex,
    } <= seen  # and the core's values


def test_the_table_is_the_only_registration() -> None:
    server = create_server()
    assert set(server.protocol.fm.features) == {route.name for route in METHODS}
    assert set(server.protocol.fm.commands) == {route.name for route in COMMANDS}
    names = [route.name for route, _ in routes()]
    assert len(names) == len(set(names))  # each declared once


def server_modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted((SOURCE / "server").rglob("*.py")):
        yield path.relative_to(SOURCE / "server").as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def is_container(value: ast.expr | None) -> bool:
    """A value that can change in place: a dict, list or set, however made."""
    made = isinstance(value, ast.Call) and isinstance(value.func, ast.Name | ast.Attribute)
    called = ast.unparse(value.func).rsplit(".", 1)[-1] if made else ""  # type: ignore[union-attr]
    return isinstance(
        value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp
    ) or called in {
        "dict",
        "list",
        "set",
        "defaultdict",
        "WeakKeyDictionary",
        "WeakValueDictionary",
    }


def assigned(node: ast.AST) -> Iterator[tuple[ast.expr, ast.expr | None]]:
    """The targets an assignment statement writes, with the value written."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            for each in target.elts if isinstance(target, ast.Tuple) else [target]:
                yield each, node.value
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        yield node.target, node.value


def elsewhere(target: ast.expr) -> bool:
    """Whether an assignment writes the state of another object than the one whose method it is
    (`other.x = `, `self.other.x = `, `other.x[k] = `); a local's items and `self.x` are its own."""
    written = target.value if isinstance(target, ast.Subscript) else target
    chain = 0
    while isinstance(written, ast.Attribute | ast.Subscript):
        chain += isinstance(written, ast.Attribute)
        written = written.value
    return chain > (isinstance(written, ast.Name) and written.id == "self")


def session_container(changed: ast.expr) -> bool:
    """Whether a container changed in place is the session's (`x.session.documents`) or one of
    the objects it owns (`folder.changed`), not through their methods."""
    if not isinstance(changed, ast.Attribute):
        return False
    owned = {
        each.name
        for cls in (session.ProjectFolder, session.OpenDocument, session.SiteWatch, session.Analyses)
        for each in dataclasses.fields(cls)
        if each.default_factory in (dict, list, set)
    }
    through_session = isinstance(changed.value, ast.Attribute) and changed.value.attr == "session"
    return through_session or (changed.attr in owned and elsewhere(changed))


def module_state(module: ModuleType | ast.Module) -> list[str]:
    tree = module if isinstance(module, ast.Module) else ast.parse(inspect.getsource(module))
    return [
        ast.unparse(target)
        for statement in tree.body
        for target, value in assigned(statement)
        if is_container(value)
    ]


def changed_in_place(node: ast.AST) -> ast.expr | None:
    """The container a call changes in place (`x.append(...)`), if it is such a call."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CHANGES:
        return node.func.value
    return None


def written_elsewhere(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Where a module writes the state of other objects, or changes the session's containers."""
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        for target, _ in assigned(node):
            if elsewhere(target):
                yield line, f"writes {ast.unparse(target)}"
        changed = changed_in_place(node)
        if changed is not None and session_container(changed):
            yield line, f"changes {ast.unparse(changed)}"


def kept_by(cls: ast.ClassDef) -> Iterator[str]:
    """What a class that acts on the session keeps of its own: attributes set after it is made,
    and containers."""
    for method in (n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        for node in ast.walk(method):
            for target, value in assigned(node):
                if not (isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self"):
                    continue
                if method.name != "__init__":
                    yield f"{cls.name}.{method.name} sets {ast.unparse(target)}"
                elif is_container(value):
                    yield f"{cls.name} keeps {ast.unparse(target)}, a container of its own"


def test_only_the_session_writes_server_state() -> None:
    """Outside `session.py` (and pygls's adapter, which sets pygls's own), no module assigns an
    attribute of anything but the object whose method it is, changes the session's containers
    in place, or keeps a container at module level; the server, the scheduler and the folders set
    their attributes once, when made, and none of them a container."""
    faults = []
    for name, tree in server_modules():
        if name in ("loop/session.py", "lsp/pygls_adapter.py"):
            continue
        faults += [f"{name}: module-level {target}" for target in module_state(tree)]
        faults += [f"{name}:{line}: {what}" for line, what in written_elsewhere(tree)]
        owners = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == STATE_OWNERS.get(name)]
        faults += [fault for cls in owners for fault in kept_by(cls)]
    assert not faults, "\n".join(faults)


def test_the_analysis_keeps_no_state_of_its_own() -> None:
    """The readings a large text's two readers share are the rules' (`Rules.readings`)."""
    from ai_eval_lsp.core.analysis import document, incremental, shared

    assert [(module.__name__, module_state(module)) for module in (document, shared, incremental)] == [
        (module.__name__, []) for module in (document, shared, incremental)
    ]
