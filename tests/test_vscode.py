"""The VS Code extension: its own logic under node's test runner, and the packaged .vsix in the
real editor (code-server in headless Chromium). A missing toolchain is a failure, not a skip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXTENSION = Path(__file__).resolve().parent.parent / "vscode-extension"


def test_the_extension_logic_passes_its_unit_tests() -> None:
    result = subprocess.run(["npm", "test"], cwd=EXTENSION, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "# fail 0" in result.stdout and "# pass 11" in result.stdout


def test_the_extension_in_code_server(tmp_path: Path) -> None:
    artifacts = Path(os.environ.get("AI_EVAL_E2E_ARTIFACTS", EXTENSION / "e2e-artifacts"))
    env = {**os.environ, "AI_EVAL_PYTHON": sys.executable, "AI_EVAL_E2E_ARTIFACTS": str(artifacts)}
    process = subprocess.run(
        ["node", "scripts/e2e.mjs"], cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=600
    )
    result = json.loads(process.stdout.strip().splitlines()[-1])
    assert result["ok"], (result.get("error"), result.get("serverLog"))
    problems = "\n".join(result["problems"])
    assert "regex check: `patern` is not a field of regex" in problems
    assert "word_count" not in problems  # the plugin's kind is accepted
    assert "AI Eval: 16 kinds, 2 from plugins" in result["status"]
    assert any(label.startswith("word_count") for label in result["completion"]), result["completion"]
    complete = [n for n in result["notifications"] if n.startswith("AI Eval run complete: support_tone")]
    assert (
        complete and "pass rate 0.50 (95% CI 0.09\u20130.91)" in complete[0] and "gate passed" in complete[0]
    ), result["notifications"]
    for screenshot in ("problems.png", "completion.png", "run-complete.png"):
        assert (artifacts / screenshot).stat().st_size > 10_000
