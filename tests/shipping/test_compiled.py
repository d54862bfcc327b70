"""The compiled wheel (setup.py's AI_EVAL_LSP_MYPYC=1): its line reader and nodes run as machine
code, read every document as the pure Python does (the reading tests, through the very command the
release runs on each wheel it builds), and the command says which it runs."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from compiled import compiled_environment
from conftest import ROOT
from rubrics import realistic

TEST_COMMAND: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"][
    "test-command"
]
"""What the release runs on each compiled wheel it builds (cibuildwheel): tests/reading.py."""


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


def release_test(environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The release's test-command, run here as cibuildwheel runs it: by the shell, `python` the
    environment's, `{project}` this checkout."""
    path = os.pathsep.join([str(Path(sys.executable).parent), environment["PATH"]])
    return subprocess.run(
        TEST_COMMAND.format(project=ROOT, package=ROOT),
        shell=True,
        cwd=ROOT,
        env={**environment, "PATH": path},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_reading_tests_pass_on_the_compiled_build_as_the_release_tests_each_wheel(
    environment: dict[str, str],
) -> None:
    result = release_test(environment)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-3000:]
    assert " passed" in result.stdout.splitlines()[-1] and "skipped" not in result.stdout.splitlines()[-1]


def test_the_releases_test_of_a_wheel_fails_on_the_pure_build() -> None:
    result = release_test(dict(os.environ))
    assert result.returncode == 1
    assert "blockyaml.py is pure Python: these tests are for the compiled build" in result.stderr


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
