"""Behaviour mutations: break one thing a user relies on, run the few tests that should notice,
and say whether they did. It reaches what mutmut (bench/mutation.py) cannot: the PHP worker and
its worker.php, the settings wiring, the child processes, the VS Code extension's TypeScript.

Each mutation is a textual patch (one exact snippet of a file replaced) applied alone to a
scratch copy of the checkout; the tests run there (`PYTHONPATH` puts the copy's `src` first, so
the servers, CLIs and workers the tests start run the mutated code too). First the selected
tests must pass on the unmutated copy; then each mutation is "caught" (a test failed),
"survived" (all passed), "timed out", or "stale" (its snippet is no longer in the file: update
the list).

Run: nice -n 10 .venv/bin/python bench/behaviour_mutations.py [--only NAME ...] [--list]
A whole run takes a few minutes on two cores.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import fresh_checkout  # noqa: E402

TIMEOUT = 600.0
"""Seconds a mutation's tests may take; a mutation that makes them hang counts as timed out."""

PHP_OFF_TESTS = ("tests/cli/test_php_off.py", "tests/e2e/test_php_off.py")
WORKER_TESTS = ("tests/hosts/test_php_worker.py",)


@dataclass(frozen=True)
class Mutation:
    name: str
    breaks: str
    """What a user would meet."""
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    """pytest arguments: the tests that should notice."""


MUTATIONS = [
    Mutation(
        "registry-php-run-gate",
        "php.run false no longer marks PHP executors unavailable: their checks fail instead of skipping",
        "src/ai_eval_lsp/project/registry.py",
        "unrunnable_reason(executor.arguments) or (None if php_run else PHP_OFF),",
        "unrunnable_reason(executor.arguments),",
        PHP_OFF_TESTS,
    ),
    Mutation(
        "project-php-worker-gate",
        "a run starts a PHP worker although php.run is false",
        "src/ai_eval_lsp/project/project.py",
        "if codebase is None or not self.registry.php or not self.settings.php_run:",
        "if codebase is None or not self.registry.php:",
        PHP_OFF_TESTS,
    ),
    Mutation(
        "project-php-run-setting-dropped",
        "the php.run setting never reaches the registry",
        "src/ai_eval_lsp/project/project.py",
        "php_run=settings.php_run)",
        "php_run=True)",
        ("tests/cli/test_php_off.py",),
    ),
    Mutation(
        "editor-settings-not-overlaid",
        "in the editor, a project's settings files win over what the user set (php.run false included)",
        "src/ai_eval_lsp/project/project.py",
        "settings = settings.overlaid(editor)",
        "pass",
        ("tests/e2e/test_php_off.py",),
    ),
    Mutation(
        "settings-php-table-not-read",
        "a nested `[php]` table (ai-eval.toml, an editor's nested settings) is an unknown setting",
        "src/ai_eval_lsp/disk/settings.py",
        'name in ("drupal", "php", "trace")',
        'name in ("drupal", "trace")',
        ("tests/disk/test_settings.py", "tests/cli/test_php_off.py"),
    ),
    Mutation(
        "settings-php-keys-misnamed",
        "php.command and php.run are read under other names",
        "src/ai_eval_lsp/disk/settings.py",
        'if group in ("drupal", "php"):',
        'if group in ("drupal",):',
        ("tests/disk/test_settings.py",),
    ),
    Mutation(
        "case-workers-settings-from-disk",
        "case workers load the project's settings from disk, not the editor's",
        "src/ai_eval_lsp/runs/workers.py",
        "evaluating(Project.load(root, settings), library)",
        "evaluating(Project.load(root), library)",
        ("tests/e2e/test_php_off.py",),
    ),
    Mutation(
        "dispatch-skip-not-shown",
        "the editor no longer says a PHP kind is not executed, nor why",
        "src/ai_eval_lsp/project/registry.py",
        "return Claim(runner.name, skipped=runner.unavailable)",
        "return Claim(runner.name)",
        PHP_OFF_TESTS,
    ),
    Mutation(
        "vscode-untrusted-php-run",
        "VS Code no longer turns PHP runs off in a workspace it does not trust",
        "vscode-extension/src/settings.ts",
        '    setAt(settings, "php.run", false);\n',
        "",
        (
            "tests/e2e/test_php_off.py",
            "tests/editors/test_vscode.py::test_the_extension_logic_passes_its_unit_tests",
        ),
    ),
    Mutation(
        "vscode-answers-as-if-trusted",
        "the extension answers the server's configuration questions as if the workspace were trusted",
        "vscode-extension/src/extension.ts",
        "configurationAnswer(item.section, values[index], vscode.workspace.isTrusted)",
        "configurationAnswer(item.section, values[index], true)",
        ("tests/editors/test_vscode.py::test_the_extension_logic_passes_its_unit_tests",),
    ),
    Mutation(
        "vscode-subsection-answer-unshaped",
        "a configuration question for `aiEval.php` reads past the trust override",
        "vscode-extension/src/settings.ts",
        "return valueAt(serverSettings(whole, trusted), inside) ?? null;",
        "return value;",
        ("tests/editors/test_vscode.py::test_the_extension_logic_passes_its_unit_tests",),
    ),
    Mutation(
        "worker-php-score-clamp",
        "PHP's CheckOutcome stand-in keeps scores outside 0..1 (INF fails the check)",
        "src/ai_eval_lsp/hosts/worker.php",
        "$this->score = is_nan($score) ? 0.0 : max(0.0, min(1.0, $score));",
        "$this->score = $score;",
        WORKER_TESTS,
    ),
    Mutation(
        "worker-php-output-dropped",
        "what an executor prints is no longer logged",
        "src/ai_eval_lsp/hosts/worker.php",
        "$answer[$answered]['output'] = $output;",
        "",
        WORKER_TESTS,
    ),
    Mutation(
        "worker-php-errors-escape-execute",
        "a PHP Error (TypeError) thrown by execute() ends the worker instead of failing the check",
        "src/ai_eval_lsp/hosts/worker.php",
        'catch (\\Throwable $error) {\n        throw new Failure("$where threw "',
        'catch (\\Exception $error) {\n        throw new Failure("$where threw "',
        WORKER_TESTS,
    ),
    Mutation(
        "worker-php-constructor-escapes",
        "an exception in an executor's constructor ends the worker",
        "src/ai_eval_lsp/hosts/worker.php",
        'throw new Failure("constructing `$class` threw " . describe($error));',
        "throw $error;",
        WORKER_TESTS,
    ),
    Mutation(
        "worker-php-return-type-unchecked",
        "a return value that is no CheckOutcome is read as one",
        "src/ai_eval_lsp/hosts/worker.php",
        "if (!is_a($outcome, OUTCOME_CLASS)) {",
        "if (FALSE) {",
        WORKER_TESTS,
    ),
    Mutation(
        "worker-php-empty-check-id-refused",
        "an outcome with an empty check id (the seed allows it) fails its check",
        "src/ai_eval_lsp/hosts/worker.php",
        "'string' => is_string($value) || is_int($value) || $value === NULL,",
        "'string' => (is_string($value) && $value !== '') || is_int($value),",
        WORKER_TESTS,
    ),
    Mutation(
        "process-first-mark-taken",
        "bytes an executor writes straight to STDOUT, holding the mark byte, garble the protocol",
        "src/ai_eval_lsp/hosts/process.py",
        "line.rpartition(MARK)",
        "line.partition(MARK)",
        WORKER_TESTS,
    ),
    Mutation(
        "worker-php-alarm",
        "a worker whose server was killed sleeps on past its time limit",
        "src/ai_eval_lsp/hosts/worker.php",
        "pcntl_alarm($this->timeLimit);",
        "",
        (*WORKER_TESTS, "-k", "own_time_limit"),
    ),
    Mutation(
        "worker-php-alarm-5x",
        "a worker whose server was killed runs on five times past its time limit",
        "src/ai_eval_lsp/hosts/php.py",
        '"timeLimit": math.ceil(self._timeout) + 1,',
        '"timeLimit": (math.ceil(self._timeout) + 1) * 5,',
        (*WORKER_TESTS, "-k", "own_time_limit"),
    ),
    Mutation(
        "php-call-deadline-20x",
        "a PHP executor may run 20 times runTimeoutSeconds",
        "src/ai_eval_lsp/hosts/php.py",
        "answer = self._host.call(method, params, self._timeout)",
        "answer = self._host.call(method, params, self._timeout * 20)",
        (*WORKER_TESTS, "-k", "time_limit"),
    ),
    Mutation(
        "php-timed-out-worker-kept",
        "after a timeout the next check is sent to the stuck child process (PHP, a plugin host)",
        "src/ai_eval_lsp/hosts/process.py",
        "except (Timeout, Garbled):\n                self.discard()\n",
        "except (Timeout, Garbled):\n",
        (*WORKER_TESTS, "-k", "time_limit"),
    ),
    Mutation(
        "regex-timeout-20x",
        "a catastrophic regex may run 20 times runTimeoutSeconds",
        "src/ai_eval_lsp/core/executors.py",
        "return [StringCheckExecutor(timeout), TargetMatchExecutor(services)]",
        "return [StringCheckExecutor(timeout * 20), TargetMatchExecutor(services)]",
        ("tests/e2e/test_time_limits.py",),
    ),
    Mutation(
        "plugin-host-timeout-20x",
        "a Python plugin's execute() may run 20 times runTimeoutSeconds",
        "src/ai_eval_lsp/hosts/python.py",
        'outcome = self._host.call("execute", params, self.timeout)',
        'outcome = self._host.call("execute", params, self.timeout * 20)',
        ("tests/runs/test_runs.py", "-k", "never_returns"),
    ),
]


def main() -> None:
    options = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    options.add_argument("--only", nargs="+", metavar="NAME", help="apply these mutations only")
    options.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = options.parse_args()
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.list or not chosen:
        for mutation in MUTATIONS:
            print(f"{mutation.name:<36}{mutation.path}: {mutation.breaks}")
        sys.exit(0 if args.list else f"no such mutation: {', '.join(args.only or [])}")
    with tempfile.TemporaryDirectory(prefix="behaviour-mutations-") as scratch:
        copy = scratch_copy(Path(scratch) / "checkout")
        for tests in dict.fromkeys(mutation.tests for mutation in chosen):
            status, seconds = run_tests(copy, tests)
            if status != "survived":
                sys.exit(f"unmutated, {' '.join(tests)} do not pass ({status}): fix them first")
            print(f"unmutated: {' '.join(tests)} pass ({seconds:.0f} s)", flush=True)
        print()
        results = [(mutation, *apply_and_run(copy, mutation)) for mutation in chosen]
    print(f"\n{'mutation':<36}{'status':<11}{'seconds':>8}  what a user would meet")
    for mutation, status, seconds in results:
        print(f"{mutation.name:<36}{status:<11}{seconds:>8.0f}  {mutation.breaks}")
    caught = sum(status in ("caught", "timed out") for _, status, _ in results)
    print(f"\n{caught} of {len(results)} caught")


def scratch_copy(into: Path) -> Path:
    """The checkout's files (tracked, and new ones not ignored), with the extension's installed
    node packages linked in."""
    fresh_checkout(into)
    (into / "vscode-extension" / "node_modules").symlink_to(ROOT / "vscode-extension" / "node_modules")
    imported = subprocess.run(
        [sys.executable, "-c", "import ai_eval_lsp; print(ai_eval_lsp.__file__)"],
        env=environment(into),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(imported.strip()).is_relative_to(into), (
        f"the copy's package is not the one imported: {imported}"
    )
    return into


def environment(copy: Path) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(copy / "src"), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def apply_and_run(copy: Path, mutation: Mutation) -> tuple[str, float]:
    target = copy / mutation.path
    original = target.read_text(encoding="utf-8")
    if original.count(mutation.old) != 1:
        print(
            f"{mutation.name}: stale (its snippet is in {mutation.path} {original.count(mutation.old)} times)"
        )
        return "stale", 0.0
    target.write_text(original.replace(mutation.old, mutation.new), encoding="utf-8")
    try:
        print(f"{mutation.name}: {' '.join(mutation.tests)} ...", flush=True)
        status, seconds = run_tests(copy, mutation.tests)
    finally:
        target.write_text(original, encoding="utf-8")
    print(f"{mutation.name}: {status} ({seconds:.0f} s)", flush=True)
    return status, seconds


def run_tests(copy: Path, tests: Sequence[str]) -> tuple[str, float]:
    """ "caught" when a test failed, "survived" when all passed."""
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    started = time.monotonic()
    # Its own session: on a timeout, the servers and workers the tests started go with pytest.
    process = subprocess.Popen(
        command,
        cwd=copy,
        env=environment(copy),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        status = process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return "timed out", time.monotonic() - started
    seconds = time.monotonic() - started
    return {0: "survived", 1: "caught"}.get(status, f"error {status}"), seconds


if __name__ == "__main__":
    main()
