"""YAML text to a tree of plain values that keeps the range of every key and value.

Most documents are plain block YAML, read line by line by `blockyaml`. The others are composed
here from a parser's event stream, so both parsers feed one composer:
libyaml (through PyYAML's C parser) on the fast path, ruamel.yaml on the reference path. A
document libyaml rejects is handed to ruamel.yaml, so broken documents read the same on both.
Scalars are resolved by the YAML 1.2 core schema in both, no tag constructs an object, and
the composer is iterative, so neither deep nesting nor aliases can exhaust the stack or memory.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from ai_eval_lsp.core import blockyaml
from ai_eval_lsp.core.problems import Position, Problem, Span
from ai_eval_lsp.core.text import split_lines
from ai_eval_lsp.core.yamlnodes import Entry as Entry
from ai_eval_lsp.core.yamlnodes import Node as Node
from ai_eval_lsp.core.yamlnodes import Scalars
from ai_eval_lsp.core.yamlnodes import resolve_plain as resolve_plain

Parser = Literal["fast", "reference"]

MAX_DEPTH = 200
"""Deeper nesting is reported and cut: no rubric needs it, and validators recurse per level."""

REFERENCE_LIMIT = 512 * 1024
"""Up to this size, a document libyaml rejects (or reads differently) is re-read by the reference
parser, so both paths report alike. Past it, libyaml's own report stands: the pure-Python parser
reads ~0.5 MB a second, and a 10 MB document with one typo would take 20 s to be told so."""

MAX_ALIAS_EXPANSION = 100_000
"""How many nodes aliases may add to a document before it is treated as an alias bomb."""

_CORE = "tag:yaml.org,2002:"


@dataclass(frozen=True, slots=True)
class ParseResult:
    root: Node | None
    problems: list[Problem]
    parser: Parser
    """The parser that read it: "reference" on the fast path too when libyaml rejected the
    document, or read a key the reference parser must decide."""
    anchored: bool = False
    """Whether it has anchors or aliases (so one part of it may stand for another)."""


def decode(data: bytes) -> tuple[str, list[Problem]]:
    """Text of a file's bytes; bytes that are not UTF-8 are replaced and reported where they are."""
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as err:
        before = data[: err.start].decode("utf-8-sig", errors="replace")
        lines = split_lines(before)
        line, column = len(lines) - 1, len(lines[-1])
        problem = Problem(
            "yaml-syntax",
            f"the file is not valid UTF-8: byte 0x{data[err.start]:02x} cannot be decoded; "
            "save the file as UTF-8",
            Span.of(line, column, line, column + 1),
        )
        return data.decode("utf-8-sig", errors="replace"), [problem]


_NOT_BREAKS = "\x85\u2028\u2029"
"""NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR: line breaks to YAML 1.1 and to both parsers, but
ordinary characters to YAML 1.2 and to editors. They are masked while parsing (see `_masked`)."""


def parse(text: str, parser: Parser = "fast", fallback: bool = True) -> ParseResult:
    """Compose the first YAML document of `text`; every problem found is returned, never raised.

    `fallback=False` skips re-reading a document libyaml rejects, for callers that only probe.
    On the fast path, a document in plain block YAML is read line by line (`blockyaml`), the
    rest from libyaml's events.
    """
    if parser == "fast":
        with collector_paused():
            root = blockyaml.read(text)
        if root is not None:
            return ParseResult(root, [], parser)
    if any(char in text for char in _NOT_BREAKS):
        masked, unmask = _masked(text)
        return _parse(masked, parser, fallback, unmask)
    return _parse(text, parser, fallback, None)


def _masked(text: str) -> tuple[str, dict[int, str]]:
    """`text` with each of `_NOT_BREAKS` replaced by a private-use character it does not hold, one
    code point for one so positions stay, and the table that puts them back in scalars."""
    spare = (chr(point) for point in range(0xE000, 0xF900) if chr(point) not in text)
    stand_ins = {char: next(spare) for char in _NOT_BREAKS}
    masked = text.translate({ord(char): stand_in for char, stand_in in stand_ins.items()})
    return masked, {ord(stand_in): char for char, stand_in in stand_ins.items()}


def _parse(text: str, parser: Parser, fallback: bool, unmask: dict[int, str] | None) -> ParseResult:
    consult_reference = parser == "fast" and fallback and len(text) <= REFERENCE_LIMIT
    if parser == "fast" and len(text) > REFERENCE_LIMIT:
        failure = libyaml_failure(text)
        if failure is not None:
            return ParseResult(None, [syntax_problem(text, failure)], parser)
    composer = _Composer(text, defer_odd_keys=consult_reference, unmask=unmask)
    try:
        with collector_paused():
            composer.run(_events(text, parser))
    except _TooDeep as deep:
        return ParseResult(None, [deep.problem], parser)
    except _ReferenceDecides:
        return _parse(text, "reference", fallback, unmask)
    except Exception as err:  # every parser error is reported as the one syntax problem
        if consult_reference:
            # libyaml is a YAML 1.1 parser and words its errors its own way: a document it
            # rejects is read by the reference parser, which decides and reports for both.
            mark = getattr(err, "problem_mark", None)
            if mark is not None and "maximum nesting depth" in str(err):
                # ruamel.yaml is quadratic in nesting depth; reading up to where libyaml stopped
                # (past our own limit) bounds its cost.
                return _parse(text[: mark.index], "reference", fallback, unmask)
            return _parse(text, "reference", fallback, unmask)
        return ParseResult(None, [syntax_problem(text, err)], parser)
    return ParseResult(composer.root, composer.problems, parser, composer.anchored)


PROMOTED_FROM = 100_000
"""How many objects an analysis leaves for its survivors to go to the collector's oldest
generation at once (see `collector_paused`)."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """The garbage collector off meanwhile: composing and checking a document make no cycles, and
    the collector, scanning a million new nodes again and again, would make both superlinear.

    What a large analysis leaves is its result, long-lived: it goes to the oldest generation at
    once, or the next young collection would scan it all (a 10 MB rubric's 1.5 million objects),
    and an older one again later. `freeze` then `unfreeze` moves every object there without
    looking at them; cycles among them wait for the next full collection (the figures:
    `docs/performance.md`)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            if gc.get_count()[0] >= PROMOTED_FROM:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def read_fast(text: str, defer_odd_keys: bool) -> ParseResult | Exception | None:
    """`text` composed from libyaml's events alone (the tree `parse` gives on the fast path, whether
    `blockyaml` or the composer read it there): the error libyaml raised when it rejects it, None
    when the fast path alone cannot decide (a key the reference parser decides, too deep a
    nesting, U+2028 and the like)."""
    if any(char in text for char in _NOT_BREAKS):
        return None
    composer = _Composer(text, defer_odd_keys=defer_odd_keys)
    try:
        composer.run(_events(text, "fast"))
    except (_TooDeep, _ReferenceDecides):
        return None
    except Exception as err:  # every parser error is reported as the one syntax problem
        return None if "maximum nesting depth" in str(err) else err
    return ParseResult(composer.root, composer.problems, "fast", composer.anchored)


def libyaml_failure(text: str) -> Exception | None:
    """libyaml's report of a document it rejects, found in C alone: a broken 10 MB document is
    reported in a fifth of a second instead of after composing everything up to its error. Too
    deep a document is left to the composer, whose own limit (and message) comes first."""
    try:
        from yaml._yaml import CParser
    except ImportError:  # PyYAML without libyaml: the composer finds the error itself
        return None
    try:
        CParser(text).raw_parse()
    except Exception as err:  # every parser error is the one syntax problem
        return None if "maximum nesting depth" in str(err) else err
    return None


def load_event_reader() -> None:
    """Import PyYAML, which reads an edited item alone, before the first edit: its import (~15 ms,
    its patterns compiled) was the first keystroke's. Not before the first diagnostics, which
    read a document whole without it (`blockyaml`) unless it is not plain block YAML."""
    import yaml  # noqa: F401


def _events(text: str, parser: Parser) -> Iterator[Any]:
    if parser == "fast":
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.parse(text, Loader=loader)
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).parse(text)  # type: ignore[no-any-return]


def syntax_problem(text: str | Sequence[str], err: Exception) -> Problem:
    """The problem a parser error is reported as; `text` may be given as its lines."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    line, column = (mark.line, mark.column) if mark is not None else (0, 0)
    lines = split_lines(text) if isinstance(text, str) else text
    # Both parsers stop at the end of the stream in their own way: report the last line written.
    if line >= len(lines) or column >= len(lines[line].rstrip()):
        line = min(line, len(lines) - 1)
        while line > 0 and not lines[line].strip():
            line -= 1
        content = lines[line].rstrip()
        column = len(content) - len(content.lstrip())
    end = max(len(lines[line].rstrip()), column + 1)
    problem = str(getattr(err, "problem", None) or str(err).splitlines()[0])
    context = getattr(err, "context", None)
    advice = _advice(problem, context, getattr(err, "context_mark", None), lines, line)
    if advice is None:
        detail = f"{problem} ({context})" if context else problem
    else:
        detail, opened = advice
        if opened is not None:  # the fix belongs where the bracket, quote or key begins
            line, column, end = opened.line, opened.column, opened.column + 1
    return Problem("yaml-syntax", f"YAML syntax error: {detail}", Span.of(line, column, line, end))


_PLAIN_PAIR = re.compile(r"^\s*(?:-\s+)?(?P<key>[^\s:#'\"][^:#]*?):\s+(?P<value>[^'\"#].*)$")
"""`key: value: more` as written, where the value should have been quoted."""


def _advice(
    problem: str, context: str | None, opened: Any, lines: Sequence[str], stopped: int
) -> tuple[str, Any] | None:
    """What the parser's words mean for the common mistakes, and how to fix them, with the mark
    the range should start at instead (None: where it stopped, on line `stopped`); None for the
    rest, whose parser text is given as it is."""
    at_opened = lines[opened.line][opened.column :] if opened is not None and opened.line < len(lines) else ""
    where = f"line {opened.line + 1}, column {opened.column + 1}" if opened is not None else ""
    if context in ("while parsing a flow sequence", "while parsing a flow mapping") and opened is not None:
        bracket, closer, what = ("[", "]", "list") if "sequence" in context else ("{", "}", "mapping")
        return f"this `{bracket}` is never closed: add `{closer}` where the {what} ends", opened
    if context == "while scanning a quoted scalar" and opened is not None:
        quote = at_opened[:1] or '"'
        return f"this `{quote}` is never closed: add the closing `{quote}`", opened
    if context == "while scanning a simple key" and opened is not None:
        key = at_opened.strip()
        return f"`{key}` is not followed by `:`: write `{key}: value`, or remove the line", opened
    if problem.startswith("found character '\\t'"):
        return "a tab character: YAML indents with spaces only; replace it with spaces", None
    if problem == "mapping values are not allowed here":
        pair = _PLAIN_PAIR.match(lines[stopped])
        quoted = f' (`{pair["key"]}: "{pair["value"].rstrip()}"`)' if pair else ""
        return f"`: ` inside a value that is not quoted: quote the whole value{quoted}", None
    if problem == "expected <block end>, but found '<scalar>'":
        return (
            "text where a key or a list item was expected: an earlier line may hold a quote that is "
            "never closed, or this line is indented differently from its block",
            None,
        )
    if problem.startswith("expected <block end>, but found"):
        block = f" (the block from {where})" if where else ""
        return (
            f"this line is indented differently from the lines of its block{block}: give it the same "
            "indentation as its siblings",
            None,
        )
    return None


def _span(event: Any) -> Span:
    start, end = event.start_mark, event.end_mark
    return Span(Position(start.line, start.column), Position(end.line, end.column))


class _ReferenceDecides(Exception):
    """libyaml read a key that is a collection or an alias, where the parsers disagree on what is
    YAML; such a key is an error in a rubric anyway, so the reference parser decides."""


class _TooDeep(Exception):
    def __init__(self, problem: Problem) -> None:
        self.problem = problem


class _Frame:
    """A mapping or sequence being composed, with what its next child is."""

    __slots__ = ("anchor", "key", "node", "weight")

    def __init__(self, node: Node, anchor: str | None) -> None:
        self.node = node
        self.anchor = anchor
        self.key: Node | None = None  # a mapping's key waiting for its value
        self.weight = 1  # nodes in this subtree once aliases are expanded


class _Composer:
    def __init__(self, text: str, defer_odd_keys: bool = False, unmask: dict[int, str] | None = None) -> None:
        self.defer_odd_keys = defer_odd_keys
        self.unmask = unmask
        self.text = text
        self.root: Node | None = None
        self.problems: list[Problem] = []
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Node, int]] = {}
        self.open_anchors: set[str] = set()
        self.alias_expansion = 0
        self.documents = 0
        self.anchored = False
        self.scalars = Scalars()

    def report(self, message: str, span: Span, code: str = "yaml-syntax") -> None:
        self.problems.append(Problem(code, message, span))

    @cached_property
    def end_of_text(self) -> tuple[int, int]:
        """The line and column the text ends at (lines end at `\n`, `\r\n` or `\r`)."""
        text = self.text
        breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
        last = max(text.rfind("\n"), text.rfind("\r")) + 1
        return breaks, len(text) - last

    def run(self, events: Iterator[Any]) -> None:
        handlers: dict[str, Callable[[Any], None]] = {
            "ScalarEvent": self.scalar,
            "MappingStartEvent": self.start_mapping,
            "SequenceStartEvent": self.start_sequence,
            "MappingEndEvent": self.end_collection,
            "SequenceEndEvent": self.end_collection,
            "AliasEvent": self.alias,
        }
        by_type: dict[type, Callable[[Any], None] | None] = {}
        for event in events:
            kind = type(event)
            if kind not in by_type:
                by_type[kind] = handlers.get(kind.__name__)
            handler = by_type[kind]
            if handler is not None:
                handler(event)
            elif kind.__name__ == "DocumentStartEvent":
                self.documents += 1
                if self.documents > 1:
                    line = event.start_mark.line
                    self.report(
                        f"a rubric file holds one YAML document, but a second one starts at line "
                        f"{line + 1}; move it to a file of its own",
                        _span(event) if event.explicit else Span.of(line, 0, line, 3),
                    )
                    return

    def scalar(self, event: Any) -> None:
        text: str = event.value if self.unmask is None else event.value.translate(self.unmask)
        style = event.style or ""
        tag = event.tag
        frame = self.stack[-1] if self.stack else None
        value: Any
        if frame is not None and frame.key is None and frame.node.entries is not None:
            value = self.scalars.string(text)  # a field name, whatever its scalar type
            if tag not in (None, "!", _CORE + "str"):
                self.unsupported_tag(event)
        elif tag is not None and tag != "!":
            value = self.tagged(tag, text, event)
        elif style or not event.implicit[0]:
            value = self.scalars.string(text)
        else:
            value = self.scalars.plain(text)
        self.attach(Node.between(value, event.start_mark, event.end_mark, style), 1, event.anchor)

    def tagged(self, tag: str, text: str, event: Any) -> Any:
        if tag == _CORE + "str":
            return text
        if tag in (_CORE + "int", _CORE + "float", _CORE + "bool", _CORE + "null"):
            value = resolve_plain(text)
            wanted = {"int": int, "float": float, "bool": bool, "null": type(None)}[tag[len(_CORE) :]]
            if tag == _CORE + "float" and isinstance(value, int) and not isinstance(value, bool):
                return float(value)
            if type(value) is wanted:
                return value
            self.report(f"`{text}` is not a valid {tag[len(_CORE) :]}; it is read as a string", _span(event))
            return text
        self.unsupported_tag(event)
        return resolve_plain(text) if not event.style else text

    def unsupported_tag(self, event: Any) -> None:
        """Report a tag where it is written; it is never constructed, only left out."""
        start = event.start_mark
        written = re.match(r"!\S*", self.text[start.index :])
        width = len(written.group()) if written else 1
        self.report(
            f"the tag `{written.group() if written else event.tag}` is not supported: rubrics are "
            "plain YAML, so the value is read without it; remove the tag",
            Span.of(start.line, start.column, start.line, start.column + width),
        )

    def start_mapping(self, event: Any) -> None:
        if (
            self.defer_odd_keys
            and event.flow_style
            and self.text[event.start_mark.index : event.start_mark.index + 1] != "{"
        ):
            raise _ReferenceDecides  # a pair in a flow list (`[a: b]`): ruamel.yaml reads some differently
        node = self.start_collection(event, {})
        if node is not None:
            node.entries = {}

    def start_sequence(self, event: Any) -> None:
        node = self.start_collection(event, [])
        if node is not None:
            node.items = []

    def start_collection(self, event: Any, value: dict[str, Any] | list[Any]) -> Node | None:
        if event.tag not in (None, "!", _CORE + "map", _CORE + "seq"):
            self.unsupported_tag(event)
        if len(self.stack) >= MAX_DEPTH:
            raise _TooDeep(
                Problem(
                    "yaml-syntax",
                    f"values are nested more than {MAX_DEPTH} levels deep; the file is not read "
                    "past this point: flatten the value",
                    _span(event),
                )
            )
        node = Node.between(value, event.start_mark, event.end_mark, "")
        if event.anchor is not None:
            self.open_anchors.add(event.anchor)
        self.stack.append(_Frame(node, event.anchor))
        return node

    def end_collection(self, event: Any) -> None:
        frame = self.stack.pop()
        node = frame.node
        end = event.end_mark
        if end.index >= len(self.text) and not self.text.endswith(("\n", "\r")):
            # A collection that runs to the end of a text without a final line break: libyaml ends
            # it on a line past the text, ruamel.yaml at the text's end; the text's end it is.
            node.end_line, node.end_column = self.end_of_text
            node.end_index = len(self.text)
        else:
            node.end_line, node.end_column, node.end_index = end.line, end.column, end.index
        if frame.key is not None:  # a key without a value cannot happen in a valid stream
            self.report("a mapping key has no value", frame.key.span)
        if frame.anchor is not None:
            self.open_anchors.discard(frame.anchor)
        self.attach(node, frame.weight, frame.anchor)

    def alias(self, event: Any) -> None:
        self.anchored = True
        frame = self.stack[-1] if self.stack else None
        if self.defer_odd_keys and frame is not None and frame.node.entries is not None and frame.key is None:
            raise _ReferenceDecides
        name = event.anchor
        span = _span(event)
        null = Node.between(None, event.start_mark, event.end_mark, "")
        if name in self.open_anchors:
            self.report(
                f"the alias `*{name}` refers to a value that contains it; recursive values are not allowed",
                span,
            )
            self.attach(null, 1, None)
            return
        if name not in self.anchors:
            self.report(f"the alias `*{name}` names no anchor; define `&{name}` before using it", span)
            self.attach(null, 1, None)
            return
        target, weight = self.anchors[name]
        if self.alias_expansion + weight > MAX_ALIAS_EXPANSION:
            if self.alias_expansion <= MAX_ALIAS_EXPANSION:
                self.report(
                    f"aliases expand this document by more than {MAX_ALIAS_EXPANSION:,} values (an "
                    f"alias bomb?); `*{name}` and the aliases after it are left out",
                    span,
                )
                self.alias_expansion = MAX_ALIAS_EXPANSION + 1
            self.attach(null, 1, None)
            return
        self.alias_expansion += weight
        # The alias shares the anchored value but is reported where the alias is written.
        shared = Node.between(target.value, event.start_mark, event.end_mark, target.style)
        shared.entries, shared.items = target.entries, target.items
        self.attach(shared, weight, None)

    def attach(self, node: Node, weight: int, anchor: str | None) -> None:
        if anchor is not None:
            self.anchors[anchor] = (node, weight)
            self.anchored = True
        if not self.stack:
            self.root = node
            return
        frame = self.stack[-1]
        frame.weight += weight
        parent = frame.node
        if parent.items is not None:
            parent.items.append(node)
            parent.value.append(node.value)
            return
        assert parent.entries is not None
        key = frame.key
        if key is None:
            if self.defer_odd_keys and (node.entries is not None or node.items is not None):
                raise _ReferenceDecides
            frame.key = node
            return
        frame.key = None
        name = key.value
        if not isinstance(name, str):  # a mapping, a list, or an alias standing for one
            self.report("a key must be a plain value, not a mapping, a list or an alias", key.span)
            return
        if name == "":
            # An empty key has no text, and the parsers place it differently: point at its value.
            where = node if node.start_index != node.end_index else parent
            self.report(
                "a key must not be empty: name the field",
                Span.of(where.line, where.column, where.line, where.column + 1),
            )
            return
        previous = parent.entries.get(name)
        if previous is not None:
            self.report(
                f"the key `{name}` is repeated; its first value, at line {previous.key.span.start.line + 1}, "
                "is the one read: remove one of them",
                key.span,
            )
            return
        if node.start_index == node.end_index and node.entries is None and node.items is None:
            # An empty value has no text, and the parsers place it differently: its key stands in.
            node.line, node.column, node.start_index = key.line, key.column, key.start_index
            node.end_line, node.end_column, node.end_index = key.end_line, key.end_column, key.end_index
        parent.entries[name] = Entry(key, node)
        parent.value[name] = node.value
