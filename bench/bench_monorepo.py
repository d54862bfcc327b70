"""A Drupal site one folder down in a monorepo (SPEC section 4, "Projects in a repository"), against
the same site opened at its own root, as a developer of a decoupled project meets it.

bench_drupal's generated ~32,000-file site is placed in `repo/drupal/`, beside `repo/frontend/`
(a front end with its `node_modules`), under one `.git`. Warm caches (each measurement runs once
before it is timed):
- `ai-eval-lsp check .` from the monorepo root, and from the site's root;
- start to first diagnostics of the seed rubric, the server opened on the monorepo root, and
  opened on the site.

Goals: `check .` at the monorepo root within 1.5x of at the site root; first diagnostics within
1.2x. Run: .venv/bin/python bench/bench_monorepo.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from bench_drupal import files_of, generate  # noqa: E402
from bench_workspace import SEED_RUBRIC, first_diagnostics, installed_env  # noqa: E402


def monorepo(root: Path) -> tuple[Path, int]:
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    files = generate(repo / "drupal")
    frontend = repo / "frontend"
    files += files_of(frontend / "src", 400, "c{index}.tsx", "export {}\n")
    files += files_of(frontend / "node_modules/react/cjs", 2_000, "m{index}.js", "")
    (frontend / "package.json").write_text('{"name": "frontend"}\n')
    return repo, files + 1


def check_here(folder: Path, cache: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", "check", "."],
        cwd=folder,
        env=installed_env(cache),
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    assert "unknown-kind" not in done.stdout, done.stdout  # the site's PHP kinds are known
    return elapsed


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeat", type=int, default=5)
    args = options.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        repo, files = monorepo(root)
        site, rubric, cache = repo / "drupal", repo / "drupal" / SEED_RUBRIC, root / "cache"
        print(f"monorepo: {files:,} files, the site in drupal/")
        figures = {}
        for name, measure in {
            "check . at the monorepo root": lambda: check_here(repo, cache),
            "check . at the site root": lambda: check_here(site, cache),
            "first diagnostics, opened on the monorepo": lambda: first_diagnostics(repo, rubric, cache),
            "first diagnostics, opened on the site": lambda: first_diagnostics(site, rubric, cache),
        }.items():
            measure()  # warm the caches
            figures[name] = median_ms([measure() for _ in range(args.repeat)])
            print(f"{name:45s} median {figures[name]:7.1f} ms")
        check = figures["check . at the monorepo root"] / figures["check . at the site root"]
        first = (
            figures["first diagnostics, opened on the monorepo"]
            / figures["first diagnostics, opened on the site"]
        )
        print(
            f"monorepo / site: check . {check:.2f}x (goal <= 1.5x); first diagnostics {first:.2f}x (goal <= 1.2x)"
        )


if __name__ == "__main__":
    main()
