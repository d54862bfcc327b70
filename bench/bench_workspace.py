"""The workspace a Drupal developer opens, measured as they meet it.

In a generated Drupal project of ~32,000 files (bench_drupal's tree: `vendor/`, `web/core/` with
80 modules, the fixture site's modules and executors):
- start to first diagnostics: the server started, initialized with the project folder, the
  seed rubric opened, until its diagnostics arrive (cold: no discovery cache; warm: with it);
- `ai-eval-lsp check FILE` run from `/` (a new process each time, as CI and a pre-commit hook run it),
  cold (no cache: discovery and the walk read everything) and warm.
In a Drupal-like tree of ~32,000 files with no project marker at its root (the generated project
without its `composer.json`, small YAML files in `vendor/` beside the PHP ones): start to first
diagnostics, warm, as above.
In a folder of 2,000 rubrics, indexed in the background after start: hover and completion asked
all the while, and how long indexing took.

Goals: first diagnostics <= 1 s; `check FILE` <= 0.3 s; hover and completion < 20 ms while indexing.
Run: .venv/bin/python bench/bench_workspace.py [--repeat 5]
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

from bench_drupal import generate  # noqa: E402
from lsp_stdio import StdioClient  # noqa: E402

SEED_RUBRIC = "web/modules/custom/my_eval_extras/rubrics/summary_shape.rubric.yaml"
CAPABILITIES = {
    "window": {"workDoneProgress": True},
    "workspace": {"configuration": True, "workspaceFolders": True},
    "textDocument": {"completion": {"completionItem": {"snippetSupport": True}}, "hover": {}},
}


def answer(method: str, params: Any) -> Any:
    return [{}] * len(params["items"]) if method == "workspace/configuration" else None


def installed_env(cache: Path) -> dict[str, str]:
    """The environment of a process as an installed copy runs: its bytecode is cached (pip
    compiles it at install; a `PYTHONDONTWRITEBYTECODE` here would have every start compile)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "XDG_CACHE_HOME": str(cache)}


def start(folder: Path, cache: Path) -> StdioClient:
    env = installed_env(cache)
    client = StdioClient([sys.executable, "-m", "ai_eval_lsp", "serve"], answer, env=env, timing=True)
    client.initialize(folder, CAPABILITIES)
    return client


def first_diagnostics(folder: Path, rubric: Path, cache: Path) -> float:
    """From the server's start, opened on `folder`, to `rubric`'s first diagnostics."""
    started = time.perf_counter()
    client = start(folder, cache)
    message = client.open(rubric, rubric.read_text())(120)
    elapsed = time.perf_counter() - started
    assert message["params"]["diagnostics"] == [], message  # the PHP kind is known from the first
    client.close()
    return elapsed


def unmarked(project: Path) -> int:
    """The generated project made a tree with no marker at its root, its `vendor/` packages full
    of small YAML files too; returns how many files it holds."""
    files = generate(project)
    (project / "composer.json").unlink()
    packages = sorted(project.glob("vendor/*/*"))
    for number, package in enumerate(packages):
        folder = package / "config"
        folder.mkdir()
        for index in range(18):
            (folder / f"p{number}_{index}.yml").write_text(f"name: p{number}\nsettings: {{level: {index}}}\n")
        for index in range(10):
            (package / "src" / f"F{index}.php").unlink()
    return files - 1 + 8 * len(packages)


def check_file(project: Path, cache: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", "check", str(project / SEED_RUBRIC)],
        cwd="/",
        env=installed_env(cache),
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def rubrics_folder(folder: Path, count: int) -> None:
    for number in range(count):
        checks = "".join(
            f"  - {{id: c{i}, kind: must_contain_any, values: [w{i}]}}\n  - {{id: r{i}, kind: regex, pattern: 'x{i}'}}\n"
            for i in range(10)
        )
        composite = f"  - {{kind: composite, rubric: r{number - 1}}}\n" if number else ""
        (folder / f"r{number}.rubric.yaml").write_text(
            f'id: r{number}\nversion: "1.0"\nchecks:\n{checks}{composite}scoring: {{combine: all_pass}}\n'
        )


def during_indexing(folder: Path, cache: Path) -> tuple[list[float], float]:
    """Hover and completion latencies while the folder is indexed, and the indexing time."""
    started = time.perf_counter()
    client = start(folder, cache)
    path = folder / "r1999.rubric.yaml"
    client.open(path, path.read_text())
    uri = path.as_uri()
    hover = {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 40}}
    complete = {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 4}}
    client.request("textDocument/hover", hover, timeout=120)  # the document is checked
    latencies: list[float] = []
    ended = False
    while not ended:
        for method, params in (("textDocument/hover", hover), ("textDocument/completion", complete)):
            asked = time.perf_counter()
            client.request(method, params, timeout=120)
            latencies.append(time.perf_counter() - asked)
        ended = any(
            m["method"] == "$/progress" and m["params"]["value"] == {"kind": "end", "message": "indexed"}
            for m in client.notifications
        )
        time.sleep(0.02)
    indexing = time.perf_counter() - started
    client.close()
    return latencies, indexing


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered) * 1000:7.1f} ms, p95 {p95 * 1000:7.1f} ms, max {ordered[-1] * 1000:7.1f} ms"


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeat", type=int, default=5)
    args = options.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        project = root / "site"
        files = generate(project)
        print(f"Drupal project: {files:,} files")
        cold = []
        for run in range(args.repeat):
            cold.append(first_diagnostics(project, project / SEED_RUBRIC, root / f"cold-cache-{run}"))
        warm = [
            first_diagnostics(project, project / SEED_RUBRIC, root / "warm-cache")
            for _ in range(args.repeat + 1)
        ][1:]
        print(f"start to first diagnostics, cold:  {summary(cold)}")
        print(f"start to first diagnostics, warm:  {summary(warm)}")
        bare = root / "unmarked"
        print(f"Drupal-like tree, no marker at its root: {unmarked(bare):,} files")
        times = [
            first_diagnostics(bare, bare / SEED_RUBRIC, root / "unmarked-cache")
            for _ in range(args.repeat + 1)
        ][1:]
        print(f"start to first diagnostics, warm:  {summary(times)}")
        fresh = [check_file(project, root / f"check-cache-{run}") for run in range(args.repeat)]
        print(f"check FILE from /, cold:           {summary(fresh)}")
        checks = [check_file(project, root / "warm-cache") for _ in range(args.repeat + 1)][1:]
        print(f"check FILE from /, warm:           {summary(checks)}")
        many = root / "many"
        many.mkdir()
        (many / ".git").mkdir()
        rubrics_folder(many, 2000)
        latencies, indexing = during_indexing(many, root / "warm-cache")
        print(
            f"hover and completion while 2,000 rubrics are indexed: {summary(latencies)} ({len(latencies)} requests)"
        )
        print(f"start to indexed, 2,000 rubrics: {indexing:.2f} s")


if __name__ == "__main__":
    main()
