"""Shared helpers: the fixture folders and a loaded project over them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from ai_eval_lsp.project.project import Project

# The database servers' fixtures (`mariadb`, `postgres`), for any test.
pytest_plugins = ["databases"]

# CI replays the same examples every run, so a green build stays green; local runs explore.
# bench/mutation.py runs the tests once per mutant: a few fixed examples each.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("mutation", derandomize=True, max_examples=20)
if os.environ.get("AI_EVAL_MUTATION"):
    settings.load_profile("mutation")
elif os.environ.get("CI"):
    settings.load_profile("ci")


def examples(wanted: int) -> int:
    """How many examples a property test asks for: `wanted`, or fewer under the mutation profile."""
    return min(wanted, settings.default.max_examples) if os.environ.get("AI_EVAL_MUTATION") else wanted


@pytest.fixture(autouse=True)
def own_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test holds only the secrets it made: a password another test read in this process
    is no secret of its outputs (a real process holds its own sites' passwords only)."""
    from ai_eval_lsp.drupal import secrets

    monkeypatch.setattr(secrets, "HELD", secrets.Secrets())


FIXTURES = Path(__file__).parent / "fixtures"

TEST_PLUGINS = Path(sys.prefix) / "test-plugins"
"""The test plugins (`word_count`, `broken`), installed beside the environment by scripts/setup:
on PYTHONPATH, every process the tests start sees them, and so does this one; a test that wants
a user's plain environment leaves them out with `without_test_plugins()`."""
assert (TEST_PLUGINS / "ai_eval_test_wordcount").is_dir(), f"{TEST_PLUGINS} is missing: run scripts/setup"
sys.path.insert(0, str(TEST_PLUGINS))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TEST_PLUGINS), os.environ.get("PYTHONPATH")]))


def without_test_plugins(environ: dict[str, str] | None = None) -> dict[str, str]:
    """An environment for a process that sees only what a user installed (no test plugins)."""
    environ = dict(os.environ if environ is None else environ)
    kept = [
        part for part in environ.get("PYTHONPATH", "").split(os.pathsep) if part and part != str(TEST_PLUGINS)
    ]
    environ["PYTHONPATH"] = os.pathsep.join(kept)
    return environ


ROOT = Path(__file__).resolve().parent.parent
REPOSITORY: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
"""The project's address, defined once in pyproject.toml's [project.urls]: the places that name it
(the extension's manifest, the READMEs, the pre-commit and Action examples) must agree."""
WHEELS = ROOT / "vscode-extension" / "bundled" / "wheels"
"""ai-eval-lsp's dependencies as wheels for this Python, as scripts/setup fetches them for the .vsix
(its sacrebleu needs neither numpy nor lxml: vscode-extension/scripts/slim_sacrebleu.py)."""


def offline_pip(environ: dict[str, str] | None = None) -> dict[str, str]:
    """An environment in which pip installs ai-eval-lsp, and tools that install it (pre-commit, a
    fresh venv), from the wheels scripts/setup fetched: offline, and in seconds, not minutes."""
    cache = Path(os.environ.get("AI_EVAL_LSP_CACHE", Path.home() / ".cache" / "ai-eval-lsp"))
    backends = sorted((cache / "bundle-wheels" / "build-backend").glob("*/"))
    host = cache / "bundle-wheels" / "host"
    assert (WHEELS / "manifest.json").is_file() and backends and host.is_dir(), (
        f"the wheels in {WHEELS} and {cache}/bundle-wheels are missing: run scripts/setup"
    )
    environ = dict(os.environ if environ is None else environ)
    links = " ".join(str(folder) for folder in [WHEELS, host, *backends])
    environ.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_FIND_LINKS=links)
    return environ


EXPECT = re.compile(
    r"# expect: (?P<code>\S+) (?P<sl>\d+):(?P<sc>\d+)-(?P<el>\d+):(?P<ec>\d+) ?(?P<fragment>.*)"
)


@dataclass(frozen=True)
class Expected:
    """A problem a fixture declares in its `# expect:` lines: 1-based, as `check` prints, and its
    whole message (`fragment`)."""

    code: str
    start: tuple[int, int]
    end: tuple[int, int]
    fragment: str


def expectations(path: Path) -> list[Expected]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = EXPECT.match(line)
        if match:
            found.append(
                Expected(
                    match["code"],
                    (int(match["sl"]), int(match["sc"])),
                    (int(match["el"]), int(match["ec"])),
                    match["fragment"],
                )
            )
    return found


@pytest.fixture(scope="session")
def project() -> Project:
    """The fixtures folder as a workspace, with the plugins installed in this environment."""
    return Project.load(FIXTURES)


ROOTS = json.loads((FIXTURES / "roots.json").read_text())["cases"]


def lay_out_roots(base: Path) -> dict[Path, Path | None]:
    """The cases of `fixtures/roots.json` laid out under `base`: each probed path and its root
    (None: no marker, the path's own folder). The Neovim plugin is tested against the same table."""
    probes: dict[Path, Path | None] = {}
    for name, case in ROOTS.items():
        folder = base / name
        for relative, text in case["files"].items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            if text is None:
                (folder / relative).mkdir()
            else:
                (folder / relative).write_text(text)
        probes[folder / case["path"]] = None if case["root"] is None else (folder / case["root"]).resolve()
    return probes


SLOW = (
    "e2e/",
    "editors/",
    "server/test_serve.py",
    "server/test_server_memory.py",
    "hosts/",
    "shipping/test_example.py",
    "shipping/test_ci_integrations.py",
    "shipping/test_release.py",
    "shipping/test_compiled.py",
    "runs/test_parallel_runs.py",
    "cli/test_php_off.py",
    "test_databases.py",
)
"""Tests that start real clients, servers, editors, PHP or installs: marked `slow`, so that
`pytest -m "not slow"` is an inner loop of well under a minute; CI runs everything."""

IN_THE_CHECKOUT = (
    "shipping/test_release.py",
    "editors/test_vscode.py",
    "shipping/test_example.py",
    "shipping/test_ci_integrations.py",
)
"""Tests that build in the checkout (`dist/`, `build/`, the extension's build and bundled wheels)
or install from what is built there: one worker runs them, one after the other."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    for item in items:
        relative = item.path.relative_to(tests).as_posix()
        if relative.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """How pytest-xdist shares the tests among its workers (`-n auto` in pyproject.toml)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        """Each file's tests on one worker, in order (its module fixtures start once); the files
        that build in the checkout together, on the first worker free: the longest work."""

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "checkout" if path.removeprefix("tests/").startswith(IN_THE_CHECKOUT) else path

        def _assign_work_unit(self, node: Any) -> None:
            if "checkout" in self.workqueue:
                self.workqueue.move_to_end("checkout", last=False)
            super()._assign_work_unit(node)

    return ByFile(config, log)


def multisite(base: Path, default: bool = False) -> Path:
    """The example site with two sites: `alpha` enables support_assistant (word_count), `beta`
    enables other_assistant (char_count); neither is `default`. With `default`, a third site of
    that name enables what `alpha` does."""
    site = base / "multi"
    shutil.copytree(
        ROOT / "examples" / "drupal-site", site, ignore=shutil.ignore_patterns(".ai_eval", "broken")
    )
    other = site / "web/modules/custom/other_assistant"
    shutil.copytree(
        site / "web/modules/custom/support_assistant",
        other,
        ignore=shutil.ignore_patterns("rubrics", "evals"),
    )
    for path in [*other.rglob("*.php"), *other.rglob("*.yml")]:
        text = (
            path.read_text()
            .replace("support_assistant", "other_assistant")
            .replace("word_count", "char_count")
        )
        path.write_text(text.replace("WordCount", "CharCount"))
    for path in list(other.rglob("*support_assistant*")) + list(other.rglob("WordCount*")):
        path.rename(
            path.with_name(
                path.name.replace("support_assistant", "other_assistant").replace("WordCount", "CharCount")
            )
        )
    (site / "config/sync").rename(site / "config/alpha")
    shutil.copytree(site / "config/alpha", site / "config/beta")
    beta = site / "config/beta/core.extension.yml"
    beta.write_text(beta.read_text().replace("support_assistant", "other_assistant"))
    if default:
        shutil.copytree(site / "config/alpha", site / "config/default")
    for name in ("alpha", "beta", "default") if default else ("alpha", "beta"):
        (site / "web/sites" / name).mkdir(parents=True)
        (site / "web/sites" / name / "settings.php").write_text(
            f"<?php\n$settings['config_sync_directory'] = '../config/{name}';\n"
        )
    (site / "uses_both.rubric.yaml").write_text(
        'id: both\nversion: "1.0"\nchecks:\n  - {kind: word_count, min: 1}\n  - {kind: char_count, min: 1}\n'
        "scoring: {combine: all_pass}\n"
    )
    return site


def monorepo(base: Path) -> Path:
    """A decoupled project: the example Drupal site in `drupal/` beside a front end, one `.git`."""
    root = base / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "frontend").mkdir()
    (root / "frontend" / "package.json").write_text('{"name": "frontend"}\n')
    shutil.copytree(
        ROOT / "examples" / "drupal-site", root / "drupal", ignore=shutil.ignore_patterns(".ai_eval")
    )
    return root


def fresh_checkout(into: Path) -> Path:
    """The checkout's files as a clone would have them (tracked, and new files not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into
