"""The compiled wheel (setup.py's AI_EVAL_LSP_MYPYC=1): its line reader and nodes run as machine
code, read every document as the pure Python does, and the command says which it runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from compiled import compiled_environment
from conftest import ROOT
from rubrics import realistic

READING_TESTS = [
    "tests/core/test_block_reader.py",
    "tests/core/test_fast_path_equivalence.py",
    "tests/core/test_incremental.py",
    "tests/core/test_problem_fixtures.py",
    "tests/core/test_shared_reading.py",
    "tests/core/test_broken_item.py",
]
"""The tests of reading, of trees moved by edits and of the problems found in the fixtures."""


@pytest.fixture(scope="module")
def environment() -> dict[str, str]:
    return compiled_environment()


def run(
    environment: dict[str, str], *args: str, cwd: Path = ROOT, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], env=environment, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def test_the_compiled_build_runs_its_reader_as_machine_code_and_says_so(environment: dict[str, str]) -> None:
    imported = run(
        environment,
        "-c",
        "import ai_eval_lsp.core.blockyaml as b, ai_eval_lsp.core.yamlnodes as n; print(b.__file__, n.__file__)",
    )
    assert imported.returncode == 0, imported.stderr
    assert all(path.endswith(".so") for path in imported.stdout.split()), imported.stdout
    version = run(environment, "-m", "ai_eval_lsp", "--version")
    assert version.stdout.strip().endswith("(compiled: yes)")
    assert run(dict(os.environ), "-m", "ai_eval_lsp", "--version").stdout.strip().endswith("(compiled: no)")


def test_the_reading_tests_pass_on_the_compiled_build(environment: dict[str, str]) -> None:
    result = run(
        environment, "-m", "pytest", "-q", "-n0", "-p", "no:cacheprovider", *READING_TESTS, timeout=600
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-3000:]
    assert " passed" in result.stdout.splitlines()[-1] and "skipped" not in result.stdout.splitlines()[-1]


def test_check_reports_a_big_rubric_as_the_pure_build_does(
    environment: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "support.rubric.yaml").write_text(realistic(40), encoding="utf-8")
    misindented = realistic(2).replace("    kind: regex\n", "    kind: regex\n   extra: 1\n", 1)
    (tmp_path / "broken.rubric.yaml").write_text(misindented, encoding="utf-8")
    command = ["-m", "ai_eval_lsp", "check", "support.rubric.yaml", "broken.rubric.yaml"]
    compiled = run(environment, *command, cwd=tmp_path)
    pure = run(dict(os.environ), *command, cwd=tmp_path)
    assert compiled.returncode == pure.returncode == 1
    assert compiled.stdout == pure.stdout
    assert compiled.stdout.count(" unresolved-rubric ") == 4 * 40
    assert "broken.rubric.yaml:59:4: yaml-syntax " in compiled.stdout
