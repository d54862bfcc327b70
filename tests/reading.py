"""The reading tests against the installed ai_eval_lsp, which must be its compiled build
(setup.py's AI_EVAL_LSP_MYPYC=1): `python tests/reading.py` is cibuildwheel's test-command for
each compiled wheel the release builds (pyproject.toml), and tests/shipping/test_compiled.py runs
the same command against this machine's. The sdist carries these files (MANIFEST.in)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

READING_TESTS = [
    "core/test_block_reader.py",
    "core/test_fast_path_equivalence.py",
    "core/test_incremental.py",
    "core/test_problem_fixtures.py",
    "core/test_shared_reading.py",
    "core/test_broken_item.py",
]
"""The tests of reading, of trees moved by edits and of the problems found in the fixtures."""


def main() -> int:
    from ai_eval_lsp.core import blockyaml

    if not blockyaml.COMPILED:
        print(
            f"{blockyaml.__file__} is pure Python: these tests are for the compiled build; install "
            "the wheel built with AI_EVAL_LSP_MYPYC=1 (setup.py)",
            file=sys.stderr,
        )
        return 1
    arguments = ["-q", "-n0", "-p", "no:cacheprovider", "--rootdir", str(TESTS.parent)]
    return int(pytest.main([*arguments, *(str(TESTS / name) for name in READING_TESTS)]))


if __name__ == "__main__":
    sys.exit(main())
