"""Conformance: (rubric, question, response) -> the outcome ai_eval's runtime gives.

Expected scores are worked out by hand from SPEC section 2; chrF values come from calling
sacrebleu directly here, never from the evaluator's own output.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sacrebleu.metrics.chrf import CHRF

from ai_eval_lsp.core.api import CheckOutcome
from ai_eval_lsp.core.evaluate import Evaluator, LoadedRubric, Runner
from ai_eval_lsp.hosts.python import PluginHost
from ai_eval_lsp.project.registry import discover


def chrf(hypothesis: str, reference: str) -> float:
    return CHRF().sentence_score(hypothesis, [reference]).score / 100


REF = "Your refund arrives within five days."
CLOSE = "The refund will arrive in five days."
FAR = "Bananas are yellow."
Q = {
    "id": "q1",
    "input": "When is my refund?",
    "expected": {"reference": REF, "variants": [FAR, REF], "count": 3},
}


def rubric(*checks: dict[str, Any], combine: str = "all_pass", **scoring: Any) -> dict[str, Any]:
    return {"id": "r", "version": "1.0", "checks": list(checks), "scoring": {"combine": combine, **scoring}}


def contains(*values: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "must_contain_any", "values": list(values), **extra}


def lacks(*values: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "must_not_contain", "values": list(values), **extra}


def rx(pattern: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "regex", "pattern": pattern, **extra}


def target(mode: str = "exact", source: str = "expected.reference", **extra: Any) -> dict[str, Any]:
    return {"kind": "target_match", "source": source, "mode": mode, **extra}


def sub(ref: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "composite", "rubric": ref, **extra}


PASS = contains("refund", id="p")
FAIL = contains("zebra", id="f")

# Rubrics composites can name: a chain a -> b -> c -> d -> e, a cycle x <-> y, pinned versions.
LIBRARY = {
    "leaf": rubric(contains("refund")),
    "leaf_fail": rubric(contains("zebra")),
    "judges_only": rubric({"kind": "llm_judge", "description": "polite?"}),
    "b": rubric(sub("c")),
    "c": rubric(sub("d")),
    "d": rubric(sub("e")),
    "e": rubric(contains("refund")),
    "x": rubric(sub("y")),
    "y": rubric(sub("x")),
    "half": rubric(PASS, FAIL, combine="weighted_avg"),
}
VERSIONS = {("tone", "1.0"): rubric(contains("refund")), ("tone", "2.0"): rubric(contains("zebra"))}


def source(ref: str) -> LoadedRubric | None:
    rubric_id, _, version = ref.partition("@")
    if rubric_id == "tone":
        chosen = version or "2.0"  # the highest version
        data = VERSIONS.get(("tone", chosen))
        return LoadedRubric("tone", chosen, data) if data else None
    data = LIBRARY.get(rubric_id)
    return LoadedRubric(rubric_id, "1.0", data) if data and not version else None


@dataclass(frozen=True)
class Row:
    name: str
    rubric: dict[str, Any]
    response: str
    score: float | None  # None: no verdict
    passed: bool | None = None
    reason: str = ""
    question: dict[str, Any] = field(default_factory=lambda: Q)


ROWS = [
    # must_contain_any
    Row("contains: found", rubric(contains("refund")), "We will refund you.", 1.0, True, 'found "refund"'),
    Row(
        "contains: none found",
        rubric(contains("refund", "money")),
        "Hello there.",
        0.0,
        False,
        "none of the values found",
    ),
    Row("contains: case-insensitive by default", rubric(contains("refund")), "REFUND issued", 1.0, True),
    Row(
        "contains: case_sensitive mismatch",
        rubric(contains("refund", case_sensitive=True)),
        "REFUND issued",
        0.0,
        False,
    ),
    Row(
        "contains: case_sensitive match",
        rubric(contains("REFUND", case_sensitive=True)),
        "REFUND issued",
        1.0,
        True,
    ),
    Row(
        "contains: second value found",
        rubric(contains("zebra", "issued")),
        "REFUND issued",
        1.0,
        True,
        'found "issued"',
    ),
    Row("contains: Unicode case folding", rubric(contains("STRASSE")), "Die Straße ist gesperrt", 1.0, True),
    Row(
        "contains: empty values is an authoring error",
        rubric({"kind": "must_contain_any", "values": []}),
        "x",
        0.0,
        False,
        "non-empty list of strings",
    ),
    # must_not_contain
    Row(
        "lacks: none found",
        rubric(lacks("As an AI")),
        "Sure, here it is.",
        1.0,
        True,
        "none of the values found",
    ),
    Row(
        "lacks: one found",
        rubric(lacks("As an AI", "I cannot")),
        "As an AI, no.",
        0.0,
        False,
        'found "As an AI"',
    ),
    Row(
        "lacks: every found value listed",
        rubric(lacks("As an AI", "I cannot")),
        "As an AI I cannot.",
        0.0,
        False,
        'found "As an AI", "I cannot"',
    ),
    Row("lacks: case-insensitive by default", rubric(lacks("as an ai")), "AS AN AI", 0.0, False),
    Row(
        "lacks: case_sensitive passes on other case",
        rubric(lacks("as an ai", case_sensitive=True)),
        "AS AN AI",
        1.0,
        True,
    ),
    # regex
    Row("regex: match", rubric(rx(r"\d+ days")), "within 5 days", 1.0, True, "matched '5 days'"),
    Row("regex: no match", rubric(rx(r"^\d+$")), "five", 0.0, False, "no match"),
    Row("regex: flag i", rubric(rx("^hello", flags="i")), "HELLO there", 1.0, True),
    Row("regex: no flag i", rubric(rx("^hello")), "HELLO there", 0.0, False),
    Row("regex: must_match false, absent", rubric(rx("sorry", must_match=False)), "Here you go.", 1.0, True),
    Row(
        "regex: must_match false, present",
        rubric(rx("sorry", must_match=False)),
        "I am sorry.",
        0.0,
        False,
        "must not match",
    ),
    Row("regex: flag m", rubric(rx("^second", flags="m")), "first\nsecond", 1.0, True),
    Row("regex: without m, ^ is the start", rubric(rx("^second")), "first\nsecond", 0.0, False),
    Row("regex: flag s", rubric(rx("a.b", flags="s")), "a\nb", 1.0, True),
    Row("regex: flag x", rubric(rx("a b c  # spaced", flags="x")), "abc", 1.0, True),
    Row(
        "regex: compile error fails loudly", rubric(rx("x(")), "x(", 0.0, False, "does not compile: missing )"
    ),
    Row(
        "regex: bad flags fail loudly", rubric(rx("x", flags="q")), "x", 0.0, False, "`flags` must be made of"
    ),
    # target_match: exact and normalized
    Row("exact: equal", rubric(target()), REF, 1.0, True, "matches the reference exactly"),
    Row(
        "exact: different", rubric(target()), REF.lower(), 0.0, False, "does not match the reference exactly"
    ),
    Row(
        "exact: second variant",
        rubric(target(source="expected.variants")),
        REF,
        1.0,
        True,
        "matches reference 2 of 2 exactly",
    ),
    Row(
        "exact: no variant",
        rubric(target(source="expected.variants")),
        "nope",
        0.0,
        False,
        "matches none of the 2 references",
    ),
    Row(
        "normalized: case and white space",
        rubric(target("normalized")),
        "  your REFUND   arrives within\tfive days. ",
        1.0,
        True,
    ),
    Row(
        "normalized: NFKC",
        rubric(target("normalized", source="expected.wide")),
        "refund",
        1.0,
        True,
        question={"expected": {"wide": "\uff52\uff45\uff46\uff55\uff4e\uff44"}},  # full-width "refund"
    ),
    Row(
        "normalized: different words",
        rubric(target("normalized")),
        "Your refund arrives within six days.",
        0.0,
        False,
    ),
    Row(
        "target: unresolvable path",
        rubric(target(source="expected.missing")),
        REF,
        0.0,
        False,
        "`expected.missing` does not resolve",
    ),
    Row(
        "target: non-string value",
        rubric(target(source="expected.count")),
        "3",
        0.0,
        False,
        "does not resolve to a string",
    ),
    Row("target: unknown mode", rubric(target("bleu")), REF, 0.0, False, "unknown mode 'bleu'"),
    # target_match: chrF, with sacrebleu's own scores
    Row("chrf: identical", rubric(target("chrf")), REF, 1.0, True),
    Row(
        "chrf: close passes the default threshold",
        rubric(target("chrf")),
        CLOSE,
        1.0,
        chrf(CLOSE, REF) >= 0.5,
        "chrF",
    ),
    Row(
        "chrf: the real score reaches numeric combining",
        rubric(target("chrf", threshold=0.9), combine="max", threshold=0.6),
        CLOSE,
        chrf(CLOSE, REF),
        False,
        "threshold 0.9",
    ),
    Row("chrf: a failed check fails all_pass", rubric(target("chrf", threshold=0.9)), CLOSE, 0.0, False),
    Row("chrf: far", rubric(target("chrf"), combine="min"), FAR, chrf(FAR, REF), False),
    Row(
        "chrf: best variant",
        rubric(target("chrf", source="expected.variants"), combine="max"),
        CLOSE,
        max(chrf(CLOSE, FAR), chrf(CLOSE, REF)),
        True,
        "variant 2 of 2",
    ),
    Row(
        "chrf: threshold out of range",
        rubric(target("chrf", threshold=2)),
        REF,
        0.0,
        False,
        "`threshold` must be a number from 0 to 1",
    ),
    # combining
    Row(
        "all_pass: all pass",
        rubric(PASS, contains("five", id="p2")),
        "refund in five",
        1.0,
        True,
        "all_pass: 2 of 2 checks passed",
    ),
    Row(
        "all_pass: one fails",
        rubric(PASS, FAIL),
        "refund",
        0.0,
        False,
        "failed: f (none of the values found)",
    ),
    Row(
        "any_pass: one passes",
        rubric(PASS, FAIL, combine="any_pass"),
        "refund",
        1.0,
        True,
        "any_pass: 1 of 2",
    ),
    Row(
        "any_pass: none pass", rubric(FAIL, contains("yak", id="g"), combine="any_pass"), "refund", 0.0, False
    ),
    Row(
        "weighted_avg: default weights",
        rubric(PASS, FAIL, contains("in", id="p3"), combine="weighted_avg"),
        "refund in",
        2 / 3,
        True,
    ),
    Row(
        "weighted_avg: weights",
        rubric(PASS, FAIL, combine="weighted_avg", weights={"p": 1, "f": 3}),
        "refund",
        0.25,
        False,
        "weighted_avg 0.250 < threshold 0.5",
    ),
    Row(
        "weighted_avg: all weights zero",
        rubric(PASS, FAIL, combine="weighted_avg", weights={"p": 0, "f": 0}),
        "refund",
        0.0,
        False,
    ),
    Row(
        "weighted_avg: a check without id weighs 1",
        rubric(PASS, contains("zebra"), combine="weighted_avg", weights={"p": 3}),
        "refund",
        0.75,
        True,
    ),
    Row(
        "weighted_avg: threshold tie passes",
        rubric(PASS, FAIL, combine="weighted_avg", threshold=0.5),
        "refund",
        0.5,
        True,
        ">= threshold 0.5",
    ),
    Row(
        "weighted_avg: real chrF score",
        rubric(PASS, target("chrf", id="t"), combine="weighted_avg"),
        CLOSE,
        (1 + chrf(CLOSE, REF)) / 2,
        True,
    ),
    Row("min", rubric(PASS, FAIL, combine="min", threshold=0), "refund", 0.0, True),
    Row("max", rubric(PASS, FAIL, combine="max", threshold=1), "refund", 1.0, True),
    Row(
        "median: odd count",
        rubric(PASS, FAIL, contains("in", id="p3"), combine="median"),
        "refund in",
        1.0,
        True,
    ),
    Row(
        "median: even count is the mean of the middle two",
        rubric(PASS, FAIL, target("chrf"), contains("in"), combine="median"),
        CLOSE,
        statistics.median([1.0, 0.0, chrf(CLOSE, REF), 1.0]),
        True,
    ),
    Row(
        "threshold just above fails",
        rubric(PASS, FAIL, combine="weighted_avg", threshold=0.51),
        "refund",
        0.5,
        False,
    ),
    # skipped kinds and no verdict
    Row(
        "llm_judge skipped and named",
        rubric(PASS, {"kind": "llm_judge", "id": "judge", "description": "polite?"}),
        "refund",
        1.0,
        True,
        "skipped: judge (llm_judge, not executed)",
    ),
    Row(
        "only skipped kinds: no verdict",
        rubric({"kind": "tool_usage", "tools": ["search"]}, {"kind": "php_lint"}),
        "x",
        None,
    ),
    Row(
        "skipped do not count in all_pass",
        rubric(FAIL, {"kind": "command", "run": "true"}),
        "refund",
        0.0,
        False,
        "skipped: checks[1] (command, not executed)",
    ),
    # composite
    Row("composite: depth 1 pass", rubric(sub("leaf")), "refund", 1.0, True, "leaf@1.0: all_pass: 1 of 1"),
    Row("composite: depth 1 fail", rubric(sub("leaf_fail")), "refund", 0.0, False, "leaf_fail@1.0"),
    Row("composite: depth 2", rubric(sub("d")), "refund", 1.0, True),
    Row("composite: depth 3 still runs", rubric(sub("c")), "refund", 1.0, True),
    Row(
        "composite: depth 4 fails",
        rubric(sub("b")),
        "refund",
        0.0,
        False,
        "composites nest deeper than 3 hops: r → b → c → d → e",
    ),
    Row("composite: cycle", rubric(sub("x")), "refund", 0.0, False, "composite cycle: r → x → y → x"),
    Row(
        "composite: unknown id",
        rubric(sub("nowhere")),
        "refund",
        0.0,
        False,
        "no rubric `nowhere` in the workspace",
    ),
    Row("composite: bare id is the highest version", rubric(sub("tone")), "refund", 0.0, False, "tone@2.0"),
    Row("composite: pinned version", rubric(sub("tone@1.0")), "refund", 1.0, True, "tone@1.0"),
    Row("composite: unknown version", rubric(sub("tone@9.9")), "refund", 0.0, False, "no rubric `tone@9.9`"),
    Row(
        "composite: sub-rubric without verdict is skipped",
        rubric(PASS, sub("judges_only", id="j")),
        "refund",
        1.0,
        True,
        "`judges_only@1.0` has no executable check",
    ),
    Row("composite: real score of the sub-rubric", rubric(sub("half"), combine="max"), "refund", 0.5, True),
    # plugins through the same dispatch
    Row(
        "word_count plugin: within range",
        rubric({"kind": "word_count", "min": 2, "max": 4}),
        "three words here",
        1.0,
        True,
        "3 words, within range",
    ),
    Row(
        "word_count plugin: too many",
        rubric({"kind": "word_count", "max": 2}),
        "three words here",
        0.0,
        False,
        "3 words, maximum 2",
    ),
    Row(
        "plugin raising fails only its check",
        rubric(PASS, {"kind": "explodes", "id": "boom"}, combine="weighted_avg"),
        "refund",
        0.5,
        True,
        "raised RuntimeError: kaboom",
    ),
    Row(
        "plugin wrong return type fails only its check",
        rubric(PASS, {"kind": "wrong_type", "id": "odd"}, combine="any_pass"),
        "refund",
        1.0,
        True,
        "returned dict, not a CheckOutcome",
    ),
]


class Explodes:
    def applies(self, check: dict[str, Any]) -> bool:
        return check.get("kind") == "explodes"

    def execute(self, check: dict[str, Any], response: str, context: dict[str, Any]) -> CheckOutcome:
        raise RuntimeError("kaboom")


class WrongType:
    def applies(self, check: dict[str, Any]) -> bool:
        return check.get("kind") == "wrong_type"

    def execute(self, check: dict[str, Any], response: str, context: dict[str, Any]) -> Any:
        return {"score": 1}


@pytest.fixture(scope="module")
def evaluator() -> Iterator[Evaluator]:
    registry = discover()  # the installed word_count plugin, found as any user's would be
    extra = [Runner(Explodes(), "plugin explodes"), Runner(WrongType(), "plugin wrong-type")]
    with PluginHost(timeout=10) as host:
        yield Evaluator(registry.runners(10, host) + extra, source)


def test_the_table_is_large_enough() -> None:
    assert len(ROWS) >= 60


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_conformance(evaluator: Evaluator, row: Row) -> None:
    verdict = evaluator.evaluate(LoadedRubric("r", "1.0", row.rubric), row.response, row.question)
    if row.score is None:
        assert verdict is None
        return
    assert verdict is not None
    assert verdict.score == pytest.approx(row.score, abs=1e-9)
    assert verdict.passed is row.passed
    reasons = " | ".join([verdict.reason, *(o.reason for o in verdict.outcomes)])
    assert row.reason in reasons
