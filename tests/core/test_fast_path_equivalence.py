"""The fast path (libyaml + jsonschema-rs) finds exactly the problems of the reference path
(ruamel.yaml + python-jsonschema), and a rubric is free of schema problems exactly when the
combined schema accepts it. Checked on the fixtures and on generated rubrics, valid and broken.
"""

from __future__ import annotations

import copy
import math
import string
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import FIXTURES, examples
from contract import CORE_KINDS
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ai_eval_lsp.core.analysis import Rules, analyse_rubric
from ai_eval_lsp.core.problems import SCHEMA_CODES, Problem
from ai_eval_lsp.core.validate import Engine, SchemaValidator, Violation
from ai_eval_lsp.core.yamltree import parse
from ai_eval_lsp.project.project import Project


@pytest.fixture(scope="module")
def paths(project: Project) -> tuple[Rules, Rules, jsonschema.Draft202012Validator]:
    combined = project.registry.combined
    fast = Rules(SchemaValidator.for_rubrics(combined, "fast"), project.registry.dispatch, "fast")
    reference = Rules(
        SchemaValidator.for_rubrics(combined, "reference"), project.registry.dispatch, "reference"
    )
    return fast, reference, jsonschema.Draft202012Validator(combined.schema)


def comparable(problem: Problem) -> tuple[Any, ...]:
    return (problem.code, problem.span, problem.message, problem.related)


class Calls:
    """How often python-jsonschema validated: the fast path must never use it."""

    count = 0
    original = jsonschema.Draft202012Validator.iter_errors


def counting_iter_errors(validator: Any, instance: Any) -> Any:
    Calls.count += 1
    return Calls.original(validator, instance)


@pytest.fixture(autouse=True, scope="module")
def _count_reference_validation() -> Any:
    jsonschema.Draft202012Validator.iter_errors = counting_iter_errors  # type: ignore[method-assign,assignment]
    yield
    jsonschema.Draft202012Validator.iter_errors = Calls.original  # type: ignore[method-assign]


def libyaml_defers(text: str) -> bool:
    """Whether libyaml itself rejects the document, or reads a key only the reference parser may
    decide (a collection or an alias), or a pair in a flow list: the only texts the fast path
    reads with ruamel.yaml."""
    keys: list[bool] = []  # per open collection: True when a mapping's next node is a key
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            at_key = bool(keys) and keys[-1]
            if isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                keys.pop()
                if keys and keys[-1] is not None:
                    keys[-1] = not keys[-1]
                continue
            if at_key and isinstance(event, yaml.CollectionStartEvent | yaml.AliasEvent):
                return True
            if (
                isinstance(event, yaml.MappingStartEvent)
                and event.flow_style
                and text[event.start_mark.index] != "{"
            ):
                return True  # a pair in a flow list
            if isinstance(event, yaml.MappingStartEvent):
                keys.append(True)
            elif isinstance(event, yaml.SequenceStartEvent):
                keys.append(None)  # type: ignore[arg-type]
            elif isinstance(event, yaml.ScalarEvent | yaml.AliasEvent) and keys and keys[-1] is not None:
                keys[-1] = not keys[-1]
    except yaml.YAMLError:
        return True
    return False


FALLBACKS: dict[str, list[int]] = {}
"""For each kind of text compared: how many, and how many the fast path read with ruamel.yaml."""


def assert_equivalent(
    text: str, paths: tuple[Rules, Rules, jsonschema.Draft202012Validator], tally: str = "fixtures"
) -> None:
    fast, reference, combined = paths
    before = Calls.count
    found_fast = analyse_rubric("r.rubric.yaml", text, fast).problems
    assert Calls.count == before, "the fast path validated with python-jsonschema"
    read = analyse_rubric("r.rubric.yaml", text, reference)
    found_reference = read.problems
    if read.tree is not None:
        assert Calls.count > before, "the reference path did not validate with python-jsonschema"
    fell_back = parse(text, "fast").parser == "reference"
    assert fell_back == libyaml_defers(text), "the fast path read with ruamel.yaml what libyaml reads"
    counts = FALLBACKS.setdefault(tally, [0, 0])
    counts[0] += 1
    counts[1] += fell_back
    assert [comparable(p) for p in found_fast] == [comparable(p) for p in found_reference]
    if read.tree is None or any(p.code == "yaml-syntax" for p in found_fast):
        return
    accepted = combined.is_valid(read.tree.value)
    schema_problems = [p for p in found_fast if p.code in SCHEMA_CODES]
    assert accepted == (not schema_problems), schema_problems


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.yaml")), ids=lambda p: p.stem)
def test_fixtures_agree(path: Path, paths: tuple[Rules, Rules, jsonschema.Draft202012Validator]) -> None:
    assert_equivalent(path.read_bytes().decode("utf-8", errors="replace"), paths)


# --- generated rubrics -------------------------------------------------------------------------

ids = st.sampled_from(["polite", "tone", "c1", "c2", "Bad-Id", "", "naïve"])
words = st.text(alphabet=string.ascii_letters + " éü😀:#-'\"", min_size=0, max_size=12)
numbers = st.one_of(
    st.integers(-3, 200), st.floats(-1, 2, allow_nan=False), st.sampled_from([0.5, 1.5, -0.1])
)
junk = st.sampled_from([1, "x", [], {}, None, True, 2.5, ["a", 1]]).map(
    copy.deepcopy
)  # fresh: mutate() edits them
patterns = st.sampled_from(["^hi", "(a+)+$", "a{2,1}", "x(", "[", r"\d+", "é+", "(?P<n>x)"])


@st.composite
def checks(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from([*CORE_KINDS, "word_count", "fragile", "regexp", "wordcount"]))
    check: dict[str, Any] = {"kind": kind}
    if draw(st.booleans()):
        check["id"] = draw(ids)
    if kind in ("must_contain_any", "must_not_contain"):
        check["values"] = draw(st.lists(words, max_size=3))
        if draw(st.booleans()):
            check["case_sensitive"] = draw(st.booleans())
    elif kind == "regex":
        check["pattern"] = draw(patterns)
        if draw(st.booleans()):
            check["flags"] = draw(st.sampled_from(["", "i", "imsxu", "z", "I"]))
    elif kind == "target_match":
        check["source"] = draw(st.sampled_from(["expected.reference", "a.b.c", "bad path"]))
        if draw(st.booleans()):
            check["mode"] = draw(st.sampled_from(["exact", "normalized", "chrf", "bleu"]))
        if draw(st.booleans()):
            check["threshold"] = draw(numbers)
    elif kind == "composite":
        check["rubric"] = draw(st.sampled_from(["tone", "tone@1.0", "Tone", "tone@x"]))
    elif kind == "llm_judge":
        if draw(st.booleans()):
            check["description"] = draw(words)
        if draw(st.booleans()):
            check["aggregation"] = draw(st.sampled_from(["mean", "majority", "avg"]))
    elif kind == "word_count":
        check.update(draw(st.dictionaries(st.sampled_from(["min", "max"]), numbers, max_size=2)))
    elif kind == "format":
        check["format"] = draw(st.sampled_from(["json", "xml"]))
    return check


def mutate(draw: st.DrawFn, rubric: dict[str, Any]) -> None:
    targets: list[dict[str, Any]] = [rubric]
    targets += [c for c in rubric.get("checks", []) if isinstance(c, dict)]
    if isinstance(rubric.get("scoring"), dict):
        targets.append(rubric["scoring"])
    for _ in range(draw(st.integers(0, 3))):
        target = draw(st.sampled_from(targets))
        action = draw(st.sampled_from(["typo", "extra", "drop", "junk"]))
        keys = list(target)
        if action == "typo" and keys:
            key = draw(st.sampled_from(keys))
            target[key[:-1] + key[-1] * 2 if key else "x"] = target.pop(key)
        elif action == "extra":
            target[draw(st.sampled_from(["extra", "valeus", "patern", "metadata", "description"]))] = draw(
                junk
            )
        elif action == "drop" and keys:
            target.pop(draw(st.sampled_from(keys)))
        elif action == "junk" and keys:
            target[draw(st.sampled_from(keys))] = draw(junk)


@st.composite
def rubrics(draw: st.DrawFn) -> str:
    rubric: dict[str, Any] = {
        "id": draw(st.sampled_from(["support_tone", "x", "Bad Id"])),
        "version": draw(st.sampled_from(["1.0", "1.2.3-beta", "v1", 1.0, 2])),
    }
    if draw(st.booleans()):
        rubric["label"] = draw(words)
    rubric["checks"] = draw(st.lists(st.one_of(checks(), junk), min_size=0, max_size=5))
    scoring: dict[str, Any] = {
        "combine": draw(st.sampled_from(["all_pass", "any_pass", "weighted_avg", "min", "median", "avg"]))
    }
    if draw(st.booleans()):
        scoring["threshold"] = draw(numbers)
    if draw(st.booleans()):
        scoring["weights"] = draw(st.dictionaries(ids, numbers, max_size=3))
    rubric["scoring"] = scoring
    mutate(draw, rubric)
    flow = draw(st.sampled_from([False, None, True]))
    return yaml.safe_dump(rubric, sort_keys=False, allow_unicode=True, default_flow_style=flow)


WEIGHTS_DIVERGENCE = (
    'id: support_tone\nversion: "1.0"\nchecks:\n- {kind: tool_usage}\nscoring:\n  combine: all_pass\n'
    "  weights: {polite: 0.0, tone: 0.0, 0}\n"
)
"""The input the hypothesis test once found diverging (one local run in six): a mapping's key `0`
read by jsonschema-rs as a list index."""


@settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rubrics())
@example(WEIGHTS_DIVERGENCE)
def test_generated_rubrics_agree(text: str) -> None:
    assert_equivalent(text, _PATHS[0], "generated")


DAMAGE = ["", ":", "- ", "\n  ", "[", '"', "{", "&a ", "*a", "!!str ", "#", "? ", "]", "'"]
"""What is spliced into a text to damage it: the start of a structure, a stray character, nothing."""


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rubrics(), st.data())
def test_damaged_text_agrees(text: str, data: st.DataObject) -> None:
    """Text cut or spliced anywhere: broken YAML, half-typed keys, stray characters.

    Tabs are left out: there libyaml and ruamel.yaml disagree on what is YAML (see docs/decisions.md,
    D1); everything else must read the same.
    """
    at = data.draw(st.integers(0, len(text)))
    insert = data.draw(st.sampled_from(DAMAGE))
    cut = data.draw(st.integers(0, 5))
    assert_equivalent(text[:at] + insert + text[at + cut :], _PATHS[0], "damaged")


@pytest.mark.parametrize("values", ["[sorry, '':]", "['sorry':x]", '["a":]', "[a: b]", "['a' : ]"])
def test_a_pair_in_a_flow_list_agrees(values: str) -> None:
    """libyaml reads a quoted key right before `:` in a flow list (`['a':b]`) where ruamel.yaml
    finds the list never closed (the hypothesis test found it): pairs in flow lists are the
    reference parser's to decide."""
    text = f'id: tone\nversion: "1.0"\nchecks:\n- kind: must_contain_any\n  values: {values}\nscoring: {{combine: all_pass}}\n'
    assert_equivalent(text, _PATHS[0])


@pytest.mark.parametrize("weights", ["{polite: 0, 0}", "{polite: 0.0, tone: 0.0, 0}", "{0: x}"])
def test_a_numeric_key_in_a_mapping_agrees(weights: str) -> None:
    """jsonschema-rs names a mapping's key `0` as it names a list's first item; once the hypothesis
    test found it (one local run in six), the fast path put the problem on the whole document."""
    text = f'id: support_tone\nversion: "1.0"\nchecks:\n- {{kind: tool_usage}}\nscoring:\n  combine: all_pass\n  weights: {weights}\n'
    assert_equivalent(text, _PATHS[0])


@pytest.mark.parametrize(
    "end",
    [
        "description:\n- a\n-",
        "description:\n- a\n- b",
        "description:\r- a\r-",
        "description: {a: 1}",
        "checks:\n- 1",
    ],
)
def test_a_collection_that_ends_the_text_without_a_line_break_agrees(end: str) -> None:
    """libyaml ends such a collection on a line past the text, ruamel.yaml at the text's end; the
    hypothesis test found it (a list cut at its last `-`), and the span of its problem differed."""
    text = f'id: support_tone\nversion: "1.0"\nchecks:\n- {{kind: tool_usage}}\nscoring: {{combine: all_pass}}\n{end}'
    assert_equivalent(text, _PATHS[0])


_PATHS: list[tuple[Rules, Rules, jsonschema.Draft202012Validator]] = []


@pytest.fixture(autouse=True, scope="module")
def _share_paths(paths: tuple[Rules, Rules, jsonschema.Draft202012Validator]) -> None:
    # hypothesis tests cannot take function-scoped fixtures; share the module's paths with them.
    _PATHS[:] = [paths]


def test_generated_numbers_keep_their_meaning() -> None:
    assert math.isinf(parse("a: .inf\n").root.value["a"])  # type: ignore[union-attr]


def test_the_fast_path_never_fell_back_for_a_generated_rubric() -> None:
    """Runs after the tests above (in file order), and says how often the fast path read a text
    with ruamel.yaml; each such text is one libyaml rejects or defers (asserted one by one above):
    never a well-formed generated rubric, whatever examples hypothesis drew."""
    if "generated" not in FALLBACKS or "damaged" not in FALLBACKS:
        pytest.skip("it tallies the tests above: run the whole module")
    for kind, (texts, fell_back) in FALLBACKS.items():
        print(
            f"\n{kind}: the fast path read {fell_back} of {texts} texts ({fell_back / texts:.0%}) with ruamel.yaml"
        )
    generated, damaged = FALLBACKS["generated"], FALLBACKS["damaged"]
    assert generated[0] >= examples(1000) and generated[1] == 0, FALLBACKS
    assert damaged[0] >= examples(300), FALLBACKS


def damaged(text: str) -> list[str]:
    """The same damage every run: each of DAMAGE at eight places through the text, spliced in
    and spliced over the next three characters."""
    step = max(1, len(text) // 8)
    return [
        text[:at] + insert + text[at + cut :]
        for at in range(0, len(text) + 1, step)
        for insert in DAMAGE
        for cut in (0, 3)
    ]


def test_the_fast_path_falls_back_for_a_minority_of_damaged_texts() -> None:
    """The fast path reads with ruamel.yaml only what libyaml rejects or defers, and that is a
    minority of damaged texts: the fixtures libyaml reads, each damaged in fixed ways, so that the
    verdict never depends on the examples hypothesis draws (which fell back for 52 % once)."""
    fixtures = [
        path.read_bytes().decode("utf-8", errors="replace") for path in sorted(FIXTURES.rglob("*.yaml"))
    ]
    texts = [
        text for fixture in fixtures if parse(fixture, "fast").parser == "fast" for text in damaged(fixture)
    ]
    fell_back = [text for text in texts if parse(text, "fast").parser == "reference"]
    assert fell_back == [text for text in texts if libyaml_defers(text)]
    print(f"\nthe fast path read {len(fell_back)} of {len(texts)} damaged fixtures with ruamel.yaml")
    assert 0 < len(fell_back) < len(texts) / 2


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_cases_files_are_validated_by_their_paths_engine(engine: Engine) -> None:
    """Each path validates cases files with its own engine too, and both give the same
    violation: the reference path with python-jsonschema, the fast path without it."""
    validator = Project.load(FIXTURES / "workspaces" / "cases", engine=engine).rules.cases_validator
    before = Calls.count
    assert validator.top_violations({"rubric": "support", "cases": [{"id": "a"}]}) == []
    assert validator.case_violations({"id": "a"}) == [Violation("required", (), ("response",))]
    assert (Calls.count > before) == (engine == "reference")
