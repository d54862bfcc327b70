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
KEPT = 3
"""How many builds the cache keeps (the newest): one per version of the sources."""


def _source_files() -> list[Path]:
    package = sorted(
        path
        for path in (ROOT / "src").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and ".egg-info" not in str(path)
    )
    return [ROOT / name for name in SOURCES] + package


def compiled_install() -> Path:
    """A folder holding the compiled `ai_eval_lsp` of the sources as they are now."""
    tools = f"{sys.version} mypy {version('mypy')} setuptools {version('setuptools')}"
    digest = hashlib.sha256(tools.encode() + Path(__file__).read_bytes())
    sources = _source_files()
    for path in sources:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    folder = CACHE / digest.hexdigest()[:16]
    if folder.is_dir():
        return folder
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE, prefix=".building-") as scratch:
        source = Path(scratch) / "source"  # a clean copy: no build/ folder of earlier builds
        for path in sources:
            copy = source / path.relative_to(ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
        environ = {**os.environ, "AI_EVAL_LSP_MYPYC": "1"}
        wheels = Path(scratch) / "wheels"
        build = [*pip, "wheel", "--no-build-isolation", "--no-deps", "--wheel-dir", str(wheels), str(source)]
        subprocess.run(build, check=True, env=environ)
        (wheel,) = wheels.glob("ai_eval_lsp-*.whl")
        installed = Path(scratch) / "installed"
        subprocess.run([*pip, "install", "--no-deps", "--target", str(installed), str(wheel)], check=True)
        try:  # whole or not at all: another process may have built the same meanwhile
            installed.rename(folder)
        except OSError:
            if not folder.is_dir():
                raise
    builds = sorted(
        (path for path in CACHE.iterdir() if path.is_dir() and not path.name.startswith(".")),
        key=lambda path: path.stat().st_mtime,
    )
    for old in builds[:-KEPT]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


def compiled_environment() -> dict[str, str]:
    """The environment in which this Python runs the compiled build."""
    path = os.pathsep.join(filter(None, [str(compiled_install()), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}
