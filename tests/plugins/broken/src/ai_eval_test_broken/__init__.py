"""Executors that misbehave, to prove each is isolated and reported."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

NOT_AN_EXECUTOR = 42


class RaisesInDefinitions:
    def applies(self, check: Mapping[str, Any]) -> bool:
        return check.get("kind") == "never_defined"

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> Any:
        raise RuntimeError("never reached")

    def check_schema_definitions(self) -> dict[str, Any]:
        raise RuntimeError("definitions are on fire")


class MalformedDefinitions:
    def applies(self, check: Mapping[str, Any]) -> bool:
        return False

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> Any:
        raise RuntimeError("never reached")

    def check_schema_definitions(self) -> dict[str, Any]:
        return {
            "unpinned": {"type": "object", "required": ["kind"], "properties": {"kind": {"type": "string"}}},
            "not_required": {"type": "object", "properties": {"kind": {"const": "not_required"}}},
            "not_a_schema": 5,
            "bad_keyword": {
                "type": "nonsense",
                "required": ["kind"],
                "properties": {"kind": {"const": "bad_keyword"}},
            },
            "dangling_ref": {
                "allOf": [{"$ref": "#/$defs/nowhere"}],
                "required": ["kind"],
                "properties": {"kind": {"const": "dangling_ref"}},
            },
            "Bad-Name": {"required": ["kind"], "properties": {"kind": {"const": "Bad-Name"}}},
        }


class RaisesInApplies:
    """Defines the `fragile` kind, then raises when asked whether it runs a `fragile` check."""

    def applies(self, check: Mapping[str, Any]) -> bool:
        if check.get("kind") == "fragile":
            raise ValueError("applies() is on fire")
        return False

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> Any:
        raise RuntimeError("never reached")

    def check_schema_definitions(self) -> dict[str, Any]:
        return {
            "fragile": {
                "allOf": [
                    {"$ref": "#/$defs/check_base"},
                    {"type": "object", "required": ["kind"], "properties": {"kind": {"const": "fragile"}}},
                ],
                "unevaluatedProperties": False,
            }
        }


class NeverReturns:
    """Claims `stuck` checks and never returns from them; writes its process id to the file named
    by AI_EVAL_TEST_PID_FILE first, so a test can see the process is stopped."""

    def applies(self, check: Mapping[str, Any]) -> bool:
        return check.get("kind") == "stuck"

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> Any:
        pid_file = os.environ.get("AI_EVAL_TEST_PID_FILE")
        if pid_file:
            Path(pid_file).write_text(str(os.getpid()))
        while True:
            time.sleep(3600)
