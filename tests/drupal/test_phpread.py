"""The static PHP reader: every value it reads equals what PHP itself prints with `json_encode`.

The expected values are never written by hand: each table entry is evaluated by `php` (Debian's
php-cli) and by the reader, and the two must agree. Unreadable code is reported with its line.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ai_eval_lsp.drupal.phpread import ClassReading, PhpSources, as_schema

PHP = shutil.which("php")
needs_php = pytest.mark.skipif(PHP is None, reason="needs php-cli (scripts/setup installs it)")

# Literal shapes: each is evaluated by `php -r 'echo json_encode(EXPR);'` and by the reader.
LITERALS = [
    "[]",
    "array()",
    "[1, 2, 3]",
    "[1, 2, 3,]",
    "array('x' => 1,)",
    "['a' => 1, 'b' => [true, false, null]]",
    "array(1, 'two', array('three' => 3, 'four' => array()))",
    "['0' => 'a', '1' => 'b']",
    "['1' => 'a', '2' => 'b']",
    "['01' => 'a', '-0' => 'b', '-5' => 'c', '1.5' => 'd', ' 1' => 'e']",
    "['9223372036854775807' => 'max', '9223372036854775808' => 'beyond']",
    "[5 => 'a', 'b', 'c']",
    "[3 => 'a', 1 => 'b', 'c']",
    "['a', 'b', 1 => 'x']",
    "['k' => 1, 'j' => 2, 'k' => 3]",
    "[-5 => 'a', 'b']",
    "['x' => 1, -3 => 'a', -10 => 'b', 'c']",
    "[true => 'a', false => 'b', null => 'c']",
    "['a' => 'x', 0 => 'y', 'z']",
    "[0 => 'a', 2 => 'c', 1 => 'b']",
    r"'it\'s'",
    r"'back\\slash and \n stays'",
    r"'a \q b \\\\ c'",
    r'"tab\tnew\nline\rcr\vvt\eesc\fff"',
    r'"quote \" dollar \$ backslash \\ end"',
    r'"\u{1F600} \u{e9} \u{0041}"',
    r'"\x41\x4a\101\7\60\x7"',
    r'"\400 wraps"',
    r'"\q \{ \u \x \8 stay"',
    '"lone $ and {braces}"',
    "'naïve ✓ 日本'",
    "<<<EOT\n    indented\n      more\n    EOT",
    '<<<EOT\nquote \\" and \\$x and \\t tab\nEOT',
    '<<<"EOT"\n  quoted label\n  EOT',
    "<<<'EOT'\n  raw \\n $x {$y}\n    kept\n  EOT",
    "0",
    "-0",
    "42",
    "-42",
    "1_000_000",
    "0x1F",
    "0X1f",
    "0b101",
    "0B11",
    "0o17",
    "0O17",
    "017",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "0xFFFFFFFFFFFFFFFF",
    "1.5",
    "-0.25",
    ".5",
    "1.",
    "1e3",
    "1E-3",
    "1_000.5",
    "-0.0",
    "1e100",
    "TRUE",
    "tRuE",
    "False",
    "NULL",
    "nUlL",
    "-(-1)",
    "- -1",
    "+5",
    "-'5'",
    "-'1.5'",
    "+' 7 '",
    "-'1e3'",
    "+true",
    "-false",
    "-null",
    "'a' . 'b'",
    "'n' . 1 . 2.5",
    "'x' . true . false . null . 'y'",
    "1 . 2",
    "'f' . 0.1 . '|' . 1e25 . '|' . 1.5e-7 . '|' . -0.0 . '|' . 1.0",
    "'f' . 1e14 . '|' . 1e15 . '|' . 123456789012345678.0 . '|' . 0.30000000000000004",
    "'f' . -1.5e-5 . '|' . 0.0001 . '|' . 100000000000000.0 . '|' . 99999999999999.0",
    "'big' . 9223372036854775807 . '|' . 9223372036854775808",
    "('a' . 'b') . ('c')",
    "((1))",
    "[('k' . 1) => ('v' . 2)]",
    "(object) []",
    "(object) ['a' => 1]",
    "(object) [1, 2]",
    "['properties' => (object) [], 'list' => (object) ['x']]",
    "[[[['deep']]]]",
    "['a' => ['b' => ['c' => [1, [2, [3, []]]]]]]",
    '"a" . "\\n" . \'b\'',
    "['$ref' => '#/$defs/check_base', \"#/\\$defs\" => 1]",
]


def php_json(code: str) -> list[Any]:
    """What PHP prints: one `json_encode` result per line of output (None where it fails)."""
    assert PHP is not None
    run = subprocess.run(
        [PHP, "-n", "-d", "display_errors=stderr", "-d", "error_reporting=E_ALL", "-r", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) if line else None for line in run.stdout.split("\n")[:-1]]


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def sources_for(root: Path) -> PhpSources:
    """PSR-4 over a temporary codebase: `Drupal\\probe\\` -> `probe/src`, `Drupal\\other\\` -> `other/src`."""
    autoload = {"Drupal\\probe\\": root / "probe/src", "Drupal\\other\\": root / "other/src"}

    def read(path: Path) -> bytes | None:
        return path.read_bytes() if path.is_file() else None

    return PhpSources(autoload, read, lambda path: path.relative_to(root).as_posix())


def probe_class(
    body: str, header: str = "", implements: str = "implements CheckSchemaProviderInterface"
) -> str:
    return (
        "<?php\n\nnamespace Drupal\\probe;\n\nuse Drupal\\ai_eval\\CheckSchemaProviderInterface;\n"
        f"{header}\nclass Probe {implements} {{\n{textwrap.indent(textwrap.dedent(body).strip(), '  ')}\n}}\n"
    )


def read_probe(
    tmp_path: Path, body: str, header: str = "", extra: dict[str, str] | None = None
) -> ClassReading:
    write(tmp_path, {"probe/src/Probe.php": probe_class(body, header), **(extra or {})})
    return sources_for(tmp_path).read_class("Drupal\\probe\\Probe")


# --- literal shapes against PHP ---------------------------------------------------------------


@pytest.fixture(scope="module")
def literal_readings(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], dict[str, Any]]:
    """PHP's json_encode of every literal, and the reader's definitions of the same literals."""
    expected = php_json("".join(f'echo json_encode({literal}), "\\n";\n' for literal in LITERALS))
    root = tmp_path_factory.mktemp("literals")
    kinds = "".join(f"    'k{index}' => {literal},\n" for index, literal in enumerate(LITERALS))
    body = f"public function checkSchemaDefinitions(): array {{\n  return [\n{kinds}  ];\n}}"
    reading = read_probe(root, body)
    assert reading.problems == ()
    return expected, {definition.kind: definition for definition in reading.definitions}


@needs_php
@pytest.mark.parametrize("index", range(len(LITERALS)), ids=LITERALS)
def test_literal_reads_as_php_prints_it(
    index: int, literal_readings: tuple[list[Any], dict[str, Any]]
) -> None:
    expected, definitions = literal_readings
    definition = definitions[f"k{index}"]
    assert definition.unreadable is None
    # a kind's value is a schema: an empty PHP array where a schema is due reads as {}
    assert definition.schema == as_schema(expected[index])
    assert json.dumps(definition.schema, sort_keys=True) == json.dumps(
        as_schema(expected[index]), sort_keys=True
    )


@needs_php
def test_the_raw_value_keeps_lists_and_empty_arrays_as_php_prints_them(tmp_path: Path) -> None:
    """`as_schema` changes only empty arrays in schema positions; lists, `enum: []` and `default: []` stay."""
    literal = (
        "['type' => 'object', 'properties' => [], 'required' => [], 'enum' => [], 'default' => [],"
        " 'items' => [], 'allOf' => [[], ['not' => []]], '$defs' => ['a' => []], 'dependentRequired' => []]"
    )
    (expected,) = php_json(f'echo json_encode({literal}), "\\n";')
    assert expected["properties"] == [] and expected["items"] == []
    reading = read_probe(
        tmp_path, f"public function checkSchemaDefinitions(): array {{ return ['k' => {literal}]; }}"
    )
    assert reading.definitions[0].schema == {
        **expected,
        "properties": {},
        "items": {},
        "allOf": [{}, {"not": {}}],
        "$defs": {"a": {}},
        "dependentRequired": {},
    }


# --- class constants against PHP --------------------------------------------------------------

CONSTANT_FILES = {
    "other/src/Shapes.php": r"""
        <?php
        namespace Drupal\other;

        final class Shapes {
          const STRING = ['type' => 'string'];
          const LABEL = 'shape';
          const NESTED = [self::LABEL => self::STRING, 'list' => [self::LABEL, Grades::TOP]];
        }
        """,
    "other/src/Grades.php": r"""
        <?php
        namespace Drupal\other;

        interface Grades {
          const TOP = 'college';
          const ALL = ['elementary', 'middle', 'high', self::TOP];
        }
        """,
    "probe/src/Base.php": r"""
        <?php
        namespace Drupal\probe;

        use Drupal\other\Grades;

        abstract class Base implements Grades {
          const KIND = 'base_kind';
          protected const MAX = 20;
          const DESCRIPTION = 'at most ' . self::MAX . ' words';
          const PREFIX = 'Drupal';
        }
        """,
    "probe/src/Scale.php": r"""
        <?php
        namespace Drupal\probe;

        interface Scale extends \Drupal\other\Grades {
          const STEP = 0.5;
          const STEPS = [self::STEP, self::STEP * 2];
        }
        """,
}

CONSTANT_EXPRESSIONS = [
    "self::OWN",
    "static::OWN",
    "Probe::OWN",
    "\\Drupal\\probe\\Probe::OWN",
    "namespace\\Probe::OWN",
    "self::DERIVED",
    "self::KIND",
    "parent::KIND",
    "self::MAX",
    "self::DESCRIPTION",
    "Base::DESCRIPTION",
    "self::TOP",
    "self::ALL",
    "Grades::ALL",
    "G::TOP",
    "Shapes::NESTED",
    "\\Drupal\\other\\Shapes::STRING",
    "Scale::STEP",
    "self::STEP",
    "[self::LABEL_KEY => self::OWN, Shapes::LABEL => -self::MAX]",
    "Probe::class",
    "self::class",
    "static::class",
    "parent::class",
    "Shapes::class",
    "G::class",
    "\\Some\\Where\\Else::class",
    "Unimported::class",
    "namespace\\Sub\\Thing::class",
]

PROBE_CONSTANTS = """
    const OWN = ['type' => 'integer', 'minimum' => 0];
    const DERIVED = [self::OWN, 'kind' => parent::KIND . '_derived'];
    const LABEL_KEY = 'label';
"""
PROBE_HEADER = "use Drupal\\other\\Grades;\nuse Drupal\\other\\Grades as G;\nuse Drupal\\other\\Shapes;\n"


@pytest.fixture(scope="module")
def constant_readings(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], dict[str, Any]]:
    root = tmp_path_factory.mktemp("constants")
    kinds = "".join(
        f"    'k{index}' => {expression},\n" for index, expression in enumerate(CONSTANT_EXPRESSIONS)
    )
    body = (
        f"{PROBE_CONSTANTS}\npublic function checkSchemaDefinitions(): array {{\n  return [\n{kinds}  ];\n}}"
    )
    write(root, CONSTANT_FILES)
    write(
        root,
        {
            "probe/src/Probe.php": probe_class(
                body, PROBE_HEADER, "extends Base implements Scale, CheckSchemaProviderInterface"
            )
        },
    )
    requires = "".join(
        f"require '{root / name}';\n" for name in ["other/src/Grades.php", "other/src/Shapes.php"]
    )
    requires += "".join(
        f"require '{root / name}';\n" for name in ["probe/src/Base.php", "probe/src/Scale.php"]
    )
    interface = "namespace Drupal\\ai_eval { interface CheckSchemaProviderInterface {} }\n"
    code = (
        f"{interface}namespace {{ {requires} require '{root / 'probe/src/Probe.php'}';\n"
        "foreach ((new \\Drupal\\probe\\Probe())->checkSchemaDefinitions() as $value) {"
        ' echo json_encode($value), "\\n"; } }'
    )
    reading = sources_for(root).read_class("Drupal\\probe\\Probe")
    assert reading.problems == ()
    return php_json(code), {definition.kind: definition for definition in reading.definitions}


@needs_php
@pytest.mark.parametrize("index", range(len(CONSTANT_EXPRESSIONS)), ids=CONSTANT_EXPRESSIONS)
def test_class_constants_read_as_php_evaluates_them(
    index: int, constant_readings: tuple[list[Any], dict[str, Any]]
) -> None:
    expected, definitions = constant_readings
    definition = definitions[f"k{index}"]
    assert definition.unreadable is None
    assert definition.schema == as_schema(expected[index])


def test_scale_steps_use_arithmetic_and_are_unreadable_only_where_used(tmp_path: Path) -> None:
    """`self::STEP * 2` is not read; a kind that does not use it is unaffected."""
    write(tmp_path, CONSTANT_FILES)
    body = "public function checkSchemaDefinitions(): array { return ['ok' => self::STEP, 'steps' => self::STEPS]; }"
    write(
        tmp_path,
        {
            "probe/src/Probe.php": probe_class(
                body, "", "extends Base implements Scale, CheckSchemaProviderInterface"
            )
        },
    )
    ok, steps = sources_for(tmp_path).read_class("Drupal\\probe\\Probe").definitions
    assert (ok.kind, ok.schema, ok.unreadable) == ("ok", 0.5, None)
    assert steps.kind == "steps" and steps.schema is None
    assert steps.unreadable == "the operator `*` `self::STEP * 2` at probe/src/Scale.php:6"
    assert steps.unreadable_at is not None and steps.unreadable_at.line == 6


# --- unreadable code, with its line -----------------------------------------------------------


def test_a_method_call_makes_only_its_kind_unreadable(tmp_path: Path) -> None:
    reading = read_probe(
        tmp_path,
        """
        public function checkSchemaDefinitions(): array {
          return [
            'fine' => ['type' => 'object'],
            'built' => $this->defs(),
            'after' => ['allOf' => [['$ref' => '#/$defs/check_base']]],
          ];
        }
        """,
    )
    assert reading.problems == ()
    fine, built, after = reading.definitions
    assert (fine.kind, fine.line, fine.schema) == ("fine", 10, {"type": "object"})
    assert (built.kind, built.line, built.schema) == ("built", 11, None)
    assert built.unreadable == "a method call `$this->defs()` at line 11"
    assert after.schema == {"allOf": [{"$ref": "#/$defs/check_base"}]}


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("['type' => t('x')]", "a function call `t('x')` at line 13"),
        ("['type' => $type]", "a variable `$type` at line 13"),
        ("['default' => fn() => 1]", "a closure `fn() => 1` at line 13"),
        ("['anyOf' => [...self::PARTS]]", "a `...` spread `...self::PARTS` at line 13"),
        ("['x' => new \\ArrayObject()]", "a `new` expression `new \\ArrayObject()` at line 13"),
        ("['title' => \"Hello {$name}\"]", 'an interpolated string `"Hello {$name}"` at line 13'),
        ("['title' => \"Hello $name\"]", 'an interpolated string `"Hello $name"` at line 13'),
        ("['maximum' => 1 + 2]", "the operator `+` `1 + 2` at line 13"),
        ("['maximum' => PHP_INT_MAX]", "a global constant `PHP_INT_MAX` at line 13"),
        ("['maximum' => \\PHP_INT_MAX]", "a global constant `\\PHP_INT_MAX` at line 13"),
        ("['x' => Foo::make()]", "a static method call `Foo::make()` at line 13"),
        ("['x' => self::$cache]", "a static property `self::$cache` at line 13"),
        ("['x' => TRUE ? 1 : 2]", "a conditional `TRUE ? 1 : 2` at line 13"),
        ("['x' => !TRUE]", "the operator `!` `!TRUE` at line 13"),
        ("['x' => -'abc']", "`-` on a value that is not a number `-'abc'` at line 13"),
        ("['x' => 'a' . []]", "an array used as a string `[]` at line 13"),
        ("['x' => (string) 1]", "a cast `(string) 1` at line 13"),
        (
            "['x' => (object) 'a']",
            "an `(object)` cast of a value that is not an array `(object) 'a'` at line 13",
        ),
        ("['x' => [[] => 1]]", "an array used as an array key `[]` at line 13"),
        ("['x' => \"\\xff\"]", "a string that is not valid UTF-8 at line 13"),
        ("['x' => 1e999]", "INF or NAN at line 13: JSON cannot hold it"),
        ("['x' => \"\\u{110000}\"]", 'an invalid `\\u{...}` escape `"\\u{110000}"` at line 13'),
        ("['x' => <<<EOT\n  hi $name\n  EOT]", "an interpolated string `<<<EOT` at line 13"),
        (
            "['x' => self::NOPE]",
            "the constant `Drupal\\probe\\Probe::NOPE` at line 13: `Drupal\\probe\\Probe` and its ancestors in the codebase"
            " do not declare it (not in the codebase: `Drupal\\ai_eval\\CheckSchemaProviderInterface`)",
        ),
        (
            "['x' => self::LOOP_A]",
            "the constant `Drupal\\probe\\Probe::LOOP_A` at line 10: its value refers to itself",
        ),
        (
            "['x' => Missing::X]",
            "the constant `Drupal\\probe\\Missing::X` at line 13: `Drupal\\probe\\Missing` is not in the codebase (no file probe/src/Missing.php)",
        ),
        (
            "['x' => \\Vendor\\Lib::X]",
            "the constant `Vendor\\Lib::X` at line 13: `Vendor\\Lib` is not in the codebase (no installed module's namespace holds it)",
        ),
        ("['x' => parent::X]", "`parent::` at line 13: `Drupal\\probe\\Probe` has no parent"),
    ],
)
def test_unreadable_code_is_named_with_its_line(tmp_path: Path, value: str, reason: str) -> None:
    reading = read_probe(
        tmp_path,
        f"""
        const PARTS = [];
        const LOOP_A = self::LOOP_B;
        const LOOP_B = self::LOOP_A;
        public function checkSchemaDefinitions(): array {{
          return [
            'kind' => {value},
            'next' => ['type' => 'string'],
          ];
        }}
        """,
    )
    kind, following = reading.definitions
    assert (kind.kind, kind.schema, kind.unreadable) == ("kind", None, reason)
    assert (following.kind, following.schema) == ("next", {"type": "string"})


@needs_php
def test_what_the_reader_refuses_php_refuses_to_encode_too() -> None:
    """Invalid UTF-8 and INF: json_encode fails (prints nothing), the reader reports them."""
    assert php_json('echo json_encode("\\xff"), "\\n"; echo json_encode(1e999), "\\n";') == [None, None]


@pytest.mark.parametrize(
    ("body", "line", "reason"),
    [
        (
            "public function checkSchemaDefinitions(): array { $defs = []; return $defs; }",
            9,
            "a variable `$defs` at line 9",
        ),
        (
            "public function checkSchemaDefinitions(): array { return [$this->kind() => ['type' => 'object']]; }",
            9,
            "a method call `$this->kind()` at line 9",
        ),
        (
            "public function checkSchemaDefinitions(): array { return [...self::DEFS]; }",
            9,
            "a `...` spread `...self::DEFS` at line 9",
        ),
        (
            "public function checkSchemaDefinitions(): array { return 'word_count'; }",
            9,
            "a string returned at line 9: `checkSchemaDefinitions()` returns an array of kinds",
        ),
        (
            "public function checkSchemaDefinitions(): array { }",
            9,
            "`checkSchemaDefinitions()` has no `return` at line 9",
        ),
        (
            "public function checkSchemaDefinitions(): array {\n  if (TRUE) {\n    return [];\n  }\n  return ['a' => []];\n}",
            9,
            "`checkSchemaDefinitions()` has 2 `return` statements (lines 11, 13), not one at line 9",
        ),
        (
            "public function checkSchemaDefinitions(): array {\n  if (TRUE) {\n    return ['a' => []];\n  }\n}",
            11,
            "a `return` inside a condition or loop at line 11",
        ),
        (
            "public function checkSchemaDefinitions(): array {\n  return;\n}",
            10,
            "a `return` without a value at line 10",
        ),
        (
            "public function checkSchemaDefinitions(): array { return [,]; }",
            9,
            "an empty array element at line 9",
        ),
    ],
)
def test_a_whole_return_that_cannot_be_read_names_no_kind(
    tmp_path: Path, body: str, line: int, reason: str
) -> None:
    reading = read_probe(tmp_path, "const DEFS = [];\n" + body)
    (definition,) = reading.definitions
    assert (definition.kind, definition.line, definition.schema, definition.unreadable) == (
        None,
        line,
        None,
        reason,
    )


def test_returns_of_closures_inside_the_method_do_not_count(tmp_path: Path) -> None:
    reading = read_probe(
        tmp_path,
        """
        public function checkSchemaDefinitions(): array {
          $unused = function () { return 1; };
          $also = new class { public function f() { return 2; } };
          return ['a' => ['type' => 'string']];
        }
        """,
    )
    assert [(d.kind, d.schema) for d in reading.definitions] == [("a", {"type": "string"})]


def test_the_method_name_is_case_insensitive_and_keys_are_kinds(tmp_path: Path) -> None:
    reading = read_probe(
        tmp_path, "public function CHECKSCHEMADEFINITIONS(): array { return [['type' => 'x'], 7 => []]; }"
    )
    assert [(d.kind, d.schema) for d in reading.definitions] == [("0", {"type": "x"}), ("7", {})]


def test_an_array_of_kinds_from_a_constant(tmp_path: Path) -> None:
    reading = read_probe(
        tmp_path,
        """
        const DEFS = ['a' => ['type' => 'object'], 'b' => []];
        public function checkSchemaDefinitions(): array {
          return self::DEFS;
        }
        """,
    )
    assert [(d.kind, d.line, d.schema) for d in reading.definitions] == [
        ("a", 10, {"type": "object"}),
        ("b", 10, {}),
    ]


# --- classes, inheritance and problems --------------------------------------------------------


def test_a_class_without_the_method_contributes_nothing(tmp_path: Path) -> None:
    reading = read_probe(tmp_path, "public function applies(array $check): bool { return TRUE; }")
    assert (reading.definitions, reading.problems, reading.line) == ((), (), 7)


def test_the_method_without_the_interface_is_ignored_as_the_site_ignores_it(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "probe/src/Probe.php": """
                <?php
                namespace Drupal\\probe;

                class Probe {
                  public function checkSchemaDefinitions(): array { return ['a' => []]; }
                }
                """
        },
    )
    reading = sources_for(tmp_path).read_class("Drupal\\probe\\Probe")
    assert reading.definitions == ()
    assert reading.problems == (
        "probe/src/Probe.php:4: `Drupal\\probe\\Probe` has `checkSchemaDefinitions()` but does not implement "
        "`Drupal\\ai_eval\\CheckSchemaProviderInterface`, so the site ignores its kinds; add "
        "`implements CheckSchemaProviderInterface`",
    )


def test_the_interface_may_come_through_a_parent_or_an_unknown_ancestor(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "probe/src/Base.php": """
                <?php
                namespace Drupal\\probe;
                use Drupal\\ai_eval\\CheckSchemaProviderInterface as Provider;
                abstract class Base implements Provider {}
                """,
            "probe/src/Probe.php": """
                <?php
                namespace Drupal\\probe;
                class Probe extends Base {
                  public function checkSchemaDefinitions(): array { return ['a' => []]; }
                }
                """,
            "probe/src/Vendored.php": """
                <?php
                namespace Drupal\\probe;
                class Vendored extends \\Vendor\\Executor {
                  public function checkSchemaDefinitions(): array { return ['b' => []]; }
                }
                """,
        },
    )
    sources = sources_for(tmp_path)
    assert [d.kind for d in sources.read_class("Drupal\\probe\\Probe").definitions] == ["a"]
    assert [d.kind for d in sources.read_class("Drupal\\probe\\Vendored").definitions] == ["b"]


def test_an_inherited_method_reads_static_from_the_executor_and_names_its_own_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "probe/src/Base.php": """
                <?php
                namespace Drupal\\probe;
                use Drupal\\ai_eval\\CheckSchemaProviderInterface;
                abstract class Base implements CheckSchemaProviderInterface {
                  const KIND = 'base';
                  public function checkSchemaDefinitions(): array {
                    return [static::KIND => ['title' => self::KIND]];
                  }
                }
                """,
            "probe/src/Probe.php": """
                <?php
                namespace Drupal\\probe;
                final class Probe extends Base {
                  const KIND = 'probe';
                }
                """,
        },
    )
    reading = sources_for(tmp_path).read_class("Drupal\\probe\\Probe")
    (definition,) = reading.definitions
    assert (definition.kind, definition.schema) == ("probe", {"title": "base"})
    assert (definition.file, definition.line) == (tmp_path / "probe/src/Base.php", 7)
    assert (reading.file, reading.line) == (tmp_path / "probe/src/Probe.php", 3)


def test_a_method_from_a_trait(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "other/src/Defines.php": """
                <?php
                namespace Drupal\\other;
                trait Defines {
                  public function checkSchemaDefinitions(): array {
                    return [self::KIND => ['type' => 'object']];
                  }
                }
                """,
            "probe/src/Probe.php": """
                <?php
                namespace Drupal\\probe;
                use Drupal\\ai_eval\\CheckSchemaProviderInterface;
                use Drupal\\other\\Defines;
                final class Probe implements CheckSchemaProviderInterface {
                  use Defines;
                  const KIND = 'traited';
                }
                """,
        },
    )
    (definition,) = sources_for(tmp_path).read_class("Drupal\\probe\\Probe").definitions
    assert (definition.kind, definition.schema) == ("traited", {"type": "object"})


def test_ancestors_in_a_cycle_end(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "probe/src/A.php": "<?php\nnamespace Drupal\\probe;\ninterface A extends B {}\n",
            "probe/src/B.php": "<?php\nnamespace Drupal\\probe;\ninterface B extends A {}\n",
        },
    )
    body = "public function checkSchemaDefinitions(): array { return ['a' => self::NONE]; }"
    write(
        tmp_path, {"probe/src/Probe.php": probe_class(body, "", "implements A, CheckSchemaProviderInterface")}
    )
    reading = sources_for(tmp_path).read_class("Drupal\\probe\\Probe")
    assert reading.definitions[0].unreadable is not None
    assert "do not declare it" in reading.definitions[0].unreadable


@pytest.mark.parametrize(
    ("class_name", "files", "problem"),
    [
        (
            "Vendor\\Thing",
            {},
            "the class `Vendor\\Thing` is not in the codebase (no installed module's namespace holds it)",
        ),
        (
            "Drupal\\probe\\Absent",
            {},
            "the class `Drupal\\probe\\Absent` has no file: probe/src/Absent.php does not exist; create it, or fix `class:`",
        ),
        (
            "Drupal\\probe\\Renamed",
            {"probe/src/Renamed.php": "<?php\nnamespace Drupal\\probe;\nclass Other {}\n"},
            "probe/src/Renamed.php does not declare the class `Drupal\\probe\\Renamed`; check its namespace and class name",
        ),
    ],
)
def test_a_class_that_cannot_be_found_is_a_problem(
    tmp_path: Path, class_name: str, files: dict[str, str], problem: str
) -> None:
    write(tmp_path, files)
    reading = sources_for(tmp_path).read_class(class_name)
    assert (reading.definitions, reading.problems, reading.line) == ((), (problem,), None)


def test_a_syntax_error_outside_the_method_is_a_problem_but_the_kinds_are_read(tmp_path: Path) -> None:
    reading = read_probe(
        tmp_path,
        """
        public function execute() {
          $x = ;
        }
        public function checkSchemaDefinitions(): array { return ['a' => ['type' => 'object']]; }
        """,
    )
    assert reading.problems == (
        "probe/src/Probe.php:9: a syntax error; fix it, PHP would not load the class",
    )
    assert [(d.kind, d.schema) for d in reading.definitions] == [("a", {"type": "object"})]


def test_nesting_too_deep_is_unreadable_not_a_crash(tmp_path: Path) -> None:
    deep = "[" * 500 + "]" * 500
    reading = read_probe(
        tmp_path, f"public function checkSchemaDefinitions(): array {{ return ['a' => {deep}]; }}"
    )
    (definition,) = reading.definitions
    assert definition.unreadable is not None and definition.unreadable.startswith(
        "nesting deeper than 200 levels"
    )


def test_bad_bytes_never_raise(tmp_path: Path) -> None:
    write(tmp_path, {"probe/src/Probe.php": ""})
    (tmp_path / "probe/src/Probe.php").write_bytes(
        b"<?php\n\xff\xfe class Probe { \x00 function checkSchemaDefinitions("
    )
    reading = sources_for(tmp_path).read_class("Drupal\\probe\\Probe")
    assert reading.definitions == () and len(reading.problems) == 1


# --- settings.php ------------------------------------------------------------------------------


def test_a_long_chain_of_constants_is_unreadable_not_a_crash(tmp_path: Path) -> None:
    chain = "".join(f"const C{index} = [self::C{index + 1}];\n" for index in range(400)) + "const C400 = 1;\n"
    reading = read_probe(
        tmp_path, chain + "public function checkSchemaDefinitions(): array { return ['a' => self::C0]; }"
    )
    (definition,) = reading.definitions
    assert definition.unreadable is not None and "nesting deeper than 200 levels" in definition.unreadable


def test_a_long_chain_of_parents_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    parents = {
        f"probe/src/P{index}.php": f"<?php\nnamespace Drupal\\probe;\nclass P{index} extends P{index + 1} {{}}\n"
        for index in range(3000)
    }
    write(tmp_path, parents)
    body = "public function checkSchemaDefinitions(): array { return ['a' => []]; }"
    write(tmp_path, {"probe/src/Probe.php": probe_class(body, "", "extends P0")})
    reading = sources_for(tmp_path).read_class("Drupal\\probe\\Probe")
    assert (reading.definitions, reading.problems) == (
        (),
        ("probe/src/Probe.php: nested too deeply to read",),
    )
