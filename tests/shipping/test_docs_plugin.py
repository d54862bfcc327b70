"""The plugin code of the docs ("Kinds a plugin adds", docs/rubrics.md), as written: it runs, and
its kind splices into the schema."""

from __future__ import annotations

import re
from typing import Any

from conftest import ROOT

from ai_eval_lsp.core.analysis import Rules, analyse_rubric
from ai_eval_lsp.core.lints import Claim
from ai_eval_lsp.core.schema import Contribution, Origin, combine, core_schema
from ai_eval_lsp.core.validate import SchemaValidator


def docs_plugin() -> Any:
    section = (ROOT / "docs" / "rubrics.md").read_text().split("## Kinds a plugin adds", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None, "the docs' plugin section has no Python block"
    scope: dict[str, Any] = {}
    exec(compile(code.group(1), "docs/rubrics.md", "exec"), scope)
    return scope["WordCountExecutor"]()


def test_the_docs_plugin_runs_and_its_kind_is_accepted() -> None:
    executor = docs_plugin()
    check = {"id": "short", "kind": "word_count", "min": 2}
    assert executor.applies(check)
    outcome = executor.execute(check, "three words here", {})
    assert (outcome.check_id, outcome.kind, outcome.passed, outcome.reason) == (
        "short",
        "word_count",
        True,
        "3 words",
    )
    combined = combine(
        core_schema(), [Contribution(Origin("docs", "docs", "0"), executor.check_schema_definitions())]
    )
    assert combined.problems == []
    rules = Rules(SchemaValidator.for_rubrics(combined), lambda check: Claim("docs"))
    text = 'id: tone\nversion: "1.0"\nchecks:\n  - {id: short, kind: word_count, min: 2}\nscoring: {combine: all_pass}\n'
    assert [p.code for p in analyse_rubric("r.rubric.yaml", text, rules).problems] == []
