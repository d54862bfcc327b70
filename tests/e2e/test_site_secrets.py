"""The site's password leaves through no channel (SPEC 6, "Secrets never leave"), whatever it
holds and whatever goes wrong: for random passwords (ASCII, the URL's own delimiters, Unicode,
fullwidth) and each trouble a real MariaDB or PostgreSQL server (tests/databases.py) can give (a
URL no parser reads, a refused password, an unknown host, an unknown database, no table, a server
too slow to answer), and a site whose rows quote it: in nothing `site pull`, `history`, `run` and
`report` print or write, in no message, notification or log line of the server, in no stored row
and no exported file. The traceback of an unexpected error, too."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import string
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from conftest import examples
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from lsp_stdio import StdioClient
from site_db import RUBRIC, ServerSite, SiteRow, runner_row

from ai_eval_lsp.cli import main

names = itertools.count()
KNOWN = "Known-pw-1"
"""The password of the users the test makes to be refused with the random one."""
SLOW = "slow_"
"""The prefix of the site's table that another session keeps locked."""


TAILS = st.one_of(
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=6, max_size=14),
    st.text(st.sampled_from("@:/#?%[]" + string.ascii_letters), min_size=6, max_size=14),
    st.text(st.characters(categories=("L", "N", "S", "P"), min_codepoint=0xA0), min_size=6, max_size=14),
    st.text(st.characters(min_codepoint=0xFF01, max_codepoint=0xFF5E), min_size=6, max_size=14),
)
PASSWORDS = TAILS.map(lambda tail: "Kx7" + tail)
"""Random passwords, each starting with letters no output holds by chance (a password that is
a word of the protocol, such as `reference`, is found in its keys, which no redaction touches)."""


@pytest.fixture(params=["mariadb", "postgres"])
def server(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


def troubles(site: ServerSite, password: str, written: str) -> dict[str, str]:
    """A URL for each trouble, holding `password` (`written` as the URL has it where the server
    never checks it; percent-encoded where it must log in)."""
    server, name, prefix = site.server, site.name, site.prefix
    stranger = f"stranger_{name}"
    server.create_user(stranger, KNOWN, name)
    at = f"{server.host}:{server.port}"
    return {
        "a URL no parser reads": f"{server.driver}://{site.user}:{written}@[::1/{name}",
        "a refused password": f"{server.driver}://{stranger}:{written}@{at}/{name}#{prefix}",
        "an unknown host": f"{server.driver}://{site.user}:{written}@nohost.invalid:{server.port}/{name}",
        "an unknown database": server.url(site.user, password, f"nope_{name}", prefix),
        "no table": server.url(site.user, password, name, "nope_"),
        "a slow server": server.url(site.user, password, name, SLOW),
        "rows that quote it": site.url,
    }


def project(root: Path, url: str, password: str) -> Path:
    """A project naming the site, with a cases file that quotes the password too (a repository's
    text may hold anything): its runs' rows and envelopes are stored and exported."""
    root.mkdir(parents=True)
    settings = {"site.database": url, "exportEnvelopeOnComplete": True, "site.pollSeconds": 0}
    (root / "ai-eval.toml").write_text(
        "".join(f"{key} = {json.dumps(value, ensure_ascii=False)}\n" for key, value in settings.items()),
        encoding="utf-8",
    )
    (root / "refund.rubric.yaml").write_text(RUBRIC)
    quoted = json.dumps(password, ensure_ascii=False)[1:-1]
    (root / "refund.cases.yaml").write_text(
        textwrap.dedent(f"""\
            rubric: refund_answer
            site_target: "bot {quoted}"
            cases:
              - id: "case {quoted}"
                question: {{id: "q {quoted}"}}
                response: "Sorry: {quoted}"
            """),
        encoding="utf-8",
    )
    return root


def quoting(password: str) -> SiteRow:
    """A site row whose target, question and configuration quote the password."""
    target = f"bot {password}"
    return runner_row(
        target, {f"q {password}": 5.0, "q2": 1.0}, run_id=1, config={"target": target, "note": password}
    )


def cli(*arguments: str) -> str:
    """What a command prints, out and err."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(list(arguments))
    return out.getvalue() + err.getvalue()


def through_the_cli(site: ServerSite, roots: dict[str, Path]) -> list[str]:
    said = []
    for trouble, root in roots.items():
        with pytest.MonkeyPatch.context() as patch:
            patch.delenv("AI_EVAL_SITE_DATABASE", raising=False)
            patch.setattr("ai_eval_lsp.runs.site.TIMEOUT", 1.0)  # the 5 s limit, shorter for the test
            with site.locked(SLOW) if trouble == "a slow server" else contextlib.nullcontext():
                said.append(cli("site", "pull", str(root)))
        said.append(cli("--root", str(root), "run", str(root / "refund.cases.yaml")))
        said += [cli("--root", str(root), "history"), cli("--root", str(root), "history", "--format", "json")]
        said.append(cli("--root", str(root), "report", "-o", str(root / ".ai_eval" / "report.html")))
    return said


def through_the_server(site: ServerSite, roots: dict[str, Path], log: Path) -> list[str]:
    """Every message the real server sends while it reads each project's site, twice (the second
    read announces a row the site inserted meanwhile), and its stderr log."""

    def answer(method: str, params: Any) -> Any:
        return [{} for _ in params["items"]] if method == "workspace/configuration" else None

    first, *more = roots.values()
    command = {"command": "aiEval.siteRuns", "arguments": [{}]}
    with log.open("wb") as stderr:
        client = StdioClient([sys.executable, "-m", "ai_eval_lsp", "serve"], answer, stderr=stderr)
        try:
            with site.locked(SLOW):  # the first reads, as the projects load
                client.initialize(first, {"experimental": {"aiEval": {"runComplete": True}}}, more)
                client.wait(
                    lambda m: (
                        m.get("method") == "window/showMessage" and "no answer" in m["params"]["message"]
                    ),
                    60,
                )
            client.request("workspace/executeCommand", command)
            site.insert(quoting(site.password))
            client.request("workspace/executeCommand", command)
            assert [m for m in client.notifications if m["method"] == "aiEval/runComplete"], "announced"
        finally:
            client.close()
    return [body.decode("utf-8") for body in client.received] + [log.read_text("utf-8", "replace")]


def stored(roots: dict[str, Path]) -> list[str]:
    """Every file the projects' runs and reads wrote: the results stores (with their write-ahead
    logs), envelopes and reports."""
    files = [path for root in roots.values() for path in (root / ".ai_eval").rglob("*") if path.is_file()]
    assert any(path.suffix == ".html" for path in files) and any(
        path.name.endswith(".eee.json") for path in files
    )
    return [path.read_bytes().decode("utf-8", "replace") for path in files]


def leaks(password: str) -> Callable[[str], list[str]]:
    forms = {password, quote(password, safe=""), json.dumps(password)[1:-1]}
    return lambda text: [form for form in forms if form in text]


@settings(
    max_examples=examples(3),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    # A failing example is shown as found: shrinking one through real servers took minutes.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(password=PASSWORDS, percent_encoded=st.booleans())
def test_the_password_leaves_through_no_channel(
    server: Any, tmp_path_factory: pytest.TempPathFactory, password: str, percent_encoded: bool
) -> None:
    site = ServerSite(server, f"secret_{next(names)}", password)
    try:
        site.add_table(SLOW)
        site.insert(quoting(password))
        written = quote(password, safe="") if percent_encoded else password
        folder = tmp_path_factory.mktemp("secret")
        roots = {
            trouble: project(folder / f"project_{number}", url, password)
            for number, (trouble, url) in enumerate(troubles(site, password, written).items())
        }
        cli_said = through_the_cli(site, roots)
        assert "support_bot" not in "".join(
            cli_said
        )  # the rows were read: their targets are the planted ones
        assert "site run 1 of bot ***: " in "".join(cli_said)
        leaked = leaks(password)
        for text in [*cli_said, *stored(roots), *through_the_server(site, roots, folder / "server.log")]:
            assert not leaked(text), text
    finally:
        server.drop_database(site.name)


BUG = "mysql://reader:Kx7%C3%A4-secret@127.0.0.1:1/shop"
"""A site's address that a bug quotes whole, password included."""


def with_a_bug(folder: Path) -> dict[str, str]:
    """An environment in which reading a site raises an error quoting its address (a bug
    anywhere), with `site.database` naming it for the CLI."""
    (folder / "sitecustomize.py").write_text(
        textwrap.dedent("""\
            import os
            import ai_eval_lsp.runs.site

            def pull(store, reader, after=None):
                raise RuntimeError("a bug, quoting " + os.environ["AI_EVAL_SITE_DATABASE"])

            ai_eval_lsp.runs.site.pull = pull
            """)
    )
    (folder / "ai-eval.toml").write_text(f'site.database = "{BUG}"\n')
    pythonpath = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": pythonpath, "AI_EVAL_SITE_DATABASE": BUG}


def test_the_traceback_of_an_unexpected_error_in_a_command_holds_no_password(tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", "site", "pull", str(tmp_path)],
        env=with_a_bug(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 1
    assert "RuntimeError: a bug, quoting mysql://reader:***@127.0.0.1:1/shop" in ran.stderr
    assert "Kx7" not in ran.stderr + ran.stdout


def test_an_unexpected_error_in_the_server_is_logged_and_answered_without_the_password(
    tmp_path: Path,
) -> None:
    log = tmp_path / "server.log"
    with log.open("wb") as stderr:
        client = StdioClient(
            [sys.executable, "-m", "ai_eval_lsp", "serve"],
            lambda method, params: (
                [{} for _ in params["items"]] if method == "workspace/configuration" else None
            ),
            env=with_a_bug(tmp_path),
            stderr=stderr,
        )
        try:
            client.initialize(tmp_path, {})
            client.wait(
                lambda m: m.get("method") == "window/logMessage" and "a bug" in m["params"]["message"]
            )
            client.request("workspace/executeCommand", {"command": "aiEval.siteRuns", "arguments": [{}]})
        finally:
            client.close()
    told = [body.decode() for body in client.received]
    assert any(
        '"message": "ai-eval-lsp: a bug, quoting mysql://reader:***@127.0.0.1:1/shop"' in m for m in told
    )
    assert any('"error"' in m and "reader:***@" in m for m in told)  # the request's answer
    assert "RuntimeError: a bug, quoting mysql://reader:***@127.0.0.1:1/shop" in log.read_text()
    assert not [text for text in [*told, log.read_text()] if "Kx7" in text]
