"""The core executors, the same shape as a plugin's: `applies(check)` and `execute(...)`.

Authoring errors fail the check with the cause in the reason; nothing is skipped silently.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import regex

from ai_eval_lsp.core.api import CheckOutcome, Services
from ai_eval_lsp.core.lints import compile_pattern


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(f'"{value}"' for value in values)


class StringCheckExecutor:
    """`must_contain_any`, `must_not_contain` and `regex`: binary checks on the response text."""

    KINDS = frozenset({"must_contain_any", "must_not_contain", "regex"})

    def __init__(self, regex_timeout: float = 10.0) -> None:
        self.regex_timeout = regex_timeout

    def applies(self, check: Mapping[str, Any]) -> bool:
        return check.get("kind") in self.KINDS

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> CheckOutcome:
        if check.get("kind") == "regex":
            return self._regex(check, response)
        values = check.get("values")
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            return CheckOutcome.of(check, False, "`values` must be a non-empty list of strings")
        case_sensitive = check.get("case_sensitive", False)
        if not isinstance(case_sensitive, bool):
            return CheckOutcome.of(check, False, "`case_sensitive` must be true or false")
        haystack = response if case_sensitive else response.casefold()
        found = [v for v in values if (v if case_sensitive else v.casefold()) in haystack]
        if check.get("kind") == "must_contain_any":
            return CheckOutcome.of(
                check, bool(found), f"found {_quoted(found[:1])}" if found else "none of the values found"
            )
        return CheckOutcome.of(
            check, not found, f"found {_quoted(found)}" if found else "none of the values found"
        )

    def _regex(self, check: Mapping[str, Any], response: str) -> CheckOutcome:
        pattern, flags = check.get("pattern"), check.get("flags", "")
        must_match = check.get("must_match", True)
        if not isinstance(pattern, str):
            return CheckOutcome.of(check, False, "`pattern` must be a string")
        if not isinstance(flags, str) or not set(flags) <= set("imsxu"):
            return CheckOutcome.of(check, False, f"`flags` must be made of i, m, s, x and u, not {flags!r}")
        if not isinstance(must_match, bool):
            return CheckOutcome.of(check, False, "`must_match` must be true or false")
        try:
            compiled = compile_pattern(pattern, flags)
        except regex.error as err:
            return CheckOutcome.of(check, False, f"the pattern does not compile: {err}")
        try:
            match = compiled.search(response, timeout=self.regex_timeout, concurrent=True)
        except TimeoutError:
            return CheckOutcome.of(
                check,
                False,
                f"matching took longer than {self.regex_timeout:g} s and was stopped; the pattern backtracks too much (nested repeats such as `(a+)+`?)",
            )
        if must_match:
            return CheckOutcome.of(
                check, match is not None, f"matched {match.group()!r}" if match else "no match"
            )
        return CheckOutcome.of(
            check,
            match is None,
            f"matched {match.group()!r}, which must not match" if match else "no match, as required",
        )


def normalize(text: str) -> str:
    """NFKC, case folding, whitespace runs collapsed to one space, trimmed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


class TargetMatchExecutor:
    """`target_match`: the response against a reference taken from the question by dot-path."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def applies(self, check: Mapping[str, Any]) -> bool:
        return check.get("kind") == "target_match"

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> CheckOutcome:
        source, mode = check.get("source"), check.get("mode", "exact")
        threshold = check.get("threshold", 0.5)
        if not isinstance(source, str) or not source:
            return CheckOutcome.of(
                check, False, "`source` must be a dot-path into the question, such as `expected.reference`"
            )
        if mode not in ("exact", "normalized", "chrf"):
            return CheckOutcome.of(check, False, f"unknown mode {mode!r}: use exact, normalized or chrf")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
            return CheckOutcome.of(
                check, False, f"`threshold` must be a number from 0 to 1, not {threshold!r}"
            )
        found = self.services.resolve(source, context)
        if found is None:
            return CheckOutcome.of(
                check, False, f"`{source}` does not resolve to a string or a list of strings in the question"
            )
        variants = [found] if isinstance(found, str) else found
        if mode == "exact":
            hit = next((i for i, v in enumerate(variants) if v == response), None)
            return CheckOutcome.of(check, hit is not None, _variant_reason("exactly", hit, len(variants)))
        if mode == "normalized":
            wanted = normalize(response)
            hit = next((i for i, v in enumerate(variants) if normalize(v) == wanted), None)
            return CheckOutcome.of(
                check, hit is not None, _variant_reason("after normalising", hit, len(variants))
            )
        scores = [self.services.chrf(response, variant) for variant in variants]
        best = max(range(len(scores)), key=scores.__getitem__)
        score = scores[best]
        which = f" (variant {best + 1} of {len(variants)})" if len(variants) > 1 else ""
        return CheckOutcome(
            str(check.get("id") or ""),
            "target_match",
            score,
            score >= threshold,
            f"chrF {score:.3f}{which}, threshold {threshold:g}",
        )


def _variant_reason(how: str, hit: int | None, count: int) -> str:
    if hit is None:
        return (
            f"does not match the reference {how}"
            if count == 1
            else f"matches none of the {count} references {how}"
        )
    return f"matches the reference {how}" if count == 1 else f"matches reference {hit + 1} of {count} {how}"


def core_executors(services: Services, timeout: float) -> list[Any]:
    """The core executors, in dispatch order."""
    return [StringCheckExecutor(timeout), TargetMatchExecutor(services)]
