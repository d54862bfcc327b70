"""The public plugin API (SPEC section 4): what an executor plugin implements and receives."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """The result of one check; the score is clamped to 0..1, the rubric scale."""

    check_id: str
    kind: str
    score: float
    passed: bool
    reason: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "score", min(1.0, max(0.0, float(self.score))))

    @classmethod
    def of(cls, check: Mapping[str, Any], passed: bool, reason: str) -> CheckOutcome:
        """A pass (score 1) or a failure (score 0) of `check`, named by its id and kind."""
        return cls(str(check.get("id") or ""), str(check.get("kind") or ""), float(passed), passed, reason)


@runtime_checkable
class CheckExecutor(Protocol):
    """Runs the checks it claims; the first executor whose `applies()` is true gets a check."""

    def applies(self, check: Mapping[str, Any]) -> bool: ...

    def execute(
        self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]
    ) -> CheckOutcome: ...


@runtime_checkable
class CheckSchemaProvider(Protocol):
    """Contributes JSON Schema definitions, one per kind, spliced in at `$defs.check_<kind>`."""

    def check_schema_definitions(self) -> dict[str, dict[str, Any]]: ...


class Services:
    """What the runtime lends executors: the dot-path template resolver and the chrF scorer."""

    @staticmethod
    def resolve(path: str, question: Mapping[str, Any]) -> str | list[str] | None:
        """The string, or list of variant strings, at a dot-path such as `expected.reference`.

        None when the path does not resolve or leads to anything else.
        """
        value: Any = question
        for step in path.split("."):
            if isinstance(value, Mapping) and step in value:
                value = value[step]
            elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
                value = value[int(step)]
            else:
                return None
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
            return list(value)
        return None

    def chrf(self, hypothesis: str, reference: str) -> float:
        """Sentence chrF with sacrebleu's defaults, scaled to 0..1."""
        from ai_eval_lsp.core.chrf import sentence_chrf  # numpy (when installed) and sacrebleu, on first use

        return sentence_chrf(hypothesis, reference) / 100.0
