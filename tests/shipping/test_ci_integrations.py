"""CI: the pre-commit hooks (`.pre-commit-hooks.yaml`, `check --skip-other-files`) run by
pre-commit itself, and the GitHub Action (`action.yml`, `scripts/github-action`) run step by step
with the variables Actions sets. Both install ai-eval-lsp offline from the wheels scripts/setup
keeps (the .vsix's), so these tests need no network."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pre_commit  # noqa: F401  # a dev dependency: the tests run pre-commit as users do
import pytest
import yaml
from conftest import REPOSITORY, ROOT, offline_pip, without_test_plugins
from markdown_it import MarkdownIt
from site_db import SqliteSite, runner_row

from ai_eval_lsp.cli import main

REPO = ROOT
CI_PAGE = REPO / "docs" / "ci.md"

CLEAN = 'id: {id}\nversion: "1.0"\nchecks:\n  - {{kind: must_contain_any, values: [sorry]}}\nscoring: {{combine: all_pass}}\n'
BROKEN = 'id: {id}\nversion: "1.0"\nchecks:\n  - {{kind: regexp}}\nscoring: {{combine: all_pass}}\n'
BROKEN_LINE = "rubrics/broken.yaml:4:12: unknown-kind unknown check kind `regexp` (did you mean `regex`?)"
# A Drupal services file: YAML, not ours; checked as a rubric, it would be full of errors.
SERVICES = "services:\n  support.tone:\n    class: Drupal\\support\\Tone\n    arguments: ['@http_client']\n"
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def cases_file(rubric: str, second_response: str) -> str:
    """Two cases, the first passing; the gate needs both."""
    return textwrap.dedent(
        f"""\
        rubric: {rubric}
        gate: {{pass_rate: 0.8}}
        cases:
          - {{id: apology, question: {{id: q1, input: "Where is my refund?"}}, response: "So sorry, it is on its way."}}
          - {{id: refund, question: {{id: q2, input: "Is it late?"}}, response: "{second_response}"}}
        """
    )


def write(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def offline() -> dict[str, str]:
    """A user's environment (no test plugins) whose pip installs offline, and commits anywhere."""
    return {**offline_pip(without_test_plugins()), **GIT_IDENTITY, "PIP_NO_COMPILE": "1"}


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def docs_block(section: str, marker: str) -> str:
    """The first YAML block of a section of the CI page (docs/ci.md) that contains `marker`."""
    text = CI_PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    for block in re.findall(r"```yaml\n(.*?)```", text[start : end if end >= 0 else None], re.DOTALL):
        if marker in block:
            return str(block)
    raise AssertionError(f"the CI page's {section!r} section has no YAML block with {marker!r}")


# --- check --skip-other-files ----------------------------------------------------------------


def test_skip_other_files_checks_only_what_the_rules_make_rubric_or_cases_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        tmp_path,
        {
            "support.services.yml": SERVICES,
            "rubrics/broken.yaml": BROKEN.format(id="broken"),
            "tone.rubric.yaml": CLEAN.format(id="tone"),
            "tone.cases.yaml": cases_file("tone", "Sorry, yes."),
            ".git/HEAD": "ref: refs/heads/main\n",
        },
    )
    named = ["support.services.yml", "rubrics/broken.yaml", "tone.rubric.yaml", "tone.cases.yaml"]
    monkeypatch.chdir(tmp_path)  # as pre-commit runs it: from the repository, with relative names

    assert main(["check", "--skip-other-files", *named]) == 1
    problem, counts = capsys.readouterr().out.splitlines()
    assert problem.startswith(BROKEN_LINE)
    assert counts == "1 error, 0 warnings, 0 info in 3 files"  # the services file is not counted

    # Only YAML that is not ours: nothing to say, nothing failed.
    assert main(["check", "--skip-other-files", "support.services.yml"]) == 0
    assert capsys.readouterr() == ("", "")
    # Machine formats still give a document a reader can parse.
    assert main(["check", "--skip-other-files", "--format", "sarif", "support.services.yml"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["results"] == []

    # Without the option, a file named on the command line is checked as a rubric.
    assert main(["check", "support.services.yml"]) == 1
    assert "support.services.yml:1:1: schema" in capsys.readouterr().out


# --- pre-commit --------------------------------------------------------------------------------


@dataclass(frozen=True)
class HookSource:
    repo: Path
    ref: str  # a commit of the checkout's working tree, as `try-repo` takes it
    env: dict[str, str]  # offline pip; one PRE_COMMIT_HOME for the module's `pre-commit run`s


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> HookSource:
    """The checkout as pre-commit installs it. `try-repo` would commit the uncommitted changes anew
    at each call (and build the environment anew); one such commit, made here, is used throughout."""
    env = offline()
    tracked = git(REPO, "ls-files", ".pre-commit-hooks.yaml")
    assert tracked, (
        "pre-commit installs hooks from the repository's commits: `git add .pre-commit-hooks.yaml`"
    )
    ref = git(REPO, "stash", "create", env=env) or git(REPO, "rev-parse", "HEAD")
    env["PRE_COMMIT_HOME"] = str(tmp_path_factory.mktemp("pre-commit-home"))
    return HookSource(REPO, ref, env)


def repository(root: Path, files: Mapping[str, str]) -> Path:
    """A git repository holding `files`, all added (pre-commit --all-files takes git's files)."""
    write(root, files)
    git(root, "init", "-q")
    git(root, "add", "-A")
    return root


def pre_commit_run(hooks: HookSource, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PRE_COMMIT, *args],
        cwd=cwd,
        env=hooks.env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_try_repo_check_hook_fails_and_names_the_problem(hooks: HookSource, tmp_path: Path) -> None:
    repo = repository(
        tmp_path,
        {
            "rubrics/broken.yaml": BROKEN.format(id="broken"),
            "tone.rubric.yaml": CLEAN.format(id="tone"),
            "tone.cases.yaml": cases_file("tone", "Sorry, yes."),
            "web/modules/support/support.services.yml": SERVICES,
        },
    )
    env = {k: v for k, v in hooks.env.items() if k != "PRE_COMMIT_HOME"}  # try-repo keeps none
    done = subprocess.run(
        [*PRE_COMMIT, "try-repo", str(hooks.repo), "ai-eval-check", "--ref", hooks.ref, "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert re.search(r"^ai-eval check\.+Failed$", done.stdout, re.MULTILINE), output
    assert BROKEN_LINE in done.stdout
    # The services file is passed to the hook (it is YAML) and skipped; the other three are checked.
    assert "1 error, 0 warnings, 0 info in 3 files" in done.stdout
    assert "services" not in done.stdout


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    """The docs' `.pre-commit-config.yaml`, pointed at this checkout."""
    loaded = yaml.safe_load(docs_block("pre-commit", "repos:"))
    assert isinstance(loaded, dict)
    return loaded


def use_config(hooks: HookSource, config: dict[str, Any], repo: Path) -> None:
    (entry,) = config["repos"]
    assert entry["repo"] == REPOSITORY and "rev" in entry
    pointed = {"repos": [{**entry, "repo": str(hooks.repo), "rev": hooks.ref}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(pointed), encoding="utf-8")
    git(repo, "add", "-A")


def test_the_docs_config_check_hook_passes_on_clean_files_and_skips_other_yaml(
    hooks: HookSource, config: dict[str, Any], tmp_path: Path
) -> None:
    assert [hook["id"] for hook in config["repos"][0]["hooks"]] == ["ai-eval-check", "ai-eval-run"]
    repo = repository(
        tmp_path,
        {
            "evals/rubrics/tone.yaml": CLEAN.format(id="tone"),
            "support.services.yml": SERVICES,
            "config/settings.yml": "name: support\nmail: support@example.invalid\n",
        },
    )
    use_config(hooks, config, repo)
    done = pre_commit_run(hooks, repo, "run", "ai-eval-check", "--all-files", "--verbose")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ai-eval check\.+Passed$", done.stdout, re.MULTILINE)
    assert "All checks passed: 1 file" in done.stdout  # the rubric; neither other YAML file

    # The same config fails the commit that breaks the rubric.
    write(repo, {"evals/rubrics/tone.yaml": BROKEN.format(id="tone")})
    git(repo, "add", "-A")
    done = pre_commit_run(hooks, repo, "run", "ai-eval-check", "--all-files")
    assert done.returncode == 1
    assert "evals/rubrics/tone.yaml:4:12: unknown-kind unknown check kind `regexp`" in done.stdout


def test_the_docs_config_run_hook_gates_and_keeps_the_projects_history(
    hooks: HookSource, config: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repository(
        tmp_path,
        {
            "rubrics/tone.yaml": CLEAN.format(id="tone"),
            "tone.cases.yaml": cases_file("tone", "It is late."),
            "notes.yaml": "rubric: not a cases file\n",
            ".gitignore": ".ai_eval/\n",  # as the docs say: the hook writes the results there
        },
    )
    use_config(hooks, config, repo)
    failing = pre_commit_run(hooks, repo, "run", "ai-eval-run", "--all-files")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert re.search(r"^ai-eval run\.+Failed$", failing.stdout, re.MULTILINE)
    assert (
        "tone.cases.yaml: tone: pass rate 0.50 [0.09, 0.91], average 2.50/5, gate FAILED (pass_rate 0.50 < 0.8)"
        in failing.stdout
    )

    write(repo, {"tone.cases.yaml": cases_file("tone", "Sorry, it is late.")})
    git(repo, "add", "-A")
    passing = pre_commit_run(hooks, repo, "run", "ai-eval-run", "--all-files", "--verbose")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "gate passed" in passing.stdout
    assert "vs run 1: pass rate +0.50" in passing.stdout  # compared with the commit before

    # Both runs are in the project's own results database, the history `history` shows.
    assert (
        main(["history", "tone", "--db", str(repo / ".ai_eval" / "results.sqlite"), "--format", "json"]) == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert [(row["run_id"], row["passed_gate"]) for row in rows] == [(2, 1), (1, 0)]


# --- the GitHub Action -------------------------------------------------------------------------

EXPRESSION = re.compile(r"^\$\{\{ *(inputs\.[\w-]+|steps\.python\.outputs\.python-path) *\}\}$")


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    loaded = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    assert loaded["runs"]["using"] == "composite"
    return loaded


def step(action: dict[str, Any], command: str) -> dict[str, Any]:
    """The step of action.yml that runs `scripts/github-action COMMAND`."""
    (found,) = [
        s
        for s in action["runs"]["steps"]
        if re.search(rf"scripts/github-action\"? {command}$", s.get("run", ""))
    ]
    return dict(found)


@dataclass
class Runner:
    """What a GitHub-hosted runner gives a step: its files and the variables that name them."""

    root: Path
    path: str  # PATH, with the folders earlier steps added through GITHUB_PATH first

    def __post_init__(self) -> None:
        for name in ("temp", "workspace"):
            (self.root / name).mkdir(parents=True, exist_ok=True)
        for name in ("summary.md", "output", "path"):
            (self.root / name).touch()

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    def env(self) -> dict[str, str]:
        return {
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_ACTION_PATH": str(REPO),
            "GITHUB_WORKSPACE": str(self.workspace),
            "RUNNER_TEMP": str(self.root / "temp"),
            "GITHUB_STEP_SUMMARY": str(self.root / "summary.md"),
            "GITHUB_OUTPUT": str(self.root / "output"),
            "GITHUB_PATH": str(self.root / "path"),
            "PATH": self.path,
        }

    def run(
        self,
        action: dict[str, Any],
        command: str,
        inputs: Mapping[str, str] | None = None,
        base: Mapping[str, str] | None = None,
        python: str = sys.executable,
    ) -> subprocess.CompletedProcess[str]:
        """The step as Actions runs it: its `env:` evaluated (inputs not given take their
        defaults), its `run:` in bash -eo pipefail, in the workspace."""
        declared = action["inputs"]
        given = dict(inputs or {})
        assert set(given) <= set(declared), f"action.yml has no input {set(given) - set(declared)}"
        the_step = step(action, command)
        env = dict(without_test_plugins() if base is None else base)
        env.update(self.env())
        for name, value in the_step.get("env", {}).items():
            match = EXPRESSION.match(value)
            assert match, f"action.yml maps {name} to {value!r}, which this test cannot evaluate"
            source = match[1]
            if source.startswith("inputs."):
                key = source.removeprefix("inputs.")
                assert key in declared, f"action.yml maps {name} from the undeclared input {key}"
                env[name] = given.get(key, str(declared[key].get("default", "")))
            else:
                env[name] = python
        assert the_step["shell"] == "bash"
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", the_step["run"]],
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    @property
    def summary(self) -> str:
        return (self.root / "summary.md").read_text(encoding="utf-8")

    @property
    def outputs(self) -> dict[str, str]:
        lines = (self.root / "output").read_text(encoding="utf-8").splitlines()
        return dict(line.split("=", 1) for line in lines)


@pytest.fixture(scope="module")
def installed(action: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> tuple[Runner, str]:
    """The action's install step, offline, into the runner's temp folder; and the PATH later
    steps get (the folders it wrote to GITHUB_PATH first, as the runner puts them)."""
    runner = Runner(tmp_path_factory.mktemp("install-runner"), os.environ["PATH"])
    done = runner.run(action, "install", base=offline())
    assert done.returncode == 0, done.stdout + done.stderr
    added = (runner.root / "path").read_text(encoding="utf-8").split()
    return runner, os.pathsep.join([*reversed(added), os.environ["PATH"]])


def test_action_installs_ai_eval_lsp_from_the_action_on_the_jobs_path(installed: tuple[Runner, str]) -> None:
    runner, path = installed
    (added,) = (runner.root / "path").read_text(encoding="utf-8").split()
    assert Path(added).is_relative_to(runner.root / "temp")  # outside the checkout
    assert shutil.which("ai-eval-lsp", path=path) == str(Path(added) / "ai-eval-lsp")
    version = subprocess.run(
        [Path(added) / "ai-eval-lsp", "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.strip() == "ai-eval-lsp 0.1.0 (compiled: no)"
    # A copy, not this checkout: the package data it needs was installed with it.
    where = subprocess.run(
        [Path(added) / "python", "-c", "import ai_eval_lsp; print(ai_eval_lsp.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=without_test_plugins(),
    )
    assert Path(where.stdout.strip()).is_relative_to(runner.root / "temp")


def job(tmp_path: Path, installed: tuple[Runner, str], files: Mapping[str, str]) -> Runner:
    runner = Runner(tmp_path, installed[1])
    write(runner.workspace, files)
    git(runner.workspace, "init", "-q")  # actions/checkout leaves a repository: the project root
    return runner


def test_action_check_fails_on_a_broken_rubric_with_sarif_and_summary(
    action: dict[str, Any], installed: tuple[Runner, str], tmp_path: Path
) -> None:
    runner = job(
        tmp_path,
        installed,
        {"rubrics/broken.yaml": BROKEN.format(id="broken"), "tone.rubric.yaml": CLEAN.format(id="tone")},
    )
    done = runner.run(action, "run")
    assert done.returncode == 1, done.stdout + done.stderr
    assert BROKEN_LINE in done.stdout  # the log
    assert "::error " not in done.stdout  # the SARIF upload annotates: not twice

    summary = runner.summary
    assert "**check**: 1 error, 0 warnings, 0 info in 2 files" in summary
    assert f"```text\n{BROKEN_LINE}" in summary
    assert "**runs**" not in summary  # no cases were asked for
    outputs = runner.outputs
    assert "results-database" not in outputs

    log = json.loads(Path(outputs["sarif-file"]).read_text(encoding="utf-8"))
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    run = log["runs"][0]
    (result,) = run["results"]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == "unknown-kind"
    assert result["level"] == "error"
    assert result["message"]["text"].startswith("unknown check kind `regexp` (did you mean `regex`?)")
    location = result["locations"][0]["physicalLocation"]
    # Relative to the workspace, as upload-sarif resolves it against the checkout.
    assert location["artifactLocation"]["uri"] == "rubrics/broken.yaml"
    assert location["region"] == {"startLine": 4, "startColumn": 12, "endLine": 4, "endColumn": 18}

    # Without the upload, the problems are annotated in the log instead.
    again = Runner(tmp_path / "no-upload", installed[1])
    shutil.rmtree(again.workspace)
    shutil.copytree(runner.workspace, again.workspace)
    done = again.run(action, "run", {"upload-sarif": "false"})
    assert done.returncode == 1
    assert (
        "::error file=rubrics/broken.yaml,line=4,col=12,endLine=4,endColumn=18,title=ai-eval unknown-kind::"
        in done.stdout
    )


def test_action_log_and_summary_show_a_hostile_value_as_text(
    action: dict[str, Any], installed: tuple[Runner, str], tmp_path: Path
) -> None:
    """A rubric value forged a workflow command in the log, and its ``` closed the summary's
    fence so the image after it rendered."""
    hostile = (
        "x\n::error file=README.md,line=1::Spoofed\n```\n<img src=https://evil.example/x.png>\x1b]0;T\x07"
    )
    rubric = (
        f'id: a\nversion: "1.0"\nchecks:\n  - kind: {json.dumps(hostile)}\nscoring: {{combine: all_pass}}\n'
    )
    runner = job(tmp_path, installed, {"a.rubric.yaml": rubric})
    done = runner.run(action, "run")
    assert done.returncode == 1, done.stdout + done.stderr
    assert not any(line.startswith("::error file=README.md") for line in done.stdout.splitlines())
    assert "\x1b" not in done.stdout + done.stderr
    tokens = MarkdownIt("commonmark").parse(runner.summary)
    inline = [child for token in tokens if token.children for child in token.children]
    assert not {token.type for token in [*tokens, *inline]} & {
        "html_block",
        "html_inline",
        "image",
        "link_open",
    }
    (block,) = [token for token in tokens if token.type == "fence"]
    assert block.info == "text" and "```\\n<img src=https://evil.example/x.png>" in block.content


def test_action_default_paths_check_a_drupal_site_one_folder_down_as_its_own_project(
    action: dict[str, Any], installed: tuple[Runner, str], tmp_path: Path
) -> None:
    """`paths: .` at a decoupled repository's root: the site in `drupal/` is its own project, so
    its module's PHP kind is known (SPEC section 4)."""
    runner = job(tmp_path, installed, {"frontend/package.json": '{"name": "frontend"}'})
    example = Path(__file__).parents[2] / "examples" / "drupal-site"
    shutil.copytree(example, runner.workspace / "drupal", ignore=shutil.ignore_patterns(".ai_eval", "broken"))
    done = runner.run(action, "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unknown-kind" not in done.stdout
    assert "**check**: All checks passed: 4 files" in runner.summary


def test_action_runs_cases_with_gates_and_diffs_against_previous_results(
    action: dict[str, Any], installed: tuple[Runner, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "rubrics/tone.yaml": CLEAN.format(id="tone"),
        "evals/tone.cases.yaml": cases_file("tone", "It is late."),
    }
    inputs = {"cases": "**/*.cases.yaml", "previous-results": "previous-results"}

    # The first run: no earlier results (no artifact was downloaded); the gate fails.
    first = job(tmp_path / "first", installed, files)
    done = first.run(action, "run", inputs)
    assert done.returncode == 1, done.stdout + done.stderr
    summary = first.summary
    assert "**check**: All checks passed: 2 files" in summary
    assert "No previous results database at `previous-results`: nothing to compare with." in summary
    assert (
        "| `evals/tone.cases.yaml` | `tone` | 1 | 0.50 [0.09, 0.91] | 2.50/5 | **FAILED** (pass\\_rate 0.50 \\< 0.8) | 2 | 0 |"
        in summary
    )
    assert "- `evals/tone.cases.yaml` `refund`: fail 0.00/5  all\\_pass: 0 of 1 checks passed" in summary
    assert "### ai-eval:" not in summary  # nothing to diff against
    database = Path(first.outputs["results-database"])
    assert database.is_relative_to(first.root / "temp")  # outside the checkout

    # The next run downloads it as the artifact (a folder holding it); the gate passes now. Each
    # run is compared with its rubric's run before (SPEC section 3: history is per rubric).
    passing = cases_file("tone", "Sorry!")
    second = job(
        tmp_path / "second",
        installed,
        {**files, "evals/tone.cases.yaml": passing, "evals/more.cases.yaml": passing},
    )
    downloaded = second.workspace / "previous-results" / "results.sqlite"
    downloaded.parent.mkdir()
    shutil.copy(database, downloaded)
    done = second.run(action, "run", inputs)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = second.summary
    assert "| `evals/tone.cases.yaml` | `tone` | 3 | 1.00 [0.34, 1.00] | 5.00/5 | passed | 2 | 0 |" in summary
    assert "| `evals/more.cases.yaml` | `tone` | 2 | 1.00 [0.34, 1.00]" in summary  # `**` sorts it first
    assert "### ai-eval: `tone`, run 1 -> run 2" in summary
    assert "### ai-eval: `tone`, run 2 -> run 3" in summary
    assert "| pass rate | 0.50 [0.09, 0.91] | 1.00 [0.34, 1.00] | +0.50 |" in summary
    assert "| `refund` | fail 0.00 | pass 5.00 | flipped to pass |" in summary
    # Its database holds both runs (the history goes on); the downloaded one is left as it was.
    for db, runs in ((second.outputs["results-database"], [3, 2, 1]), (downloaded, [1])):
        assert main(["history", "tone", "--db", str(db), "--format", "json"]) == 0
        assert [row["run_id"] for row in json.loads(capsys.readouterr().out)] == runs


def test_action_says_what_could_not_run(
    action: dict[str, Any], installed: tuple[Runner, str], tmp_path: Path
) -> None:
    runner = job(tmp_path, installed, {"rubrics/tone.yaml": CLEAN.format(id="tone")})
    done = runner.run(action, "run", {"cases": "evals/missing.cases.yaml"})
    assert done.returncode == 2
    assert (
        "| `evals/missing.cases.yaml` | | | | | could not run: evals/missing.cases.yaml: cannot be read"
        in runner.summary
    )

    # Outside Actions, a variable the runner sets is missing: said, not a bash error.
    env = {k: v for k, v in runner.env().items() if k != "GITHUB_STEP_SUMMARY"}
    done = subprocess.run(
        [REPO / "scripts" / "github-action", "run"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "GITHUB_STEP_SUMMARY is not set: the GitHub Actions runner sets it" in done.stderr


def test_action_reads_the_site_s_runs_from_a_secret_and_never_prints_it(
    action: dict[str, Any], installed: tuple[Runner, str], tmp_path: Path
) -> None:
    site = SqliteSite(tmp_path / "site.sqlite")
    site.insert(runner_row("support_bot", {"q1": 5.0, "q2": 1.0}, run_id=1))
    runner = job(tmp_path / "pulled", installed, {"rubrics/tone.yaml": CLEAN.format(id="tone")})
    done = runner.run(action, "run", {"site-database": f"sqlite://localhost/{site.path}"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "**site runs**\n\n```text\nsite run 1 of support_bot: pass rate 0.50" in runner.summary
    assert main(["history", "support_bot", "--db", runner.outputs["results-database"]]) == 0

    secret = "s3cr3t-Pa55"
    unreachable = job(tmp_path / "unreachable", installed, {"rubrics/tone.yaml": CLEAN.format(id="tone")})
    done = unreachable.run(action, "run", {"site-database": f"mysql://reader:{secret}@127.0.0.1:9/shop"})
    assert done.returncode == 0, done.stdout + done.stderr  # the check passed; the site is a warning
    said = "cannot read the site's runs from mysql database `shop` on 127.0.0.1:9 as `reader`: nothing answers there"
    assert f"::warning title=ai-eval-lsp site pull::error: {said}" in done.stdout
    assert f"**site runs** could not be read:\n\n```text\nerror: {said}" in unreachable.summary
    for output in (done.stdout, done.stderr, unreachable.summary, (unreachable.root / "output").read_text()):
        assert secret not in output


def test_action_fails_on_a_site_run_that_regressed_when_asked(
    action: dict[str, Any], installed: tuple[Runner, str], tmp_path: Path
) -> None:
    site = SqliteSite(tmp_path / "site.sqlite")
    site.insert(
        runner_row("support_bot", {"q1": 5.0}, run_id=1),
        runner_row("support_bot", {"q1": 3.0}, run_id=2),  # average -2.00
    )
    url = f"sqlite://localhost/{site.path}"
    files = {"rubrics/tone.yaml": CLEAN.format(id="tone")}
    regressed = (
        "site run 2 of support_bot regressed: pass rate 1.00 [0.80, 1.00], average 3.00/5, gate passed, "
        "1 question, 0 errors; average -2.00 against site run 1 (tolerance 0.5)"
    )
    title = "title=ai-eval-lsp%3A site run 2 of support_bot regressed"

    gated = job(tmp_path / "gated", installed, files)
    done = gated.run(action, "run", {"site-database": url, "fail-on-regression": "true"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"::error {title}::{regressed}" in done.stdout.splitlines()  # annotated
    assert "```text\nsite run 1 of support_bot: pass rate 1.00" in gated.summary
    assert f"\n{regressed}\n```" in gated.summary  # the summary says it in words
    assert "a site run regressed" in done.stderr

    told = job(tmp_path / "told", installed, files)
    done = told.run(action, "run", {"site-database": url})
    assert done.returncode == 0, done.stdout + done.stderr  # a warning only
    assert f"::warning {title}::{regressed}" in done.stdout.splitlines()

    # a gate that cannot be checked fails: the site cannot be read
    site.path.unlink()
    unread = job(tmp_path / "unread", installed, files)
    done = unread.run(action, "run", {"site-database": url, "fail-on-regression": "true"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "**site runs** could not be read:\n\n```text\nerror: cannot read the site's runs" in unread.summary
    assert "::warning title=ai-eval-lsp site pull" not in done.stdout


def test_the_docs_workflow_uses_the_actions_inputs_and_outputs(action: dict[str, Any]) -> None:
    action_name = REPOSITORY.removeprefix("https://github.com/")  # owner/name, as `uses:` says it
    workflow = yaml.safe_load(docs_block("GitHub Actions", f"uses: {action_name}@"))
    steps = workflow["jobs"]["ai-eval"]["steps"]
    (ours,) = [s for s in steps if s.get("uses", "").startswith(f"{action_name}@")]
    assert set(ours["with"]) <= set(action["inputs"])
    assert workflow["permissions"]["security-events"] == "write"  # the SARIF upload
    used = set(re.findall(r"steps\.ai-eval\.outputs\.([\w-]+)", json.dumps(workflow)))
    assert used and used <= set(action["outputs"])
    # The artifact the next run downloads is the one this run uploads.
    uploaded = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")]
    downloaded = [s for s in steps if s.get("uses", "").startswith("actions/download-artifact@")]
    assert uploaded[0]["with"]["name"] == downloaded[0]["with"]["name"]
    assert ours["with"]["previous-results"] == downloaded[0]["with"]["path"]


def test_the_docs_site_gate_fails_a_pull_request_on_a_regression_once(
    action: dict[str, Any], installed: tuple[Runner, str], tmp_path: Path
) -> None:
    """docs/ci.md's workflow run as Actions would run it: the secret names a site one of whose runs
    regressed; the job fails, and the next one, given the database it kept, reads only what came
    since."""
    action_name = REPOSITORY.removeprefix("https://github.com/")
    workflow = yaml.safe_load(docs_block("The site's runs as a gate", "fail-on-regression"))
    assert "pull_request" in workflow[True]  # YAML 1.1 reads `on:` as true
    steps = workflow["jobs"]["site-runs"]["steps"]
    (ours,) = [s for s in steps if s.get("uses", "").startswith(f"{action_name}@")]
    inputs = dict(ours["with"])
    assert set(inputs) <= set(action["inputs"]) and inputs["fail-on-regression"] == "true"
    (restore,) = [s for s in steps if s.get("uses", "").startswith("actions/cache/restore@")]
    (save,) = [s for s in steps if s.get("uses", "").startswith("actions/cache/save@")]
    kept = restore["with"]["path"]
    assert save["if"] == "always()" and save["with"]["path"] == kept  # kept when the job fails too
    assert save["with"]["key"] == restore["with"]["key"] and restore["with"]["key"].startswith(
        restore["with"]["restore-keys"]
    )
    assert inputs["previous-results"] == kept and Path(inputs["results-database"]).parent == Path(kept)

    site = SqliteSite(tmp_path / "site.sqlite")
    site.insert(
        runner_row("support_bot", {"q1": 5.0}, run_id=1), runner_row("support_bot", {"q1": 4.0}, run_id=2)
    )
    inputs["site-database"] = f"sqlite://localhost/{site.path}"  # the secret
    files = {"rubrics/tone.yaml": CLEAN.format(id="tone")}

    def next_job(name: str, cache: Path | None) -> tuple[subprocess.CompletedProcess[str], Runner]:
        runner = job(tmp_path / name, installed, files)
        if cache is not None:
            shutil.copytree(cache, runner.workspace / kept)  # what the cache restores
        return runner.run(action, "run", inputs), runner

    done, first = next_job("first", None)  # no database yet: every run of the site is new
    assert done.returncode == 1, done.stdout + done.stderr
    assert "::error title=ai-eval-lsp%3A site run 2 of support_bot regressed::" in done.stdout
    site.insert(runner_row("support_bot", {"q1": 4.5}, run_id=3))
    done, second = next_job("second", first.workspace / kept)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "```text\nsite run 3 of support_bot: pass rate 1.00 [0.80, 1.00], average 4.50/5" in second.summary
    assert "site run 2 of" not in second.summary  # read by the job before
    site.insert(runner_row("support_bot", {"q1": 3.0}, run_id=4))
    done, _ = next_job("third", second.workspace / kept)
    assert done.returncode == 1
    assert "::error title=ai-eval-lsp%3A site run 4 of support_bot regressed::" in done.stdout
