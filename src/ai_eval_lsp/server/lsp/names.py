"""The names editors and scripts depend on (SPEC section 5), in one place."""

SOURCE = "ai-eval"
"""Every diagnostic's `source`."""

RUN_CHECK = "aiEval.runCheck"
RUN_RUBRIC = "aiEval.runRubric"
RUN_CASES = "aiEval.runCases"
HISTORY = "aiEval.history"
DIFF = "aiEval.diff"
RENDER = "aiEval.render"
EXPORT_SCHEMA = "aiEval.exportSchema"
RELOAD_PLUGINS = "aiEval.reloadPlugins"
SITE_RUNS = "aiEval.siteRuns"

RUN_COMPLETE = "aiEval/runComplete"
"""Server to client, once after every finished run: the result row, plus `trigger` ("command",
"save", or "site": a site's row found by polling, with `regressed`), `summary` (the line to show)
and, after an earlier run of the same cases file, `change`."""

DOCUMENT_ROLE = "aiEval/documentRole"
"""Server to client, for every document opened and whenever its role changes:
`{uri, role: "rubric" | "cases" | null}`. VS Code switches a document's language by it."""
