"""Emacs with eglot (Debian's emacs-nox, elpa-eglot, elpa-yaml-mode) and the repository's
emacs/ai-eval-lsp.el: the example site's broken rubric, opened headless, gets through eglot the
very problems the README shows `check` printing for it. A missing Emacs is a failure, not a skip."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, without_test_plugins

BROKEN = "broken/rubrics/escalation_draft.yaml"

# Opens the rubric, lets eglot connect (it waits for the command loop, which batch mode has not),
# and prints what Flymake holds from eglot once the six problems came, or after 60 seconds.
PROBE = """
(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*")) (add-to-list 'load-path dir))
(load (expand-file-name "emacs/ai-eval-lsp.el" (getenv "AI_EVAL_REPO")))
(find-file (expand-file-name (getenv "AI_EVAL_RUBRIC")))
(run-hooks 'post-command-hook)
(let ((deadline (+ (float-time) 60)))
  (while (and (< (float-time) deadline) (< (length (flymake-diagnostics)) 6))
    (accept-process-output nil 0.2)))
(princ (json-encode
        (vconcat (mapcar (lambda (diagnostic)
                           (save-excursion
                             (goto-char (flymake-diagnostic-beg diagnostic))
                             (vector (line-number-at-pos) (1+ (current-column))
                                     (symbol-name (flymake-diagnostic-type diagnostic))
                                     (flymake-diagnostic-text diagnostic))))
                         (flymake-diagnostics)))))
"""


def readme_problems() -> set[tuple[int, int, str, str]]:
    """(line, column, code, message) of each problem the README shows for the broken rubric."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    pattern = rf"^{re.escape(BROKEN)}:(\d+):(\d+): (\S+) (.*)$"
    return {
        (int(line), int(column), code, message)
        for line, column, code, message in re.findall(pattern, text, re.M)
    }


def test_eglot_gets_the_broken_rubrics_problems(tmp_path: Path) -> None:
    assert shutil.which("emacs"), "Emacs is missing: run scripts/setup (Debian's emacs-nox)"
    site = tmp_path / "site"
    shutil.copytree(ROOT / "examples" / "drupal-site", site, ignore=shutil.ignore_patterns(".ai_eval"))
    # eglot's project is the version-control root, as in a real checkout
    subprocess.run(["git", "init", "-q", str(site)], check=True, timeout=30)
    (tmp_path / "probe.el").write_text(PROBE)
    env = {
        **without_test_plugins(),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "AI_EVAL_REPO": str(ROOT),
        "AI_EVAL_RUBRIC": BROKEN,
        "HOME": str(tmp_path),  # no user init, no eglot history
    }
    result = subprocess.run(
        ["emacs", "--batch", "-Q", "-l", str(tmp_path / "probe.el")],
        cwd=site,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    received = json.loads(result.stdout)
    expected = readme_problems()
    assert len(expected) == 6
    assert {(line, column, text) for line, column, _, text in received} == {
        (line, column, f"ai-eval [{code}]: {message}") for line, column, code, message in expected
    }
    assert {kind for _, _, kind, _ in received} == {"eglot-error"}
