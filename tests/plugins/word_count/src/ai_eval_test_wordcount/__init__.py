"""The seed's word_count executor, ported: response length in words falls inside a range."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ai_eval_lsp import CheckOutcome


class WordCountExecutor:
    """Scores 1.0 inside the range and 0.0 outside it; authoring errors fail with the cause."""

    def applies(self, check: Mapping[str, Any]) -> bool:
        return check.get("kind") == "word_count"

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> CheckOutcome:
        check_id = str(check.get("id", ""))
        low, high = check.get("min", 0), check.get("max")
        if (
            not isinstance(low, int)
            or low < 0
            or (high is not None and (not isinstance(high, int) or high < low))
        ):
            return CheckOutcome(check_id, "word_count", 0.0, False, "invalid min/max on the check")
        count = len(response.split())
        if count < low:
            return CheckOutcome(check_id, "word_count", 0.0, False, f"{count} words, minimum {low}")
        if high is not None and count > high:
            return CheckOutcome(check_id, "word_count", 0.0, False, f"{count} words, maximum {high}")
        return CheckOutcome(check_id, "word_count", 1.0, True, f"{count} words, within range")

    def check_schema_definitions(self) -> dict[str, Any]:
        return {
            "word_count": {
                "title": "Word count check",
                "description": "Passes when the response's length in words is within `min`..`max`.",
                "allOf": [
                    {"$ref": "#/$defs/check_base"},
                    {
                        "type": "object",
                        "required": ["kind"],
                        "properties": {
                            "kind": {
                                "const": "word_count",
                                "title": "Word count",
                                "description": "Response length in words.",
                            },
                            "min": {
                                "type": "integer",
                                "minimum": 0,
                                "title": "Minimum",
                                "description": "Fewest words allowed.",
                            },
                            "max": {
                                "type": "integer",
                                "minimum": 0,
                                "title": "Maximum",
                                "description": "Most words allowed.",
                            },
                        },
                    },
                ],
                "unevaluatedProperties": False,
            },
            # Deliberately collides with a core kind: core must stay canonical.
            "regex": {
                "allOf": [
                    {"$ref": "#/$defs/check_base"},
                    {"type": "object", "required": ["kind"], "properties": {"kind": {"const": "regex"}}},
                ],
            },
        }
