"""The release: what scripts/release builds into dist/ (each platform .vsix at most 35 MB, holding
only its platform's wheels for CPython 3.11-3.14, the linux-x64 one with the compiled wheel for
this CPython, the Python packages checked by twine), one version for the package and the
extension, the release workflow as actionlint reads it (its compiled wheels: every CPython the
.vsix files bundle on every platform, built from the sdist and fed to scripts/release, which
refuses a .vsix short of one), and the install paths a user takes from the built artifacts, each
in a fresh environment: pipx, the sdist, and pip offline from a .vsix's own wheels."""

from __future__ import annotations

import email
import fnmatch
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPOSITORY, ROOT, WHEELS, offline_pip, without_test_plugins
from packaging.tags import compatible_tags, cpython_tags
from packaging.utils import parse_wheel_filename

DIST = ROOT / "dist"
PYTHONS = ["3.11", "3.12", "3.13", "3.14"]
MAX_VSIX_BYTES = 35_000_000
# Each target's platform tags: every bundled wheel is pure or has one of these.
PLATFORM_TAGS = {
    "linux-x64": re.compile(r"manylinux(1|2010|2014|_2_\d+)_x86_64"),
    "linux-arm64": re.compile(r"manylinux(2014|_2_\d+)_aarch64"),
    "darwin-x64": re.compile(r"macosx_\d+_\d+_(x86_64|universal2)"),
    "darwin-arm64": re.compile(r"macosx_\d+_\d+_arm64"),
    "win32-x64": re.compile(r"win_amd64"),
}
CACHE = Path(os.environ.get("AI_EVAL_LSP_CACHE", Path.home() / ".cache" / "ai-eval-lsp"))
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
BUNDLED_BUILDS = {
    "linux-x64": "manylinux_x86_64",
    "linux-arm64": "manylinux_aarch64",
    "darwin-x64": "macosx_x86_64",
    "darwin-arm64": "macosx_arm64",
    "win32-x64": "win_amd64",
}
"""The cibuildwheel platform whose compiled wheels each platform .vsix bundles."""
PYPI_ONLY_BUILDS = ["musllinux_x86_64", "musllinux_aarch64"]
"""Compiled wheels PyPI serves and no .vsix bundles (there is no Alpine .vsix)."""


def version() -> str:
    project: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["version"]


@pytest.fixture(scope="module")
def release() -> str:
    """scripts/release run once: what it printed."""
    result = subprocess.run(
        [str(ROOT / "scripts" / "release")], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def test_the_package_and_the_extension_have_one_version_with_its_release_notes() -> None:
    extension = json.loads((ROOT / "vscode-extension" / "package.json").read_text())
    assert extension["version"] == version()
    headings = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), flags=re.MULTILINE)
    released = headings[1:] if headings[:1] == ["Unreleased"] else headings  # what the next one brings
    assert released and released[0] == version()  # the newest release's section is this version's


def compiled_wheel() -> str:
    """The wheel whose line reader is compiled, for this machine's CPython and platform."""
    (wheel,) = [path.name for path in DIST.glob(f"ai_eval_lsp-{version()}-cp*.whl")]
    return wheel


def test_every_artifact_is_built_checked_and_its_size_printed(release: str) -> None:
    v = version()
    expected = {
        f"ai_eval_lsp-{v}-py3-none-any.whl",
        compiled_wheel(),
        f"ai_eval_lsp-{v}.tar.gz",
        f"ai-eval-lsp-{v}.vsix",
        "RELEASE_NOTES.md",
        *(f"ai-eval-lsp-{target}-{v}.vsix" for target in PLATFORM_TAGS),
    }
    assert {path.name for path in DIST.iterdir()} == expected
    assert release.count("PASSED") == 3  # twine check: the wheels and the sdist
    assert fits(compiled_wheel(), f"{sys.version_info.major}.{sys.version_info.minor}")
    platforms = {tag.platform for tag in parse_wheel_filename(compiled_wheel())[3]}
    assert all(PLATFORM_TAGS["linux-x64"].fullmatch(platform) for platform in platforms), platforms
    for name in expected:
        assert re.search(rf"^ +\d+\.\d\d MB  dist/{re.escape(name)}$", release, flags=re.MULTILINE), name
    assert (DIST / "RELEASE_NOTES.md").read_text().startswith("The first release.")


@pytest.mark.parametrize("target", PLATFORM_TAGS)
def test_a_platform_vsix_is_small_and_holds_its_platforms_wheels_for_each_cpython(
    release: str, target: str
) -> None:
    vsix = DIST / f"ai-eval-lsp-{target}-{version()}.vsix"
    assert vsix.stat().st_size <= MAX_VSIX_BYTES
    with zipfile.ZipFile(vsix) as archive:
        wheels = [Path(name).name for name in archive.namelist() if name.endswith(".whl")]
        manifest = json.loads(archive.read("extension/bundled/wheels/manifest.json"))
        assert f'TargetPlatform="{target}"' in archive.read("extension.vsixmanifest").decode()
    assert manifest["target"] == target and sorted(manifest["pythons"]) == PYTHONS
    names = [str(parse_wheel_filename(wheel)[0]) for wheel in wheels]
    assert not {"numpy", "lxml"} & set(names) and "ai-eval-lsp" in names  # never imported there
    for wheel in wheels:
        platforms = {tag.platform for tag in parse_wheel_filename(wheel)[3]}
        assert platforms == {"any"} or all(PLATFORM_TAGS[target].fullmatch(p) for p in platforms), wheel
    # one copy of each stable-ABI or pure wheel, one wheel of each CPython-specific project per Python
    assert names.count("jsonschema-rs") == 1 and names.count("regex") == len(PYTHONS)
    for python in PYTHONS:  # each Python gets every project once, in a wheel it can import
        listed = manifest["pythons"][python]
        assert set(listed) <= set(wheels)
        assert sorted(str(parse_wheel_filename(wheel)[0]) for wheel in listed) == sorted(set(names)), python
        assert all(fits(wheel, python) for wheel in listed), python
    this = f"{sys.version_info.major}.{sys.version_info.minor}"  # the compiled wheel's, on linux-x64
    compiled = [python for python in PYTHONS if compiled_wheel() in manifest["pythons"][python]]
    assert compiled == ([this] if target == "linux-x64" else [])


def fits(wheel: str, python: str) -> bool:
    """Whether CPython `python` can install `wheel`, its platform aside (PLATFORM_TAGS checks that)."""
    major, minor = (int(part) for part in python.split("."))
    wheel_tags = parse_wheel_filename(wheel)[3]
    platforms = sorted({tag.platform for tag in wheel_tags})
    supported = {
        *cpython_tags((major, minor), platforms=platforms),
        *compatible_tags((major, minor), interpreter=f"cp{major}{minor}", platforms=platforms),
    }
    return bool(wheel_tags & supported)


def test_the_universal_vsix_bundles_no_server(release: str) -> None:
    with zipfile.ZipFile(DIST / f"ai-eval-lsp-{version()}.vsix") as archive:
        assert not [name for name in archive.namelist() if "bundled/wheels" in name]
        assert "TargetPlatform" not in archive.read("extension.vsixmanifest").decode()


def test_the_workflows_pass_actionlint() -> None:
    linter = CACHE / "actionlint" / "node_modules" / "actionlint"
    assert (linter / "main.wasm").is_file(), f"{linter} is missing: run scripts/setup"
    code = (
        "const { createLinter } = require(process.argv[1]); const fs = require('fs');"
        "createLinter().then((lint) => console.log(JSON.stringify(process.argv.slice(2)"
        ".flatMap((file) => lint(fs.readFileSync(file, 'utf8'), file)))));"
    )
    workflows = sorted(str(path) for path in (ROOT / ".github" / "workflows").glob("*.yml"))
    assert workflows
    result = subprocess.run(
        ["node", "-e", code, str(linter), *workflows], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    # The newest WebAssembly build (actionlint 1.6.22) predates GitHub's arm64 Linux runners.
    newer = [f'label "{label}" is unknown.' for label in ("ubuntu-24.04-arm",)]
    complaints = json.loads(result.stdout)
    assert [c for c in complaints if not c["message"].startswith(tuple(newer))] == []


def release_jobs() -> dict[str, dict[str, Any]]:
    jobs: dict[str, dict[str, Any]] = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    return jobs


def step_using(job: dict[str, Any], action: str) -> dict[str, Any]:
    (step,) = [step for step in job["steps"] if str(step.get("uses", "")).startswith(f"{action}@")]
    return step


def with_matrix(text: str, entry: dict[str, str]) -> str:
    """`text` as the job of the matrix entry `entry` sees it."""
    return re.sub(r"\$\{\{ *matrix\.(\w+) *\}\}", lambda match: entry[match[1]], text)


def wheel_jobs() -> tuple[str, dict[str, Any], list[dict[str, str]]]:
    """The job that builds the compiled wheels with cibuildwheel: its name, itself, its matrix."""
    jobs = release_jobs()
    (name,) = [name for name, job in jobs.items() if "pypa/cibuildwheel@" in str(job["steps"])]
    return name, jobs[name], jobs[name]["strategy"]["matrix"]["include"]


def test_the_release_workflow_builds_and_tests_a_compiled_wheel_of_every_bundled_cpython_everywhere() -> None:
    """What cibuildwheel builds on each of the workflow's runners, asked of the same version here:
    every CPython the .vsix files bundle, on each platform they are made for (and musllinux for
    PyPI), each tested (test_compiled.py runs the same test-command)."""
    _, job, matrix = wheel_jobs()
    step = step_using(job, "pypa/cibuildwheel")
    assert step["uses"] == f"pypa/cibuildwheel@v{importlib.metadata.version('cibuildwheel')}"
    assert not any(key.startswith(("CIBW_BUILD", "CIBW_SKIP", "CIBW_TEST")) for key in step["env"])
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
    assert config["test-command"] and not config.get("test-skip")
    built: list[str] = []
    for entry in matrix:
        environ = {key: with_matrix(str(value), entry) for key, value in step["env"].items()}
        listed = subprocess.run(
            [sys.executable, "-m", "cibuildwheel", "--print-build-identifiers"],
            cwd=ROOT,
            env={**os.environ, **environ},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert listed.returncode == 0, listed.stderr
        built += listed.stdout.split()
    expected = [
        f"cp{python.replace('.', '')}-{platform}"
        for platform in [*BUNDLED_BUILDS.values(), *PYPI_ONLY_BUILDS]
        for python in PYTHONS
    ]
    assert sorted(built) == sorted(expected)  # each once


def test_the_release_bundles_the_compiled_wheels_the_workflow_built_from_its_sdist() -> None:
    """The sdist job's sdist is what every runner builds from, and the job running scripts/release
    downloads it and every runner's wheels into the folder it names as AI_EVAL_RELEASE_COMPILED."""
    jobs = release_jobs()
    name, job, matrix = wheel_jobs()
    (sdist_job,) = [n for n, j in jobs.items() if "./scripts/release sdist" in str(j["steps"])]
    source = step_using(job, "pypa/cibuildwheel")["with"]["package-dir"]
    assert job["needs"] == sdist_job and f"needs.{sdist_job}.outputs." in source
    uploaded = step_using(jobs[sdist_job], "actions/upload-artifact")["with"]
    assert uploaded["path"] == "dist/*.tar.gz"
    upload = step_using(job, "actions/upload-artifact")["with"]
    artifacts = {with_matrix(upload["name"], entry) for entry in matrix}
    assert len(artifacts) == len(matrix)  # one per runner: none overwrites another
    ((releasing, release_step),) = [
        (n, step)
        for n, j in jobs.items()
        for step in j["steps"]
        if step.get("run", "").strip() == "./scripts/release"
    ]
    folder = release_step["env"]["AI_EVAL_RELEASE_COMPILED"].rstrip("/")
    assert {name, sdist_job} <= set(jobs[releasing]["needs"])
    downloads = [
        step["with"]
        for step in jobs[releasing]["steps"]
        if str(step.get("uses", "")).startswith("actions/download-artifact@")
        and step["with"]["path"].rstrip("/") == folder
    ]
    for artifact in [*artifacts, uploaded["name"]]:
        assert any(
            download.get("name") == artifact
            or (fnmatch.fnmatchcase(artifact, download.get("pattern", "")) and download.get("merge-multiple"))
            for download in downloads
        ), f"{artifact} is not downloaded into {folder}"


def test_a_release_of_the_workflows_wheels_refuses_a_vsix_short_of_a_compiled_wheel(release: str) -> None:
    """With the workflow's wheels (--require-compiled, as scripts/release passes it then), a .vsix
    missing a CPython's compiled wheel is refused, before its bundle is touched."""
    manifest = WHEELS / "manifest.json"
    before = manifest.read_bytes()
    this = f"{sys.version_info.major}.{sys.version_info.minor}"
    for target in ("linux-x64", "darwin-arm64"):
        bundled = subprocess.run(
            [
                "node",
                "vscode-extension/scripts/bundle-wheels.mjs",
                "--require-compiled",
                target,
                f"dist/ai_eval_lsp-{version()}-py3-none-any.whl",
                f"dist/{compiled_wheel()}",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        missing = [python for python in PYTHONS if target != "linux-x64" or python != this]
        assert bundled.returncode != 0
        assert (
            f"no compiled ai-eval-lsp wheel for CPython {', '.join(missing)} on {target} among "
            in bundled.stderr
        )
    assert manifest.read_bytes() == before


PUBLISHES = re.compile(
    r"pypa/gh-action-pypi-publish|\bvsce(@[\w.]+)? publish\b|\bovsx(@[\w.]+)? publish\b|gh release create"
)


def test_the_release_workflow_publishes_nothing_unless_the_suite_passed_on_the_tagged_commit() -> None:
    jobs = release_jobs()

    def steps(job: dict[str, Any]) -> str:
        return "\n".join(f"{step.get('uses', '')} {step.get('run', '')}" for step in job["steps"])

    def needed(name: str) -> set[str]:
        needs = jobs[name].get("needs", [])
        direct = {needs} if isinstance(needs, str) else set(needs)
        return direct.union(*(needed(job) for job in direct))

    suite = {name for name, job in jobs.items() if re.search(r"^ ?\./\.ci/run$", steps(job), re.MULTILINE)}
    assert suite, "no job runs the suite (.ci/run)"
    for name in suite:  # the tag's own run, which fails when the suite does
        assert not jobs[name].get("continue-on-error") and not any(
            s.get("continue-on-error") for s in jobs[name]["steps"]
        )
    publishing = [name for name, job in jobs.items() if PUBLISHES.search(steps(job))]
    assert sorted(publishing) == ["github-release", "marketplaces", "pypi"]
    for name in publishing:
        assert needed(name) & suite, f"{name} publishes without waiting for the suite"
        # a job runs only when every job it needs succeeded, unless its condition says otherwise
        assert not re.search(r"always\(\)|failure\(\)|cancelled\(\)", str(jobs[name].get("if", ""))), name


def served_check(command: Path) -> None:
    """The installed command checks the example's broken rubric as the README says."""
    result = subprocess.run(
        [str(command), "check", "broken"],
        cwd=ROOT / "examples" / "drupal-site",
        env=without_test_plugins(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1 and "6 errors, 0 warnings, 0 info in 1 file" in result.stdout, result.stderr


def test_pipx_installs_the_built_wheel(release: str, tmp_path: Path) -> None:
    env = {
        **offline_pip(without_test_plugins()),
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    wheel = DIST / f"ai_eval_lsp-{version()}-py3-none-any.whl"
    result = subprocess.run(
        [sys.executable, "-m", "pipx", "install", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    served_check(tmp_path / "bin" / "ai-eval-lsp")


def test_pip_installs_the_sdist_in_a_fresh_environment(release: str, tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=120)
    result = subprocess.run(
        [
            str(tmp_path / "venv" / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            str(DIST / f"ai_eval_lsp-{version()}.tar.gz"),
        ],
        env=offline_pip(without_test_plugins()),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    served_check(tmp_path / "venv" / "bin" / "ai-eval-lsp")


def test_pip_installs_offline_from_a_vsixs_own_wheels(release: str, tmp_path: Path) -> None:
    """The fallback the extension offers: `pip install --no-index --find-links <its wheels>
    ai-eval-lsp`, with nothing else to install from; chrF still scores, without numpy or lxml."""
    with zipfile.ZipFile(DIST / f"ai-eval-lsp-linux-x64-{version()}.vsix") as archive:
        archive.extractall(tmp_path / "vsix", [n for n in archive.namelist() if "/bundled/wheels/" in n])
    wheels = tmp_path / "vsix" / "extension" / "bundled" / "wheels"
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=120)
    python = tmp_path / "venv" / "bin" / "python"
    env = {**without_test_plugins(), "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": ""}
    install = [
        str(python),
        "-m",
        "pip",
        "install",
        "-q",
        "--no-index",
        "--find-links",
        str(wheels),
        "ai-eval-lsp",
    ]
    result = subprocess.run(install, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    for absent in ("numpy", "lxml"):
        assert subprocess.run([str(python), "-c", f"import {absent}"], capture_output=True).returncode == 1
    served_check(tmp_path / "venv" / "bin" / "ai-eval-lsp")
    version_line = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "ai-eval-lsp"), "--version"], capture_output=True, text=True
    )
    assert version_line.stdout.strip() == f"ai-eval-lsp {version()} (compiled: yes)"  # this CPython's wheel
    site = tmp_path / "site"
    shutil.copytree(ROOT / "examples" / "drupal-site", site, ignore=shutil.ignore_patterns(".ai_eval"))
    ran = subprocess.run(
        [
            str(tmp_path / "venv" / "bin" / "ai-eval-lsp"),
            "run",
            "web/modules/custom/support_assistant/evals/refunds.cases.yaml",
        ],
        cwd=site,
        env=without_test_plugins(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    # the README's scores, a chrF check among them: sacrebleu counts them here
    assert (
        "support_reply: pass rate 0.60 [0.23, 0.88], average 3.34/5, gate passed, 5 cases, 0 errors"
        in ran.stdout
    )


# --- the listings: the PyPI page (the wheel's METADATA) and the Marketplace page (each .vsix) ------

PLACEHOLDER = re.compile(
    r"//(?:[\w.-]*\.)?(?i:example\.(?:com|org|net)|[\w-]+\.(?:invalid|example|test|localhost)|localhost)\b"
    r"|\bOWNER/|\b(?:your|my)-(?:org|user|name)\b"
)


def links(markdown: str) -> list[str]:
    """Where a page's markdown links and HTML anchors and images point."""
    return [
        *re.findall(r"\]\(([^)\s]+)\)", markdown),
        *re.findall(r"<(?:a|img)\s[^>]*(?:href|src)=[\"']([^\"']+)", markdown),
    ]


def assert_listing(text: str, where: str) -> None:
    """A page read away from the repository: no placeholder address, no link relative to a
    checkout, and every link into the project at its one address."""
    assert not PLACEHOLDER.search(text), f"{where}: a placeholder address: {PLACEHOLDER.search(text)}"
    for target in links(text):
        assert target.startswith("https://"), f"{where}: {target} does not lead anywhere from there"
        if "github.com/" in target:
            assert target.startswith(REPOSITORY), f"{where}: {target} is not at {REPOSITORY}"


def test_the_pypi_page_has_the_projects_links_classifiers_and_a_description_written_for_it(
    release: str,
) -> None:
    with zipfile.ZipFile(DIST / f"ai_eval_lsp-{version()}-py3-none-any.whl") as wheel:
        metadata = email.message_from_bytes(wheel.read(f"ai_eval_lsp-{version()}.dist-info/METADATA"))
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL", []))
    assert urls["Repository"] == REPOSITORY
    assert {"Documentation", "Issues", "Changelog"} <= set(urls)
    for label, url in urls.items():
        assert url.startswith(REPOSITORY) and not PLACEHOLDER.search(url), (label, url)
    classifiers = metadata.get_all("Classifier", [])
    assert {f"Programming Language :: Python :: {python}" for python in PYTHONS} <= set(classifiers)
    assert any(c.startswith("Development Status :: ") for c in classifiers), classifiers
    assert metadata["Description-Content-Type"] == "text/markdown"
    description = metadata.get_payload()
    assert_listing(description, "the PyPI description")
    # written for PyPI: the first thing to run installs it; nothing there asks for a checkout
    first_block = re.search(r"```\w*\n(.*?)```", description, re.DOTALL)
    assert first_block and first_block[1].startswith("pipx install ai-eval-lsp\n"), description[:600]
    assert "./scripts/" not in description and "git clone" not in description


@pytest.mark.parametrize("target", [*PLATFORM_TAGS, None])
def test_the_marketplace_page_has_an_icon_the_projects_links_and_says_how_it_installs_today(
    release: str, target: str | None
) -> None:
    name = f"ai-eval-lsp-{target}-{version()}.vsix" if target else f"ai-eval-lsp-{version()}.vsix"
    with zipfile.ZipFile(DIST / name) as archive:
        manifest = ET.fromstring(archive.read("extension.vsixmanifest"))
        namespace = {"vsx": "http://schemas.microsoft.com/developer/vsx-schema/2011"}
        assets = {a.get("Type"): a.get("Path") for a in manifest.iterfind(".//vsx:Asset", namespace)}
        assert "Microsoft.VisualStudio.Services.Icons.Default" in assets, f"{name} has no icon"
        icon = archive.read(assets["Microsoft.VisualStudio.Services.Icons.Default"])
        readme = archive.read(assets["Microsoft.VisualStudio.Services.Content.Details"]).decode()
    properties = {p.get("Id"): p.get("Value") for p in manifest.iterfind(".//vsx:Property", namespace)}
    shown = {
        key: value
        for key, value in properties.items()
        if key.startswith("Microsoft.VisualStudio.Services.Links.")
    }
    assert {"Source", "GitHub", "Support", "Learn"} <= {key.rsplit(".", 1)[1] for key in shown}
    for key, url in shown.items():
        assert url.startswith(REPOSITORY) and not PLACEHOLDER.search(url), (key, url)
    # a PNG of at least 128 pixels a side, as the Marketplace asks
    assert icon.startswith(b"\x89PNG\r\n\x1a\n") and icon[12:16] == b"IHDR"
    width, height = int.from_bytes(icon[16:20], "big"), int.from_bytes(icon[20:24], "big")
    assert width == height >= 128
    assert_listing(readme, f"{name}'s README")
    # as written: vsce rewrote no relative link (it joins one to the repository's root, where
    # vscode-extension/'s own would break)
    assert readme == (ROOT / "vscode-extension" / "README.md").read_text(), "vsce rewrote a relative link"
    extension = json.loads((ROOT / "vscode-extension" / "package.json").read_text())
    marketplace_id = f"{extension['publisher']}.{extension['name']}"
    assert f"code --install-extension {marketplace_id}" in readme  # how it installs today
    assert "pip install --no-index --find-links" in readme and "not on PyPI" not in readme
