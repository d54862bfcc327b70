"""Start (issue 37): from the process's start to what a user waits for, with this checkout's code
and another commit's (`--before`, the last round's by default), run alternately so the machine's
load weighs on both alike, and printed side by side.

- first diagnostics: the server started, initialized with the folder, one small rubric opened,
  until its diagnostics arrive; in a near-empty project (the rubric and the one its composite
  names), then in the 32,000-file Drupal-like tree with no marker at its root
  (`bench_workspace.unmarked`), warm (its caches written by a first, untimed start);
- `ai-eval-lsp check FILE` of the small rubric, a new process each time;
- `ai-eval-lsp --version`.

Goals: first diagnostics <= 0.5 s (one rubric), <= 0.8 s (the 32,000-file tree); `check FILE`
<= 0.3 s. Median, min and max of --repeat runs each (after one untimed run of each build).
Run: .venv/bin/python bench/bench_start.py [--repeat 10] [--before COMMIT]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from bench_workspace import CAPABILITIES, SEED_RUBRIC, answer, unmarked  # noqa: E402
from lsp_stdio import StdioClient  # noqa: E402
from rubrics import TONE, rubric  # noqa: E402
from versions import LAST_ROUND, builds, environment  # noqa: E402

GOALS = {
    "first diagnostics, one rubric": 0.5,
    "first diagnostics, 32,000-file tree": 0.8,
    "check FILE, small rubric": 0.3,
}


def first_diagnostics(folder: Path, path: Path, env: dict[str, str]) -> float:
    """From the server's start, initialized with `folder`, to `path`'s first diagnostics."""
    started = time.perf_counter()
    client = StdioClient([sys.executable, "-m", "ai_eval_lsp", "serve"], answer, env=env, timing=True)
    client.initialize(folder, CAPABILITIES)
    client.open(path, path.read_text())(120)
    elapsed = time.perf_counter() - started
    client.close()
    return elapsed


def command(arguments: list[str], folder: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", *arguments],
        cwd=folder,
        env=env,
        check=False,
        capture_output=True,
    )
    return time.perf_counter() - started


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeat", type=int, default=10)
    options.add_argument(
        "--before", default=LAST_ROUND, help="the commit compared with (default: %(default)s)"
    )
    args = options.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        sources = builds(args.before, root / "builds")
        small = root / "small"
        small.mkdir()
        (small / "tone.rubric.yaml").write_text(TONE)
        rubric_path = small / "small.rubric.yaml"
        rubric_path.write_text(rubric(10).replace("id: big", "id: small", 1))
        tree = root / "tree"
        print(f"Drupal-like tree, no marker at its root: {unmarked(tree):,} files")
        measures: dict[str, Callable[[dict[str, str]], float]] = {
            "first diagnostics, one rubric": lambda env: first_diagnostics(small, rubric_path, env),
            "first diagnostics, 32,000-file tree": lambda env: first_diagnostics(
                tree, tree / SEED_RUBRIC, env
            ),
            "check FILE, small rubric": lambda env: command(["check", str(rubric_path)], small, env),
            "--version": lambda env: command(["--version"], small, env),
        }
        load = os.getloadavg()[0]
        samples: dict[tuple[str, str], list[float]] = {}
        for name, measure in measures.items():
            for run in range(args.repeat + 1):
                for label, source in sources.items():
                    elapsed = measure(environment(source, root / f"cache-{label}"))
                    if run:  # the first run of each writes its caches and bytecode
                        samples.setdefault((name, label), []).append(elapsed)
            print(f"  ({name} measured)", flush=True)
        print(
            f"\nload average {load:.1f} -> {os.getloadavg()[0]:.1f}; median (min-max) of {args.repeat}, alternated"
        )
        labels = list(sources)
        print(f"{'':<38}" + "".join(f"{label:>26}" for label in labels) + f"{'goal':>10}")
        for name in measures:
            cells = []
            for label in labels:
                each = samples[(name, label)]
                cells.append(f"{statistics.median(each):.3f} ({min(each):.2f}-{max(each):.2f}) s")
            goal = f"{GOALS[name]:.1f} s" if name in GOALS else ""
            print(f"{name:<38}" + "".join(f"{cell:>26}" for cell in cells) + f"{goal:>10}")


if __name__ == "__main__":
    main()
