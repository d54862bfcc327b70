"""Typing in big documents: what an edit costs in a 10,000-check rubric and in
cases files of 500 and 2,000 cases of ~2 KB recorded responses, against a full analysis of each,
beside the figures of commit b91d404's code (`BEFORE`).

keystroke -> diagnostics: incremental one-character edits inside one item, debounce off
(AI_EVAL_LSP_DEBOUNCE_MS=0), each timed until the diagnostics of its version arrive; then the same
while typing a quoted string character by character (every keystroke but the last leaves the
YAML invalid). Then check ids typed in the rubric (one renamed, then a new check's), and a
keystroke in a case of a 2,000-case file whose rubric is that rubric (1,667 `target_match`
checks read each case's question), and the rubric's document symbols and code lenses once a
keystroke's diagnostics have come. Completion and hover: asked right after a keystroke, with the
default debounce (before it would fire); then right after one more space is typed before a key
inside a check of a 1,000-check rubric, which leaves the YAML unreadable. The full analysis:
`analyse()` of the whole text (and its problems against the workspace), in process.

`--first` also opens a valid ~10 MB rubric (66,000 checks of mixed kinds) and a realistic one
(66,650 checks of the 14 kinds with descriptions, metadata, tags and emoji, whose composites name
rubrics that do not exist: ~38,000 diagnostics) and prints the time to each one's first
diagnostics, to those with the workspace's problems, and the server's peak RSS, then the same
for `ai-eval-lsp check`, with the compiled wheel (`tests/compiled.py` builds it) and the pure
one; `--first-only` measures those alone.

Median and 95th percentile. On a shared machine figures move a lot: run it several times.
Run: .venv/bin/python bench/bench_big_documents.py [--repeat 40] [--first | --first-only]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from bench_lsp import Server, percentiles  # noqa: E402
from compiled import compiled_environment  # noqa: E402
from rubrics import TONE, realistic, rubric  # noqa: E402

from ai_eval_lsp.core.analysis import Rules, analyse  # noqa: E402
from ai_eval_lsp.core.index import Role, RubricIndex, summarize  # noqa: E402
from ai_eval_lsp.core.yamltree import parse  # noqa: E402
from ai_eval_lsp.project.project import Project  # noqa: E402

_WORDS = (
    "The refund was processed and the customer was told how long it takes. We apologise for the "
    "delay; the order number is attached, and the agent explained the policy in plain words. "
)


def cases(count: int, rubric_id: str = "tone") -> str:
    """A cases file of `count` cases of rubric `rubric_id`, each a ~2 KB recorded response (a
    block scalar)."""
    parts = [f"rubric: {rubric_id}\ncases:\n"]
    for i in range(count):
        body = "".join(f"      {_WORDS}{n}\n" for n in range(11))
        parts.append(
            f"  - id: case_{i}\n    question:\n      id: q{i}\n      input: Where is my refund?\n"
            f"      expected: {{reference: The refund takes five days.}}\n    expect: pass\n"
            f"    response: |\n{body}"
        )
    return "".join(parts)


def full_analysis_ms(rules: Rules, role: Role, text: str, rubrics: RubricIndex | None = None) -> float:
    """The median of three full analyses of `text` (with its problems against `rubrics`), in ms."""
    samples = []
    for _ in range(3):
        started = time.perf_counter()
        analyse(role, "x", text, rules).problems_in(rubrics)
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
    server: Server, name: str, text: str, value_prefix: str, repeat: int, quoted: bool = True
) -> dict[str, list[float]]:
    """One-character edits inside the middle item; then (`quoted`) a quoted string typed as a new
    key's value there, so every keystroke but the last leaves the YAML invalid (an open quote)."""
    uri = server.open(name, text)
    typist = Typist(server, uri, text)
    line = middle_line(text, value_prefix)
    column = len(text.split("\n")[line])
    plain = [typist.type(line, column + i, "x") for i in range(repeat)]
    typist.edit((line, column), (line, column + repeat), "")
    if not quoted:
        return {"plain": plain}
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


def id_keystrokes(server: Server, name: str, text: str, repeat: int) -> dict[str, list[float]]:
    """Typing check ids in the middle of a rubric: a check renamed one character at a time, then a
    new check written above it (untimed) and its id typed. Each keystroke changes an id."""
    uri = server.open(name, text)
    typist = Typist(server, uri, text)
    line = middle_line(text, "  - id: c")
    column = len(text.split("\n")[line])
    renaming = [typist.type(line, column + i, "x") for i in range(repeat)]
    typist.type(line, 0, "  - id: \n    kind: regex\n    pattern: x\n")
    head = len("  - id: ")
    new = [typist.type(line, head + i, "new"[i] if i < 3 else "x") for i in range(repeat)]
    return {"renaming a check's id": renaming, "typing a new check's id": new}


def broken_requests(server: Server, name: str, text: str, repeat: int) -> dict[str, list[float]]:
    """Completion and hover right after one more space is typed before a key inside a check (the
    YAML is then invalid), each time in another check; the space is taken out again, and that
    version's diagnostics awaited, before the next."""
    uri = server.open(name, text)
    typist = Typist(server, uri, text)
    kinds = [n for n, line in enumerate(text.split("\n")) if line.startswith("    kind: ")]
    found: dict[str, list[float]] = {"completion": [], "hover": []}
    for sample in range(2 * repeat):
        method, column = ("completion", 5) if sample % 2 == 0 else ("hover", 6)
        line = kinds[(sample + 1) * len(kinds) // (2 * repeat + 1)]
        typist.type(line, 4, " ", wait=False)
        params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": column}}
        found[method].append(server.timed(f"textDocument/{method}", params))
        typist.edit((line, 4), (line, 5), "")
    return found


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


def outline_after_keystroke(
    server: Server, name: str, text: str, value_prefix: str, repeat: int
) -> dict[str, list[float]]:
    """Document symbols and code lenses (what an editor's outline and lenses ask after each edit),
    asked once a keystroke's diagnostics have come: a character typed at the end of a line of
    the middle item (the items after it move by offsets), then a blank line put before that line
    (they move by lines)."""
    uri = server.open(name, text)
    typist = Typist(server, uri, text)
    line = middle_line(text, value_prefix)
    column = len(text.split("\n")[line])
    found: dict[str, list[float]] = {}
    for typed, after in (("x", "a character"), ("\n", "a new line")):
        for i in range(repeat):
            typist.type(line, column + i if typed == "x" else 0, typed)
            for method, what in (("documentSymbol", "document symbols"), ("codeLens", "code lenses")):
                found.setdefault(f"{what} after {after}", []).append(
                    server.timed(f"textDocument/{method}", {"textDocument": {"uri": uri}})
                )
    return found


def first_diagnostics(workspace: Path, name: str, label: str, text: str, before: str) -> None:
    """A folder of its own, so neither the server nor `check` reads the other documents; each
    build in turn (`builds`)."""
    folder = workspace / name.split(".")[0]
    folder.mkdir()
    (folder / "tone.rubric.yaml").write_text(TONE)
    path = folder / name
    path.write_text(text)
    print(f"\n{label} ({len(text.encode()) / 1e6:.1f} MB):")
    for build, environment in builds().items():
        server_first_diagnostics(folder, path, text, build, environment)
        started = time.perf_counter()
        check = subprocess.Popen(
            [sys.executable, "-m", "ai_eval_lsp", "check", str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=folder,
            env={**os.environ, **environment},
        )
        peak = 0
        while check.poll() is None:  # its high-water mark, read until it ends
            with contextlib.suppress(OSError, StopIteration):  # it ended meanwhile
                peak = max(peak, _peak_kb(check.pid))
            time.sleep(0.02)
        elapsed = time.perf_counter() - started
        print(f"  {build}, check:  {elapsed:.2f} s, peak RSS {peak / 1024:.0f} MB")
    print(f"  b91d404: {before}")


def server_first_diagnostics(
    folder: Path, path: Path, text: str, build: str, environment: dict[str, str]
) -> None:
    server = Server(
        "ai-eval-lsp", [sys.executable, "-m", "ai_eval_lsp", "serve"], folder, {"aiEval": {}}, environment
    )
    peak = 0
    uri = path.as_uri()
    started = time.perf_counter()
    server.client.open(path, text)
    published: list[tuple[float, int]] = []  # when each publish came, and how many it held
    seen = 0
    while not published or time.perf_counter() - started - published[-1][0] < QUIET:
        peak = max(peak, _peak_kb(server.client.process.pid))
        time.sleep(0.02)
        arrived = server.client.notifications[seen:]
        seen += len(arrived)
        now = time.perf_counter() - started
        published += [
            (now, len(m["params"]["diagnostics"]))
            for m in arrived
            if m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        ]
    server.close()
    (first, count), (last, complete) = published[0], published[-1]
    print(
        f"  {build}, server: first diagnostics in {first:.2f} s ({count:,}), with the workspace's in "
        f"{last:.2f} s ({complete:,}), peak RSS {peak / 1024:.0f} MB"
    )


def first_analyses(workspace: Path) -> None:
    valid = rubric(66_000).replace("Judge politeness", "Judge politeness " + "and tone " * 36)
    first_diagnostics(
        workspace,
        "valid.rubric.yaml",
        "A valid rubric of 66,000 checks",
        valid,
        "server 10.28 s, 349 MB (the walk's summary and the analysis competing); check 3.81 s, 291 MB",
    )
    first_diagnostics(
        workspace,
        "realistic.rubric.yaml",
        "A realistic rubric: 66,650 checks of 14 kinds, composites naming missing rubrics",
        realistic(1_333),
        "server 6.49 s, 598 MB; check 7.80 s, 499 MB",
    )


def builds() -> dict[str, dict[str, str]]:
    """The environments of the wheel as built for release (setup.py's AI_EVAL_LSP_MYPYC=1) and of
    the pure one."""
    return {"compiled": compiled_environment(), "pure Python": {}}


QUIET = 3.0
"""How long no diagnostics must come for a document's last to be taken as complete."""


def _peak_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


BEFORE = {
    ("rubric, 10,000 checks", "keystroke -> diagnostics (plain)"): (40.0, 45.6),
    ("rubric, 10,000 checks", "keystroke -> diagnostics (quoted)"): (25.3, 27.9),
    ("cases, 500 x 2 KB", "keystroke -> diagnostics (plain)"): (11.2, 13.7),
    ("cases, 500 x 2 KB", "keystroke -> diagnostics (quoted)"): (12.0, 19.7),
    ("cases, 2,000 x 2 KB", "keystroke -> diagnostics (plain)"): (10.7, 17.6),
    ("cases, 2,000 x 2 KB", "keystroke -> diagnostics (quoted)"): (34.1, 40.0),
    ("rubric, 10,000 checks", "keystroke -> diagnostics (renaming a check's id)"): (49.0, 67.0),
    ("rubric, 10,000 checks", "keystroke -> diagnostics (typing a new check's id)"): (58.9, 73.9),
    ("cases, 2,000 x 2 KB of it", "keystroke -> diagnostics"): (4630.1, 8404.9),
    ("rubric, 10,000 checks", "completion right after a keystroke"): (9.2, 54.3),
    ("rubric, 10,000 checks", "hover right after a keystroke"): (10.5, 122.6),
    ("cases, 500 x 2 KB", "completion right after a keystroke"): (1.1, 2.8),
    ("cases, 500 x 2 KB", "hover right after a keystroke"): (1.5, 2.8),
    ("cases, 2,000 x 2 KB", "completion right after a keystroke"): (3.4, 57.2),
    ("cases, 2,000 x 2 KB", "hover right after a keystroke"): (5.1, 30.2),
    ("rubric, 1,000 checks", "completion after a keystroke breaking the YAML"): (105.1, 331.2),
    ("rubric, 1,000 checks", "hover after a keystroke breaking the YAML"): (452.5, 711.1),
}
"""Figures of commit b91d404's code (median, p95 in ms, --repeat 15, load 2.0-4.7): this bench
run with PYTHONPATH set to a copy of the `src` of commit b91d404 (`git archive b91d404 src | tar
-x -C DIR`); its first diagnostics, from the same run, are printed beside the ones measured
(`first_analyses`)."""


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeat", type=int, default=40)
    options.add_argument("--first", action="store_true", help="also the first analysis of 10 MB rubrics")
    options.add_argument("--first-only", action="store_true", help="only the first analysis of 10 MB rubrics")
    args = options.parse_args()
    if args.first_only:
        with tempfile.TemporaryDirectory() as folder:
            first_analyses(Path(folder))
        return
    big = rubric(10_000)
    documents: list[tuple[str, str, Role, str, str]] = [
        ("rubric, 10,000 checks", "big.rubric.yaml", "rubric", big, "    description: Judge"),
        ("cases, 500 x 2 KB", "c500.cases.yaml", "cases", cases(500), "      input: Where"),
        ("cases, 2,000 x 2 KB", "c2000.cases.yaml", "cases", cases(2_000), "      input: Where"),
    ]
    of_big = cases(2_000, "big")
    broken = rubric(1_000)
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
        label, name, _, text, prefix = documents[0]
        for what, samples in outline_after_keystroke(
            debounce_off, "o-" + name, text, prefix, args.repeat
        ).items():
            rows.append((label, what, *percentiles(samples), float("nan")))
        ids = big.replace("id: big\n", "id: ids\n", 1)
        full = full_analysis_ms(rules, "rubric", ids)
        for what, samples in id_keystrokes(debounce_off, "ids.rubric.yaml", ids, args.repeat).items():
            rows.append((label, f"keystroke -> diagnostics ({what})", *percentiles(samples), full))
        label = "cases, 2,000 x 2 KB of it"
        index = RubricIndex(
            [
                analyse("rubric", "big.rubric.yaml", big, rules).summary,
                summarize("tone.rubric.yaml", parse(TONE).root),
            ]
        )
        full = full_analysis_ms(rules, "cases", of_big, index)
        found = keystrokes(
            debounce_off, "c2000-big.cases.yaml", of_big, "      input: Where", args.repeat, quoted=False
        )
        rows.append((label, "keystroke -> diagnostics", *percentiles(found["plain"]), full))
        print(f"  ({label}: {len(of_big) / 1e6:.1f} MB measured)", flush=True)
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
        label = "rubric, 1,000 checks"
        spaced = broken.split("\n")
        middle = middle_line(broken, "    kind: ")
        spaced[middle] = " " + spaced[middle]
        full = full_analysis_ms(rules, "rubric", "\n".join(spaced))
        for what, samples in broken_requests(users, "u-broken.rubric.yaml", broken, args.repeat).items():
            rows.append((label, f"{what} after a keystroke breaking the YAML", *percentiles(samples), full))
        users.close()
        print(f"\n{'document':<28}{'measure':<56}{'median / p95':>20}{'full analysis':>16}{'before':>20}")
        for label, what, median, p95, full in rows:
            full_text = f"{full:>12.0f} ms" if full == full else ""
            was = BEFORE.get((label, what))
            before = f"{was[0]:>9.1f} / {was[1]:>6.1f} ms" if was is not None else ""
            print(
                f"{label:<28}{what:<56}{median * 1000:>9.1f} / {p95 * 1000:>6.1f} ms{full_text:>16}{before:>20}"
            )
        print("Debounce off for keystrokes; completion and hover with the default debounce.")
        if args.first:
            first_analyses(root)


if __name__ == "__main__":
    main()
