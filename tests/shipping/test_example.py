"""The README's example command, run as a new user runs it: on a fresh copy of the checkout, from an
empty `.venv`, printing what the README shows."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from conftest import ROOT, fresh_checkout, offline_pip, without_test_plugins

README = ROOT / "README.md"


def readme_example() -> tuple[str, list[str]]:
    """The example command of the README's "See it work" section, and the output it shows for it."""
    section = (
        README.read_text(encoding="utf-8").split("\n## See it work, run the tests\n")[1].split("\n## ")[0]
    )
    commands, shown = re.findall(r"```\w*\n(.*?)```", section, re.DOTALL)[:2]
    command = next(line for line in commands.splitlines() if "example" in line)
    return command.split("#")[0].strip(), shown.splitlines()


def test_the_readme_example_runs_and_prints_what_the_readme_shows(tmp_path: Path) -> None:
    command, shown = readme_example()
    assert command == "./scripts/example"
    checkout = fresh_checkout(tmp_path / "checkout")
    environ = offline_pip(without_test_plugins())
    environ["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    done = subprocess.run(
        command, shell=True, cwd=checkout, env=environ, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == shown
    # the user's environment is clean: no plugin warnings, no notices about the example site
    # (a run that takes more than a second, as on a loaded machine, says its progress there)
    said = [line for line in done.stderr.splitlines() if not re.fullmatch(r".*: \d+/\d+ cases", line)]
    assert said == []
    assert (checkout / "examples/drupal-site/.ai_eval/results.sqlite").is_file()
