"""Reading a PHP executor's `checkSchemaDefinitions()` without running it (SPEC 4, "Schemas, statically").

The class file is parsed with tree-sitter's PHP grammar and the method's one `return` is evaluated
as a constant expression: array literals (`[...]`, `array(...)`), strings without interpolation
(single- and double-quoted, heredoc, nowdoc), integers, floats, booleans, null, unary minus and
plus, `.` concatenation, parentheses, `(object)` casts and class constants (`self::`, `static::`,
`parent::`, `ClassName::`) of the class, its traits, parents and interfaces found in the codebase.
Anything else makes the definition it sits in unreadable, with what was found and where.

Where PHP leaves room, the reader decides:
- `Foo::class` is known without running anything (PHP resolves it when compiling), so it reads
  as the fully qualified name PHP gives it (`Drupal\\mod\\Foo`, no leading backslash).
- Array keys follow PHP 8 literals exactly: decimal-integer strings become ints, floats are
  truncated, booleans are 0/1, null is `""`, a later duplicate overwrites in place, and an
  unkeyed element takes the highest int key so far plus one (a negative one too).
- A PHP list (keys 0..n-1 in order) is a JSON array and any other array a JSON object, as
  `json_encode` prints them; an empty array where JSON Schema needs an object (a whole kind
  definition, a schema-valued keyword such as `items` or `not`, the maps `properties`, `$defs`,
  `patternProperties`, `dependentSchemas`, `dependentRequired`) is `{}`.
- A class inherits `checkSchemaDefinitions()` from its traits and parents; a class that provably
  does not implement `CheckSchemaProviderInterface` contributes nothing, as on the site.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from tree_sitter import Language, Node

PROVIDER_INTERFACE = "Drupal\\ai_eval\\CheckSchemaProviderInterface"
METHOD = "checkSchemaDefinitions"

INT_MAX = 2**63 - 1
INT_MIN = -(2**63)
MAX_DEPTH = 200
"""Deeper nesting is unreadable: no schema needs it, and evaluation recurses per level."""


@dataclass(frozen=True, slots=True)
class Location:
    file: Path
    line: int
    """1-based."""


@dataclass(frozen=True, slots=True)
class PhpDefinition:
    """One kind's definition as `checkSchemaDefinitions()` returns it, or why it cannot be read."""

    kind: str | None
    """The kind token (an int key as its decimal string); None when even the kinds could not be read."""
    file: Path
    """Where `checkSchemaDefinitions()` is written: the class file, or a parent's or trait's."""
    line: int
    """1-based line in `file`: the kind's array element, else the `return` (or the method)."""
    schema: Any
    """The JSON value read; None when unreadable."""
    unreadable: str | None = None
    """What could not be read and where: "a method call `$this->defs()` at line 41" (a line of
    `file`), or "... at path/Base.php:12" when it is in another file (a constant's)."""
    unreadable_at: Location | None = None
    """Where the unreadable code is."""


@dataclass(frozen=True, slots=True)
class ClassReading:
    """What the class of one executor contributes."""

    file: Path | None
    """The class file (PSR-4), None when the class has no PSR-4 root."""
    line: int | None
    """1-based line of the class declaration, None when the class was not found."""
    definitions: tuple[PhpDefinition, ...]
    problems: tuple[str, ...]
    """Why the class could not be read at all, or what is wrong with it (syntax errors)."""


class PhpArray:
    """A PHP array: ordered keys (int or byte string) with PHP's auto-index."""

    __slots__ = ("is_object", "items", "next_index")

    def __init__(self, is_object: bool = False) -> None:
        self.items: dict[int | bytes, PhpValue] = {}
        self.next_index: int | None = None
        self.is_object = is_object  # made by an `(object)` cast: a JSON object even when a list

    def put(self, key: int | bytes | None, value: PhpValue) -> int | bytes:
        """Store at `key`, or append when it is None; returns the key used."""
        if key is None:
            key = 0 if self.next_index is None else self.next_index
            if key > INT_MAX:
                raise OverflowError("the next array key is beyond PHP_INT_MAX")
        if isinstance(key, int) and (self.next_index is None or key >= self.next_index):
            self.next_index = key + 1
        self.items[key] = value
        return key

    def copy(self) -> PhpArray:
        """Another array with the same elements: PHP's arrays are values."""
        copied = PhpArray(self.is_object)
        copied.items = dict(self.items)
        copied.next_index = self.next_index
        return copied

    def is_list(self) -> bool:
        return not self.is_object and all(key == index for index, key in enumerate(self.items))


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value that cannot be known without running PHP (a settings file's `getenv()` of a name
    not set, what is assigned under a condition that cannot be decided), and why."""

    why: str


PhpValue: TypeAlias = bytes | int | float | bool | PhpArray | Unknown | None


class Unreadable(Exception):
    """Code the reader does not evaluate; internal, turned into a PhpDefinition's reason."""

    def __init__(self, what: str, at: Location, detail: str = "") -> None:
        super().__init__(what)
        self.what = what
        self.at = at
        self.detail = detail

    def reason(self, home: Path | None, display: Callable[[Path], str]) -> str:
        """What and where, naming the file when it is not `home`: "a method call `$x->f()` at line 41"."""
        where = f"line {self.at.line}" if self.at.file == home else f"{display(self.at.file)}:{self.at.line}"
        return f"{self.what} at {where}" + (f": {self.detail}" if self.detail else "")


# --- files and classes --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Names:
    """How a file's `namespace` and `use` statements resolve class names at one place."""

    namespace: str
    uses: Mapping[str, str]
    """Lowercased alias -> fully qualified class name."""

    def resolve(self, name: str) -> str:
        name = "".join(name.split())
        if name.startswith("\\"):
            return name[1:]
        if name.lower().startswith("namespace\\"):
            return self.qualify(name[len("namespace\\") :])
        first, _, rest = name.partition("\\")
        imported = self.uses.get(first.lower())
        if imported is not None:
            return f"{imported}\\{rest}" if rest else imported
        return self.qualify(name)

    def qualify(self, name: str) -> str:
        return f"{self.namespace}\\{name}" if self.namespace else name


@dataclass(slots=True)
class _Class:
    name: str
    """Fully qualified."""
    file: _File
    node: Node
    names: _Names
    parent: str | None
    interfaces: tuple[str, ...]
    traits: tuple[str, ...]
    constants: dict[str, Node]
    """Constant name -> its value expression."""
    methods: dict[str, Node]
    """Lowercased method name -> its declaration."""

    @property
    def line(self) -> int:
        return self.node.start_point.row + 1


@dataclass(slots=True)
class _File:
    path: Path
    root: Node
    classes: dict[str, _Class] = field(default_factory=dict)
    """Lowercased fully qualified name -> class, interface or trait."""


_DECLARATIONS = {"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"}


@functools.cache
def _php() -> Language:
    """The PHP grammar, loaded at the first parse: a start served from the cache parses nothing."""
    import tree_sitter_php
    from tree_sitter import Language

    return Language(tree_sitter_php.language_php())


PARSE_CHUNK = 64 * 1024
"""How much of the source a parse with a deadline is given at a time: the deadline is looked at
between chunks (tree-sitter parses 1 MB of PHP in about 0.7 s)."""
TEXT_CHUNK = 256
"""How much a node's text is read at a time once such a parse is done (tree-sitter reads a node's
text through the same callback, from its first byte to its last)."""


def parse_php(path: Path, source: bytes, deadline: float | None = None) -> _File:
    """A file parsed; past `deadline` (`time.monotonic()`), the parse ends where it got to."""
    from tree_sitter import Parser

    parser = Parser(_php())  # a parser per parse: parsers are not thread-safe
    if deadline is None:
        tree = parser.parse(source)
    else:
        parsing = True

        def read(offset: int, _: object) -> bytes:
            if not parsing:  # a node's text, whatever the time: an empty answer would never end it
                return source[offset : offset + TEXT_CHUNK]
            return b"" if time.monotonic() > deadline else source[offset : offset + PARSE_CHUNK]

        tree = parser.parse(read)
        parsing = False
    parsed = _File(path, tree.root_node)
    _collect(parsed, parsed.root, _Names("", {}))
    return parsed


def _collect(parsed: _File, container: Node, names: _Names) -> None:
    """Declarations of the top level and of braced namespaces, each with the names in effect."""
    for node in container.named_children:
        if node.type == "namespace_definition":
            name = node.child_by_field_name("name")
            scoped = _Names(php_text(name) if name else "", {})
            body = node.child_by_field_name("body")
            if body is None:
                names = scoped  # `namespace X;` applies to what follows
            else:
                _collect(parsed, body, scoped)
        elif node.type == "namespace_use_declaration":
            names = _Names(names.namespace, {**names.uses, **_imports(node)})
        elif node.type in _DECLARATIONS:
            declared = _declare(parsed, node, names)
            parsed.classes[declared.name.lower()] = declared


def _imports(declaration: Node) -> dict[str, str]:
    """Class imports of one `use` statement; `use function` and `use const` import no class."""
    if _is_function_or_const_import(declaration):
        return {}
    group = declaration.child_by_field_name("body")
    prefix = ""
    if group is not None:
        prefix_node = next(
            (child for child in declaration.named_children if child.type == "namespace_name"), None
        )
        prefix = php_text(prefix_node).strip("\\") + "\\" if prefix_node else ""
    clauses = (group or declaration).named_children
    found: dict[str, str] = {}
    for clause in clauses:
        if clause.type != "namespace_use_clause" or _is_function_or_const_import(clause):
            continue
        alias = clause.child_by_field_name("alias")
        target = next(child for child in clause.named_children if child.type in ("name", "qualified_name"))
        full = prefix + php_text(target).lstrip("\\")
        found[(php_text(alias) if alias else full.rsplit("\\", 1)[-1]).lower()] = full
    return found


def _is_function_or_const_import(node: Node) -> bool:
    kind = node.child_by_field_name("type")
    return kind is not None and kind.type in ("function", "const")


def _declare(parsed: _File, node: Node, names: _Names) -> _Class:
    name_node = node.child_by_field_name("name")
    declared = _Class(
        name=names.qualify(php_text(name_node) if name_node else ""),
        file=parsed,
        node=node,
        names=names,
        parent=None,
        interfaces=(),
        traits=(),
        constants={},
        methods={},
    )
    for clause in node.named_children:
        listed = tuple(names.resolve(php_text(n)) for n in clause.named_children if n.type in _NAME_TYPES)
        if clause.type == "base_clause" and node.type == "class_declaration":
            declared.parent = listed[0] if listed else None
        elif clause.type in ("base_clause", "class_interface_clause"):
            declared.interfaces += listed  # an interface's `extends` lists interfaces
    body = node.child_by_field_name("body")
    for member in body.named_children if body else ():
        if member.type == "const_declaration":
            for element in member.named_children:
                if element.type == "const_element" and element.named_child_count >= 2:
                    declared.constants[php_text(element.named_children[0])] = element.named_children[-1]
        elif member.type == "method_declaration":
            method_name = member.child_by_field_name("name")
            declared.methods.setdefault(php_text(method_name).lower() if method_name else "", member)
        elif member.type == "use_declaration":
            declared.traits += tuple(
                names.resolve(php_text(n)) for n in member.named_children if n.type in _NAME_TYPES
            )
    return declared


_NAME_TYPES = ("name", "qualified_name", "relative_name")


class PhpSources:
    """The PHP files of a codebase, found by PSR-4 and parsed once each."""

    def __init__(
        self,
        autoload: Mapping[str, Path],
        read: Callable[[Path], bytes | None],
        display: Callable[[Path], str] = str,
    ) -> None:
        """`autoload` maps PSR-4 prefixes (`Drupal\\mod\\`) to folders; `read` returns a file's bytes,
        None when there is none, or raises OSError for one not read (its reader says why);
        `display` writes a path in messages."""
        self.prefixes = sorted(autoload.items(), key=lambda item: -len(item[0]))
        self.read = read
        self.display = display
        self._files: dict[Path, _File | None] = {}
        self._unread: set[Path] = set()
        """Files there but not read (a FIFO, a link out of the project): said by the reader."""
        self._constants: dict[tuple[str, str], PhpValue | Unreadable] = {}
        self._evaluating: set[tuple[str, str]] = set()

    def locate(self, class_name: str) -> Path | None:
        """The PSR-4 file of a class (it may not exist), or None when no prefix covers it."""
        class_name = class_name.lstrip("\\")
        for prefix, folder in self.prefixes:
            if class_name.lower().startswith(prefix.lower()):
                return folder.joinpath(*class_name[len(prefix) :].split("\\")).with_suffix(".php")
        return None

    def parsed(self, path: Path) -> _File | None:
        if path not in self._files:
            try:
                source = self.read(path)
            except OSError:
                source = None
                self._unread.add(path)
            self._files[path] = None if source is None else parse_php(path, source)
        return self._files[path]

    def find(self, class_name: str, near: _File | None = None) -> _Class | None:
        """A class, interface or trait: declared in `near` (the file asking), else by PSR-4."""
        key = class_name.lower()
        if near is not None and key in near.classes:
            return near.classes[key]
        path = self.locate(class_name)
        parsed = self.parsed(path) if path else None
        return parsed.classes.get(key) if parsed else None

    def missing(self, class_name: str) -> str:
        """Why a class is not found: "`X` is not in the codebase (no file `path`)"."""
        path = self.locate(class_name)
        if path is None:
            return f"`{class_name}` is not in the codebase (no installed module's namespace holds it)"
        if self.parsed(path) is None:
            return f"`{class_name}` is not in the codebase (no file {self.display(path)})"
        return f"`{class_name}` is not in the codebase ({self.display(path)} does not declare it)"

    # --- constants ------------------------------------------------------------------------------

    def constant(self, owner: _Class, name: str, at: Location, depth: int = 0) -> PhpValue:
        """The value of `owner::name`, declared in it, its traits, parents or interfaces."""
        found, missing = self._constant_declaration(owner, name, set())
        if found is None:
            detail = f"`{owner.name}` and its ancestors in the codebase do not declare it"
            if missing:
                detail += f" (not in the codebase: {', '.join(f'`{name}`' for name in missing)})"
            raise Unreadable(f"the constant `{owner.name}::{name}`", at, detail)
        declarer, node = found
        key = (declarer.name.lower(), name)
        if key not in self._constants:
            if key in self._evaluating:
                raise Unreadable(f"the constant `{declarer.name}::{name}`", at, "its value refers to itself")
            self._evaluating.add(key)
            try:
                self._constants[key] = Evaluator(self, Scope.of(declarer), depth=depth + 1).value(node)
            except Unreadable as unreadable:
                self._constants[key] = unreadable
            finally:
                self._evaluating.discard(key)
        value = self._constants[key]
        if isinstance(value, Unreadable):
            raise value
        return value

    def _constant_declaration(
        self, owner: _Class, name: str, seen: set[str]
    ) -> tuple[tuple[_Class, Node] | None, list[str]]:
        """Where `name` is declared among `owner` and its ancestors, and the ancestors not found."""
        missing: list[str] = []
        for current in self._lineage(owner, seen, missing, with_interfaces=True):
            if name in current.constants:
                return (current, current.constants[name]), missing
        return None, missing

    def _lineage(
        self, start: _Class, seen: set[str], missing: list[str], with_interfaces: bool
    ) -> Iterator[_Class]:
        """`start`, then its traits, its parent's lineage and (with_interfaces) its interfaces'."""
        if start.name.lower() in seen:
            return
        seen.add(start.name.lower())
        yield start
        related = [*start.traits, *([start.parent] if start.parent else [])]
        if with_interfaces:
            related += start.interfaces
        for name in related:
            found = self.find(name, start.file)
            if found is None:
                missing.append(name)
            else:
                yield from self._lineage(found, seen, missing, with_interfaces)

    # --- the method -----------------------------------------------------------------------------

    def read_class(self, class_name: str) -> ClassReading:
        """The kind definitions `class_name` contributes, read statically; never raises."""
        class_name = class_name.lstrip("\\")
        path = self.locate(class_name)
        parsed = self.parsed(path) if path else None
        declared = parsed.classes.get(class_name.lower()) if parsed else None
        if path is None or parsed is None or declared is None:
            if path in self._unread:  # its reader's note says why: "does not exist" would be wrong
                return ClassReading(path, None, (), ())
            if path is None:
                problem = f"the class {self.missing(class_name)}"
            elif parsed is None:
                problem = f"the class `{class_name}` has no file: {self.display(path)} does not exist; create it, or fix `class:`"
            else:
                problem = f"{self.display(path)} does not declare the class `{class_name}`; check its namespace and class name"
            return ClassReading(path, None, (), (problem,))
        try:
            definitions, ignored = self._definitions(declared)
        except RecursionError:  # classes or statements nested past what any real code needs
            return ClassReading(
                path, declared.line, (), (f"{self.display(path)}: nested too deeply to read",)
            )
        problems = []
        error = _first_error(parsed.root)
        if error is not None:
            problems.append(
                f"{self.display(path)}:{error.start_point.row + 1}: a syntax error; fix it, PHP would not load the class"
            )
        if ignored:
            problems.append(ignored)
        return ClassReading(path, declared.line, definitions, tuple(problems))

    def _definitions(self, executor: _Class) -> tuple[tuple[PhpDefinition, ...], str | None]:
        missing: list[str] = []
        method = next(
            (
                (owner, owner.methods[METHOD.lower()])
                for owner in self._lineage(executor, set(), missing, with_interfaces=False)
                if METHOD.lower() in owner.methods
            ),
            None,
        )
        if method is None:
            return (), None
        if self._implements(executor, PROVIDER_INTERFACE) is False:
            return (), (
                f"{self.display(executor.file.path)}:{executor.line}: `{executor.name}` has `{METHOD}()` but does not "
                f"implement `{PROVIDER_INTERFACE}`, so the site ignores its kinds; add "
                "`implements CheckSchemaProviderInterface`"
            )
        owner, declaration = method
        home = owner.file.path
        self_class = executor if owner.node.type == "trait_declaration" else owner
        try:
            returned = _single_return(declaration, home)
            return self._read_return(returned, Scope(owner, self_class, executor)), None
        except Unreadable as unreadable:
            line = unreadable.at.line if unreadable.at.file == home else declaration.start_point.row + 1
            reason = unreadable.reason(home, self.display)
            return (PhpDefinition(None, home, line, None, reason, unreadable.at),), None

    def _implements(self, executor: _Class, interface: str) -> bool | None:
        """Whether the class implements `interface`; None when an ancestor is not in the codebase."""
        missing: list[str] = []
        for current in self._lineage(executor, set(), missing, with_interfaces=True):
            if current.name.lower() == interface.lower() or interface.lower() in map(
                str.lower, current.interfaces
            ):
                return True
        return None if missing else False

    def _read_return(self, returned: Node, scope: Scope) -> tuple[PhpDefinition, ...]:
        """One definition per kind; a kind whose value is unreadable is unreadable alone."""
        home = scope.code.file.path
        evaluator = Evaluator(self, scope)
        failures: dict[int | bytes, Unreadable] = {}
        lines: dict[int | bytes, Node] = {}
        if returned.type == "array_creation_expression":
            kinds = PhpArray()
            for key_node, value_node in evaluator.elements(returned):
                key = None if key_node is None else evaluator.key(key_node)
                try:
                    value = evaluator.value(value_node)
                    failure = None
                except Unreadable as unreadable:
                    value, failure = None, unreadable
                key = evaluator.put(kinds, key, value, key_node or value_node)
                lines[key] = key_node or value_node
                failures.pop(key, None)
                if failure:
                    failures[key] = failure
        else:
            kinds_value = evaluator.value(returned)
            if not isinstance(kinds_value, PhpArray):
                what = f"{_php_type(kinds_value)} returned"
                raise Unreadable(
                    what, scope.at(returned), "`checkSchemaDefinitions()` returns an array of kinds"
                )
            kinds = kinds_value
        definitions = []
        for key, value in kinds.items.items():
            where = lines.get(key, returned)
            line = where.start_point.row + 1
            kind = key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key)
            try:
                if key in failures:
                    raise failures[key]
                schema = as_schema(to_json(value, scope.at(where)))
                definitions.append(PhpDefinition(kind, home, line, schema))
            except Unreadable as unreadable:
                reason = unreadable.reason(home, self.display)
                definitions.append(PhpDefinition(kind, home, line, None, reason, unreadable.at))
        return tuple(definitions)


def _single_return(method: Node, path: Path) -> Node:
    """The expression of the method's only `return`, a statement of its body itself."""
    body = method.child_by_field_name("body")
    at = Location(path, method.start_point.row + 1)
    if body is None:
        raise Unreadable(f"`{METHOD}()` has no body: an abstract method", at)
    returns = list(_returns(body))
    if not returns:
        raise Unreadable(f"`{METHOD}()` has no `return`", at)
    if len(returns) > 1:
        lines = ", ".join(str(node.start_point.row + 1) for node in returns)
        raise Unreadable(f"`{METHOD}()` has {len(returns)} `return` statements (lines {lines}), not one", at)
    returned = returns[0]
    at = Location(path, returned.start_point.row + 1)
    if returned.parent != body:
        raise Unreadable("a `return` inside a condition or loop", at)
    expression = returned.named_children[0] if returned.named_children else None
    if expression is None:
        raise Unreadable("a `return` without a value", at)
    return expression


def _returns(node: Node) -> Iterator[Node]:
    """The `return` statements of a function body, not of the functions and classes inside it."""
    for child in node.named_children:
        if child.type == "return_statement":
            yield child
        elif child.type not in _NESTED_SCOPES:
            yield from _returns(child)


_NESTED_SCOPES = frozenset(
    ("anonymous_function", "arrow_function", "function_definition", "declaration_list")
)
"""Functions and class bodies inside a method: their `return`s are not the method's."""


def _first_error(root: Node) -> Node | None:
    """The first syntax error (an ERROR or MISSING node), or None."""
    node = root
    while node.has_error:
        if node.is_error or node.is_missing:
            return node
        child = next((child for child in node.children if child.has_error or child.is_missing), None)
        if child is None:
            return node
        node = child
    return None


# --- evaluation ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scope:
    """Where code is evaluated: the class it is written in (its file and names), the class
    `self::` means (the user of a trait, else the same) and the one `static::` means (the executor)."""

    code: _Class
    self_class: _Class
    late: _Class

    @classmethod
    def of(cls, declarer: _Class) -> Scope:
        return cls(declarer, declarer, declarer)

    @classmethod
    def top_level(cls, parsed: _File) -> Scope:
        """A file's own statements, outside any class (a settings file's)."""
        return cls.of(_Class("", parsed, parsed.root, _Names("", {}), None, (), (), {}, {}))

    def at(self, node: Node) -> Location:
        return Location(self.code.file.path, node.start_point.row + 1)


_CONSTRUCTS = {
    "member_call_expression": "a method call",
    "nullsafe_member_call_expression": "a method call",
    "scoped_call_expression": "a static method call",
    "function_call_expression": "a function call",
    "variable_name": "a variable",
    "dynamic_variable_name": "a variable",
    "member_access_expression": "a property",
    "nullsafe_member_access_expression": "a property",
    "scoped_property_access_expression": "a static property",
    "subscript_expression": "an array access",
    "anonymous_function": "a closure",
    "arrow_function": "a closure",
    "object_creation_expression": "a `new` expression",
    "variadic_unpacking": "a `...` spread",
    "by_ref": "a reference",
    "conditional_expression": "a conditional",
    "match_expression": "a `match`",
    "cast_expression": "a cast",
    "name": "a global constant",
    "qualified_name": "a global constant",
    "assignment_expression": "an assignment",
    "augmented_assignment_expression": "an assignment",
    "shell_command_expression": "a shell command",
    "include_expression": "an include",
    "require_expression": "a require",
    "print_intrinsic": "a print",
    "error_suppression_expression": "an `@` expression",
    "clone_expression": "a clone",
}

_DOUBLE_QUOTED_ESCAPE = re.compile(
    rb'\\(?:([nrtvef\\$"])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u\{([0-9A-Fa-f]+)\})'
)
_SIMPLE_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"v": b"\v", b"e": b"\x1b", b"f": b"\f"}
_SINGLE_QUOTED_ESCAPE = re.compile(rb"\\([\\'])")
_INTEGER_KEY = re.compile(rb"(?:0|-?[1-9][0-9]*)\Z")
_NUMERIC = re.compile(
    rb"[ \t\n\r\v\f]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t\n\r\v\f]*\Z"
)
_STRING_PARTS = {"string_content", "escape_sequence", "nowdoc_string"}


class Evaluator:
    """Evaluates constant expressions: `read_<node type>` reads one type of node, and a type
    without a reader is unreadable."""

    def __init__(self, sources: PhpSources, scope: Scope, depth: int = 0) -> None:
        """`depth`: how deep the evaluation asking for this one is."""
        self.sources = sources
        self.scope = scope
        self.depth = depth

    def unreadable(self, node: Node, what: str | None = None) -> Unreadable:
        snippet = php_text(node).splitlines()[0] if php_text(node) else ""
        snippet = snippet if len(snippet) <= 60 else snippet[:59] + "…"
        what = what or _CONSTRUCTS.get(node.type, "an expression")
        return Unreadable(f"{what} `{snippet}`", self.scope.at(node))

    def value(self, node: Node) -> PhpValue:
        if self.depth > MAX_DEPTH:
            raise self.unreadable(node, f"nesting deeper than {MAX_DEPTH} levels")
        reader = getattr(self, f"read_{node.type}", None)
        if reader is None:
            raise self.unreadable(node)
        self.depth += 1
        try:
            return reader(node)  # type: ignore[no-any-return]
        finally:
            self.depth -= 1

    # literals

    def read_integer(self, node: Node) -> int | float:
        digits = php_text(node).replace("_", "").lower()
        bases = {"0x": 16, "0b": 2, "0o": 8}
        try:
            if digits[:2] in bases:
                number = int(digits[2:], bases[digits[:2]])
            elif len(digits) > 1 and digits.startswith("0"):
                number = int(digits[1:], 8)
            else:
                number = int(digits)
        except ValueError:
            raise self.unreadable(node, "an invalid integer") from None
        return number if number <= INT_MAX else float(number)

    def read_float(self, node: Node) -> float:
        return float(php_text(node).replace("_", ""))

    def read_boolean(self, node: Node) -> bool:
        return php_text(node).lower() == "true"

    def read_null(self, node: Node) -> None:
        return None

    def read_string(self, node: Node) -> bytes:
        return _SINGLE_QUOTED_ESCAPE.sub(rb"\1", _quoted_body(node))

    def read_encapsed_string(self, node: Node) -> bytes:
        self.refuse_interpolation(node, node)
        return self.unescape(_quoted_body(node), node, with_quote=True)

    def read_heredoc(self, node: Node) -> bytes:
        body = node.child_by_field_name("value")
        if body is not None:
            self.refuse_interpolation(body, node)
        return self.unescape(_heredoc_text(node), node, with_quote=False)

    def read_nowdoc(self, node: Node) -> bytes:
        return _heredoc_text(node)

    def refuse_interpolation(self, parts: Node, node: Node) -> None:
        if any(child.type not in _STRING_PARTS for child in parts.named_children):
            raise self.unreadable(node, "an interpolated string")

    def unescape(self, body: bytes, node: Node, with_quote: bool) -> bytes:
        def replace(match: re.Match[bytes]) -> bytes:
            simple, octal, hexadecimal, codepoint = match.groups()
            if simple is not None:
                return match[0] if simple == b'"' and not with_quote else _SIMPLE_ESCAPES.get(simple, simple)
            if octal is not None:
                return bytes([int(octal, 8) & 0xFF])
            if hexadecimal is not None:
                return bytes([int(hexadecimal, 16)])
            if int(codepoint, 16) > 0x10FFFF:
                raise self.unreadable(node, "an invalid `\\u{...}` escape")
            return chr(int(codepoint, 16)).encode("utf-8", "surrogatepass")

        return _DOUBLE_QUOTED_ESCAPE.sub(replace, body)

    # operators

    def read_parenthesized_expression(self, node: Node) -> PhpValue:
        return self.value(node.named_children[0])

    def read_unary_op_expression(self, node: Node) -> PhpValue:
        operator = node.child_by_field_name("operator")
        argument = node.child_by_field_name("argument")
        sign = php_text(operator) if operator else ""
        if argument is None or sign not in ("-", "+"):
            raise self.unreadable(node, f"the operator `{sign}`")
        number = _to_number(self.value(argument))
        if number is None:
            raise self.unreadable(node, f"`{sign}` on a value that is not a number")
        result = -number if sign == "-" else number
        return float(result) if isinstance(result, int) and not INT_MIN <= result <= INT_MAX else result

    def read_binary_expression(self, node: Node) -> PhpValue:
        operator = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if operator is None or php_text(operator) != "." or left is None or right is None:
            raise self.unreadable(node, f"the operator `{php_text(operator) if operator else '?'}`")
        return self.as_string(left) + self.as_string(right)

    def as_string(self, node: Node) -> bytes:
        value = self.value(node)
        if isinstance(value, PhpArray | Unknown):
            raise self.unreadable(node, "an array used as a string")
        return php_string(value)

    def read_cast_expression(self, node: Node) -> PhpValue:
        cast = node.child_by_field_name("type")
        operand = node.child_by_field_name("value")
        if cast is None or operand is None or php_text(cast).lower() != "object":
            raise self.unreadable(node)
        value = self.value(operand)
        if not isinstance(value, PhpArray):
            raise self.unreadable(node, "an `(object)` cast of a value that is not an array")
        cast_value = PhpArray(is_object=True)
        cast_value.items = dict(value.items)
        return cast_value

    # arrays

    def read_array_creation_expression(self, node: Node) -> PhpArray:
        array = PhpArray()
        for key_node, value_node in self.elements(node):
            key = None if key_node is None else self.key(key_node)
            self.put(array, key, self.value(value_node), key_node or value_node)
        return array

    def elements(self, node: Node) -> Iterator[tuple[Node | None, Node]]:
        """(key or None, value) of each element; spreads, references and empty elements are unreadable."""
        previous = ""
        for child in node.children:
            if child.type == "," and previous in ("[", "(", ","):
                raise Unreadable("an empty array element", self.scope.at(child))
            previous = child.type
            if child.type != "array_element_initializer":
                continue
            parts = child.named_children
            if not parts or parts[0].type in ("variadic_unpacking", "by_ref") or len(parts) > 2:
                raise self.unreadable(parts[0] if parts else child)
            yield (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])

    def key(self, node: Node) -> int | bytes:
        """A key as PHP stores it."""
        value = self.value(node)
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        if value is None:
            return b""
        if isinstance(value, bytes):
            return int(value) if _INTEGER_KEY.match(value) and INT_MIN <= int(value) <= INT_MAX else value
        if isinstance(value, float) and math.isfinite(value) and INT_MIN <= value <= INT_MAX:
            return int(value)
        raise self.unreadable(node, f"{_php_type(value)} used as an array key")

    def put(self, array: PhpArray, key: int | bytes | None, value: PhpValue, element: Node) -> int | bytes:
        """`array.put`, with an append past PHP_INT_MAX unreadable as PHP refuses it."""
        try:
            return array.put(key, value)
        except OverflowError:
            raise Unreadable(
                "an element", self.scope.at(element), "the key after PHP_INT_MAX is taken"
            ) from None

    # constants

    def read_class_constant_access_expression(self, node: Node) -> PhpValue:
        scope_node, name_node = node.named_children[0], node.named_children[-1]
        name = php_text(name_node)
        owner = self.owner(scope_node)
        if name.lower() == "class":
            return owner.encode() if isinstance(owner, str) else owner.name.encode()
        if isinstance(owner, str):
            found = self.sources.find(owner, self.scope.code.file)
            if found is None:
                raise Unreadable(
                    f"the constant `{owner}::{name}`", self.scope.at(node), self.sources.missing(owner)
                )
            owner = found
        return self.sources.constant(owner, name, self.scope.at(node), self.depth)

    def owner(self, scope_node: Node) -> _Class | str:
        """The class named before `::`: a parsed class for `self`/`static`/`parent`, else its name."""
        if scope_node.type == "relative_scope":
            word = php_text(scope_node).lower()
            if word == "self":
                return self.scope.self_class
            if word == "static":
                return self.scope.late
            parent = self.scope.self_class.parent
            if parent is None:
                raise Unreadable(
                    "`parent::`", self.scope.at(scope_node), f"`{self.scope.self_class.name}` has no parent"
                )
            return parent
        if scope_node.type not in _NAME_TYPES:
            raise self.unreadable(scope_node)
        return self.scope.code.names.resolve(php_text(scope_node))


# --- values -------------------------------------------------------------------------------------


def php_text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _quoted_body(node: Node) -> bytes:
    """What is between the quotes of a string literal (after a `b` prefix)."""
    raw = node.text or b""
    return raw.lstrip(b"bB")[1:-1]


def _heredoc_text(node: Node) -> bytes:
    """A heredoc's or nowdoc's lines, without the closing marker's indentation (PHP 7.3+)."""
    raw = node.text or b""
    lines = raw.split(b"\n")
    indentation = len(lines[-1]) - len(lines[-1].lstrip(b" \t"))
    body = lines[1:-1]
    if body:
        body[-1] = body[-1].removesuffix(b"\r")
    return b"\n".join(line[indentation:] for line in body)


def _to_number(value: PhpValue) -> int | float | None:
    """PHP's arithmetic view of a value; None where PHP throws a TypeError."""
    if isinstance(value, bool) or value is None:
        return int(bool(value))
    if isinstance(value, int | float):
        return value
    if isinstance(value, bytes) and _NUMERIC.match(value):
        text = value.decode().strip()
        try:
            number = int(text)
        except ValueError:
            return float(text)
        return number if INT_MIN <= number <= INT_MAX else float(number)
    return None


def php_string(value: bytes | int | float | bool | None) -> bytes:
    """PHP's string conversion (`precision` 14 for floats, as `echo` prints them)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, bool) or value is None:
        return b"1" if value else b""
    if isinstance(value, int):
        return str(value).encode()
    if math.isnan(value):
        return b"NAN"
    if math.isinf(value):
        return b"INF" if value > 0 else b"-INF"
    text = f"{value:.14G}"
    if "E" in text:
        mantissa, exponent = text.split("E")
        text = f"{mantissa if '.' in mantissa else mantissa + '.0'}E{int(exponent):+d}"
    return text.encode()


def _php_type(value: PhpValue) -> str:
    """The type of a value as messages name it: "an array", "a string", ..."""
    if isinstance(value, PhpArray):
        return "an array"
    if isinstance(value, bytes):
        return "a string"
    if isinstance(value, Unknown):
        return "a value not known without running PHP"
    return {bool: "a boolean", int: "an integer", float: "a float", type(None): "null"}[type(value)]


def to_json(value: PhpValue, at: Location) -> Any:
    """What `json_encode` prints for a value (lists for 0..n-1 keys); unreadable where it fails."""
    if isinstance(value, Unknown):
        raise Unreadable(value.why, at)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise Unreadable("a string that is not valid UTF-8", at) from None
    if isinstance(value, PhpArray):
        if value.is_list():
            return [to_json(item, at) for item in value.items.values()]
        return {
            (key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key)): to_json(item, at)
            for key, item in value.items.items()
        }
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Unreadable("INF or NAN", at, "JSON cannot hold it")
        if value.is_integer() and abs(value) < 1e17:
            return int(value)  # json_encode prints 2.0 as `2` (up to 17 digits, where it turns to `e+17`)
    return value


_SCHEMA_VALUED = frozenset(
    (
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "contentSchema",
    )
)
_SCHEMA_LISTS = frozenset(("allOf", "anyOf", "oneOf", "prefixItems"))
_SCHEMA_MAPS = frozenset(("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"))


def as_schema(value: Any) -> Any:
    """A JSON value read from PHP as a JSON Schema: `[]` where a schema or a map of them is due is `{}`."""
    if value == []:
        return {}
    if not isinstance(value, dict):
        return value
    schema: dict[str, Any] = {}
    for keyword, sub in value.items():
        if keyword in _SCHEMA_VALUED:
            schema[keyword] = as_schema(sub)
        elif keyword in _SCHEMA_LISTS and isinstance(sub, list):
            schema[keyword] = [as_schema(item) for item in sub]
        elif keyword in _SCHEMA_MAPS and isinstance(sub, dict):
            schema[keyword] = {name: as_schema(item) for name, item in sub.items()}
        elif keyword in _SCHEMA_MAPS or keyword == "dependentRequired":
            schema[keyword] = {} if sub == [] else sub
        else:
            schema[keyword] = sub
    return schema
