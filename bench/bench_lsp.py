"""Editor latency, in two parts.

What users meet (ours, with the default 150 ms debounce): completion and hover asked right after
a keystroke in a 1,000-check rubric; the server's memory over 20,000 edits; a 10 MB rubric with one
syntax error (how long until it is reported, and how long a hover in another document waits
meanwhile). Goals: completion after a keystroke p95 <= 20 ms; RSS growth over 20,000 edits < 5 %;
the broken 10 MB rubric reported in <= 2 s, never blocking other requests.

Ours against yaml-language-server given our exported combined schema: didChange -> diagnostics
for rubrics of 100, 1,000 and 10,000 checks, and completion and hover inside a 1,000-check
rubric. Compute, not debounce: ours runs with AI_EVAL_LSP_DEBOUNCE_MS=0 there;
yaml-language-server's wall time has its fixed 200 ms validation delay taken off.

Median and 95th percentile over --repeat requests each. Needs scripts/setup (it installs YLS).
Run: .venv/bin/python bench/bench_lsp.py [--repeat 30] [--sizes 100,1000,10000] [--users-only]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from lsp_stdio import StdioClient  # noqa: E402
from rubrics import rubric  # noqa: E402

CACHE = Path(os.environ.get("AI_EVAL_LSP_CACHE", Path.home() / ".cache" / "ai-eval-lsp"))
YLS = (
    CACHE / "yaml-language-server" / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"
)
YLS_DELAY = 0.200


class Server:
    def __init__(
        self, name: str, command: list[str], folder: Path, settings: dict[str, Any], env: dict[str, str]
    ) -> None:
        self.name, self.folder, self.settings = name, folder, settings
        self.client = StdioClient(command, self.answer, env={**os.environ, **env}, timing=True)
        self.client.initialize(
            folder,
            {
                "workspace": {"configuration": True},
                "textDocument": {
                    "completion": {"completionItem": {"snippetSupport": True}},
                    "hover": {"contentFormat": ["markdown"]},
                },
            },
        )
        self.client.notify("workspace/didChangeConfiguration", {"settings": settings})
        self.version = 0
        self.empty: dict[str, bool] = {}  # whether the last answer to a method was empty

    def answer(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            return [self.settings.get(item.get("section", ""), {}) for item in params["items"]]
        return None

    def edit(self, uri: str, line: int, character: int, text: str) -> None:
        """One keystroke: an incremental change, as editors send them."""
        self.version += 1
        where = {"line": line, "character": character}
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.version},
                "contentChanges": [{"range": {"start": where, "end": where}, "text": text}],
            },
        )

    def rss(self) -> int:
        """The server process's resident memory, in kB."""
        status = Path(f"/proc/{self.client.process.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))

    def open(self, name: str, text: str) -> str:
        """A document written into the folder and opened, once its first diagnostics are in."""
        path = self.folder / name
        path.write_text(text)
        self.version = 1
        self.client.open(path, text)(120)
        return path.as_uri()

    def change(self, uri: str, text: str) -> float:
        self.version += 1
        waiter = self.client.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        started = time.perf_counter()
        self.client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": self.version}, "contentChanges": [{"text": text}]},
        )
        waiter(120)
        return time.perf_counter() - started

    def timed(self, method: str, params: dict[str, Any]) -> float:
        started = time.perf_counter()
        answer = self.client.request(method, params, timeout=120)
        elapsed = time.perf_counter() - started
        self.empty[method] = not answer or (isinstance(answer, dict) and not answer.get("items", True))
        return elapsed

    def close(self) -> None:
        self.client.close()


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def measure(
    server: Server, sizes: list[int], repeat: int, less: float
) -> dict[str, tuple[float, float, str]]:
    rows: dict[str, tuple[float, float, str]] = {}
    for size in sizes:
        text = rubric(size)
        uri = server.open(f"r{size}.rubric.yaml", text)
        samples = []
        for i in range(repeat):
            edited = text.replace("Judge politeness", f"Judge politeness {i}", 1)
            samples.append(max(0.0, server.change(uri, edited) - less))
        rows[f"diagnostics, {size:,} checks"] = (*percentiles(samples), "")
        if size == 1_000:
            # An empty line in the middle check, where a user would ask for its fields.
            lines = edited.split("\n")
            line = next(n for n, text in enumerate(lines) if text.startswith("  - id: c500")) + 2
            server.change(uri, "\n".join([*lines[:line], "    ", *lines[line:]]))
            complete = {"textDocument": {"uri": uri}, "position": {"line": line, "character": 4}}
            samples = [server.timed("textDocument/completion", complete) for _ in range(repeat)]
            rows["completion, 1,000 checks"] = (
                *percentiles(samples),
                _empty(server, "textDocument/completion"),
            )
            hover = {"textDocument": {"uri": uri}, "position": {"line": line - 1, "character": 6}}
            samples = [server.timed("textDocument/hover", hover) for _ in range(repeat)]
            rows["hover, 1,000 checks"] = (*percentiles(samples), _empty(server, "textDocument/hover"))
    return rows


def users_meet(folder: Path, repeat: int) -> None:
    """Ours as users run it: the default debounce, requests right after keystrokes."""
    server = Server("ai-eval-lsp", [sys.executable, "-m", "ai_eval_lsp", "serve"], folder, {"aiEval": {}}, {})
    text = rubric(1_000)
    lines = text.split("\n")
    empty = next(n for n, line in enumerate(lines) if line.startswith("  - id: c500")) + 2
    text = "\n".join([*lines[:empty], "    ", *lines[empty:]])
    uri = server.open("keystrokes.rubric.yaml", text)
    description = next(n for n, line in enumerate(text.split("\n")) if "Judge politeness" in line)
    complete = {"textDocument": {"uri": uri}, "position": {"line": empty, "character": 4}}
    hover = {"textDocument": {"uri": uri}, "position": {"line": empty - 1, "character": 6}}
    rows = {}
    for name, method, params in (
        ("completion right after a keystroke", "textDocument/completion", complete),
        ("hover right after a keystroke", "textDocument/hover", hover),
    ):
        samples = []
        for _ in range(repeat):
            server.edit(uri, description, 30, "x")
            samples.append(server.timed(method, params))
        rows[name] = percentiles(samples)
    print("\nWhat users meet (ai-eval-lsp, default debounce):")
    for name, (median, p95) in rows.items():
        print(f"  {name:<40}{median * 1000:>8.1f} / {p95 * 1000:>6.1f} ms (median / p95), 1,000 checks")

    small = server.open("small.rubric.yaml", rubric(10))
    for count in range(1_000):  # warm up
        server.edit(small, 2, 0, "# x\n" if count % 2 == 0 else "")
    server.change(small, rubric(10))
    before = server.rss()
    for count in range(20_000):
        server.edit(small, 1, 0, "#" if count % 2 == 0 else "")
        if count % 2_000 == 1_999:
            server.change(small, rubric(10))  # keep in step: wait for a check
    after = server.rss()
    print(
        f"  RSS over 20,000 edits: {before / 1024:.1f} MB -> {after / 1024:.1f} MB ({100 * (after - before) / before:+.1f} %)"
    )

    broken = rubric(120_000).replace("  - id: c60000\n", "  - id: c60000\n    kind: [unclosed\n", 1)
    path = folder / "huge.rubric.yaml"
    path.write_text(broken)
    started = time.perf_counter()
    waiter = server.client.open(path, broken)
    waits = []
    small_hover = {"textDocument": {"uri": small}, "position": {"line": 5, "character": 6}}
    reported = None
    while reported is None:
        waits.append(server.timed("textDocument/hover", small_hover))
        try:
            reported = waiter(0.02)
        except Exception:
            continue
    elapsed = time.perf_counter() - started
    codes = [d["code"] for d in reported["params"]["diagnostics"]]
    print(
        f"  {len(broken) / 1e6:.1f} MB rubric with one syntax error: reported in {elapsed:.2f} s ({codes}); "
        f"a hover elsewhere meanwhile: median {statistics.median(waits) * 1000:.1f} ms, max {max(waits) * 1000:.1f} ms"
    )
    server.close()


def _empty(server: Server, method: str) -> str:
    return " (answered nothing)" if server.empty.get(method) else ""


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeat", type=int, default=30)
    options.add_argument("--sizes", default="100,1000,10000")
    options.add_argument(
        "--users-only", action="store_true", help="skip the comparison with yaml-language-server"
    )
    args = options.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        users_meet(root, args.repeat)
        if args.users_only:
            return
        schema = root / "rubric.combined.json"
        subprocess.run(
            [sys.executable, "-m", "ai_eval_lsp", "schema", "-o", str(schema)],
            check=True,
            capture_output=True,
        )
        ours = Server(
            "ai-eval-lsp",
            [sys.executable, "-m", "ai_eval_lsp", "serve"],
            root,
            {"aiEval": {}},
            {"AI_EVAL_LSP_DEBOUNCE_MS": "0"},
        )
        mine = measure(ours, sizes, args.repeat, 0.0)
        ours.close()
        yls_settings = {
            "yaml": {
                "validate": True,
                "completion": True,
                "hover": True,
                "schemas": {schema.as_uri(): "*.rubric.yaml"},
                "schemaStore": {"enable": False},
            }
        }
        theirs = Server("yaml-language-server", ["node", str(YLS), "--stdio"], root, yls_settings, {})
        other = measure(theirs, sizes, args.repeat, YLS_DELAY)
        theirs.close()
    print(
        f"{'':<28}{'ai-eval-lsp median / p95':>28}{'yaml-language-server':>28}{'ratio (theirs/ours, median)':>30}"
    )
    for name, (median, p95, note) in mine.items():
        their_median, their_p95, their_note = other.get(name, (float("nan"), float("nan"), ""))
        ratio = their_median / median if median else float("inf")
        print(
            f"{name:<28}{median * 1000:>14.1f} / {p95 * 1000:>6.1f} ms{their_median * 1000:>14.1f} / {their_p95 * 1000:>6.1f} ms"
            f"{ratio:>26.1f}x{note}{' theirs' + their_note if their_note else ''}"
        )
    print(
        "yaml-language-server figures have its fixed 200 ms validation delay taken off; ours ran with no debounce."
    )


if __name__ == "__main__":
    main()
