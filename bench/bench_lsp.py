"""Editor latency, ours against yaml-language-server given our exported combined schema:
didChange -> diagnostics for rubrics of 100, 1,000 and 10,000 checks, and completion and hover
inside a 1,000-check rubric; median and 95th percentile over --repeat requests each.

Compute, not debounce: ours runs with AI_EVAL_LSP_DEBOUNCE_MS=0; yaml-language-server's wall
time has its fixed 200 ms validation delay taken off. Needs scripts/setup (it installs YLS).

Run: .venv/bin/python bench/bench_lsp.py [--repeat 30] [--sizes 100,1000,10000]
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
        self.client = StdioClient(command, self.answer, env={**os.environ, **env})
        self.client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folder.as_uri(),
                "workspaceFolders": [{"uri": folder.as_uri(), "name": "bench"}],
                "capabilities": {
                    "workspace": {"configuration": True},
                    "textDocument": {
                        "completion": {"completionItem": {"snippetSupport": True}},
                        "hover": {"contentFormat": ["markdown"]},
                    },
                },
            },
        )
        self.client.notify("initialized", {})
        self.client.notify("workspace/didChangeConfiguration", {"settings": settings})
        self.version = 0
        self.empty: dict[str, bool] = {}  # whether the last answer to a method was empty

    def answer(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            return [self.settings.get(item.get("section", ""), {}) for item in params["items"]]
        return None

    def open(self, name: str, text: str) -> str:
        path = self.folder / name
        path.write_text(text)
        uri = path.as_uri()
        self.version = 1
        waiter = self.client.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        self.client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
        )
        waiter(120)
        return uri

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


def _empty(server: Server, method: str) -> str:
    return " (answered nothing)" if server.empty.get(method) else ""


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeat", type=int, default=30)
    options.add_argument("--sizes", default="100,1000,10000")
    args = options.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
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
