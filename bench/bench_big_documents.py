"""Typing in big documents (issue 20): what an edit costs in a 10,000-check rubric and in cases
files of 500 and 2,000 cases of ~2 KB recorded responses, against a full analysis of each.

keystroke -> diagnostics: incremental one-character edits inside one item, debounce off
(AI_EVAL_LSP_DEBOUNCE_MS=0), each timed until the diagnostics of its version arrive; then the same
while typing a quoted string character by character (every keystroke but the last leaves the
YAML invalid). Completion and hover: asked right after a keystroke, with the default debounce
(before it would fire). The full analysis: `analyse()` of the whole text, in process.

`--first` also opens a valid ~10 MB rubric (66,000 checks of mixed kinds) and prints the time to
its first diagnostics and the server's peak RSS, then the same for `ai-eval-lsp check`;
`--first-only` measures that alone.

Median and 95th percentile. On a shared machine figures move a lot: run it several times.
Run: .venv/bin/python bench/bench_big_documents.py [--repeat 40] [--first | --first-only]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from bench_lsp import Server, percentiles  # noqa: E402
from rubrics import TONE, rubric  # noqa: E402

from ai_eval_lsp.core.analysis import Rules, analyse  # noqa: E402
from ai_eval_lsp.core.workspace import Role  # noqa: E402
from ai_eval_lsp.project.project import Project  # noqa: E402

_WORDS = (
    "The refund was processed and the customer was told how long it takes. We apologise for the "
    "delay; the order number is attached, and the agent explained the policy in plain words. "
)


def cases(count: int) -> str:
    """A cases file of `count` cases, each a ~2 KB recorded response (a block scalar)."""
    parts = ["rubric: tone\ncases:\n"]
    for i in range(count):
        body = "".join(f"      {_WORDS}{n}\n" for n in range(11))
        parts.append(
            f"  - id: case_{i}\n    question:\n      id: q{i}\n      input: Where is my refund?\n"
            f"      expected: {{reference: The refund takes five days.}}\n    expect: pass\n"
            f"    response: |\n{body}"
        )
    return "".join(parts)


def full_analysis_ms(rules: Rules, role: Role, text: str) -> float:
    """The median of three full analyses of `text`, in ms."""
    samples = []
    for _ in range(3):
        started = time.perf_counter()
        analyse(role, "x", text, rules)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


class Typist:
    """Edits one document the way an editor does, keeping its own copy of the text."""

    def __init__(self, server: Server, uri: str, text: str) -> None:
        self.server, self.uri, self.text = server, uri, text

    def offset(self, line: int, column: int) -> int:
        start = 0
        for _ in range(line):
            start = self.text.index("\n", start) + 1
        return start + column

    def edit(self, start: tuple[int, int], end: tuple[int, int], text: str, wait: bool = True) -> float:
        """Replace the text from `start` to `end` (line, column) with `text`; the time to the
        diagnostics of the new version (or to sending it, without `wait`)."""
        low, high = self.offset(*start), self.offset(*end)
        self.text = self.text[:low] + text + self.text[high:]
        server = self.server
        server.version += 1
        version = server.version
        waiter = server.client.expect(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == self.uri
                and m["params"].get("version") == version
            )
        )
        where = {
            "start": {"line": start[0], "character": start[1]},
            "end": {"line": end[0], "character": end[1]},
        }
        started = time.perf_counter()
        server.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": self.uri, "version": version},
                "contentChanges": [{"range": where, "text": text}],
            },
        )
        if wait:
            waiter(120)
        return time.perf_counter() - started

    def type(self, line: int, column: int, text: str, wait: bool = True) -> float:
        return self.edit((line, column), (line, column), text, wait)


def middle_line(text: str, prefix: str) -> int:
    lines = text.split("\n")
    hits = [n for n, line in enumerate(lines) if line.startswith(prefix)]
    return hits[len(hits) // 2]


def keystrokes(
    server: Server, name: str, text: str, value_prefix: str, repeat: int
) -> dict[str, list[float]]:
    """One-character edits inside the middle item; then a quoted string typed as a new key's
    value there, so every keystroke but the last leaves the YAML invalid (an open quote)."""
    uri = server.open(name, text)
    typist = Typist(server, uri, text)
    line = middle_line(text, value_prefix)
    column = len(text.split("\n")[line])
    plain = [typist.type(line, column + i, "x") for i in range(repeat)]
    typist.edit((line, column), (line, column + repeat), "")
    indent = len(value_prefix) - len(value_prefix.lstrip())
    key = " " * indent + "note: "
    word = '"typing in quotes, one key at a time"'
    quoted: list[float] = []
    while len(quoted) < repeat:
        typist.type(line, column, "\n" + key)
        for n, char in enumerate(word):
            quoted.append(typist.type(line + 1, len(key) + n, char))
        typist.edit((line, column), (line + 1, len(key) + len(word)), "")
    return {"plain": plain, "quoted": quoted[:repeat]}


def requests_after_keystroke(
    server: Server, name: str, text: str, value_prefix: str, repeat: int
) -> dict[str, list[float]]:
    """Completion and hover asked right after a keystroke (default debounce: before it fires)."""
    uri = server.open(name, text)
    typist = Typist(server, uri, text)
    lines = text.split("\n")
    line = middle_line(text, value_prefix)
    column = len(lines[line])
    key_line = line - 1
    indent = len(lines[key_line]) - len(lines[key_line].lstrip())
    found: dict[str, list[float]] = {"completion": [], "hover": []}
    for i in range(repeat):
        for method, position in (
            ("completion", {"line": line, "character": column + 2 * i + 1}),
            ("hover", {"line": key_line, "character": indent + 1}),
        ):
            typist.type(line, column + len(found["completion"]) + len(found["hover"]), "x", wait=False)
            params = {"textDocument": {"uri": uri}, "position": position}
            found[method].append(server.timed(f"textDocument/{method}", params))
    return found


def first_diagnostics(workspace: Path) -> None:
    """A folder of its own, so neither the server nor `check` reads the other documents."""
    folder = workspace / "first"
    folder.mkdir()
    (folder / "tone.rubric.yaml").write_text(TONE)
    text = rubric(66_000).replace("Judge politeness", "Judge politeness " + "and tone " * 36)
    path = folder / "huge.rubric.yaml"
    path.write_text(text)
    print(f"\nA valid {len(text) / 1e6:.1f} MB rubric (66,000 checks):")
    server = Server("ai-eval-lsp", [sys.executable, "-m", "ai_eval_lsp", "serve"], folder, {"aiEval": {}}, {})
    peak = 0
    started = time.perf_counter()
    waiter = server.client.open(path, text)
    while True:
        peak = max(peak, _peak_kb(server.client.process.pid))
        try:
            waiter(0.05)
            break
        except Exception:
            continue
    elapsed = time.perf_counter() - started
    peak = max(peak, _peak_kb(server.client.process.pid))
    server.close()
    print(f"  server: first diagnostics in {elapsed:.2f} s, peak RSS {peak / 1024:.0f} MB")
    started = time.perf_counter()
    check = subprocess.Popen(
        [sys.executable, "-m", "ai_eval_lsp", "check", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=folder,
    )
    peak = 0
    while check.poll() is None:  # its high-water mark, read until it ends
        with contextlib.suppress(OSError, StopIteration):  # it ended meanwhile
            peak = max(peak, _peak_kb(check.pid))
        time.sleep(0.02)
    elapsed = time.perf_counter() - started
    print(f"  check:  {elapsed:.2f} s, peak RSS {peak / 1024:.0f} MB")


def _peak_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeat", type=int, default=40)
    options.add_argument("--first", action="store_true", help="also the first analysis of a 10 MB rubric")
    options.add_argument(
        "--first-only", action="store_true", help="only the first analysis of a 10 MB rubric"
    )
    args = options.parse_args()
    if args.first_only:
        with tempfile.TemporaryDirectory() as folder:
            first_diagnostics(Path(folder))
        return
    documents: list[tuple[str, str, Role, str, str]] = [
        ("rubric, 10,000 checks", "big.rubric.yaml", "rubric", rubric(10_000), "    description: Judge"),
        ("cases, 500 x 2 KB", "c500.cases.yaml", "cases", cases(500), "      input: Where"),
        ("cases, 2,000 x 2 KB", "c2000.cases.yaml", "cases", cases(2_000), "      input: Where"),
    ]
    rows: list[tuple[str, str, float, float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "tone.rubric.yaml").write_text(TONE)
        rules = Project.load(root).rules
        debounce_off = Server(
            "ai-eval-lsp",
            [sys.executable, "-m", "ai_eval_lsp", "serve"],
            root,
            {"aiEval": {}},
            {"AI_EVAL_LSP_DEBOUNCE_MS": "0"},
        )
        for label, name, role, text, prefix in documents:
            full = full_analysis_ms(rules, role, text)
            found = keystrokes(debounce_off, name, text, prefix, args.repeat)
            for what, samples in found.items():
                rows.append((label, f"keystroke -> diagnostics ({what})", *percentiles(samples), full))
            print(f"  ({label}: {len(text) / 1e6:.1f} MB measured)", flush=True)
        debounce_off.close()
        # A folder of its own: the server's walk does not read the documents written above
        # while the requests are timed (that is first diagnostics' matter, not typing's).
        quiet = root / "users"
        quiet.mkdir()
        (quiet / "tone.rubric.yaml").write_text(TONE)
        users = Server(
            "ai-eval-lsp", [sys.executable, "-m", "ai_eval_lsp", "serve"], quiet, {"aiEval": {}}, {}
        )
        for label, name, _, text, prefix in documents:
            found = requests_after_keystroke(users, "u-" + name, text, prefix, args.repeat)
            for what, samples in found.items():
                rows.append((label, f"{what} right after a keystroke", *percentiles(samples), float("nan")))
        users.close()
        print(f"\n{'document':<24}{'measure':<44}{'median / p95':>20}{'full analysis':>16}")
        for label, what, median, p95, full in rows:
            full_text = f"{full:>12.0f} ms" if full == full else ""
            print(f"{label:<24}{what:<44}{median * 1000:>9.1f} / {p95 * 1000:>6.1f} ms{full_text:>16}")
        print("Debounce off for keystrokes; completion and hover with the default debounce.")
        if args.first:
            first_diagnostics(root)


if __name__ == "__main__":
    main()
