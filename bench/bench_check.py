"""Cost of checking one rubric, by stage and size: parse, schema validation, lints, the whole check.

Run: .venv/bin/python bench/bench_check.py [--repeat N] [--reference]
Prints the median and the 95th percentile of each stage; the target is a 1,000-check rubric
fully checked in under 100 ms, with cost growing linearly.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from rubrics import TONE, rubric

from ai_eval_lsp.core.analysis import Rules, analyse_rubric
from ai_eval_lsp.core.index import RubricIndex
from ai_eval_lsp.core.lints import lint_rubric
from ai_eval_lsp.core.yamltree import parse
from ai_eval_lsp.project.project import Project

SIZES = (10, 100, 1_000, 10_000)


def timed(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    action()  # warm caches: compiled validators and patterns
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.95))]


def stages_of(text: str, rules: Rules, index: RubricIndex) -> dict[str, Callable[[], object]]:
    root = parse(text, rules.parser).root
    assert root is not None
    return {
        "parse": lambda: parse(text, rules.parser),
        "validate": lambda: rules.validator.validate(root, text),
        "lints": lambda: lint_rubric(root, text, rules.validator.kinds, rules.dispatch),
        "whole": lambda: analyse_rubric("big.rubric.yaml", text, rules).problems_in(index),
    }


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeat", type=int, default=20)
    options.add_argument("--reference", action="store_true", help="measure the reference path too (slow)")
    args = options.parse_args()
    engines = ["fast", "reference"] if args.reference else ["fast"]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "tone.rubric.yaml").write_text(TONE)
        print(
            f"{'engine':<10}{'checks':>7}{'KB':>7}{'parse':>16}{'validate':>16}{'lints':>16}{'whole check':>16}{'per check':>11}"
        )
        for engine in engines:
            project = Project.load(root, parser=engine, engine=engine)  # type: ignore[arg-type]
            index = RubricIndex([project.analyse(root / "tone.rubric.yaml", TONE.encode()).summary])
            rules = project.rules
            for size in SIZES:
                if engine == "reference" and size > 1_000:
                    continue
                for broken in (False, True):
                    text = rubric(size, broken)
                    repeat = args.repeat if size <= 1_000 else max(3, args.repeat // 5)
                    if engine == "reference":
                        repeat = 3
                    stages = stages_of(text, rules, index)
                    cells = {name: timed(stage, repeat) for name, stage in stages.items()}
                    label = f"{size}{'*' if broken else ''}"
                    row = "".join(f"{cells[n][0] * 1000:>8.1f} ({cells[n][1] * 1000:>5.1f})" for n in stages)
                    print(
                        f"{engine:<10}{label:>7}{len(text) / 1024:>7.0f}{row}{cells['whole'][0] / size * 1e6:>9.0f}µs"
                    )
    print("cells: median (95th percentile) in ms; * = 1 % of checks broken in four ways")


if __name__ == "__main__":
    main()
