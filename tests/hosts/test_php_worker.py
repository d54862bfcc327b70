"""The PHP worker against real PHP (Debian's php-cli): executors from `fixtures/php_worker/`."""

from __future__ import annotations

import json
import logging
import os
import shlex
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from processes import alive, ends_alone, gone_within, orphan

from ai_eval_lsp.core.api import CheckOutcome, Services
from ai_eval_lsp.hosts.php import (
    NeedsDrupal,
    PhpCallFailed,
    PhpUnavailable,
    PhpWorker,
    unrunnable_reason,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "php_worker"
PLAIN = FIXTURES / "plain"
PLAIN_PSR4 = {
    "Drupal\\my_eval_extras\\": "modules/my_eval_extras/src",
    "Drupal\\worker_probes\\": "modules/worker_probes/src",
}
PHP = ("/usr/bin/php",)
WORD_COUNT = "Drupal\\my_eval_extras\\CheckExecutor\\WordCountExecutor"
SIMILARITY = "Drupal\\my_eval_extras\\CheckExecutor\\SimilarityExecutor"
PROBES = "Drupal\\worker_probes\\"
BRIDGED = ["@ai_eval.chrf_scorer", "@ai_eval.check_template_resolver"]
QUESTION = {
    "id": "q1",
    "input": "Where did the cat sit?",
    "expected": {
        "reference": "The cat sat on the mat.",
        "variants": ["A dog slept on the rug.", "The cat was sitting on the mat."],
        "count": 3,
    },
}


def line_of(path: Path, text: str) -> int:
    """The 1-based line of the first line of `path` holding `text`."""
    lines = path.read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


@pytest.fixture
def worker() -> Iterator[PhpWorker]:
    """A worker on the plain codebase; once closed, no process of it may be left."""
    with PhpWorker(PLAIN, PLAIN_PSR4, command=PHP, timeout=5, composer_autoload="vendor/autoload.php") as php:
        yield php
        pids = (php.pid, php.php_pid)
    assert gone_within(pids, 3.0)


def word_count(php: PhpWorker, response: str, **check: Any) -> CheckOutcome:
    return php.execute(WORD_COUNT, [], {"id": "length", "kind": "word_count", **check}, response, QUESTION)


# The seed's WordCountExecutor, verbatim, gives the seed's verdicts.


@pytest.mark.parametrize(
    ("response", "check", "passed", "reason"),
    [
        (" ".join(["word"] * 25), {"min": 20, "max": 150}, True, "25 words, within range"),
        (" ".join(["word"] * 10), {"min": 20, "max": 150}, False, "10 words, minimum 20"),
        (" ".join(["word"] * 151), {"min": 20, "max": 150}, False, "151 words, maximum 150"),
        (" ".join(["word"] * 150), {"min": 20, "max": 150}, True, "150 words, within range"),
        ("  one\ttwo\nthree  ", {"min": 3, "max": 3}, True, "3 words, within range"),
        ("", {}, True, "0 words, within range"),
        ("é ü ß", {"max": 2}, False, "3 words, maximum 2"),
        ("a b", {"min": "2"}, False, "invalid min/max on the check"),
        ("a b", {"min": 2.0}, False, "invalid min/max on the check"),
        ("a b", {"min": 5, "max": 4}, False, "invalid min/max on the check"),
        ("a b", {"min": -1}, False, "invalid min/max on the check"),
    ],
)
def test_word_count_gives_the_seeds_verdicts(
    worker: PhpWorker, response: str, check: dict[str, Any], passed: bool, reason: str
) -> None:
    outcome = word_count(worker, response, **check)
    assert outcome == CheckOutcome("length", "word_count", 1.0 if passed else 0.0, passed, reason)


def test_applies_is_the_executors_own_answer(worker: PhpWorker) -> None:
    assert worker.applies(WORD_COUNT, [], {"kind": "word_count"}) is True
    assert worker.applies(WORD_COUNT, [], {"kind": "regex", "pattern": "x"}) is False
    assert worker.php_version is not None and worker.php_version.startswith("8.")


def test_one_process_serves_every_call(worker: PhpWorker) -> None:
    word_count(worker, "a b")
    pid = worker.pid
    for words in range(1, 30):
        assert word_count(worker, "w " * words).reason == f"{words} words, within range"
    assert worker.pid == pid and alive(pid)


def test_calls_from_several_threads_take_turns_on_one_process(worker: PhpWorker) -> None:
    word_count(worker, "a")
    pid = worker.pid
    with ThreadPoolExecutor(max_workers=4) as pool:
        reasons = list(pool.map(lambda words: word_count(worker, "w " * words).reason, range(40)))
    assert reasons == [f"{words} words, within range" for words in range(40)]
    assert worker.pid == pid


# The bridged services answer as the Python implementations do.


def test_bridged_chrf_equals_pythons_for_one_reference(worker: PhpWorker) -> None:
    response = "The cat sat on a mat."
    check = {"id": "close", "kind": "similarity", "source": "expected.reference", "threshold": 0.5}
    outcome = worker.execute(SIMILARITY, BRIDGED, check, response, QUESTION)
    expected = Services().chrf(response, QUESTION["expected"]["reference"])
    assert outcome.score == expected
    assert outcome.passed is (expected >= 0.5)
    assert outcome.reason == f"chrF {expected:.3f}"


def test_bridged_chrf_is_the_best_over_the_variants(worker: PhpWorker) -> None:
    response = "The cat sat on the mat."
    check = {"kind": "similarity", "source": "expected.variants", "threshold": 0.99}
    outcome = worker.execute(SIMILARITY, BRIDGED, check, response, QUESTION)
    scores = [Services().chrf(response, variant) for variant in QUESTION["expected"]["variants"]]
    assert outcome.score == max(scores)
    assert min(scores) < outcome.score < 0.99 and outcome.passed is False


@pytest.mark.parametrize(
    "path",
    [
        "expected.reference",
        "expected.variants",
        "expected.variants.1",
        "expected.count",
        "expected.missing",
        "input",
        "",
    ],
)
def test_bridged_resolver_equals_pythons(worker: PhpWorker, path: str) -> None:
    check = {"kind": "resolve_probe", "source": path}
    outcome = worker.execute(SIMILARITY, BRIDGED, check, "", QUESTION)
    assert json.loads(outcome.reason) == Services.resolve(path, QUESTION)


def test_an_unresolvable_source_reaches_the_executor_as_null(worker: PhpWorker) -> None:
    check = {"kind": "similarity", "source": "expected.count"}
    outcome = worker.execute(SIMILARITY, BRIDGED, check, "x", QUESTION)
    assert outcome.reason == "`expected.count` does not resolve to a string or a list of strings"


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        # The executor catches this one; the check fails all the same.
        ("missing_chrf_method", "the bridged service `@ai_eval.chrf_scorer` has no method `corpusScore`"),
        (
            "missing_resolver_method",
            "the bridged service `@ai_eval.check_template_resolver` has no method `resolveAll`",
        ),
    ],
)
def test_a_method_the_bridge_lacks_fails_the_check_with_the_exact_message(
    worker: PhpWorker, kind: str, reason: str
) -> None:
    outcome = worker.execute(
        f"{PROBES}MissingMethodExecutor", BRIDGED, {"id": "m", "kind": kind}, "x", QUESTION
    )
    assert outcome == CheckOutcome("m", kind, 0.0, False, reason)


def test_strict_types_executor_typed_with_ai_eval_interfaces(worker: PhpWorker) -> None:
    """Types named after ai_eval's services, absent from this codebase, are bridged."""
    executor = f"{PROBES}StrictExecutor"
    check = {"kind": "strict_similarity", "source": "expected.reference"}
    outcome = worker.execute(executor, BRIDGED, check, "The cat sat.", QUESTION)
    assert outcome.score == Services().chrf("The cat sat.", QUESTION["expected"]["reference"])

    outcome = worker.execute(executor, BRIDGED, {**check, "as_number": True}, "The cat sat.", QUESTION)
    line = line_of(PLAIN / "modules/worker_probes/src/StrictExecutor.php", "$this->chrf->score(")
    assert outcome.passed is False
    assert outcome.reason == (
        f"`{executor}::execute()` threw TypeError: AiEvalLsp\\Bridge\\Chrf\\Drupal\\ai_eval\\ChrfScorerInterface"
        "::score(): Argument #1 ($hypothesis) must be of type string, int given, called in "
        f"modules/worker_probes/src/StrictExecutor.php on line {line}"
    )


# ai_eval's own types, when the codebase holds the module.

OWN = FIXTURES / "own_ai_eval"
OWN_PSR4 = {"Drupal\\ai_eval\\": "modules/ai_eval/src", "Drupal\\site_checks\\": "modules/site_checks/src"}


def test_ai_eval_own_classes_are_used_and_its_service_types_bridged() -> None:
    executor = "Drupal\\site_checks\\TargetExecutor"
    with PhpWorker(OWN, OWN_PSR4, command=PHP) as php:
        check = {"id": "t", "kind": "site_target", "source": "expected.reference"}
        outcome = php.execute(executor, BRIDGED, check, "The cat sat on the mat", QUESTION)
        # ai_eval's own CheckOutcome (private, snake_case, reordered) is read by name.
        expected = Services().chrf("The cat sat on the mat", QUESTION["expected"]["reference"])
        assert outcome == CheckOutcome("t", "site_target", expected, expected >= 0.5, f"chrF {expected:.3f}")

        corpus = php.execute(executor, BRIDGED, {"kind": "site_corpus"}, "x", QUESTION)
        assert corpus.reason == "the bridged service `@ai_eval.chrf_scorer` has no method `corpusScore`"
        # A concrete class: its other methods never run, and fail as missing.
        describe = php.execute(executor, BRIDGED, {"kind": "site_describe"}, "x", QUESTION)
        assert (
            describe.reason
            == "the bridged service `@ai_eval.check_template_resolver` has no method `describe`"
        )


def test_an_untyped_interface_lets_the_worker_check_the_return_type() -> None:
    executor = "Drupal\\site_checks\\ReturnsStringExecutor"
    with PhpWorker(OWN, OWN_PSR4, command=PHP) as php:
        assert php.applies(executor, [], {"kind": "anything"}) is True  # 'yes' is truthy
        pid = php.pid
        outcome = php.execute(executor, [], {"id": "s", "kind": "strings"}, "x", QUESTION)
        assert php.applies(executor, [], {"kind": "anything"}) is True and php.pid == pid  # it goes on
    assert outcome == CheckOutcome(
        "s",
        "strings",
        0.0,
        False,
        f"`{executor}::execute()` returned string, not a Drupal\\ai_eval\\CheckOutcome: "
        "return `new CheckOutcome($id, $kind, $score, $passed, $reason)`",
    )


def test_an_outcome_with_unknown_property_names_is_read_by_position() -> None:
    root = FIXTURES / "positional_outcome"
    # An absolute folder is passed relative to the project folder.
    psr4 = {"Drupal\\ai_eval\\": "modules/ai_eval/src", "Drupal\\probe\\": root / "modules/probe/src"}
    with PhpWorker(root, psr4, command=PHP) as php:
        outcome = php.execute("Drupal\\probe\\PlainExecutor", [], {"kind": "plain"}, "", {})
    assert outcome == CheckOutcome("p1", "plain", 0.25, True, "read by position")


# Executors that misbehave fail their own check; the worker goes on.


def test_stray_output_never_reaches_the_protocol(worker: PhpWorker, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ai_eval_lsp")
    executor = f"{PROBES}EchoingExecutor"
    assert worker.applies(executor, [], {"kind": "echo"}) is True
    for response in ("first", "second\nline"):
        assert worker.execute(executor, [], {"id": "e", "kind": "echo"}, response, {}) == CheckOutcome(
            "e", "echo", 1.0, True, response
        )
    assert word_count(worker, "still fine").reason == "2 words, within range"
    logged = caplog.text
    assert "constructed" in logged and "executing" in logged and "==========" in logged
    assert "straight to STDOUT, with no newline" in logged
    assert "a note on STDERR" in logged


def test_large_payloads_cross_the_pipe_both_ways(worker: PhpWorker) -> None:
    response = 'héllo wörld, ünïcode and "quotes" \\ and \x02 too\n' * 100_000  # ~4.8 MB
    outcome = worker.execute(f"{PROBES}EchoingExecutor", [], {"kind": "echo"}, response, QUESTION)
    assert outcome.reason == response
    assert word_count(worker, "w " * 200_000).reason == "200000 words, within range"


def test_an_exception_fails_the_check_with_its_cause_and_the_worker_goes_on(worker: PhpWorker) -> None:
    word_count(worker, "warm up")
    pid = worker.pid
    executor = f"{PROBES}ThrowingExecutor"
    outcome = worker.execute(executor, [], {"id": "boom", "kind": "throwing"}, "x", QUESTION)
    line = line_of(PLAIN / "modules/worker_probes/src/ThrowingExecutor.php", "the reference service is down")
    assert outcome == CheckOutcome(
        "boom",
        "throwing",
        0.0,
        False,
        f"`{executor}::execute()` threw RuntimeException: the reference service is down "
        f"(modules/worker_probes/src/ThrowingExecutor.php:{line})",
    )
    with pytest.raises(PhpCallFailed, match=r"threw LogicException: applies\(\) cannot decide"):
        worker.applies(executor, [], {"kind": "throw_in_applies"})
    assert word_count(worker, "after the storm").reason == "3 words, within range"
    assert worker.pid == pid


def test_a_wrong_return_type_fails_the_check(worker: PhpWorker) -> None:
    executor = f"{PROBES}WrongTypeExecutor"
    outcome = worker.execute(executor, [], {"kind": "wrong"}, "x", QUESTION)
    assert outcome.passed is False and outcome.score == 0.0
    assert outcome.reason.startswith(
        f"`{executor}::execute()` threw TypeError: {executor}::execute(): "
        "Return value must be of type Drupal\\ai_eval\\CheckOutcome, array returned"
    )


def test_a_fatal_error_fails_the_check_and_the_next_call_gets_a_new_worker(worker: PhpWorker) -> None:
    word_count(worker, "warm up")
    first_pid = worker.pid
    executor = f"{PROBES}FatalExecutor"
    outcome = worker.execute(executor, [], {"id": "f", "kind": "fatal"}, "x", QUESTION)
    line = line_of(PLAIN / "modules/worker_probes/src/FatalExecutor.php", "function applies")
    assert outcome.passed is False
    assert outcome.reason == (
        f"`{executor}::execute()` ended the PHP worker with a PHP fatal error: Declaration of "
        f"{executor}::applies(array $check): string must be compatible with "
        "Drupal\\ai_eval\\CheckExecutorInterface::applies(array $check): bool "
        f"(modules/worker_probes/src/FatalExecutor.php:{line}); the next check starts a new worker"
    )
    assert not alive(first_pid)
    assert word_count(worker, "back again").reason == "2 words, within range"
    assert worker.pid != first_pid


def test_exit_in_an_executor_fails_the_check_and_the_next_call_gets_a_new_worker(worker: PhpWorker) -> None:
    executor = f"{PROBES}ExitingExecutor"
    outcome = worker.execute(executor, [], {"kind": "exiting"}, "x", QUESTION)
    assert outcome.reason == (
        f"`{executor}::execute()` ended the PHP worker with exit() or die(); the next check starts a new worker"
    )
    assert word_count(worker, "back").reason == "1 words, within range"


# The seed's outcome contract (seed 000, "The interface"): whatever an executor does, its check
# gets the outcome the seed gives it, and the same process answers the next call.

PROBES_SRC = PLAIN / "modules/worker_probes/src"


def probe(score: float | str, **check: Any) -> dict[str, Any]:
    return {"id": "p", "kind": "score_probe", "score": score, **check}


@pytest.mark.parametrize(
    ("executor", "check", "expected"),
    [
        # The score is clamped to 0..1 by PHP's CheckOutcome itself, as the executor sees it.
        ("ScoreProbeExecutor", probe(1.7), CheckOutcome("p", "score_probe", 1.0, True, "PHP holds 1.0")),
        ("ScoreProbeExecutor", probe(-0.5), CheckOutcome("p", "score_probe", 0.0, True, "PHP holds 0.0")),
        ("ScoreProbeExecutor", probe(0.25), CheckOutcome("p", "score_probe", 0.25, True, "PHP holds 0.25")),
        # JSON cannot carry these: only PHP's clamp makes them scores.
        ("ScoreProbeExecutor", probe("INF"), CheckOutcome("p", "score_probe", 1.0, True, "PHP holds 1.0")),
        ("ScoreProbeExecutor", probe("-INF"), CheckOutcome("p", "score_probe", 0.0, True, "PHP holds 0.0")),
        # Not a score at all: the lowest, as Python's CheckOutcome makes it.
        ("ScoreProbeExecutor", probe("NAN"), CheckOutcome("p", "score_probe", 0.0, True, "PHP holds 0.0")),
        # The check id may be an empty string.
        (
            "ScoreProbeExecutor",
            {"kind": "score_probe", "score": 0.5},
            CheckOutcome("", "score_probe", 0.5, True, "PHP holds 0.5"),
        ),
        (
            "ThrowingExecutor",
            {"id": "t", "kind": "throwing"},
            CheckOutcome(
                "t",
                "throwing",
                0.0,
                False,
                f"`{PROBES}ThrowingExecutor::execute()` threw RuntimeException: the reference service is down "
                f"(modules/worker_probes/src/ThrowingExecutor.php:"
                f"{line_of(PROBES_SRC / 'ThrowingExecutor.php', 'the reference service is down')})",
            ),
        ),
        (
            "ThrowingConstructorExecutor",
            {"id": "c", "kind": "constructed"},
            CheckOutcome(
                "c",
                "constructed",
                0.0,
                False,
                f"constructing `{PROBES}ThrowingConstructorExecutor` threw InvalidArgumentException: "
                "no API key configured (modules/worker_probes/src/ThrowingConstructorExecutor.php:"
                f"{line_of(PROBES_SRC / 'ThrowingConstructorExecutor.php', 'no API key configured')})",
            ),
        ),
        # What it prints is logged, never part of the outcome.
        (
            "EchoingExecutor",
            {"id": "e", "kind": "echo"},
            CheckOutcome("e", "echo", 1.0, True, "the response"),
        ),
        (
            "MarkWritingExecutor",
            {"id": "m", "kind": "mark"},
            CheckOutcome("m", "mark", 1.0, True, "wrote the mark"),
        ),
        (
            "WrongTypeExecutor",
            {"id": "w", "kind": "wrong"},
            CheckOutcome(
                "w",
                "wrong",
                0.0,
                False,
                f"`{PROBES}WrongTypeExecutor::execute()` threw TypeError: {PROBES}WrongTypeExecutor::execute(): "
                "Return value must be of type Drupal\\ai_eval\\CheckOutcome, array returned "
                f"(modules/worker_probes/src/WrongTypeExecutor.php:"
                f"{line_of(PROBES_SRC / 'WrongTypeExecutor.php', 'return [')})",
            ),
        ),
    ],
    ids=[
        "score above 1",
        "score below 0",
        "score within",
        "INF",
        "-INF",
        "NAN",
        "empty check id",
        "exception in execute",
        "exception in the constructor",
        "printed text",
        "printed mark bytes",
        "no CheckOutcome",
    ],
)
def test_the_seeds_outcome_contract_holds_and_the_worker_answers_the_next_call(
    worker: PhpWorker, executor: str, check: dict[str, Any], expected: CheckOutcome
) -> None:
    word_count(worker, "warm up")
    pid = worker.pid
    assert worker.execute(f"{PROBES}{executor}", [], check, "the response", QUESTION) == expected
    assert word_count(worker, "still answering").reason == "2 words, within range"
    assert worker.pid == pid


@pytest.mark.parametrize(
    ("class_name", "reason"),
    [
        (
            f"{PROBES}Nowhere",
            f"class `{PROBES}Nowhere` not found: no file `modules/worker_probes/src/Nowhere.php` "
            f"(PSR-4 `{PROBES}` -> `modules/worker_probes/src/`)",
        ),
        (
            f"{PROBES}MisnamedExecutor",
            f"class `{PROBES}MisnamedExecutor` not found: `modules/worker_probes/src/MisnamedExecutor.php` "
            f"does not declare it (PSR-4 `{PROBES}` -> `modules/worker_probes/src/`); "
            "check the file's namespace and class name",
        ),
        (
            "Drupal\\not_installed\\Executor",
            "class `Drupal\\not_installed\\Executor` not found: no installed module's namespace "
            "(`Drupal\\<module>\\`) covers it",
        ),
        (
            f"{PROBES}NotAnExecutor",
            f"`{PROBES}NotAnExecutor` does not implement Drupal\\ai_eval\\CheckExecutorInterface "
            "(modules/worker_probes/src/NotAnExecutor.php:"
            f"{line_of(PLAIN / 'modules/worker_probes/src/NotAnExecutor.php', 'final class')}): "
            "add `implements CheckExecutorInterface` to its declaration",
        ),
    ],
)
def test_a_class_that_cannot_run_fails_the_check_with_where_to_look(
    worker: PhpWorker, class_name: str, reason: str
) -> None:
    assert worker.execute(class_name, [], {"id": "c", "kind": "k"}, "x", QUESTION) == CheckOutcome(
        "c", "k", 0.0, False, reason
    )
    with pytest.raises(PhpCallFailed) as raised:
        worker.applies(class_name, [], {"kind": "k"})
    assert str(raised.value) == reason


def test_composers_autoloader_is_loaded_when_given(worker: PhpWorker) -> None:
    executor = f"{PROBES}VendorExecutor"
    assert worker.execute(executor, [], {"kind": "vendor"}, "three small words", {}).reason == "3 words"
    with PhpWorker(PLAIN, PLAIN_PSR4, command=PHP) as without:
        outcome = without.execute(executor, [], {"kind": "vendor"}, "three small words", {})
    assert 'threw Error: Class "Acme\\Text\\Words" not found' in outcome.reason


def test_a_missing_composer_autoloader_makes_php_unavailable() -> None:
    with (
        PhpWorker(PLAIN, PLAIN_PSR4, command=PHP, composer_autoload="vendor/nope.php") as php,
        pytest.raises(PhpUnavailable) as raised,
    ):
        word_count(php, "x")
    assert str(raised.value) == (
        "the PHP worker could not start: composer's autoloader `vendor/nope.php` does not exist"
    )


# Constructor arguments, as Drupal's container passes them.


def test_constructor_arguments_pass_as_the_container_would(worker: PhpWorker) -> None:
    executor = f"{PROBES}ArgumentsExecutor"
    arguments = ["checks", "7", "@?logger.factory", {"paths": ["@@literal", "100%%"]}, "@@handle"]
    first = json.loads(worker.execute(executor, arguments, {"kind": "a"}, "", {}).reason)
    assert first == {
        "label": "checks",
        "limit": 7,  # coerced, as Drupal's container (no strict_types) does
        "logger": None,
        "options": {"paths": ["@literal", "100%"]},
        "handle": "@handle",
        "constructed": 1,
    }
    again = json.loads(worker.execute(executor, arguments, {"kind": "a"}, "", {}).reason)
    assert again["constructed"] == 1  # one instance per class and arguments, for the worker's life
    named = json.loads(
        worker.execute(executor, {"$limit": 3, "$label": "named"}, {"kind": "a"}, "", {}).reason
    )
    assert (named["label"], named["limit"], named["logger"], named["constructed"]) == ("named", 3, None, 2)


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ([], None),
        (BRIDGED, None),
        (["@?ai_eval.chrf_scorer", "@!ai_eval.check_template_resolver"], None),
        (["@?logger.factory", "@@literal", "100%%", "50% off", 3, 1.5, True, None, {"a": ["x"]}], None),
        (["@entity_type.manager"], "needs the Drupal service `@entity_type.manager`"),
        (["@!entity_type.manager"], "needs the Drupal service `@entity_type.manager`"),
        (["%site.path%"], "needs the Drupal parameter `%site.path%`"),
        (["%app.root%/modules"], "needs the Drupal parameter `%app.root%`"),
        (
            {"$manager": "@entity_type.manager", "$caches": ["@cache.default", "@entity_type.manager"]},
            "needs the Drupal services `@entity_type.manager`, `@cache.default`",
        ),
        (
            ["@ai_eval.chrf_scorer", "@logger.factory", "%kernel.debug%"],
            "needs the Drupal service `@logger.factory` and the Drupal parameter `%kernel.debug%`",
        ),
        ([{1, 2}], "has a constructor argument the editor cannot build: `{1, 2}`"),
    ],
)
def test_unrunnable_reason(arguments: Any, reason: str | None) -> None:
    assert unrunnable_reason(arguments) == reason


def test_an_executor_that_needs_drupal_is_not_run(worker: PhpWorker) -> None:
    with pytest.raises(NeedsDrupal) as raised:
        worker.execute(f"{PROBES}ArgumentsExecutor", ["@entity_type.manager"], {"kind": "a"}, "", {})
    assert str(raised.value) == "needs the Drupal service `@entity_type.manager`"
    assert worker.pid is None  # no PHP was started for it


# The time limit, and no process left behind.


def test_an_endless_executor_is_killed_at_the_time_limit() -> None:
    executor = f"{PROBES}LoopingExecutor"
    with PhpWorker(PLAIN, PLAIN_PSR4, command=PHP, timeout=1) as php:
        word_count(php, "warm up")
        pids = (php.pid, php.php_pid)
        started = time.monotonic()
        outcome = php.execute(executor, [], {"id": "loop", "kind": "loop"}, "x", QUESTION)
        elapsed = time.monotonic() - started
        assert outcome == CheckOutcome(
            "loop",
            "loop",
            0.0,
            False,
            f"`{executor}::execute()` did not finish within 1 s (runTimeoutSeconds); "
            "the PHP worker was stopped and the next check starts a new one",
        )
        assert 1.0 <= elapsed < 4.0
        assert gone_within(pids, 3.0)
        assert word_count(php, "a fresh worker").reason == "3 words, within range"
        assert php.pid not in pids


def test_a_worker_whose_server_was_killed_ends_at_its_own_time_limit(tmp_path: Path) -> None:
    """A server killed outright cannot stop its worker, and an executor asleep uses no CPU time,
    so PHP's own CPU limit never comes: the worker's alarm ends it."""
    server = (
        "from ai_eval_lsp.hosts.php import PhpWorker\n"
        f"worker = PhpWorker({str(PLAIN)!r}, {PLAIN_PSR4!r}, command={PHP!r}, timeout=3)\n"
        f"worker.execute({PROBES + 'SleepingExecutor'!r}, [], {{'kind': 'sleep'}}, '', {{}})\n"
    )
    php = orphan(server, tmp_path / "pid")
    # The alarm comes a second after the 3 s limit, on the wall clock, however busy the machine;
    # the bound is a generous multiple of it, not the several times of a wrong alarm.
    assert ends_alone(php, 12.0)


def test_a_wrapper_command_works_and_its_children_die_with_it() -> None:
    # Not `exec`: sh stays the parent, and PHP is its child in the same process group.
    wrapper = ["sh", "-c", '"$0" "$@"', PHP[0]]
    with PhpWorker(PLAIN, PLAIN_PSR4, command=wrapper, timeout=1) as php:
        assert word_count(php, "through a wrapper").reason == "3 words, within range"
        shell, child = php.pid, php.php_pid
        assert shell != child and alive(shell) and alive(child)
        php.execute(f"{PROBES}LoopingExecutor", [], {"kind": "loop"}, "x", QUESTION)
        assert gone_within((shell, child), 3.0)


def test_a_wrapper_that_joins_its_arguments_into_a_shell_line(tmp_path: Path) -> None:
    """As `ddev exec php` does without --raw: the loader must survive `bash -c "..."`."""
    script = tmp_path / "joined.py"
    script.write_text(
        "import subprocess, sys\n"
        "def quote(arg):\n"
        "    if any(c in arg for c in '\" \\t\\r\\n#'):\n"
        "        return '\"' + arg.replace('\"', '\\\\\"') + '\"'\n"
        "    return arg\n"
        "sys.exit(subprocess.call(['bash', '-c', ' '.join(quote(a) for a in sys.argv[1:])]))\n"
    )
    with PhpWorker(PLAIN, PLAIN_PSR4, command=[sys.executable, str(script), PHP[0]]) as php:
        assert word_count(php, "joined and quoted").reason == "3 words, within range"


def test_close_from_another_thread_ends_a_call_in_progress(caplog: pytest.LogCaptureFixture) -> None:
    looping = threading.Event()

    class LoopWatch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "entering the loop" in record.getMessage():
                looping.set()

    caplog.set_level(logging.INFO, logger="ai_eval_lsp")
    watch = LoopWatch()
    logging.getLogger("ai_eval_lsp").addHandler(watch)
    executor = f"{PROBES}LoopingExecutor"
    results: list[CheckOutcome] = []
    php = PhpWorker(PLAIN, PLAIN_PSR4, command=PHP, timeout=60)
    call = threading.Thread(
        target=lambda: results.append(php.execute(executor, [], {"kind": "loop"}, "", {}))
    )
    try:
        call.start()
        assert looping.wait(10)
        pid = php.pid
        started = time.monotonic()
        php.close()
        call.join(10)
        assert time.monotonic() - started < 5
    finally:
        logging.getLogger("ai_eval_lsp").removeHandler(watch)
        php.close()
    assert results == [
        CheckOutcome("", "loop", 0.0, False, f"the PHP worker was closed while `{executor}::execute()` ran")
    ]
    assert not alive(pid)
    with pytest.raises(RuntimeError, match="closed"):
        word_count(php, "too late")


# No usable PHP: the check is skipped with the cause, never failed.


def test_no_php_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with PhpWorker(PLAIN, PLAIN_PSR4) as php, pytest.raises(PhpUnavailable) as raised:
        word_count(php, "x")
    assert str(raised.value) == "no PHP found: `php` is not on PATH (set the `php.command` setting)"


def test_a_php_command_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "bin" / "php"
    with PhpWorker(PLAIN, PLAIN_PSR4, command=[str(missing)]) as php, pytest.raises(PhpUnavailable) as raised:
        php.applies(WORD_COUNT, [], {"kind": "word_count"})
    assert str(raised.value) == f"no PHP found: `{missing}` does not exist (set the `php.command` setting)"


def test_php_older_than_8_1_is_unavailable_and_not_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    fake = tmp_path / "php"
    fake.write_text(
        f'#!/bin/sh\necho run >> \'{runs}\'\nprintf \'\\002{{"method":"hello","params":{{"php":"7.4.33","id":70433,"pid":%d}}}}\\n\' $$\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with PhpWorker(PLAIN, PLAIN_PSR4) as php:
        for _ in range(3):
            with pytest.raises(PhpUnavailable) as raised:
                word_count(php, "x")
            assert str(raised.value) == (
                "`php` runs PHP 7.4.33; PHP executors need PHP 8.1 or later (set the `php.command` setting)"
            )
    assert runs.read_text().splitlines() == ["run"]


def test_a_wrapper_that_cannot_start_php_is_unavailable_with_its_message() -> None:
    wrapper = ["sh", "-c", "echo ddev: project is not running >&2; exit 1"]
    with PhpWorker(PLAIN, PLAIN_PSR4, command=wrapper) as php, pytest.raises(PhpUnavailable) as raised:
        word_count(php, "x")
    assert str(raised.value) == (
        f"`{shlex.join(wrapper)}` did not start a PHP worker (exit status 1): "
        "ddev: project is not running (set the `php.command` setting)"
    )


def test_a_command_that_never_answers_is_killed_at_the_start_limit(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    wrapper = ["sh", "-c", f"echo $$ > '{pid_file}'; exec sleep 60"]
    with (
        PhpWorker(PLAIN, PLAIN_PSR4, command=wrapper, start_timeout=0.5) as php,
        pytest.raises(PhpUnavailable) as raised,
    ):
        word_count(php, "x")
    assert str(raised.value) == f"`{shlex.join(wrapper)}` did not start a PHP worker within 0.5 s"
    assert gone_within((int(pid_file.read_text()),), 3.0)
