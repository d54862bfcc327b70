"""Cost of discovering a Drupal codebase's PHP executors, cold and warm from the discovery cache.

Run: .venv/bin/python bench/bench_drupal.py [--repeat N] [--keep]
Generates a Drupal-sized tree in a temporary folder: a composer `vendor/` and a `web/core/` of
about 15,000 files each (core has 80 modules with `src/`, `config/`, `tests/`, `templates/`,
`js/` and `css/`), plus the test fixture's contrib and custom modules with their executors and
a configuration export. Prints the median and the slowest of each measure; the targets are a cold
discovery under 1 s and a warm one (from the cache) under 100 ms.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ai_eval_lsp.drupal.codebase import Codebase, discover, scan

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "drupal" / "site"
CORE_MODULES = 80
VENDOR_PACKAGES = 150
FILES_PER_PACKAGE = 100

SERVICES = "".join(
    f"  {{module}}.service_{index}:\n    class: Drupal\\{{module}}\\Service{index}\n"
    f"    arguments: ['@entity_type.manager', '@config.factory', '@logger.factory']\n"
    f"    tags:\n      - {{{{ name: event_subscriber }}}}\n"
    for index in range(40)
)
PHP_CLASS = "<?php\n\nnamespace Drupal\\{module}\\Sub;\n\nfinal class C{index} {{\n  public function run(): int {{ return {index}; }}\n}}\n"


def files_of(folder: Path, count: int, name: str, text: str = "") -> int:
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        (folder / name.format(index=index)).write_text(text)
    return count


def core_module(core: Path, name: str) -> int:
    module = core / "modules" / name
    written = files_of(module / "src/Sub", 100, "C{index}.php", PHP_CLASS.format(module=name, index=0))
    written += files_of(module / "config/install", 12, f"{name}.settings_{{index}}.yml", "langcode: en\n")
    written += files_of(module / "config/schema", 2, f"{name}.schema_{{index}}.yml", "x: {}\n")
    written += files_of(module / "tests/src/Kernel", 40, "Test{index}Test.php", "<?php\n")
    written += files_of(module / f"tests/modules/{name}_test", 1, f"{name}_test.info.yml", "type: module\n")
    written += files_of(module / "templates", 8, "t{index}.html.twig", "{{ content }}\n")
    written += files_of(module / "js", 4, "s{index}.js", "")
    written += files_of(module / "css", 4, "s{index}.css", "")
    (module / f"{name}.info.yml").write_text(f"name: {name}\ntype: module\npackage: Core\nversion: VERSION\n")
    (module / f"{name}.services.yml").write_text("services:\n" + SERVICES.format(module=name))
    (module / f"{name}.module").write_text("<?php\n")
    (module / f"{name}.routing.yml").write_text(f"{name}.page:\n  path: '/{name}'\n")
    return written + 4


def generate(project: Path) -> int:
    """A Drupal project; returns how many files it holds."""
    shutil.copytree(FIXTURE, project)
    web = project / "web"
    written = sum(1 for path in project.rglob("*") if path.is_file())
    core = web / "core"
    names = [f"core_{index:02d}" for index in range(CORE_MODULES)]
    for name in names:
        written += core_module(core, name)
    written += files_of(core / "lib/Drupal/Core/Entity", 1_500, "E{index}.php", "<?php\n")
    written += files_of(core / "assets/vendor/jquery", 300, "j{index}.js", "")
    for package in range(VENDOR_PACKAGES):
        written += files_of(
            project / f"vendor/vendor{package % 30}/package{package}/src", FILES_PER_PACKAGE, "F{index}.php"
        )
    extension = project / "config/sync/core.extension.yml"
    extension.write_text(
        extension.read_text().replace("module:\n", "module:\n" + "".join(f"  {n}: 0\n" for n in names), 1)
    )
    return written


FRESH = """
import sys, time
started = time.perf_counter()
from ai_eval_lsp.drupal.codebase import discover
from pathlib import Path
discover(Path(sys.argv[1]), cache_dir=Path(sys.argv[2]))
print(time.perf_counter() - started)
"""


def fresh_process(project: Path, cache: Path) -> float:
    """Seconds a new process takes to import discovery and discover (the server's first start)."""
    run = subprocess.run(
        [sys.executable, "-c", FRESH, str(project), str(cache)], capture_output=True, text=True, check=True
    )
    return float(run.stdout)


def timed(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), max(samples)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeat", type=int, default=7)
    options.add_argument("--keep", action="store_true", help="keep the generated tree and print where it is")
    args = options.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-drupal-"))
    try:
        project = folder / "project"
        started = time.perf_counter()
        files = generate(project)
        print(f"generated {files:,} files in {time.perf_counter() - started:.1f} s: {project}")
        found = scan(project)
        assert isinstance(found, Codebase)
        print(
            f"{len(found.modules)} installed modules, {len(found.executors)} executors, {len(found.inputs)} inputs"
        )
        caches = iter(range(10_000))
        cache = folder / "cache"
        rows = {
            "cold, no cache (scan)": timed(lambda: scan(project), args.repeat),
            "cold, writing the cache": timed(
                lambda: discover(project, cache_dir=cache / str(next(caches))), args.repeat
            ),
        }
        fresh = [fresh_process(project, cache / f"fresh{index}") for index in range(args.repeat)]
        rows["cold, in a new process"] = (statistics.median(fresh), max(fresh))
        discover(project, cache_dir=cache / "warm")
        rows["warm, from the cache"] = timed(
            lambda: discover(project, cache_dir=cache / "warm"), args.repeat * 3
        )
        assert discover(project, cache_dir=cache / "warm") == found
        warm_fresh = [fresh_process(project, cache / "warm") for _ in range(args.repeat)]
        rows["warm, in a new process"] = (statistics.median(warm_fresh), max(warm_fresh))
        for label, (median, slowest) in rows.items():
            print(f"{label:30} median {median * 1000:8.1f} ms   slowest {slowest * 1000:8.1f} ms")
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
