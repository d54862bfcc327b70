"""Rubric references and the version grammar: one owner, agreeing with the shipped schemas."""

from __future__ import annotations

import pytest

from ai_eval_lsp.core.index import RubricIndex, RubricSummary
from ai_eval_lsp.core.refs import RubricRef, format_ref, is_version, parse_ref, version_key
from ai_eval_lsp.core.schema import core_schema


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("support_tone", RubricRef("support_tone")),
        ("support_tone@1.2", RubricRef("support_tone", "1.2")),
        ("support_tone@2.0.0-beta.1", RubricRef("support_tone", "2.0.0-beta.1")),
        ("support_tone@", RubricRef("support_tone")),
    ],
)
def test_a_reference_splits_at_its_at_sign_and_formats_back(text: str, ref: RubricRef) -> None:
    assert parse_ref(text) == ref
    assert str(ref) == format_ref(ref.id, ref.version) == text.rstrip("@")


@pytest.mark.parametrize("version", ["1.0", "1.2.3", "2.0.0-beta", "0.10.0-rc.1"])
def test_versions_the_schema_accepts(version: str) -> None:
    assert is_version(version)


@pytest.mark.parametrize("version", ["1", "01.0", "1.0.0.0", "1.0-", "1.0--x", "1.0-.x", "v1.0", "1.0 "])
def test_versions_the_schema_refuses(version: str) -> None:
    assert not is_version(version)


def test_versions_order_as_semver_with_junk_first() -> None:
    ordered = ["1.0-.x", "0.9", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0", "1.0.1", "1.10"]
    assert sorted(reversed(ordered), key=version_key) == ordered


def test_a_bare_id_resolves_to_the_highest_version_the_grammar_knows() -> None:
    def rubric(version: str) -> RubricSummary:
        return RubricSummary(f"{version}.rubric.yaml", "tone", version, None, None, (), ())

    index = RubricIndex([rubric("1.0"), rubric("1.1-.x"), rubric("1.0.1-rc.1")])
    resolved = index.resolve("tone")
    assert resolved is not None and resolved.version == "1.0.1-rc.1"
    pinned = index.resolve("tone@1.0")
    assert pinned is not None and pinned.name == "tone@1.0"


def test_the_schemas_reference_patterns_are_an_id_and_the_version_grammar() -> None:
    """The ref patterns of the two shipped schemas are written out in JSON; they must be the
    id pattern and the version grammar `core/refs.py` reads, or the editor and a run disagree."""
    rubric = core_schema()
    version = rubric["properties"]["version"]["pattern"]
    expected = rf"^[a-z][a-z0-9_]*(@{version[1:-1]})?$"
    composite = rubric["$defs"]["check_composite"]["allOf"][1]
    assert composite["properties"]["rubric"]["pattern"] == expected
    assert core_schema("cases.schema.json")["properties"]["rubric"]["pattern"] == expected
