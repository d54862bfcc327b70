"""A Drupal module's executor in the shape every executor has (`applies`, `execute`): it claims
the kinds its class defines, and a run's PHP worker asks the class itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ai_eval_lsp.api import CheckOutcome
from ai_eval_lsp.drupal.codebase import PhpExecutor

if TYPE_CHECKING:  # the worker is a run's; checking a file never loads it
    from ai_eval_lsp.drupal.worker import PhpWorker


class PhpCheckExecutor:
    def __init__(self, executor: PhpExecutor, kinds: frozenset[str], worker: PhpWorker | None) -> None:
        """Without a `worker` (diagnostics, which never run PHP) it claims its kinds by name alone."""
        self.executor, self.kinds, self.worker = executor, kinds, worker

    def applies(self, check: Mapping[str, Any]) -> bool:
        if check.get("kind") not in self.kinds:
            return False
        if self.worker is None:
            return True
        return self.worker.applies(self.executor.class_name, self.executor.arguments, check)

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> CheckOutcome:
        if self.worker is None:
            raise RuntimeError("a PHP executor runs only through a run's PHP worker")
        return self.worker.execute(
            self.executor.class_name, self.executor.arguments, check, response, context
        )
