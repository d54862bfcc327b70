"""Run-complete subscribers for tests: one records each call, one raises, one is slow.

They act only when the test that needs them sets AI_EVAL_TEST_SUBSCRIBERS to a log file.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any


def _log() -> str | None:
    return os.environ.get("AI_EVAL_TEST_SUBSCRIBERS")


def records(row: dict[str, Any]) -> None:
    path = _log()
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps({"id": row["id"], "run_id": row["run_id"], "at": time.time()}) + "\n")


def raises(row: dict[str, Any]) -> None:
    if _log():
        raise RuntimeError("this subscriber always fails")


def slow(row: dict[str, Any]) -> None:
    """Ends once the file AI_EVAL_TEST_SLOW_UNTIL names exists (the test lets it), at most in a minute."""
    gate = os.environ.get("AI_EVAL_TEST_SLOW_UNTIL")
    deadline = time.monotonic() + 60
    while _log() and gate and not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.01)
