"""Runs and diffs in Markdown (a pull-request comment, the Action's job summary) show a site row's
and a repository's text literally, and show no secret whatever escaped it (issue 40's red team,
findings 5 and 6). The Markdown is read back by a CommonMark reader (markdown-it-py, which rich
brings), with GFM tables, as GitHub reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from site_db import SqliteSite, runner_row

from ai_eval_lsp.cli import main
from ai_eval_lsp.core.text import markdown

EVIL = "tx` <img src=https://evil.example/t.png> [click me](https://evil.example) @octocat `"
"""A target id that closed its code span and rendered an image, a link and a mention."""

RUBRIC = """\
id: support_tone
version: "1.0"
checks:
  - {id: apologises, kind: must_contain_any, values: [sorry]}
scoring: {combine: all_pass}
"""


def shown(text: str) -> tuple[set[str], str]:
    """The kinds of token Markdown makes of `text` (the HTML blocks a diff folds its unchanged
    cases in, `<details>`, are its own), and the text a reader sees."""
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)
    inline: list[Token] = [child for token in tokens if token.children for child in token.children]
    own = ("<details><summary>", "</details>")
    kinds = {token.type for token in tokens if not token.content.startswith(own)}
    return kinds | {token.type for token in inline}, "".join(child.content for child in inline)


UNSAFE = {"link_open", "image", "html_inline", "html_block"}


@pytest.mark.parametrize("code", [False, True])
@pytest.mark.parametrize(
    "text",
    [
        EVIL,
        "a|b\\|c",
        "``x``",
        "q\x1b[31m\nforged",
        "![i](https://evil.example/i.png) <b>&amp; *e* _u_ ~~s~~ $x$ # h <https://evil.example>",
    ],
)
def test_any_text_is_shown_as_it_is_in_a_table_a_heading_and_a_list(text: str, code: bool) -> None:
    escaped = markdown(text, code=code)
    for place in (
        f"| h |\n|---|\n| {markdown(text, code=code, cell=True)} |\n",
        f"### ai-eval: {escaped}, run 1\n",
        f"- {escaped}: x\n",
    ):
        kinds, seen = shown(place)
        assert not kinds & UNSAFE, place
        literal = text.replace("\x1b", "\\x1b").replace("\n", "\\n")
        assert literal.replace("@", "@\u200b") in seen or literal in seen, (place, seen)
        assert "@octocat" not in seen or code  # a code span mentions no one


def test_a_site_row_s_text_renders_as_literal_text_in_a_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = SqliteSite(tmp_path / "site" / "site.sqlite")
    site.insert(
        runner_row(EVIL, {EVIL: 5.0, "q2": 0.0}, run_id=1),
        runner_row(EVIL, {EVIL: 0.0, "q2": 0.0}, run_id=2),
    )
    root = tmp_path / "project"
    root.mkdir()
    (root / "ai-eval.toml").write_text(f'site.database = "sqlite://localhost/{site.path}"\n')
    assert main(["--root", str(root), "site", "pull"]) == 0
    capsys.readouterr()
    assert main(["--root", str(root), "diff", "site:1", "site:2", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    kinds, seen = shown(out)
    assert not kinds & UNSAFE and "code_inline" in kinds
    assert seen.count(EVIL) == 2  # the heading's target and the question's row, whole


def run_cli(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ai_eval_lsp", "--root", str(root), *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_a_password_in_a_case_id_is_shown_in_no_format_whatever_escapes_it(tmp_path: Path) -> None:
    """The site's password `Kx7pa|ss99`, percent-encoded in its URL, in a case id: Markdown
    wrote it `Kx7pa\\|ss99`, which the redaction did not know."""
    (tmp_path / "ai-eval.toml").write_text('site.database = "mysql://reader:Kx7pa%7Css99@127.0.0.1:9/site"\n')
    (tmp_path / "tone.rubric.yaml").write_text(RUBRIC)
    cases = tmp_path / "t.cases.yaml"
    ids = ["polite Kx7pa|ss99", "in code `Kx7pa|ss99`", "@Kx7pa|ss99_x"]
    entries = "".join(f"  - id: {json.dumps(case_id)}\n    response: no\n" for case_id in ids)
    cases.write_text("rubric: support_tone\ncases:\n" + entries)
    said = [run_cli(tmp_path, "run", "--format", form, str(cases)) for form in ("markdown", "text", "json")]
    cases.write_text(cases.read_text().replace("response: no", "response: sorry"))
    said.append(run_cli(tmp_path, "run", "--format", "markdown", str(cases)))
    said += [run_cli(tmp_path, "diff", "--format", form) for form in ("markdown", "text", "json")]
    said.append(run_cli(tmp_path, "report", "-o", str(tmp_path / "r.html")))
    markdown_diff = said[4].stdout
    assert "| `polite ***` | fail 0.00 | pass 5.00 | flipped to pass |" in markdown_diff
    for done in said:
        assert done.returncode in (0, 1), done.stderr
        assert "Kx7pa" not in done.stdout + done.stderr and "ss99" not in done.stdout + done.stderr
    assert "ss99" not in (tmp_path / "r.html").read_text()
