"""A repository's files are untrusted input (SPEC 6): a FIFO or a link to a device named like a
rubric never holds `check`, `run` or `run --watch`; a link to a file outside the project is never
read, so no output quotes it; an oversized file is skipped by its size; each is said, naming the
file and why. A file named on the command line that is not read is an I/O error: exit 2."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import without_test_plugins
from example_site import MODULE, copy_example
from site_shapes import DEFAULT_SETTINGS_TOP, LOCAL_INCLUDE, codebase, write
from test_watch import lines_of, sigint_as_in_a_terminal, take

from ai_eval_lsp.disk.reading import YAML_LIMIT

TOKEN = "ghp_R3alLooking7okenThatMustNeverBeShown0"
SECRET = f"GITHUB_TOKEN: {TOKEN}\n"
BROKEN = 'id: tone\nversion: "1.0"\nchecks:\n  - {kind: regexp}\nscoring: {combine: all_pass}\n'
CLEAN = 'id: ok\nversion: "1.0"\nchecks:\n  - {kind: must_contain_any, values: [a]}\nscoring: {combine: all_pass}\n'
ENDS_WITHIN = 60
"""Seconds: "at once" for a test on a loaded machine; a FIFO held `check` until it was killed."""
OUTSIDE = "not read: it is outside the project (a symbolic link or `..` leads out of it), and only files inside the project are read"
FIFO = "not read: it is a named pipe (FIFO), not a regular file, and only regular files are read"


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A repository whose rubrics folder holds a FIFO, a link to /dev/zero, a link to a secret of
    the machine outside it, a link to its own file (followed) and a clean rubric."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "rubrics").mkdir()
    (repo / "shared").mkdir()
    (tmp_path / "runner.env").write_text(SECRET)
    os.mkfifo(repo / "rubrics" / "pipe.yaml")
    (repo / "rubrics" / "zero.yaml").symlink_to("/dev/zero")
    (repo / "rubrics" / "leak.yaml").symlink_to(tmp_path / "runner.env")
    (repo / "shared" / "tone.yml").write_text(BROKEN)
    (repo / "rubrics" / "tone.yaml").symlink_to("../shared/tone.yml")
    (repo / "rubrics" / "ok.yaml").write_text(CLEAN)
    return repo


def check(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return command(repo, "check", *args)


def command(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=ENDS_WITHIN,
        env=without_test_plugins(),
    )


@pytest.mark.parametrize("form", ["text", "json", "github", "sarif"])
def test_check_skips_what_it_may_not_read_and_never_shows_a_file_outside(repository: Path, form: str) -> None:
    done = check(repository, "--format", form, ".")
    assert TOKEN not in done.stdout + done.stderr
    assert done.returncode == 1, done.stderr  # the linked rubric within the project is checked
    notes = done.stderr.splitlines()
    assert f"warning: rubrics/leak.yaml: {OUTSIDE}" in notes
    assert f"warning: rubrics/zero.yaml: {OUTSIDE}" in notes
    assert f"warning: rubrics/pipe.yaml: {FIFO}" in notes
    if form == "text":
        assert "rubrics/tone.yaml:4:12: unknown-kind unknown check kind `regexp`" in done.stdout
        assert done.stdout.splitlines()[-1] == "1 error, 0 warnings, 0 info in 2 files"
    if form == "json":
        assert [(p["path"], p["code"]) for p in json.loads(done.stdout)] == [
            ("rubrics/tone.yaml", "unknown-kind")
        ]
    if form == "github":
        assert (
            f"::warning file=rubrics/leak.yaml,title=ai-eval file not read::{OUTSIDE}"
            in done.stdout.splitlines()
        )
    if form == "sarif":
        (invocation,) = json.loads(done.stdout)["runs"][0]["invocations"]
        said = {
            (
                n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                n["level"],
                n["message"]["text"],
            )
            for n in invocation["toolExecutionNotifications"]
        }
        assert ("rubrics/pipe.yaml", "warning", FIFO) in said and len(said) == 3
        assert invocation["executionSuccessful"] is True


@pytest.mark.parametrize("form", ["text", "json", "github", "sarif"])
def test_a_file_named_on_the_command_line_that_is_not_read_is_an_io_error(
    repository: Path, form: str
) -> None:
    done = check(repository, "--format", form, "rubrics/leak.yaml", "rubrics/pipe.yaml", "rubrics/ok.yaml")
    assert TOKEN not in done.stdout + done.stderr
    assert done.returncode == 2
    assert f"error: rubrics/leak.yaml: {OUTSIDE}" in done.stderr.splitlines()
    assert f"error: rubrics/pipe.yaml: {FIFO}" in done.stderr.splitlines()
    if form == "text":
        assert done.stdout.splitlines()[-1] == "All checks passed: 1 file"  # the others are still checked
    if form == "github":
        assert (
            f"::error file=rubrics/pipe.yaml,title=ai-eval file not read::{FIFO}" in done.stdout.splitlines()
        )
    if form == "sarif":
        assert json.loads(done.stdout)["runs"][0]["invocations"][0]["executionSuccessful"] is False


@pytest.mark.parametrize("form", ["text", "github", "sarif"])
@pytest.mark.parametrize("named", ["rubrics", "rubrics/creds.yaml", "{alias}/rubrics/creds.yaml"])
def test_a_folder_linked_out_of_the_repository_is_not_read_when_named_on_the_command_line(
    tmp_path: Path, named: str, form: str
) -> None:
    """The project root is found from the path as written, so the folder a `rubrics` link leads
    to (a project of its own, here) never becomes the project; the path named through a link to
    the repository itself (as `/tmp` is on macOS) is the repository's too."""
    outside, repo = tmp_path / "runner_secret", tmp_path / "repo"
    (outside / ".git").mkdir(parents=True)
    (outside / "creds.yaml").write_text(f'id: {TOKEN}\nversion: "1.0"\napi_key: hunter2\n')
    (repo / ".git").mkdir(parents=True)
    (repo / "rubrics").symlink_to(outside)
    (tmp_path / "alias").symlink_to(repo)
    path = named.format(alias=tmp_path / "alias")
    done = check(repo, "--format", form, path)
    assert TOKEN not in done.stdout + done.stderr and "hunter2" not in done.stdout + done.stderr
    if named == "rubrics":  # walked: skipped with a note
        assert done.returncode == 0
        assert f"warning: rubrics/creds.yaml: {OUTSIDE}" in done.stderr.splitlines()
    else:  # named: an I/O error
        assert done.returncode == 2
        assert f"error: {path}: {OUTSIDE}" in done.stderr.splitlines()


def test_a_rubric_over_50_mb_is_skipped_by_its_size(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    with (tmp_path / "huge.rubric.yaml").open("wb") as file:
        file.truncate(YAML_LIMIT + 1)  # sparse: over the limit on paper, nothing written
    (tmp_path / "ok.rubric.yaml").write_text(CLEAN)
    done = check(tmp_path, ".")
    assert done.returncode == 0
    assert (
        "warning: huge.rubric.yaml: not read: it is 50.0 MB, over the 50 MB limit for rubric and cases files"
        in done.stderr.splitlines()
    )


DEEP = "[" * 100_000
"""Nested past Python's stack: every JSON and TOML parser recursed until it crashed."""
NESTED = "cannot be read: it is nested too deeply to be read"


@pytest.mark.parametrize(
    ("files", "code", "said"),
    [
        ({"composer.json": DEEP}, 0, f"warning: composer.json: {NESTED}"),
        (
            {"ai-eval.toml": 'schemaFragments = ["kinds.json"]\n', "kinds.json": DEEP},
            0,
            f"warning: schema fragment {{repo}}/kinds.json: {NESTED}",
        ),
        (
            {
                "composer.json": json.dumps({"require": {"drupal/core-recommended": "^10.3"}}),
                "web/core/lib/Drupal.php": "<?php\n",
                "web/modules/contrib/ai_eval/ai_eval.info.yml": "name: AI Eval\ntype: module\n",
                "web/modules/contrib/ai_eval/schema/rubric.schema.json": DEEP,
            },
            0,
            "warning: the site's ai_eval schema {repo}/web/modules/contrib/ai_eval/schema/rubric.schema.json "
            f"cannot be used ({NESTED}); the shipped schema is used",
        ),
        # a settings file that cannot be read stops the command, as an invalid one does
        (
            {"pyproject.toml": "[tool.ai-eval]\nx = " + DEEP + "]" * 100_000},
            2,
            f"error: {{repo}}/pyproject.toml: {NESTED}; none of its settings would apply, so nothing is "
            "checked until it is fixed",
        ),
        (
            {"ai-eval.toml": "x = " + DEEP + "]" * 100_000},
            2,
            f"error: {{repo}}/ai-eval.toml: {NESTED}; none of its settings would apply, so nothing is "
            "checked until it is fixed",
        ),
    ],
    ids=["composer.json", "fragment", "site-schema", "pyproject.toml", "ai-eval.toml"],
)
def test_a_project_file_nested_past_any_parser_is_one_line_not_a_crash(
    tmp_path: Path, files: dict[str, str], code: int, said: str
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for name, text in {**files, "rubrics/ok.yaml": CLEAN}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    done = check(repo, "rubrics")
    assert "Traceback" not in done.stderr
    assert said.format(repo=repo) in done.stderr.splitlines()
    assert done.returncode == code
    if code == 0:
        assert done.stdout.splitlines()[-1] == "All checks passed: 1 file"


CASES = "rubric: ok\ncases:\n  - {id: a, response: 'a'}\n"


def test_a_nul_in_a_path_setting_is_said_and_its_default_kept(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "ai-eval.toml").write_text(
        'drupal.root = "web\\u0000"\nresultsDatabase = "a\\u0000.sqlite"\n'
    )
    (tmp_path / "ok.rubric.yaml").write_text(CLEAN)
    (tmp_path / "ok.cases.yaml").write_text(CASES)
    checked, ran = check(tmp_path, "."), command(tmp_path, "run", "ok.cases.yaml")
    for done in (checked, ran):
        assert done.returncode == 0, done.stderr
        for setting in ("drupal.root", "resultsDatabase"):
            assert (
                f"warning: {tmp_path / 'ai-eval.toml'}: setting `{setting}` holds a NUL character, which no "
                "path, command or URL can; using the default"
            ) in done.stderr.splitlines()
    assert (tmp_path / ".ai_eval" / "results.sqlite").is_file()


def test_run_ends_with_a_note_and_a_named_cases_fifo_is_an_io_error(repository: Path) -> None:
    (repository / "ok.cases.yaml").write_text(CASES)
    os.mkfifo(repository / "pipe.cases.yaml")

    def run(*names: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ai_eval_lsp", "run", *names],
            cwd=repository,
            capture_output=True,
            text=True,
            timeout=ENDS_WITHIN,
            env=without_test_plugins(),
        )

    done = run("ok.cases.yaml")
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout + done.stderr
    assert f"warning: {repository / 'rubrics/pipe.yaml'}: {FIFO}" in done.stderr.splitlines()
    refused = run("pipe.cases.yaml", "ok.cases.yaml")
    assert refused.returncode == 2
    assert f"error: pipe.cases.yaml: {FIFO}" in refused.stderr.splitlines()


def test_run_watch_runs_and_watches_past_a_fifo_and_a_link_to_a_device(repository: Path) -> None:
    (repository / "ok.cases.yaml").write_text(CASES)
    with subprocess.Popen(
        [sys.executable, "-m", "ai_eval_lsp", "run", "--watch", "ok.cases.yaml"],
        cwd=repository,
        env=without_test_plugins(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_in_a_terminal,
    ) as watching:
        out, err = lines_of(watching.stdout), lines_of(watching.stderr)
        try:
            assert "ok.cases.yaml: ok: pass rate" in take(out, "ok.cases.yaml", ENDS_WITHIN)[-1]
            said = take(err, "watching", ENDS_WITHIN)
            assert f"warning: {repository / 'rubrics/zero.yaml'}: {OUTSIDE}" in said
            # a change re-reads the project, FIFO and links included, and runs again
            for _ in range(60):
                (repository / "rubrics" / "ok.yaml").write_text(CLEAN.replace("[a]", "[b]"))
                try:
                    again = take(out, "ok.cases.yaml: ok: pass rate", timeout=1)
                    break
                except queue.Empty:
                    continue
            else:
                raise AssertionError("no re-run after the rubric changed")
            assert "pass rate 0.00" in again[-1]
            watching.send_signal(signal.SIGINT)
            assert watching.wait(ENDS_WITHIN) == 0  # no gate, no `expect`: the last round is clean
        finally:
            watching.kill()
    assert TOKEN not in "".join(out.queue) + "".join(err.queue)


DOUBLING = "$s = 'xxxxxxxx';\n" + "$s .= $s;\n" * 40


@pytest.mark.parametrize(
    ("settings", "local_fifo", "said"),
    [
        (
            DEFAULT_SETTINGS_TOP + DOUBLING + "$databases['default']['default'] = ['driver' => 'mysql', "
            "'database' => $s, 'host' => '127.0.0.1'];\n$settings['config_sync_directory'] = $s;\n",
            False,
            "a string longer than 64 KB at web/sites/default/settings.php:",
        ),
        (
            DEFAULT_SETTINGS_TOP
            + "$databases['default']['default'] = ['driver' => 'mysql', 'database' => 'd', "
            "'host' => 'h'];\n" + LOCAL_INCLUDE,
            True,
            "'/settings.local.php'`: not read: it is a named pipe (FIFO)",
        ),
        (DEFAULT_SETTINGS_TOP + "include '/dev/zero';\n", False, "includes `'/dev/zero'`: not read"),
        (
            DEFAULT_SETTINGS_TOP + 'include __DIR__ . "/settings.local\\0.php";\n',
            False,
            "not read: its name holds a NUL character, which no file's name can",
        ),
        (
            DEFAULT_SETTINGS_TOP + 'if (file_exists("a\\0b")) { $x = 1; }\n',
            False,
            'asks `file_exists("a\\0b")`: its name holds a NUL character',
        ),
        # PHP saturates a cast past its integers (Python's int() refused 5,000 digits) and casts
        # infinity to 0: neither is a port
        *(
            (
                DEFAULT_SETTINGS_TOP + "$databases['default']['default'] = ['driver' => 'mysql', "
                f"'database' => 'd', 'host' => 'h', 'port' => (int) {cast}];\n",
                False,
                f"the site's database port in web/sites/default/settings.php is `{port}`, not a number "
                "from 1 to 65535",
            )
            for cast, port in [("'" + "9" * 5000 + "'", 2**63 - 1), ("1e400", 0)]
        ),
    ],
    ids=[
        "doubling",
        "local-fifo",
        "dev-zero",
        "nul-include",
        "nul-file-exists",
        "int-5000-digits",
        "int-1e400",
    ],
)
def test_check_and_site_pull_go_on_whatever_settings_php_holds(
    tmp_path: Path, settings: str, local_fifo: bool, said: str
) -> None:
    codebase(tmp_path)
    write(tmp_path, {"web/sites/default/settings.php": settings, "rubrics/ok.yaml": CLEAN})
    if local_fifo:
        os.mkfifo(tmp_path / "web/sites/default/settings.local.php")
    environment = without_test_plugins()
    environment.pop("AI_EVAL_SITE_DATABASE", None)

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ai_eval_lsp", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=ENDS_WITHIN,
            env=environment,
        )

    checked = command("check", "rubrics")
    assert checked.returncode == 0 and checked.stdout.splitlines()[-1] == "All checks passed: 1 file"
    pulled = command("site", "pull", "--db", str(tmp_path / "results.sqlite"))
    assert pulled.returncode == 2
    (error,) = [line for line in pulled.stderr.splitlines() if line.startswith("error: ")]
    assert error.startswith("error: no site runs: ") and said in error
    assert "Traceback" not in checked.stderr + pulled.stderr


@pytest.mark.parametrize("shape", ["fifo", "link outside", "over 1 MB"])
def test_a_composer_json_that_is_not_read_is_said_not_silently_no_codebase(
    tmp_path: Path, shape: str
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "ok.rubric.yaml").write_text(CLEAN)
    composer = repo / "composer.json"
    if shape == "fifo":
        os.mkfifo(composer)
        why = FIFO
    elif shape == "link outside":
        (tmp_path / "composer.json").write_text('{"require": {"drupal/core": "^10"}}')
        composer.symlink_to(tmp_path / "composer.json")
        why = OUTSIDE
    else:
        composer.write_text('{"require": {"drupal/core": "^10"}, "x": "' + "x" * 2**20 + '"}')
        why = "not read: it is 1.0 MB, over the 1 MB limit for this kind of file"
    done = check(repo, ".")
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "All checks passed: 1 file"
    assert f"warning: composer.json: {why}" in done.stderr.splitlines()


def test_a_pyproject_toml_that_is_a_fifo_is_said_as_a_settings_file_that_cannot_be_read(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "ok.rubric.yaml").write_text(CLEAN)
    os.mkfifo(tmp_path / "pyproject.toml")
    done = check(tmp_path, ".")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {tmp_path / 'pyproject.toml'}: {FIFO}; none of its settings would apply, so nothing is "
        "checked until it is fixed"
    ]


def test_an_executor_s_php_file_that_is_a_fifo_is_said_once_for_what_it_is(tmp_path: Path) -> None:
    site = copy_example(tmp_path / "site")
    executor = f"{MODULE}/src/CheckExecutor/WordCountExecutor.php"
    (site / executor).unlink()
    os.mkfifo(site / executor)
    done = check(site, f"{MODULE}/rubrics")
    assert f"note: {executor}: {FIFO}" in done.stderr.splitlines()
    assert "does not exist" not in done.stderr


@pytest.mark.parametrize("database", ["//dev/zero", "/pipe.sqlite", "/none.sqlite"])
def test_an_sqlite_site_that_is_no_regular_file_says_what_it_is(tmp_path: Path, database: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "ai-eval.toml").write_text(f'site.database = "sqlite://localhost{database}"\n')
    os.mkfifo(tmp_path / "pipe.sqlite")
    done = command(tmp_path, "site", "pull", "--db", str(tmp_path / "results.sqlite"))
    path = database[1:] if database.startswith("//") else str(tmp_path / database[1:])
    why = {
        "//dev/zero": "it is a device, not a regular file",
        "/pipe.sqlite": "it is a named pipe (FIFO), not a regular file",
        "/none.sqlite": "there is no such file",
    }[database]
    assert (done.returncode, done.stderr) == (
        2,
        f"error: cannot read the site's runs from sqlite file {path}: {why}\n",
    )
