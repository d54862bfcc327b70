"""The core schemas and the splicing rules of the combined schema."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from contract import CORE_KINDS

from ai_eval_lsp.core.analysis import Rules, analyse_rubric
from ai_eval_lsp.core.lints import Claim
from ai_eval_lsp.core.schema import CORE, Contribution, Origin, combine, core_schema
from ai_eval_lsp.core.validate import SchemaValidator

PLUGIN = Origin("extras", "my-eval-extras", "1.2.0")
OTHER = Origin("more", "more-evals", "0.1.0")


def word_count(kind: str = "word_count") -> dict[str, Any]:
    return {
        "allOf": [
            {"$ref": "#/$defs/check_base"},
            {
                "type": "object",
                "required": ["kind"],
                "properties": {"kind": {"const": kind}, "min": {"type": "integer"}},
            },
        ],
        "unevaluatedProperties": False,
    }


@pytest.mark.parametrize("name", ["rubric.schema.json", "cases.schema.json"])
def test_core_schemas_are_valid_draft_2020_12(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(core_schema(name))


def properties(schema: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        for name, sub in schema.get("properties", {}).items():
            yield f"{where}.{name}", sub
        for key, value in schema.items():
            yield from properties(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from properties(value, f"{where}[{index}]")


@pytest.mark.parametrize("name", ["rubric.schema.json", "cases.schema.json"])
def test_every_property_has_a_title_and_a_description(name: str) -> None:
    found = list(properties(core_schema(name)))
    assert len(found) > 40 if name.startswith("rubric") else len(found) > 8
    for where, sub in found:
        assert sub.get("title") and sub.get("description"), where


def test_every_core_kind_is_a_branch_with_its_kind_pinned() -> None:
    schema = core_schema()
    refs = [branch["$ref"] for branch in schema["properties"]["checks"]["items"]["oneOf"]]
    kinds = [ref.rsplit("check_", 1)[1] for ref in refs]
    assert kinds == CORE_KINDS
    for kind in kinds:
        definition = schema["$defs"][f"check_{kind}"]
        assert definition["unevaluatedProperties"] is False
        assert definition["allOf"][0] == {"$ref": "#/$defs/check_base"}
        assert definition["allOf"][1]["properties"]["kind"]["const"] == kind
        assert "kind" in definition["allOf"][1]["required"]
    assert schema["unevaluatedProperties"] is False


def test_a_plugin_kind_is_spliced_and_validates() -> None:
    combined = combine(core_schema(), [Contribution(PLUGIN, {"word_count": word_count()})])
    assert combined.origins["word_count"] == PLUGIN
    assert combined.problems == []
    validator = jsonschema.Draft202012Validator(combined.schema)
    rubric = {"id": "x", "version": "1.0", "scoring": {"combine": "all_pass"}}
    assert validator.is_valid({**rubric, "checks": [{"kind": "word_count", "min": 3}]})
    assert not validator.is_valid({**rubric, "checks": [{"kind": "word_count", "mni": 3}]})


def test_core_kinds_cannot_be_redefined_and_the_first_plugin_wins() -> None:
    combined = combine(
        core_schema(),
        [
            Contribution(PLUGIN, {"regex": word_count("regex"), "word_count": word_count()}),
            Contribution(OTHER, {"word_count": word_count()}),
        ],
    )
    assert combined.origins["regex"] == CORE
    assert combined.definition("regex") == core_schema()["$defs"]["check_regex"]
    assert combined.origins["word_count"] == PLUGIN
    messages = [str(problem) for problem in combined.problems]
    assert messages == [
        "plugin my-eval-extras 1.2.0: the definition of `regex` is ignored: `regex` is a core kind, and core kinds cannot be redefined",
        "plugin more-evals 0.1.0: the definition of `word_count` is ignored: plugin my-eval-extras 1.2.0 already defines `word_count`, and the first definition wins",
    ]


def test_the_kinds_line_counts_plugins_drupal_modules_and_fragments_apart() -> None:
    """What an editor's status bar shows: a module's kinds are not a plugin's."""
    module = Origin(r"Drupal\\extras\\Tone", module="extras")
    fragment = Origin("schema fragment kinds.json")
    assert combine(core_schema(), []).kinds_line() == f"{len(CORE_KINDS)} kinds: {len(CORE_KINDS)} core"
    combined = combine(
        core_schema(),
        [
            Contribution(PLUGIN, {"word_count": word_count()}),
            Contribution(module, {"tone": word_count("tone"), "length": word_count("length")}),
            Contribution(fragment, {"legacy": word_count("legacy")}),
        ],
    )
    core = len(CORE_KINDS)
    assert combined.kinds_line() == (
        f"{core + 4} kinds: {core} core, 1 from plugins, 2 from Drupal modules, 1 from schema fragments"
    )


@pytest.mark.parametrize(
    ("definition", "reason"),
    [
        (
            {"type": "object", "required": ["kind"], "properties": {"kind": {"type": "string"}}},
            "must pin the kind",
        ),
        ({"type": "object", "properties": {"kind": {"const": "loose"}}}, "must list `kind` in `required`"),
        ([], "must be a JSON Schema object"),
        (
            {"type": 5, "required": ["kind"], "properties": {"kind": {"const": "loose"}}},
            "not a valid JSON Schema",
        ),
        (
            {"$ref": "#/$defs/absent", "required": ["kind"], "properties": {"kind": {"const": "loose"}}},
            "cannot be compiled",
        ),
    ],
)
def test_malformed_definitions_are_reported_with_their_origin(definition: Any, reason: str) -> None:
    combined = combine(core_schema(), [Contribution(PLUGIN, {"loose": definition})])
    assert "loose" not in combined.origins
    assert len(combined.problems) == 1
    assert str(combined.problems[0]).startswith("plugin my-eval-extras 1.2.0: ")
    assert reason in combined.problems[0].message


def test_a_fields_annotations_are_what_its_schema_declares_there() -> None:
    """What hover and completion show of a field: the title, description, type, ... its own
    schema gives it, at the top level or in a check of a kind (through `$ref` and `allOf`)."""
    core = core_schema()
    validator = SchemaValidator.for_rubrics(combine(core, []))
    rubric_id, check_id = core["properties"]["id"], core["$defs"]["check_base"]["properties"]["id"]
    assert rubric_id != check_id
    assert validator.annotations("", ("id",)) == rubric_id
    assert validator.annotations("regex", ("id",)) == check_id
    assert validator.annotations("", ("id",)) == rubric_id  # asked again: still the rubric's
    flags = core["$defs"]["check_regex"]["allOf"][1]["properties"]["flags"]
    assert validator.annotations("regex", ("flags",)) == flags
    assert validator.annotations("", ("flags",)) == {}
    threshold = core["$defs"]["scoring"]["properties"]["threshold"]
    assert validator.annotations("", ("scoring", "threshold")) == threshold
    gate = core_schema("cases.schema.json")["properties"]["gate"]["properties"]["pass_rate"]
    assert SchemaValidator.for_cases().annotations("", ("gate", "pass_rate")) == gate


def test_validating_leaves_the_combined_schema_as_it_is_exported() -> None:
    """The validator opens `checks.items` in its own copy; `ai-eval-lsp schema` and
    yaml-language-server still get every kind's branch."""
    combined = combine(core_schema(), [Contribution(PLUGIN, {"word_count": word_count()})])
    exported = copy.deepcopy(combined.schema)
    SchemaValidator.for_rubrics(combined)
    assert combined.schema == exported


def test_a_kind_a_module_names_without_a_readable_definition_is_reported_with_why() -> None:
    combined = combine(core_schema(), [])
    why = "module my_mod (Drupal\\my_mod\\LangExecutor) defines it, but its definition cannot be read"
    combined.named["language_is"] = why
    rules = Rules(SchemaValidator.for_rubrics(combined), lambda check: Claim(), "fast")
    text = 'id: lang\nversion: "1.0"\nchecks:\n  - {kind: language_is}\nscoring: {combine: all_pass}\n'
    (problem,) = analyse_rubric("lang.rubric.yaml", text, rules).problems
    assert (problem.code, problem.message, problem.data) == (
        "unknown-kind",
        f"unknown check kind `language_is`: {why}",
        {"kind": "language_is"},
    )
    assert (problem.span.start.line, problem.span.start.column, problem.span.end.column) == (3, 11, 22)


def test_an_unknown_key_deeper_in_a_sites_own_schema_names_its_object_as_a_field() -> None:
    """A Drupal codebase's own ai_eval schema is the core schema there, and may nest objects
    deeper than the shipped one: a nested owner is named as a field, as a top-level one is not."""
    core = copy.deepcopy(core_schema())
    core["$defs"]["scoring"]["properties"]["report"] = {
        "type": "object",
        "properties": {"format": {"type": "string"}},
        "unevaluatedProperties": False,
    }
    rules = Rules(SchemaValidator.for_rubrics(combine(core, [])), lambda check: Claim("core"), "fast")
    text = (
        'id: deep\nversion: "1.0"\nchecks: [{kind: must_contain_any, values: [a]}]\n'
        "scoring: {combine: all_pass, report: {formt: html}, treshold: 1}\n"
    )
    problems = analyse_rubric("deep.rubric.yaml", text, rules).problems
    assert [(p.code, p.message) for p in problems] == [
        ("unknown-key", "`formt` is not a field of `report` (did you mean `format`?)"),
        ("unknown-key", "`treshold` is not a field of scoring (did you mean `threshold`?)"),
    ]
