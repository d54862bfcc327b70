"""ai-eval-lsp as its compiled wheel installs it (setup.py's AI_EVAL_LSP_MYPYC=1), for the tests
and benches that run it: built once per version of the sources, in the cache outside the
repository (~20 s), and put first on PYTHONPATH by `compiled_environment`."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "setup.py", "PYPI.md")
CACHE = Path(os.environ.get("AI_EVAL_LSP_CACHE", Path.home() / ".cache" / "ai-eval-lsp")) / "compiled"


def _source_files() -> list[Path]:
    package = sorted(
        path
        for path in (ROOT / "src").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and ".egg-info" not in str(path)
    )
    return [ROOT / name for name in SOURCES] + package


def compiled_install() -> Path:
    """A folder holding the compiled `ai_eval_lsp` of the sources as they are now."""
    digest = hashlib.sha256(f"{sys.version} mypy {version('mypy')}".encode())
    for path in _source_files():
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    folder = CACHE / digest.hexdigest()[:16]
    if (folder / ".complete").is_file():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "source"  # a clean copy: no build/ folder of earlier builds
        for path in _source_files():
            copy = source / path.relative_to(ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
        environ = {**os.environ, "AI_EVAL_LSP_MYPYC": "1"}
        wheels = Path(scratch) / "wheels"
        build = [*pip, "wheel", "--no-build-isolation", "--no-deps", "--wheel-dir", str(wheels), str(source)]
        subprocess.run(build, check=True, env=environ)
        (wheel,) = wheels.glob("ai_eval_lsp-*.whl")
        subprocess.run([*pip, "install", "--no-deps", "--target", str(folder), str(wheel)], check=True)
    (folder / ".complete").write_text("")
    return folder


def compiled_environment() -> dict[str, str]:
    """The environment in which this Python runs the compiled build."""
    path = os.pathsep.join(filter(None, [str(compiled_install()), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}
