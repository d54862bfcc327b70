"""The docs site (docs/, mkdocs.yml): it builds with every warning an error (a link to a missing
page or anchor among them) and loads nothing from the network; its links into the repository name
files that exist; the settings reference is what the settings' definition says; and every section
the README had before the site has a page."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPOSITORY, ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


def build(config: Path, into: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(Path(sys.executable).with_name("mkdocs")),
            "build",
            "--strict",
            "-f",
            str(config),
            "-d",
            str(into),
        ],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's notice of its end of life
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    into = tmp_path_factory.mktemp("site")
    done = build(ROOT / "mkdocs.yml", into)
    assert done.returncode == 0, done.stderr
    return into


def test_the_site_builds_strictly_with_every_page_in_its_navigation(site: Path) -> None:
    built = {path.relative_to(site).as_posix() for path in site.rglob("index.html")}
    expected = {
        "index.html"
        if page.name == "index.md" and page.parent == DOCS
        else page.relative_to(DOCS).with_suffix("").as_posix().removesuffix("/index") + "/index.html"
        for page in PAGES
    }
    assert expected <= built


def test_the_site_loads_nothing_from_the_network(site: Path) -> None:
    external = re.compile(r"""<(?:link|script|img)\b[^>]*\b(?:href|src)=["']?(?:https?:)?//""")
    found = {
        (page.relative_to(site).as_posix(), match.group())
        for page in site.rglob("*.html")
        for match in external.finditer(page.read_text(encoding="utf-8"))
    }
    assert found == set()


@pytest.mark.parametrize(
    "broken",
    ["[a page that is not there](no-such-page.md)", "[an anchor that is not there](cli.md#no-such-anchor)"],
)
def test_a_broken_link_or_anchor_fails_the_build(broken: str, tmp_path: Path) -> None:
    """The validation the build relies on, shown working: a copy of the docs with one bad link."""
    (tmp_path / "docs").mkdir()
    for page in PAGES:
        copy = tmp_path / "docs" / page.relative_to(DOCS)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    index = tmp_path / "docs" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + f"\nSee {broken}.\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), encoding="utf-8")
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    target = re.search(r"\(([^)]+)\)", broken)
    assert target is not None and f"'{target.group(1).split('#')[0]}" in done.stderr, done.stderr


def test_links_into_the_repository_name_files_it_has() -> None:
    """Pages link to the repository's files by address (a site cannot link outside docs/)."""
    link = re.compile(rf"{re.escape(REPOSITORY)}/(?:blob|tree)/main/([^)#\s]+)")
    missing = {
        (page.relative_to(ROOT).as_posix(), path)
        for page in [*PAGES, ROOT / "README.md", ROOT / "PYPI.md"]
        for path in link.findall(page.read_text(encoding="utf-8"))
        if not (ROOT / path).exists()
    }
    assert missing == set()


def test_the_settings_reference_is_what_the_settings_define() -> None:
    """Written by scripts/settings_reference.py from `Settings`: run it after changing a setting."""
    generated = runpy.run_path(str(ROOT / "scripts" / "settings_reference.py"))["page"]()
    assert (DOCS / "settings.md").read_text(encoding="utf-8") == generated


def test_vs_code_describes_each_setting_as_the_reference_does() -> None:
    """package.json's descriptions of the server's settings are written by the same script, from
    the same words: VS Code's Settings editor says what docs/settings.md says."""
    generated = runpy.run_path(str(ROOT / "scripts" / "settings_reference.py"))["manifest"]()
    manifest = ROOT / "vscode-extension" / "package.json"
    assert manifest.read_text(encoding="utf-8") == generated, (
        "run .venv/bin/python scripts/settings_reference.py"
    )


def test_every_setting_has_its_entry_in_the_reference() -> None:
    from ai_eval_lsp.disk.settings import documented

    page = (DOCS / "settings.md").read_text(encoding="utf-8")
    for setting in documented():
        assert f"### `{setting.key}`\n" in page and setting.description in page


HOMES = {
    "See it work, run the tests": "getting-started.md#see-it-work-on-the-example-site",
    "What the two commands install": "development.md#the-two-commands",
    "Use it in your editor": "editors/index.md#editors",
    "VS Code": "editors/vscode.md#vs-code",
    "Neovim": "editors/neovim.md#neovim",
    "Emacs": "editors/emacs.md#emacs",
    "PhpStorm and other JetBrains IDEs": "editors/jetbrains.md#phpstorm-and-other-jetbrains-ides",
    "Helix": "editors/helix.md#helix",
    "Sublime Text": "editors/sublime-text.md#sublime-text",
    "yaml-language-server users": "editors/index.md#yaml-language-server-users",
    "Releases": "development.md#releases",
    "In CI: pre-commit and GitHub Actions": "ci.md#ci-pre-commit-and-github-actions",
    "pre-commit": "ci.md#pre-commit",
    "GitHub Actions": "ci.md#github-actions",
    "Drupal projects": "drupal.md#drupal-projects",
    "Use it from the command line": "cli.md#cli-reference",
    "Run rubrics on recorded responses": "runs.md#run-cases-files",
    "Run what a change affects: on save, and `run --watch`": "runs.md#run-what-a-change-affects-on-save-and-run-watch",
    "History, diffs and a report": "runs.md#history-diffs-and-a-report",
    "The site's own runs": "runs.md#the-sites-own-runs",
    "Which files are checked": "rubrics.md#which-files-are-checked",
    "Settings": "settings.md#settings",
    "The language server": "protocol.md#protocol",
    "Benchmarks": "performance.md#the-benchmarks",
    "Write a plugin": "rubrics.md#kinds-a-plugin-adds",
}
"""Each section of the README before the docs site (its headings), and the page section that now
holds it: nothing a user could read there is lost."""


def anchors(page: Path) -> set[str]:
    """The ids MkDocs gives a page's headings (Python-Markdown's toc slugs)."""
    from markdown.extensions.toc import slugify

    text = re.sub(r"^ *```.*?^ *```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {slugify(heading, "-") for heading in re.findall(r"^#{1,6} (.+)$", text, re.M)}


@pytest.mark.parametrize("heading", list(HOMES))
def test_every_section_the_readme_had_has_a_page(heading: str) -> None:
    page, _, anchor = HOMES[heading].partition("#")
    assert anchor in anchors(DOCS / page)


def test_the_readme_is_a_front_page_and_the_architecture_a_map() -> None:
    """What a newcomer reads first stays short: the rest is a page of the docs. The map has room
    (its figures are `docs/performance.md`'s), rows read at a glance, and says where a change
    starts."""
    assert len((ROOT / "README.md").read_bytes()) <= 12_000
    architecture = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert len(architecture.encode()) <= 17_000
    assert max(map(len, architecture.splitlines())) <= 260
    assert {"Entry points", "Adding a feature, a subcommand, a check kind"} <= set(
        re.findall(r"^## (.+)$", architecture, re.M)
    )


DECISION = re.compile(r"^### D(\d+)\. .+ \{#d(\d+)\}\n\n\*(\d{4}-\d\d-\d\d) · (.+)\*$", re.M)
STATUS = re.compile(
    r"accepted(?: · supersedes ((?:\[D\d+\]\(#d\d+\)(?:, )?)+))?|superseded by \[D(\d+)\]\(#d\2\)"
)


def test_the_decisions_are_a_log_a_reader_can_cite() -> None:
    """Every decision has its number for good (its anchor), a date and a status; a superseded one
    names its successor, which names it back and is no older."""
    text = (DOCS / "decisions.md").read_text(encoding="utf-8")
    decisions = DECISION.findall(text)
    assert len(decisions) == len(re.findall(r"^### ", text, re.M)), "a heading that is no decision"
    numbers = [int(number) for number, anchor, _, _ in decisions if number == anchor]
    assert sorted(numbers) == list(range(1, len(decisions) + 1))
    dates = {int(number): date for number, _, date, _ in decisions}
    superseded_by: dict[int, int] = {}
    supersedes: dict[int, set[int]] = {}
    for number, _, _, status in decisions:
        matched = STATUS.fullmatch(status)
        assert matched, f"D{number}: {status}"
        if matched.group(2):
            superseded_by[int(number)] = int(matched.group(2))
        supersedes[int(number)] = {int(older) for older in re.findall(r"\[D(\d+)\]", matched.group(1) or "")}
    assert superseded_by == {older: newer for newer, olders in supersedes.items() for older in olders}
    assert all(dates[older] <= dates[newer] for older, newer in superseded_by.items())


MAP_BASES = ["", "src/ai_eval_lsp", "src/ai_eval_lsp/server", "tests", "vscode-extension"]
"""Where the map's paths start: a row names `core/index.py` under `src/ai_eval_lsp/`, `loop/` under
the server, `scripts/e2e.mjs` under the extension."""


def test_every_path_the_architecture_names_exists() -> None:
    """A file moved or renamed takes its name in the map with it. A path in backticks is one that
    ends in a file's extension or, a folder's, in `/` (an LSP method such as
    `textDocument/hover` ends in neither); a bare file name is a file somewhere in the repository."""
    text = re.sub(
        r"^```.*?^```", "", (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"), flags=re.M | re.S
    )
    extension = re.compile(r"\.(py|md|ts|mjs|lua|el|json|php|toml|ya?ml)$")
    named = {
        name
        for name in re.findall(r"`([^`\s<>]+)`", text)
        if not name.startswith("../") and (extension.search(name) or ("/" in name and name.endswith("/")))
    }
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    file_names = {Path(path).name for path in tracked.stdout.splitlines()}
    missing = {
        name
        for name in named
        if not (
            any((ROOT / base / name).exists() for base in MAP_BASES) if "/" in name else name in file_names
        )
    }
    assert len(named) > 100 and missing == set()


def test_the_readmes_links_name_files_of_the_repository() -> None:
    relative = re.compile(r"\]\((?!https?:|#)([^)#\s]+)")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert {path for path in relative.findall(readme) if not (ROOT / path).exists()} == set()
