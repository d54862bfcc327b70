"""`ai-eval-lsp check`, `schema` and `plugins`: formats, exit codes, folder rules and settings."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import without_test_plugins

from ai_eval_lsp import __version__
from ai_eval_lsp.cli import main
from ai_eval_lsp.cli.app import EXAMPLES
from ai_eval_lsp.cli.app import parser as _parser

CLEAN = 'id: {id}\nversion: "1.0"\nchecks:\n  - {{kind: must_contain_any, values: [a]}}\nscoring: {{combine: all_pass}}\n'
BROKEN = 'id: {id}\nversion: "1.0"\nchecks:\n  - {{kind: regexp}}\nscoring: {{combine: all_pass}}\n'


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "clean.rubric.yaml").write_text(CLEAN.format(id="clean"))
    (tmp_path / "broken.rubric.yaml").write_text(BROKEN.format(id="broken"))
    return tmp_path


def test_exit_codes(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = ["--root", str(workspace)]
    assert run(capsys, *root, "check", str(workspace / "clean.rubric.yaml"))[0] == 0
    assert run(capsys, *root, "check", str(workspace / "broken.rubric.yaml"))[0] == 1
    code, _, err = run(capsys, *root, "check", str(workspace / "missing.yaml"))
    assert code == 2 and "no such file or folder" in err
    assert run(capsys, "--root", str(workspace / "nowhere"), "check", ".")[0] == 2
    assert run(capsys)[0] == 2
    with pytest.raises(SystemExit) as usage:
        main(["check", "--format", "xml", "x"])
    assert usage.value.code == 2


def test_warnings_and_information_do_not_fail_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "w.rubric.yaml"
    path.write_text(
        'id: w\nversion: "1.0"\nchecks:\n  - {kind: llm_judge}\nscoring: {combine: all_pass, threshold: 0.5}\n'
    )
    code, out, _ = run(capsys, "--root", str(tmp_path), "check", str(path))
    assert code == 0
    assert "judge-without-description" in out and "ignored-by-combine" in out and "not-executed" in out


def test_text_format(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workspace / "broken.rubric.yaml"
    code, out, _ = run(capsys, "--root", str(workspace), "check", str(path))
    assert code == 1
    first = out.splitlines()[0]
    # `  - {kind: regexp}` is line 4; the value starts at column 12
    assert first.startswith(f"{path}:4:12: unknown-kind unknown check kind `regexp` (did you mean `regex`?)")
    assert out.splitlines()[-1] == "1 error, 0 warnings, 0 info in 1 file"


HOSTILE = "x\n::error file=README.md,line=1::Spoofed\n```\n<img src=https://evil.example/x.png>\x1b]0;T\x07"
"""A rubric value that forged a workflow command, closed the job summary's fence and set the
terminal's title, printed raw by `check`."""


def test_a_value_or_a_file_name_cannot_break_check_s_text_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a\n::error file=README.md::named\x1b[31m.rubric.yaml"
    path.write_text(
        f'id: a\nversion: "1.0"\nchecks:\n  - kind: {json.dumps(HOSTILE)}\nscoring: {{combine: all_pass}}\n'
    )
    code, out, err = run(capsys, "--root", str(tmp_path), "check", str(path))
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith(
        f"{tmp_path}/a\\n::error file=README.md::named\\x1b[31m.rubric.yaml:4:11: unknown-kind"
    )
    assert (
        "`x\\n::error file=README.md,line=1::Spoofed\\n```\\n<img src=https://evil.example/x.png>\\x1b]0;T\\x07`"
        in first
    )
    assert len(out.splitlines()) == 2  # the problem and the count
    assert all(line.isprintable() for line in (out + err).splitlines())


def test_a_setting_or_a_linked_file_s_name_cannot_break_a_line_of_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the CLI says on stderr quotes settings and file names: a note of `check`, a
    warning of `run`."""
    (tmp_path / "ai-eval.toml").write_text('[drupal]\nroot = "nope\\u001b[31mRED"\n')
    (tmp_path / "tone.rubric.yaml").write_text(
        'id: tone\nversion: "1.0"\nchecks:\n  - {id: sorry, kind: must_contain_any, values: [sorry]}\n'
        "scoring: {combine: all_pass}\n"
    )
    (tmp_path / "t.cases.yaml").write_text("rubric: tone\ncases:\n  - {id: a, response: sorry}\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.rubric.yaml"
    outside.write_text("id: elsewhere\n")
    (tmp_path / "e\x1b[31mvil.rubric.yaml").symlink_to(outside)
    for command in ("check", "run"):
        target = tmp_path / ("t.cases.yaml" if command == "run" else "")
        code, out, err = run(capsys, "--root", str(tmp_path), command, str(target))
        assert code == 0 and "\\x1b[31mRED" in err and "e\\x1b[31mvil.rubric.yaml" in err, command
        assert all(line.isprintable() for line in (out + err).splitlines()), command


def test_json_format(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "--root", str(workspace), "check", "--format", "json", str(workspace))
    items = json.loads(out)
    assert [
        (
            i["path"].endswith("broken.rubric.yaml"),
            i["code"],
            i["severity"],
            i["line"],
            i["column"],
            i["end_line"],
            i["end_column"],
        )
        for i in items
    ] == [(True, "unknown-kind", "error", 4, 12, 4, 18)]


def test_github_format(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "info.rubric.yaml").write_text(
        'id: info\nversion: "1.0"\nchecks:\n  - {kind: tool_usage}\n  - {kind: regex, pattern: "a,b: 100%"}\nscoring: {combine: all_pass}\n'
    )
    _, out, _ = run(capsys, "--root", str(workspace), "check", "--format", "github", str(workspace))
    lines = out.splitlines()
    assert lines[0].startswith(
        f"::error file={workspace / 'broken.rubric.yaml'},line=4,col=12,endLine=4,endColumn=18,title=ai-eval unknown-kind::unknown check kind `regexp`"
    )
    assert lines[1].startswith(
        f"::notice file={workspace / 'info.rubric.yaml'},line=4,col=12,endLine=4,endColumn=22,title=ai-eval not-executed::"
    )


def test_sarif_format(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "--root", str(workspace), "check", "--format", "sarif", str(workspace))
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    run_ = log["runs"][0]
    assert run_["tool"]["driver"]["name"] == "ai-eval-lsp"
    assert run_["tool"]["driver"]["rules"] == [
        {"id": "unknown-kind", "shortDescription": {"text": "unknown-kind"}}
    ]
    (result,) = run_["results"]
    assert result["ruleId"] == "unknown-kind" and result["level"] == "error"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("broken.rubric.yaml")
    assert location["region"] == {"startLine": 4, "startColumn": 12, "endLine": 4, "endColumn": 18}


def test_folders_are_walked_by_the_spec_rules_and_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "named.rubric.yml": BROKEN,
        "rubrics/by_folder.yaml": BROKEN,
        "modeline.yaml": BROKEN,
        "plain.yaml": BROKEN,
        "custom/by_glob.yaml": BROKEN,
        ".hidden/ignored.rubric.yaml": BROKEN,
        "support.cases.yaml": "rubric: named\ncases:\n  - {id: one, respons: hi}\n",
        "custom/tests.yaml": "rubric: named\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(
            text.format(id=Path(name).stem.split(".")[0]) if text is BROKEN else text
        )
    modeline = tmp_path / "modeline.yaml"
    modeline.write_text(
        "# yaml-language-server: $schema=https://example.invalid/rubric.schema.json\n" + modeline.read_text()
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ai-eval]\nrubricGlobs = ["custom/by_*.yaml"]\ncasesGlobs = ["custom/tests.yaml"]\n'
    )
    code, out, _ = run(capsys, "--root", str(tmp_path), "check", "--format", "json", str(tmp_path))
    assert code == 1
    found = {(Path(i["path"]).relative_to(tmp_path).as_posix(), i["code"]) for i in json.loads(out)}
    assert found == {
        ("named.rubric.yml", "unknown-kind"),
        ("rubrics/by_folder.yaml", "unknown-kind"),
        ("modeline.yaml", "unknown-kind"),
        ("custom/by_glob.yaml", "unknown-kind"),
        ("support.cases.yaml", "unknown-key"),
        ("support.cases.yaml", "schema"),
        ("custom/tests.yaml", "schema"),
    }


def test_a_file_named_on_the_command_line_is_always_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "plain.yaml").write_text(BROKEN.format(id="plain"))
    code, out, _ = run(capsys, "--root", str(tmp_path), "check", str(tmp_path / "plain.yaml"))
    assert code == 1 and "unknown-kind" in out


def test_schema_fragments_add_kinds_that_validate_but_do_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fragment = {
        "php_only": {
            "allOf": [
                {"$ref": "#/$defs/check_base"},
                {
                    "type": "object",
                    "required": ["kind"],
                    "properties": {"kind": {"const": "php_only"}, "level": {"type": "integer"}},
                },
            ],
            "unevaluatedProperties": False,
        }
    }
    (tmp_path / "kinds.json").write_text(json.dumps(fragment))
    (tmp_path / "pyproject.toml").write_text('[tool.ai-eval]\nschemaFragments = ["kinds.json"]\n')
    rubric = tmp_path / "site.rubric.yaml"
    rubric.write_text(
        'id: site\nversion: "1.0"\nchecks:\n  - {kind: php_only, level: 2}\n  - {kind: php_only, levl: 2}\nscoring: {combine: all_pass}\n'
    )
    code, out, _ = run(capsys, "--root", str(tmp_path), "check", "--format", "json", str(rubric))
    assert [(i["code"], i["line"]) for i in json.loads(out)] == [
        ("not-executed", 4),
        ("not-executed", 5),
        ("unknown-key", 5),
    ]
    assert code == 1
    _, schema, _ = run(capsys, "--root", str(tmp_path), "schema")
    assert "check_php_only" in json.loads(schema)["$defs"]


def test_bad_settings_are_reported_and_defaulted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ai-eval]\nrubricGlobs = "x"\nfoo = 1\n')
    (tmp_path / "a.rubric.yaml").write_text(CLEAN.format(id="a"))
    code, _, err = run(capsys, "--root", str(tmp_path), "check", str(tmp_path))
    assert code == 0
    assert "setting `rubricGlobs` must be a list of strings" in err and "unknown setting `foo`" in err


def test_schema_is_written_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "combined.json"
    assert run(capsys, "--root", str(tmp_path), "schema", "-o", str(target))[0] == 0
    schema = json.loads(target.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "check_word_count" in schema["$defs"]
    assert run(capsys, "--root", str(tmp_path), "schema", "-o", str(tmp_path / "no" / "dir.json"))[0] == 2


def test_plugins_lists_each_executor(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "--root", str(tmp_path), "plugins")
    assert code == 0
    assert (
        "ai-eval-test-wordcount 0.3.0  word_count = ai_eval_test_wordcount:WordCountExecutor  [loaded]  kinds: word_count"
        in out
    )
    assert "[FAILED]" in out


def test_plugins_lists_the_core_executors_and_schema_fragments(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    own = {"properties": {"kind": {"const": "legacy_tone"}}, "required": ["kind"]}
    kind = {"allOf": [{"$ref": "#/$defs/check_base"}, own], "unevaluatedProperties": False}
    (tmp_path / "kinds.json").write_text(json.dumps({"legacy_tone": kind, "regex": kind}))
    (tmp_path / "ai-eval.toml").write_text('schemaFragments = ["kinds.json"]\n')
    code, out, _ = run(capsys, "--root", str(tmp_path), "plugins")
    assert code == 0
    lines = out.splitlines()
    assert lines[:5] == [
        f"ai_eval core kinds, run in Python (schema: the copy ai-eval-lsp {__version__} ships)",
        "  StringCheckExecutor: must_contain_any, must_not_contain, regex",
        "  TargetMatchExecutor: target_match",
        "  the evaluator: composite",
        "  not executed at run time: llm_judge, tool_usage, command, score_delta, json_schema, php_lint, "
        "markdown_structure, format, fact_match",
    ]
    fragments = lines.index("Schema fragments (`schemaFragments`): kinds to validate, whoever runs them")
    assert lines[fragments + 1 : fragments + 4] == [
        "  kinds.json",
        "      legacy_tone: not executed at run time: checks of this kind are skipped",
        "      problem: the definition of `regex` is ignored: `regex` is a core kind, and core kinds cannot be redefined",
    ]
    # the last line counts the kinds by where they come from: the test plugins' word_count and fragile
    assert lines[-1] == "17 kinds: 14 core, 2 from plugins, 1 from schema fragments"
    listing = json.loads(run(capsys, "--root", str(tmp_path), "plugins", "--format", "json")[1])
    assert listing["core"]["kinds"][3] == {"runBy": None, "kinds": lines[4].split(": ")[1].split(", ")}
    assert listing["fragments"] == [
        {
            "file": "kinds.json",
            "kinds": [
                {"kind": "legacy_tone", "runs": "not executed at run time: checks of this kind are skipped"}
            ],
            "problems": [
                "the definition of `regex` is ignored: `regex` is a core kind, and core kinds cannot be redefined"
            ],
        }
    ]


def test_composites_resolve_only_inside_the_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "comp.rubric.yaml").write_text(
        'id: comp\nversion: "1.0"\nchecks:\n  - {kind: composite, rubric: ext}\nscoring: {combine: all_pass}\n'
    )
    (outside / "ext.rubric.yaml").write_text(CLEAN.format(id="ext"))
    code, out, _ = run(
        capsys, "--root", str(root), "check", str(root / "comp.rubric.yaml"), str(outside / "ext.rubric.yaml")
    )
    assert (
        code == 1
        and "unresolved-rubric composite check `ext`: there is no rubric `ext` in the workspace" in out
    )


def test_root_after_the_command_and_empty_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    code, out, err = run(capsys, "check", "--root", str(tmp_path), str(tmp_path / "empty"))
    assert code == 0 and "no rubric or cases files found" in err and "0 files" in out


def test_duplicate_case_ids_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t.rubric.yaml").write_text(CLEAN.format(id="t"))
    (tmp_path / "t.cases.yaml").write_text(
        "rubric: t\ncases:\n  - {id: c1, response: a}\n  - {id: c1, response: b}\n"
    )
    code, out, _ = run(capsys, "--root", str(tmp_path), "check", str(tmp_path / "t.cases.yaml"))
    assert code == 1 and ":4:10: duplicate-id the case id `c1` is already used at line 3" in out


@pytest.mark.parametrize(
    ("written", "advice"),
    [
        ("1.10", 'quote it as "1.10"'),
        ("2", 'quote it as "2.0"'),
        ("1e3", 'write a quoted version such as "1.0"'),
    ],
)
def test_a_numeric_version_gets_a_fix_that_is_a_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, advice: str
) -> None:
    (tmp_path / "v.rubric.yaml").write_text(CLEAN.format(id="v").replace('"1.0"', written))
    _, out, _ = run(capsys, "--root", str(tmp_path), "check", str(tmp_path / "v.rubric.yaml"))
    assert advice in out


def test_check_from_far_above_uses_the_files_own_project(tmp_path: Path) -> None:
    """Run from `/`, a file's project is the nearest folder above it with a marker (here
    `ai-eval.toml`): its composites resolve there, its settings apply, and nothing else is walked."""
    project = tmp_path / "deep" / "down" / "project"
    (project / "evals").mkdir(parents=True)
    (project / "ai-eval.toml").write_text('rubricGlobs = ["evals/*.eval.yml"]\n')
    (project / "evals" / "base.eval.yml").write_text(
        'id: base\nversion: "1.0"\nchecks:\n  - {kind: must_contain_any, values: [a]}\nscoring: {combine: all_pass}\n'
    )
    uses = project / "evals" / "uses.eval.yml"
    uses.write_text(
        'id: uses\nversion: "1.0"\nchecks:\n  - {kind: composite, rubric: base}\n  - {kind: composite, rubric: elsewhere}\nscoring: {combine: all_pass}\n'
    )
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", "check", "--format", "json", str(uses)],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert time.monotonic() - started < 60  # it never walks `/`: that took forever
    found = json.loads(result.stdout)
    assert [(p["code"], p["line"]) for p in found] == [("unresolved-rubric", 5)]
    assert result.returncode == 1


def test_every_command_s_help_ends_with_examples_that_parse(capsys: pytest.CaptureFixture[str]) -> None:
    parser = _parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(commands) == set(EXAMPLES)
    for name in commands:
        with pytest.raises(SystemExit):
            main([name, "--help"])
        shown = capsys.readouterr().out.split("\nexamples:\n")[1].splitlines()
        assert shown and all(line.startswith(f"  ai-eval-lsp {name}") for line in shown), shown
        for line in shown:
            command = line.split("#")[0].split(">")[0]  # the command, not its shell redirection
            argv = shlex.split(command)[1:]
            assert parser.parse_args(argv).command == name


def test_output_piped_into_a_reader_that_stops_early_ends_quietly(tmp_path: Path) -> None:
    kinds = "".join("  - {kind: regexp}\n" for _ in range(3000))  # ~1 MB of problems: more than a pipe holds
    (tmp_path / "many.rubric.yaml").write_text(
        f'id: many\nversion: "1.0"\nchecks:\n{kinds}scoring: {{combine: all_pass}}\n'
    )
    command = [sys.executable, "-m", "ai_eval_lsp", "check", str(tmp_path / "many.rubric.yaml")]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=without_test_plugins()
    ) as process:  # `| head -1`
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()
        errors = process.stderr.read()
        status = process.wait(timeout=60)
    assert first.startswith(f"{tmp_path / 'many.rubric.yaml'}:4:12: unknown-kind".encode())
    assert (status, errors) == (141, b"")


def test_the_command_s_process_writes_all_of_its_output_before_it_ends(tmp_path: Path) -> None:
    # The process ends without freeing its analyses (`common.finished`): what it buffered for a
    # pipe is still written, and its status is the command's.
    kinds = "".join("  - {kind: regexp}\n" for _ in range(3000))  # ~1 MB of problems
    path = tmp_path / "many.rubric.yaml"
    path.write_text(f'id: many\nversion: "1.0"\nchecks:\n{kinds}scoring: {{combine: all_pass}}\n')

    def check(output: str) -> str:
        command = [sys.executable, "-m", "ai_eval_lsp", "check", "--format", output, str(path)]
        done = subprocess.run(
            command, capture_output=True, env=without_test_plugins(), timeout=120, check=False
        )
        assert (done.returncode, done.stderr) == (1, b"")
        return done.stdout.decode()

    lines = check("text").splitlines()
    assert len(lines) == 3001 and lines[-1] == "3000 errors, 0 warnings, 0 info in 1 file"
    assert len(json.loads(check("sarif"))["runs"][0]["results"]) == 3000


def test_the_command_s_process_still_runs_what_is_registered_at_exit(tmp_path: Path) -> None:
    # What a plugin or a tool registered to run at exit runs, a profiler saves what it measured,
    # and a stream closed from the start does not change the status.
    path = tmp_path / "clean.rubric.yaml"
    path.write_text(CLEAN.format(id="clean"))
    saved = tmp_path / "saved"
    registering = (
        "import atexit, pathlib, sys; "
        f"atexit.register(pathlib.Path({str(saved)!r}).write_text, 'saved'); "
        "from ai_eval_lsp.cli import console; "
        f"sys.argv = ['ai-eval-lsp', 'check', {str(path)!r}]; sys.exit(console())"
    )
    env = without_test_plugins()
    assert subprocess.run([sys.executable, "-c", registering], env=env, timeout=120).returncode == 0
    assert saved.read_text() == "saved"
    profile = tmp_path / "check.prof"
    profiled = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "ai_eval_lsp", "check", str(path)]
    assert subprocess.run(profiled, env=env, capture_output=True, timeout=120).returncode == 0
    assert profile.stat().st_size > 0
    stderr_closed = subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", "check", str(path)],
        env=env,
        stdout=subprocess.DEVNULL,
        preexec_fn=lambda: os.close(2),
        timeout=120,
    )
    assert stderr_closed.returncode == 0


def test_a_settings_file_that_cannot_be_read_stops_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ai-eval.toml").write_text('rubricGlobs = ["evals/**/*.yaml"]\n[php\n')
    (tmp_path / "a.rubric.yaml").write_text(CLEAN.format(id="a"))
    code, out, err = run(capsys, "--root", str(tmp_path), "check", str(tmp_path))
    assert (code, out) == (2, "")  # not "All checks passed" on settings it could not read
    assert err.splitlines()[-1] == (
        f"error: {tmp_path / 'ai-eval.toml'}: cannot be read: Expected ']' at the end of a table declaration "
        "(at line 2, column 5); none of its settings would apply, so nothing is checked until it is fixed"
    )
