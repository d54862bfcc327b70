"""The random editing session of tests/e2e/test_fuzz.py, run long: several seeds of many edits
each, with both editors' capabilities. Prints, per seed, the edits sent and how long the session
took, and fails loudly (the test's own message) on the first disagreement or failed request.

Run: .venv/bin/python bench/bench_fuzz.py [--edits 4000] [--seeds 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--edits", type=int, default=4000)
    options.add_argument("--seeds", type=int, default=5)
    args = options.parse_args()
    for seed in range(1, args.seeds + 1):
        started = time.perf_counter()
        env = {**os.environ, "AI_EVAL_FUZZ_EDITS": str(args.edits), "AI_EVAL_FUZZ_SEED": str(seed)}
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/e2e/test_fuzz.py"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - started
        verdict = "passed" if result.returncode == 0 else "FAILED"
        print(f"seed {seed}: {args.edits:,} edits x 2 editors, {verdict} in {elapsed:.1f} s", flush=True)
        if result.returncode != 0:
            print(result.stdout[-5000:])
            sys.exit(1)


if __name__ == "__main__":
    main()
