"""Check ids typed in the 10,000-check benchmark rubric (issue 37, part 2), in its first check and in
its middle one, with this checkout's code and another commit's (`--before`, the last round's by
default), in alternate rounds so the machine's load weighs on both alike, printed side by side.

Each keystroke is sent as soon as the previous one's diagnostics arrived, debounce off
(AI_EVAL_LSP_DEBOUNCE_MS=0), and timed until the diagnostics of its version arrive:
- a check's id renamed, one character at a time;
- a new check written above it (untimed), then its id typed;
- a new check's id typed into a duplicate of others (`c1234`, then taken back to `c`: every
  keystroke but the first makes or keeps a duplicate id).

Goal: median <= 30 ms, p95 <= 60 ms at both places. Median and 95th percentile over --rounds
rounds of --repeat keystrokes each.
Run: .venv/bin/python bench/bench_ids.py [--rounds 3] [--repeat 30] [--before COMMIT]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from bench_big_documents import Typist, middle_line  # noqa: E402
from bench_lsp import Server, percentiles  # noqa: E402
from rubrics import TONE, rubric  # noqa: E402
from versions import LAST_ROUND, builds, environment  # noqa: E402

NEW_CHECK = "  - id: \n    kind: regex\n    pattern: x\n"
HEAD = len("  - id: ")
DUPLICATE = "c1234"


def renaming(typist: Typist, line: int, repeat: int) -> list[float]:
    column = len(typist.text.split("\n")[line])
    samples = [typist.type(line, column + i, "x") for i in range(repeat)]
    typist.edit((line, column), (line, column + repeat), "")
    return samples


def new_id(typist: Typist, line: int, repeat: int) -> list[float]:
    typist.type(line, 0, NEW_CHECK)
    word = ("new" + "x" * repeat)[:repeat]
    samples = [typist.type(line, HEAD + i, char) for i, char in enumerate(word)]
    typist.edit((line, 0), (line + 3, 0), "")
    return samples


def duplicate_id(typist: Typist, line: int, repeat: int) -> list[float]:
    typist.type(line, 0, NEW_CHECK)
    samples: list[float] = []
    while len(samples) < repeat:
        samples += [typist.type(line, HEAD + i, char) for i, char in enumerate(DUPLICATE)]
        samples += [
            typist.edit((line, HEAD + i), (line, HEAD + i + 1), "")
            for i in reversed(range(1, len(DUPLICATE)))
        ]
        typist.edit((line, HEAD), (line, HEAD + 1), "")
    typist.edit((line, 0), (line + 3, 0), "")
    return samples[:repeat]


SCENARIOS = {
    "renaming its id": renaming,
    "a new check's id": new_id,
    "an id becoming a duplicate": duplicate_id,
}


def round_of(folder: Path, env: dict[str, str], text: str, repeat: int) -> dict[tuple[str, str], list[float]]:
    """One server: every scenario at each place, in one document kept as it was between them."""
    server = Server(
        "ai-eval-lsp",
        [sys.executable, "-m", "ai_eval_lsp", "serve"],
        folder,
        {"aiEval": {}},
        {**env, "AI_EVAL_LSP_DEBOUNCE_MS": "0"},
    )
    uri = server.open("ids.rubric.yaml", text)
    typist = Typist(server, uri, text)
    places = {
        "first check": text.split("\n").index("  - id: c0"),
        "middle check": middle_line(text, "  - id: c"),
    }
    found: dict[tuple[str, str], list[float]] = {}
    for place, line in places.items():
        for name, scenario in SCENARIOS.items():
            found[(place, name)] = scenario(typist, line, repeat)
    server.close()
    return found


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--rounds", type=int, default=3)
    options.add_argument("--repeat", type=int, default=30)
    options.add_argument(
        "--before", default=LAST_ROUND, help="the commit compared with (default: %(default)s)"
    )
    args = options.parse_args()
    text = rubric(10_000).replace("id: big\n", "id: ids\n", 1)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        sources = builds(args.before, root / "builds")
        load = os.getloadavg()[0]
        samples: dict[tuple[str, str, str], list[float]] = {}
        for number in range(args.rounds):
            for label, source in sources.items():
                folder = root / f"{label}-{number}"
                folder.mkdir()
                (folder / "tone.rubric.yaml").write_text(TONE)
                for (place, name), each in round_of(
                    folder, environment(source, root / "cache"), text, args.repeat
                ).items():
                    samples.setdefault((place, name, label), []).extend(each)
            print(f"  (round {number + 1} measured)", flush=True)
        print(
            f"\n10,000-check rubric ({len(text.encode()) / 1e6:.1f} MB), keystroke -> diagnostics, median / p95; "
            f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; {args.rounds} x {args.repeat} keystrokes, alternated"
        )
        labels = list(sources)
        print(f"{'':<44}" + "".join(f"{label:>22}" for label in labels))
        for place, name, _ in dict.fromkeys((p, n, "") for p, n, _ in samples):
            cells = []
            for label in labels:
                median, p95 = percentiles(samples[(place, name, label)])
                cells.append(f"{median * 1000:.1f} / {p95 * 1000:.1f} ms")
            print(f"{place + ', ' + name:<44}" + "".join(f"{cell:>22}" for cell in cells))
        print("Goal: median <= 30 ms, p95 <= 60 ms at both places.")


if __name__ == "__main__":
    main()
