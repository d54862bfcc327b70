"""A site's `settings.php` run statically (SPEC 3, "The site's own runs"; SPEC 4, "Multisite"):
its statements in order, and the settings files it includes that exist, without PHP.

What is followed: assignments to variables and array elements (built at once or element by
element; `=`, `.=`, `[] =`), `include` and `require` of files that exist, `if`/`elseif`/`else`
whose conditions can be decided, and `return`. Expressions are those `phpread` evaluates, plus
variables, `$_ENV` and `$_SERVER`, `getenv()` (from the environment given), `empty()`, `isset()`,
`file_exists()` and `is_readable()`, `?:`, `??`, `? :`, comparisons, boolean operators and casts.

What cannot be decided is `Unknown`, with why and where: a value from a call ai-eval-lsp does not
make, and everything assigned under a condition it cannot decide (the branches' assignments all
become unknown, so a value is never taken from the wrong branch). Loops are never run: what they
assign is unknown too.

A settings file is untrusted input (SPEC 6), so the reading is bounded: the files come through
`read`, which refuses what may not be read (outside the project, not a regular file, over 1 MB);
an include it refuses, or past `MAX_INCLUDES` files, makes every variable unknown (that file may
have set any of them); no string grows past `MAX_STRING` bytes; and past `BUDGET_SECONDS` the
reading stops and everything is unknown. Each says why.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ai_eval_lsp.disk.reading import why_not_read
from ai_eval_lsp.drupal.phpread import (
    INT_MAX,
    INT_MIN,
    Evaluator,
    PhpArray,
    PhpSources,
    PhpValue,
    Scope,
    Unknown,
    Unreadable,
    parse_php,
    php_string,
    php_text,
)

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_INCLUDES = 20
"""Files included in one run at most: settings files include a few; more is a loop."""
MAX_STRING = 64 * 1024
"""Longer strings are unknown: no setting is that long, and `$s .= $s;` doubles one at each line."""
MAX_NESTING = 50
"""Blocks nested deeper make everything unknown: statements are run by recursion (real settings
files nest a few levels)."""
BUDGET_SECONDS = 1.0
"""The whole reading (every file parsed and run) stops past this, leaving everything unknown."""
KEPT = frozenset({"app_root", "site_path"})
"""Drupal's own variables, which an include that could not be read is not taken to change."""

_BRANCHES = ("compound_statement", "colon_block")
_LOOPS = frozenset(
    ("foreach_statement", "for_statement", "while_statement", "do_statement", "switch_statement")
)
_INCLUDES = frozenset(
    ("include_expression", "include_once_expression", "require_expression", "require_once_expression")
)
_FILE_TESTS = frozenset(("file_exists", "is_readable", "is_file"))
"""Asked of the files of the codebase: each means "the file is there"."""


@dataclass
class SettingsRun:
    """What running a settings file left: its variables, and the files it read."""

    variables: dict[str, PhpValue] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    """Every file run, the settings file first."""
    not_followed: list[str] = field(default_factory=list)
    """Includes left out, each with why ("web/sites/default/settings.php:40 includes ... under ...")."""
    stopped: Unknown | None = None
    """Why the reading stopped before its end (its time was up): then nothing it set is known."""
    undefined: Unknown | None = None
    """What a variable not set is: null, until an include that was not read may have set it."""

    def get(self, *path: str) -> PhpValue:
        """`$variables[path[0]][path[1]]...`: None where an array has no such key."""
        if self.stopped is not None:
            return self.stopped
        value = self.variables.get(path[0], self.undefined)
        for key in path[1:]:
            if not isinstance(value, PhpArray):
                return value if isinstance(value, Unknown) else None
            value = value.items.get(key.encode())
        return value


def run_settings(
    path: Path,
    variables: Mapping[str, PhpValue],
    constants: Mapping[str, PhpValue],
    environment: Mapping[str, str],
    read: Callable[[Path], bytes | None],
    exists: Callable[[Path], bool],
    display: Callable[[Path], str] = str,
    budget: float = BUDGET_SECONDS,
    started: float | None = None,
) -> SettingsRun:
    """Run a settings file with the variables Drupal defines before it (`$app_root`,
    `$site_path`) and the global constants it knows (`DRUPAL_ROOT`); `getenv()` reads
    `environment`; `read` gives a file's bytes, or None when there is no such file, `exists`
    whether a file is there (what `file_exists()` asks); either raises OSError for a file that
    may not or cannot be read (`disk.reading.Refused`). `display` writes paths in reasons; the
    reading stops `budget` seconds after `started` (`time.monotonic()`; default: now), so what
    was read for it before (a `.env` file) counts too."""
    program = _Program(
        SettingsRun(variables=dict(variables)),
        constants,
        environment,
        read,
        exists,
        display,
        (time.monotonic() if started is None else started) + budget,
    )
    try:
        why = program.run_file(path)
        if why is not None:
            program.run.not_followed.append(f"{display(path)}: {why}")
    except _OutOfTime:
        where = display(program.run.files[-1]) if program.run.files else display(path)
        program.run.stopped = Unknown(f"reading the settings files stopped after {budget:g} s, in {where}")
    except RecursionError:  # includes within nested blocks within includes, past Python's stack
        program.run.stopped = Unknown("the settings files nest includes and blocks too deeply to read")
    return program.run


@dataclass
class _Program:
    run: SettingsRun
    constants: Mapping[str, PhpValue]
    environment: Mapping[str, str]
    read: Callable[[Path], bytes | None]
    exists: Callable[[Path], bool]
    display: Callable[[Path], str]
    deadline: float
    included: set[Path] = field(default_factory=set)

    def run_file(self, path: Path) -> str | None:
        """Run a file (none, when it does not exist); why it was not read when it may not be."""
        try:
            source = self.read(path)
        except OSError as error:
            return why_not_read(error)
        if source is None:
            return None
        self.run.files.append(path)
        self.included.add(path)
        self.on_time()
        parsed = parse_php(path, source, self.deadline)
        reader = _Reader(self, Scope.top_level(parsed))
        with contextlib.suppress(_Return):  # a `return` ends the file
            reader.statements(parsed.root.named_children, None)
        return None

    def on_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise _OutOfTime

    def all_unknown(self, why: Unknown) -> None:
        """From here on every variable is unknown, those not set yet too: a file included was not
        read (it may have set any of them), or blocks nest too deeply to follow."""
        for name in self.run.variables:
            if name not in KEPT:
                self.run.variables[name] = why
        self.run.undefined = why


class _Return(Exception):
    """A `return` at a file's top level: the file ends there."""


class _OutOfTime(Exception):
    """The reading's time is up: it stops wherever it is."""


class _Reader(Evaluator):
    """Runs one file's statements and evaluates their expressions, in the program's variables."""

    def __init__(self, program: _Program, scope: Scope) -> None:
        super().__init__(PhpSources({}, lambda _: None), scope)  # no class constants in settings
        self.program = program
        self.file = scope.code.file.path
        self.nesting = 0
        """How deep in blocks the statement being run is."""

    @property
    def variables(self) -> dict[str, PhpValue]:
        return self.program.run.variables

    def where(self, node: Node) -> str:
        return f"{self.program.display(self.file)}:{node.start_point.row + 1}"

    def value(self, node: Node) -> PhpValue:
        """What an expression evaluates to; `Unknown` where it cannot be known without PHP."""
        self.program.on_time()
        try:
            value = super().value(node)
        except Unreadable as unreadable:
            return Unknown(f"{unreadable.what} at {self.where(node)}")
        if isinstance(value, bytes) and len(value) > MAX_STRING:
            return self.too_long(node)
        return value

    def too_long(self, node: Node) -> Unknown:
        return Unknown(f"a string longer than {MAX_STRING // 1024} KB at {self.where(node)}")

    # --- statements -----------------------------------------------------------------------------

    def statements(self, nodes: list[Node], unsure: Unknown | None) -> None:
        """Run statements in order; under `unsure` (a condition that cannot be decided), what
        they assign becomes that `Unknown`."""
        for node in nodes:
            self.statement(node, unsure)

    def statement(self, node: Node, unsure: Unknown | None) -> None:
        self.program.on_time()
        kind = node.type
        if self.nesting > MAX_NESTING:
            self.program.all_unknown(
                Unknown(f"blocks nested deeper than {MAX_NESTING} levels at {self.where(node)}")
            )
        elif kind == "expression_statement" and node.named_children:
            self.effect(node.named_children[0], unsure)
        elif kind in _BRANCHES:
            self.nested(node.named_children, unsure)
        elif kind == "if_statement":
            self.nesting += 1
            try:
                self.branch(node, unsure)
            finally:
                self.nesting -= 1
        elif kind in _LOOPS:
            loop = Unknown(f"set in a loop at {self.where(node)}")
            self.nested(list(_nested(node, self.nesting)), unsure or loop)
        elif kind == "return_statement" and unsure is None:
            raise _Return
        # declarations, echo, unset, ...: nothing the settings are read from

    def nested(self, nodes: list[Node], unsure: Unknown | None) -> None:
        """The statements of a block, one level deeper."""
        self.nesting += 1
        try:
            self.statements(nodes, unsure)
        finally:
            self.nesting -= 1

    def branch(self, node: Node, unsure: Unknown | None) -> None:
        """`if`/`elseif`/`else`: the first branch whose condition holds runs; from a condition
        that cannot be decided on, every branch left runs unsure."""
        arms: list[tuple[Node | None, Node | None]] = [
            (node.child_by_field_name("condition"), node.child_by_field_name("body"))
        ]
        for alternative in node.children_by_field_name("alternative"):
            condition = alternative.child_by_field_name("condition")
            arms.append((condition, alternative.child_by_field_name("body")))
        for condition, body in arms:
            decided = True if condition is None else self.condition(condition)
            if isinstance(decided, Unknown):
                unsure = unsure or decided
            elif not decided:
                continue
            if body is not None:
                self.statement(body, unsure)
            if unsure is None:
                return

    def condition(self, node: Node) -> bool | Unknown:
        value = self.value(node)
        if isinstance(value, Unknown):
            inner = node.named_children[0] if node.type == "parenthesized_expression" else node
            snippet = _snippet(inner)
            return Unknown(f"set under the condition `{snippet}` at {self.where(node)} ({value.why})")
        return truthy(value)

    def effect(self, node: Node, unsure: Unknown | None) -> None:
        """An expression statement: its assignment or include; anything else changes nothing read."""
        if node.type in ("assignment_expression", "augmented_assignment_expression"):
            self.assign(node, unsure)
        elif node.type in _INCLUDES:
            self.include(node, unsure)

    def include(self, node: Node, unsure: Unknown | None) -> None:
        target = node.named_children[0] if node.named_children else None
        value = self.value(target) if target is not None else None
        shown = f"{self.where(node)} includes `{_snippet(target) if target is not None else ''}`"
        if unsure is not None:
            self.program.run.not_followed.append(f"{shown}, {unsure.why}")
            return
        if not isinstance(value, bytes):
            unknown = value.why if isinstance(value, Unknown) else "not a path"
            self.program.run.not_followed.append(f"{shown}: {unknown}")
            return
        path = Path(os.path.normpath(self.file.parent / os.fsdecode(value)))
        if node.type.endswith("_once_expression") and path in self.program.included:
            return
        if len(self.program.run.files) >= MAX_INCLUDES:
            why: str | None = f"more than {MAX_INCLUDES} files included"
        else:
            why = self.program.run_file(path)  # a file that does not exist includes nothing, as in PHP
        if why is not None:
            self.program.run.not_followed.append(f"{shown}: {why}")
            self.program.all_unknown(Unknown(f"{shown}: {why}"))

    # --- assignments ----------------------------------------------------------------------------

    def read_assignment_expression(self, node: Node) -> PhpValue:
        """An assignment inside an expression (`if ($db = getenv('DB'))`) assigns, and is its value."""
        return self.assign(node, None)

    def assign(self, node: Node, unsure: Unknown | None) -> PhpValue:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            return None
        value = self.value(right)
        if node.type == "augmented_assignment_expression":
            operator = node.child_by_field_name("operator")
            if operator is None or php_text(operator) != ".=":
                value = Unknown(f"the operator `{php_text(operator)}` at {self.where(node)}")
            else:
                value = self.concatenate(self.value(left), value, node)
        self.store(left, unsure or value)
        return value

    def store(self, target: Node, value: PhpValue) -> None:
        """Assign to a variable or to an element of the arrays it holds (made where missing).
        Arrays are values, as in PHP: those on the way to the element are copied, never changed
        where another variable or array holds them too (so no array can come to hold itself)."""
        path: list[Node | None] = []
        while target.type == "subscript_expression":
            container, *index = target.named_children
            path.insert(0, index[0] if index else None)
            target = container
        if target.type != "variable_name":
            return  # a property or a dynamic name: nothing settings are read from
        name = php_text(target).lstrip("$")
        keys = [None if index is None else self.value(index) for index in path]
        if any(isinstance(key, Unknown) for key in keys):
            unknown = next(key for key in keys if isinstance(key, Unknown))
            self.variables[name] = Unknown(f"an element with an unknown key is set ({unknown.why})")
            return
        if not keys:
            self.variables[name] = value
            return
        found = self.variables.get(name, self.program.run.undefined)
        if isinstance(found, Unknown):
            return
        top = array = found.copy() if isinstance(found, PhpArray) else PhpArray()
        try:
            for key in keys[:-1]:
                inner = array.items.get(self.array_key(key)) if key is not None else None
                if isinstance(inner, Unknown):
                    return
                inner = inner.copy() if isinstance(inner, PhpArray) else PhpArray()
                array.put(None if key is None else self.array_key(key), inner)
                array = inner
            last = keys[-1]
            array.put(None if last is None else self.array_key(last), value)
        except OverflowError:  # `$a[] = ...` past PHP_INT_MAX, which PHP refuses
            self.variables[name] = Unknown(f"an element appended past PHP_INT_MAX at {self.where(target)}")
            return
        self.variables[name] = top

    def array_key(self, value: PhpValue) -> int | bytes:
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        return php_string(value) if isinstance(value, bytes | float) or value is None else b""

    # --- expressions ----------------------------------------------------------------------------

    def read_variable_name(self, node: Node) -> PhpValue:
        name = php_text(node).lstrip("$")
        if name in ("_ENV", "_SERVER"):
            environment = PhpArray()
            for key, value in self.program.environment.items():
                environment.put(key.encode(), value.encode())
            return environment
        return self.variables.get(name, self.program.run.undefined)  # null, as PHP reads it, or unknown

    def read_name(self, node: Node) -> PhpValue:
        name = php_text(node)
        if name == "__DIR__":
            return os.fsencode(self.file.parent)
        if name == "__FILE__":
            return os.fsencode(self.file)
        if name in self.program.constants:
            return self.program.constants[name]
        return Unknown(f"the constant `{name}` at {self.where(node)}")

    def read_subscript_expression(self, node: Node) -> PhpValue:
        container, *index = node.named_children
        array = self.value(container)
        if not index or isinstance(array, Unknown):
            return array if isinstance(array, Unknown) else Unknown(f"`[]` read at {self.where(node)}")
        key = self.value(index[0])
        if isinstance(key, Unknown):
            return key
        if not isinstance(array, PhpArray):
            return None
        return array.items.get(self.array_key(key))

    def read_function_call_expression(self, node: Node) -> PhpValue:
        function = node.child_by_field_name("function")
        name = php_text(function).lstrip("\\").lower() if function is not None else ""
        arguments = [
            argument.named_children[0]
            for argument in (node.child_by_field_name("arguments") or node).named_children
            if argument.type == "argument" and argument.named_children
        ]
        if name in ("isset", "empty"):
            values = [self.value(argument) for argument in arguments]
            unknown = next((value for value in values if isinstance(value, Unknown)), None)
            if unknown is not None:
                return unknown
            if name == "isset":
                return bool(values) and all(value is not None for value in values)
            return not values or not truthy(values[0])
        values = [self.value(argument) for argument in arguments]
        unknown = next((value for value in values if isinstance(value, Unknown)), None)
        if unknown is not None:
            return unknown
        if name == "getenv" and len(values) == 1 and isinstance(values[0], bytes):
            found = self.program.environment.get(values[0].decode("utf-8", "replace"))
            return False if found is None else found.encode()
        if name in _FILE_TESTS and len(values) == 1 and isinstance(values[0], bytes):
            try:
                return self.program.exists(self.file.parent / os.fsdecode(values[0]))
            except OSError as error:  # outside the project: taken as not there, as on this machine
                reason = getattr(error, "reason", None) or error.strerror
                self.program.run.not_followed.append(
                    f"{self.where(node)} asks `{_snippet(node)}`: {reason}, so it is taken as not there"
                )
                return False
        return Unknown(f"a call to `{php_text(function)}()` at {self.where(node)}")

    def read_conditional_expression(self, node: Node) -> PhpValue:
        condition = node.child_by_field_name("condition")
        body = node.child_by_field_name("body")
        alternative = node.child_by_field_name("alternative")
        if condition is None or alternative is None:
            return Unknown(f"a conditional at {self.where(node)}")
        tested = self.value(condition)
        if isinstance(tested, Unknown):
            return tested
        if truthy(tested):
            return tested if body is None else self.value(body)  # `a ?: b` is a when a is truthy
        return self.value(alternative)

    def read_unary_op_expression(self, node: Node) -> PhpValue:
        operator = node.child_by_field_name("operator")
        if operator is not None and php_text(operator) == "!":
            argument = node.child_by_field_name("argument")
            value = self.value(argument) if argument is not None else None
            return value if isinstance(value, Unknown) else not truthy(value)
        return super().read_unary_op_expression(node)

    def read_cast_expression(self, node: Node) -> PhpValue:
        cast = node.child_by_field_name("type")
        operand = node.child_by_field_name("value")
        kind = php_text(cast).lower() if cast is not None else ""
        if operand is None or kind not in ("int", "integer", "string", "bool", "boolean"):
            return super().read_cast_expression(node)
        value = self.value(operand)
        if isinstance(value, Unknown | PhpArray):
            return (
                value if isinstance(value, Unknown) else Unknown(f"a cast of an array at {self.where(node)}")
            )
        if kind in ("bool", "boolean"):
            return truthy(value)
        if kind == "string":
            return php_string(value)
        return _to_int(value)

    def read_binary_expression(self, node: Node) -> PhpValue:
        operator_node = node.child_by_field_name("operator")
        left_node, right_node = node.child_by_field_name("left"), node.child_by_field_name("right")
        operator = php_text(operator_node).lower() if operator_node is not None else ""
        if left_node is None or right_node is None:
            return Unknown(f"an expression at {self.where(node)}")
        left = self.value(left_node)
        # the operators that may leave their right side unread
        if operator in ("&&", "and", "||", "or") and not isinstance(left, Unknown):
            if truthy(left) == (operator in ("||", "or")):
                return truthy(left)
            right = self.value(right_node)
            return right if isinstance(right, Unknown) else truthy(right)
        if operator == "??" and not isinstance(left, Unknown):
            return left if left is not None else self.value(right_node)
        right = self.value(right_node)
        if isinstance(left, Unknown):
            return left
        if isinstance(right, Unknown):
            return right
        if operator == ".":
            return self.concatenate(left, right, node)
        if operator in ("==", "!=", "<>"):
            return _loosely_equal(left, right) == (operator == "==")
        if operator in ("===", "!=="):
            return _identical(left, right) == (operator == "===")
        return Unknown(f"the operator `{operator}` at {self.where(node)}")

    def concatenate(self, left: PhpValue, right: PhpValue, node: Node) -> PhpValue:
        for side in (left, right):
            if isinstance(side, Unknown):
                return side
            if isinstance(side, PhpArray):
                return Unknown("an array used as a string")
        start, end = php_string(left), php_string(right)  # type: ignore[arg-type]
        if len(start) + len(end) > MAX_STRING:
            return self.too_long(node)
        return start + end


def truthy(value: PhpValue) -> bool:
    """PHP's boolean view of a known value."""
    if isinstance(value, PhpArray):
        return bool(value.items)
    if isinstance(value, bytes):
        return value not in (b"", b"0")
    return bool(value)


def _nested(node: Node, depth: int) -> Iterator[Node]:
    """The statements inside a loop or `switch`, at any depth of blocks and cases (up to
    `MAX_NESTING`: deeper ones are left out, as the unknown they would be)."""
    for child in node.named_children:
        if child.type in ("compound_statement", "colon_block", "switch_block", "case_statement"):
            if depth < MAX_NESTING:
                yield from _nested(child, depth + 1)
        elif child.type.endswith("_statement"):
            yield child


def _snippet(node: Node) -> str:
    text = php_text(node).splitlines()[0] if php_text(node) else ""
    return text if len(text) <= 80 else text[:79] + "…"


def _to_int(value: PhpValue) -> PhpValue:
    if isinstance(value, bool) or value is None:
        return int(bool(value))
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return 0  # PHP's infinity and NaN cast to 0
        if not INT_MIN <= value <= INT_MAX:
            return Unknown("an integer cast of a number past PHP's integers")
        return int(value)
    if isinstance(value, bytes):
        digits = value.strip().decode("ascii", "replace")
        sign = -1 if digits.startswith("-") else 1
        unsigned = digits.lstrip("+-")
        number = unsigned[: len(unsigned) - len(unsigned.lstrip("0123456789"))].lstrip("0")
        if len(number) > len(str(INT_MAX)):  # PHP saturates; Python would not even convert it
            return INT_MIN if sign < 0 else INT_MAX
        return max(INT_MIN, min(INT_MAX, sign * int(number))) if number else 0
    return Unknown("an integer cast")


def _numeric(value: PhpValue) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, bytes):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _loosely_equal(left: PhpValue, right: PhpValue) -> bool:
    """PHP 8's `==` for the scalars settings files compare."""
    if isinstance(left, bool) or isinstance(right, bool) or left is None or right is None:
        if (left is None and isinstance(right, bytes)) or (right is None and isinstance(left, bytes)):
            return (left or right) == b""
        return truthy(left) == truthy(right)
    numbers = _numeric(left), _numeric(right)
    if numbers[0] is not None and numbers[1] is not None:
        return numbers[0] == numbers[1]
    if isinstance(left, bytes) and isinstance(right, bytes):
        return left == right
    if isinstance(left, PhpArray) and isinstance(right, PhpArray):
        return left.items.keys() == right.items.keys() and all(
            _loosely_equal(value, right.items[key]) for key, value in left.items.items()
        )
    if isinstance(left, PhpArray | Unknown) or isinstance(right, PhpArray | Unknown):
        return False  # an array is never equal to a string or a number
    return php_string(left) == php_string(right)


def _identical(left: PhpValue, right: PhpValue) -> bool:
    if type(left) is not type(right):
        return False
    if isinstance(left, PhpArray) and isinstance(right, PhpArray):
        return left.items.keys() == right.items.keys() and all(
            _identical(value, right.items[key]) for key, value in left.items.items()
        )
    return left == right
