"""`ai-eval-lsp run --watch` (SPEC section 5): runs the cases files, re-runs those a change
affects (through composites too) with what changed since their run before, and ends on SIGINT
with the status of the last round."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import without_test_plugins

from ai_eval_lsp.cli import main

SCORING = "scoring: {combine: all_pass}\n"
LEAF = (
    'id: leaf\nversion: "1.0"\nchecks:\n  - {id: sorry, kind: must_contain_any, values: [sorry]}\n' + SCORING
)
FILES = {
    "leaf.rubric.yaml": LEAF,
    "middle.rubric.yaml": 'id: middle\nversion: "1.0"\nchecks:\n  - {id: leaf, kind: composite, rubric: leaf}\n'
    + SCORING,
    "other.rubric.yaml": 'id: other\nversion: "1.0"\nchecks:\n  - {id: hi, kind: must_contain_any, values: [hi]}\n'
    + SCORING,
    "leaf.cases.yaml": "rubric: leaf\ncases:\n  - {id: polite, response: 'Sorry!', expect: pass}\n",
    "middle.cases.yaml": "rubric: middle\ncases:\n  - {id: via_middle, response: 'sorry'}\n",
    "other.cases.yaml": "rubric: other\ncases:\n  - {id: greeted, response: 'hi'}\n",
}


def lines_of(stream: object) -> queue.Queue[str]:
    found: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:  # type: ignore[attr-defined]
            found.put(line.rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()
    return found


def take(lines: queue.Queue[str], until: str, timeout: float = 60) -> list[str]:
    """The lines read up to and including the first that contains `until`."""
    taken: list[str] = []
    deadline = time.monotonic() + timeout
    while not taken or until not in taken[-1]:
        taken.append(lines.get(timeout=max(0.1, deadline - time.monotonic())))
    return taken


def sigint_as_in_a_terminal() -> None:
    """In the child: SIGINT handled as by default. A child inherits an ignored SIGINT (pytest run
    as a job started with `&` by a script ignores it), and Python then leaves it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_run_watch_re_runs_what_a_change_affects_and_ends_on_sigint(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    command = [
        sys.executable,
        "-m",
        "ai_eval_lsp",
        "run",
        "--watch",
        *sorted(n for n in FILES if "cases" in n),
    ]
    with subprocess.Popen(
        command,
        cwd=tmp_path,
        env=without_test_plugins(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_in_a_terminal,
    ) as process:
        out, err = lines_of(process.stdout), lines_of(process.stderr)
        try:
            first = take(out, "other.cases.yaml: other: pass rate 1.00")
            assert [line.split(":")[0] for line in first] == [
                "leaf.cases.yaml",
                "middle.cases.yaml",
                "other.cases.yaml",
            ]
            take(err, "watching")
            # `polite` no longer apologises enough: its rubric changes, and every cases file that
            # reaches it re-runs (middle through its composite); other.cases.yaml does not.
            # The watcher may start a moment after it says so: write until seen (a write seen
            # twice makes a round more, which says the same).
            for _ in range(60):
                (tmp_path / "leaf.rubric.yaml").write_text(LEAF.replace("[sorry]", "[apologies]"))
                try:
                    again = take(out, "middle.cases.yaml: middle: pass rate", timeout=1)
                    break
                except queue.Empty:
                    continue
            else:
                raise AssertionError("no re-run after the rubric changed")
            assert again[0].startswith("leaf.cases.yaml: leaf: pass rate 0.00 ")
            assert again[1] == "  leaf: 1 case now fails: polite"
            assert again[2].startswith(
                "  vs run 1: pass rate -1.00, average -5.00, 1 flipped (1 to fail, 0 to pass)"
            )
            assert "middle.cases.yaml" in again[-1]
            take(out, "vs run 2:")  # middle's diff: the round is done
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == 1  # the last round: `polite` missed its `expect: pass`
        finally:
            process.kill()
    rest = [out.get_nowait() for _ in range(out.qsize())]
    assert not [line for line in rest if "other.cases.yaml" in line]  # never re-run
    assert not [line for line in rest if "Traceback" in line]


def test_run_watch_without_watchfiles_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "leaf.cases.yaml").write_text(FILES["leaf.cases.yaml"])
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # an import of it fails
    assert main(["run", "--watch", str(tmp_path / "leaf.cases.yaml")]) == 2
    assert "pip install 'ai-eval-lsp[watch]'" in capsys.readouterr().err
