"""Mutation testing of the engine, the runs and the store: mutmut breaks the code one small change
at a time and runs the tests that reach it; a change no test notices survives. Prints the share
killed per module, the goal for the modules that must reach it, and every survivor's diff.

Run: .venv/bin/python bench/mutation.py [--only src/ai_eval_lsp/runs/store.py ...] [--no-diffs]
(the modules and tests are `[tool.mutmut]` in pyproject.toml; `--only` narrows the modules). It
takes a while: a whole run is tens of minutes on two cores. Property tests use a few fixed
examples each (the `mutation` hypothesis profile).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTMUT = [sys.executable, "-m", "mutmut"]
GOAL = 0.90
GOAL_MODULES = (
    "ai_eval_lsp.core.evaluate",
    "ai_eval_lsp.core.results",
    "ai_eval_lsp.core.validate",
    "ai_eval_lsp.runs.store",
)
RESULT = re.compile(r"^\s*(?P<mutant>(?P<module>[\w.]+)\.x[^\s:]*__mutmut_\d+): (?P<status>[\w ]+)$")


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--only", nargs="+", metavar="PATH", help="mutate these modules only")
    options.add_argument("--no-diffs", action="store_true", help="list survivors without their diffs")
    args = options.parse_args()
    pyproject = ROOT / "pyproject.toml"
    original = pyproject.read_text()
    if args.only:
        config = tomllib.loads(original)["tool"]["mutmut"]
        unknown = [p for p in args.only if not (ROOT / p).is_file()]
        if unknown:
            sys.exit(f"no such module: {', '.join(unknown)}")
        narrowed = original.replace(
            "only_mutate = " + _toml_list(config["only_mutate"]), "only_mutate = " + _toml_list(args.only)
        )
        pyproject.write_text(narrowed)
    env = {**os.environ, "AI_EVAL_MUTATION": "1"}
    try:
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
        subprocess.run([*MUTMUT, "run"], cwd=ROOT, env=env, check=False, stdout=subprocess.DEVNULL)
        listed = subprocess.run(
            [*MUTMUT, "results", "--all", "true"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        pyproject.write_text(original)

    counts: dict[str, Counter[str]] = defaultdict(Counter)
    survivors: dict[str, list[str]] = {}
    for line in listed.splitlines():
        found = RESULT.match(line)
        if not found:
            continue
        status, mutant = found["status"], found["mutant"]
        if status != "killed":
            diff = _diff(mutant, env)
            survivors[mutant] = diff
            if _sql_case_only(found["module"], diff):
                status = "equivalent"
        counts[found["module"]][status] += 1
    print(
        f"{'module':<34}{'mutants':>8}{'equiv.':>8}{'killed':>8}{'survived':>9}{'other':>7}{'killed %':>10}"
    )
    scores = {}
    for module in sorted(counts):
        count = counts[module]
        total = sum(count.values()) - count["equivalent"]
        killed = count["killed"]
        other = total - killed - count["survived"]
        scores[module] = killed / total if total else 1.0
        mark = "  goal" if module in GOAL_MODULES else ""
        print(
            f"{module:<34}{total + count['equivalent']:>8}{count['equivalent']:>8}{killed:>8}"
            f"{count['survived']:>9}{other:>7}{scores[module]:>10.1%}{mark}"
        )
    short = [m for m in GOAL_MODULES if m in scores and scores[m] < GOAL]
    verdict = "met" if not short else f"NOT met in {', '.join(short)}"
    print(
        f"\ngoal: at least {GOAL:.0%} of the non-equivalent mutants killed in {', '.join(GOAL_MODULES)}: {verdict}"
    )
    print("(equivalent: a survivor that only changes the letter case of SQL, which SQLite does not see)")
    print(f"\n{len(survivors)} mutants not killed:")
    for mutant, diff in survivors.items():
        print(f"  {mutant}" if args.no_diffs else f"\n{mutant}\n" + "\n".join(diff))


def _diff(mutant: str, env: dict[str, str]) -> list[str]:
    shown = subprocess.run(
        [*MUTMUT, "show", mutant], cwd=ROOT, env=env, capture_output=True, text=True
    ).stdout
    return [
        line
        for line in shown.splitlines()
        if line.startswith(("-", "+")) and not line.startswith(("---", "+++"))
    ]


def _sql_case_only(module: str, diff: list[str]) -> bool:
    """A store mutant that changes nothing but the case of its SQL: SQLite reads it the same."""
    removed = [line[1:] for line in diff if line.startswith("-")]
    added = [line[1:] for line in diff if line.startswith("+")]
    return (
        module == "ai_eval_lsp.runs.store"
        and bool(removed)
        and removed != added
        and [line.casefold() for line in removed] == [line.casefold() for line in added]
    )


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


if __name__ == "__main__":
    main()
