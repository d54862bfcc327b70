"""The core schemas and the splicing rules of the combined schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from contract import CORE_KINDS

from ai_eval_lsp.core.schema import CORE, Contribution, Origin, combine, core_schema

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
