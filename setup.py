"""The build's one choice beyond pyproject.toml: with AI_EVAL_LSP_MYPYC=1, the line reader of
YAML and its nodes are compiled by mypyc (twice as fast to read a big document; their sources
stay in the wheel, and a pure wheel runs the same code). docs/decisions.md says why (D18)."""

import os

from setuptools import setup
from setuptools.command.build_ext import build_ext

COMPILED = ["src/ai_eval_lsp/core/yamlnodes.py", "src/ai_eval_lsp/core/blockyaml.py"]


class WheelsOnly(build_ext):
    """Compiled modules go into wheels only: beside their sources in `src/` (an editable
    install), Python would import them instead of the sources being edited."""

    def run(self) -> None:
        if self.inplace and self.extensions:
            raise SystemExit(
                "AI_EVAL_LSP_MYPYC=1 builds a wheel, not an editable install: unset it for "
                "`pip install -e .` (tests/compiled.py builds the compiled wheel for the tests)"
            )
        super().run()


def compiled_modules() -> list[object]:
    if os.environ.get("AI_EVAL_LSP_MYPYC", "0") == "0":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        raise SystemExit(
            "AI_EVAL_LSP_MYPYC=1 compiles with mypyc, which this Python does not have: install mypy "
            "(`pip install mypy`) and build with `--no-build-isolation`"
        ) from None
    # mypy follows the package's imports to its dependencies, which the compiled modules never
    # use: where the release builds (cibuildwheel: mypy and setuptools alone) they are missing.
    options = ["--ignore-missing-imports"]
    return list(mypycify([*options, *COMPILED], opt_level="3", group_name="ai_eval_lsp_compiled"))


setup(ext_modules=compiled_modules(), cmdclass={"build_ext": WheelsOnly})
