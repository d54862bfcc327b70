"""Runs on save (SPEC section 3, `runOnSave: "affected"`): from `textDocument/didSave` of a cases
file of 50 cases, graded by a rubric of core kinds, to its `aiEval/runComplete`, through the real
server over stdio. Each save follows an edit that flips a case, as an author's would. Goal: median
<= 0.5 s.

Run: .venv/bin/python bench/bench_on_save.py [--repeat 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parent / "tests")]

from lsp_stdio import StdioClient  # noqa: E402

RUBRIC = """id: support_reply
version: "1.0"
checks:
  - {id: apologises, kind: must_contain_any, values: [sorry, apologise]}
  - {id: no_blame, kind: must_not_contain, values: [your fault]}
  - {id: says_when, kind: regex, pattern: '\\b(day|week)s?\\b', flags: i}
  - {id: close, kind: target_match, source: expected.reference, mode: chrf, threshold: 0.3}
scoring: {combine: weighted_avg, threshold: 0.6}
"""


def cases(flipped: bool) -> str:
    lines = ["rubric: support_reply", "cases:"]
    for n in range(50):
        response = "Sorry, the refund arrives within five days." if n or not flipped else "It is your fault."
        lines += [
            f"  - id: case{n}",
            f"    question: {{id: q{n}, expected: {{reference: 'Sorry, your refund arrives in five days.'}}}}",
            f"    response: '{response} (case {n})'",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        (folder / ".git").mkdir()
        (folder / "support_reply.rubric.yaml").write_text(RUBRIC)
        path = folder / "support_reply.cases.yaml"
        path.write_text(cases(False))
        settings = {"aiEval": {"runOnSave": "affected"}}

        def answer(method: str, params: Any) -> Any:
            if method == "workspace/configuration":
                return [settings.get(item.get("section", ""), {}) for item in params["items"]]
            return None

        client = StdioClient(
            [sys.executable, "-m", "ai_eval_lsp", "serve"], answer, env=dict(os.environ), timing=True
        )
        client.initialize(
            folder,
            {"workspace": {"configuration": True}, "experimental": {"aiEval": {"runComplete": True}}},
        )
        uri = path.as_uri()
        client.open(path, cases(False))
        client.request("workspace/symbol", {"query": ""})  # the folder indexed, the document checked
        seconds = []
        for version in range(2, args.repeat + 2):
            text = cases(version % 2 == 0)
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
            )
            done = client.expect(
                lambda m: m.get("method") == "aiEval/runComplete" and m["params"].get("trigger") == "save"
            )
            started = time.perf_counter()
            client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            done(60)
            seconds.append(time.perf_counter() - started)
        client.close()
    seconds.sort()
    p95 = seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))]
    print(
        f"save -> aiEval/runComplete, 50 cases of core kinds: median {1000 * statistics.median(seconds):.0f} ms, "
        f"p95 {1000 * p95:.0f} ms, max {1000 * seconds[-1]:.0f} ms ({len(seconds)} saves; goal: median <= 500 ms)"
    )


if __name__ == "__main__":
    main()
