"""What a project's rubrics can use, as `ai-eval-lsp plugins` lists it: the core kinds and who runs
them, the Python plugins, a Drupal codebase's PHP executors (and whether PHP runs them here), the
schema fragments and every load problem. `listing` is the JSON; `format_listing` says it in words,
from that JSON alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_eval_lsp import __version__
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.project.registry import PhpPlugin


def listing(project: Project) -> dict[str, Any]:
    """The project's executors and kinds; starts the project's PHP once to learn its version (as
    a run would), and runs nothing of the workspace."""
    registry = project.registry
    schema_file = registry.core_schema_file()
    runtime = _php_runtime(project)
    codebase = registry.codebase
    return {
        "core": {
            "schema": project.relative(schema_file) if schema_file else None,
            "kinds": [{"runBy": who, "kinds": kinds} for who, kinds in registry.core_runs()],
        },
        "plugins": [
            {
                "name": plugin.name,
                "target": plugin.target,
                "distribution": plugin.origin.distribution,
                "version": plugin.origin.version,
                "kinds": plugin.kinds,
                "loaded": plugin.executor is not None,
                "problems": registry.problems_of(plugin),
            }
            for plugin in registry.plugins
        ],
        "php": [_php_row(project, plugin, runtime) for plugin in registry.php],
        "phpRuntime": runtime,
        "fragments": [
            {
                "file": project.relative(path),
                "kinds": [{"kind": kind, "runs": registry.runs(kind)} for kind in registry.kinds_of(origin)],
                "problems": registry.splice_problems(origin),
            }
            for path, origin in registry.fragments
        ],
        "root": str(project.root),
        "drupalRoot": str(codebase.root) if codebase else None,
        "site": codebase.site if codebase else None,
        "sites": list(codebase.sites) if codebase else [],
        "notices": registry.notices(),
        "problems": registry.problems(),
        "otherProblems": registry.fragment_problems + registry.schema_problems,
        "kindsLine": registry.combined.kinds_line(),
    }


def format_listing(found: dict[str, Any]) -> str:
    """The listing in words, as `plugins` prints it."""
    core = found["core"]
    where = f"the site's {core['schema']}" if core["schema"] else f"the copy ai-eval-lsp {__version__} ships"
    lines = [f"ai_eval core kinds, run in Python (schema: {where})"]
    lines += [
        f"  {runner['runBy'] or 'not executed at run time'}: {', '.join(runner['kinds'])}"
        for runner in core["kinds"]
    ]
    lines.append("")
    if not found["plugins"]:
        lines.append(
            "No executor plugins installed in this Python (entry point group ai_eval.check_executors)."
        )
    for plugin in found["plugins"]:
        state = "loaded" if plugin["loaded"] else "FAILED"
        kinds = ", ".join(plugin["kinds"]) or "no kinds"
        lines.append(
            f"{plugin['distribution']} {plugin['version']}  {plugin['name']} = {plugin['target']}  [{state}]  kinds: {kinds}"
        )
        lines += [f"    problem: {problem}" for problem in plugin["problems"]]
    php = found["php"]
    if found["drupalRoot"] is None:
        lines.append(
            f"No Drupal codebase in {found['root']} (name another with --root DIR, or `drupal.root`)."
        )
    else:
        site = f", site {found['site']} (of {', '.join(found['sites'])})" if len(found["sites"]) > 1 else ""
        executors = f"{len(php)} PHP executor{'s' * (len(php) != 1)}"
        lines.append(f"\nDrupal codebase {found['drupalRoot']}{site}: {executors}")
    runtime = found["phpRuntime"]
    if runtime is not None:
        lines.append(f"  PHP: {runtime.get('version') or runtime['unavailable']}")
    for row in php:
        lines.append(f"  module {row['module']}  {row['class']}  {row['file']}:{row['line']}")
        kinds = ", ".join(
            f"{k['kind']} (read{'' if k['spliced'] else ', but another defines it first'})"
            if k["read"]
            else f"{k['kind']} (not read: {k['why']})"
            for k in row["kinds"]
        )
        lines.append(f"      kinds: {kinds or 'none'}")
        runs = "yes, through PHP" if row["runsInEditor"] else f"no: it {row['why']}"
        lines.append(f"      runs in ai-eval-lsp's runs: {runs}")
        lines += [f"      problem: {problem}" for problem in row["problems"]]
    if found["fragments"]:
        lines.append("\nSchema fragments (`schemaFragments`): kinds to validate, whoever runs them")
    for fragment in found["fragments"]:
        lines.append(f"  {fragment['file']}")
        lines += [f"      {kind['kind']}: {kind['runs']}" for kind in fragment["kinds"]]
        lines += [f"      problem: {problem}" for problem in fragment["problems"]]
    lines += [f"problem: {problem}" for problem in found["otherProblems"]]
    lines.append(f"\n{found['kindsLine']}")
    return "\n".join(lines)


def _php_runtime(project: Project) -> dict[str, str] | None:
    """The PHP that runs module executors: its version, or why there is none (None: no executor
    would run in PHP). Starting it is what a run does; nothing of the workspace is run."""
    from ai_eval_lsp.hosts.php import PhpUnavailable

    worker = project.php_worker()
    if worker is None:
        return None
    shown = " ".join(project.settings.php_command)
    with worker:
        try:
            return {"command": shown, "version": f"`{shown}` runs PHP {worker.version()}"}
        except PhpUnavailable as err:
            return {"command": shown, "unavailable": f"{err}; module executors are skipped in runs"}


def _php_row(project: Project, plugin: PhpPlugin, runtime: dict[str, str] | None) -> dict[str, Any]:
    """A PHP executor as `plugins` shows it: where it is, its kinds, and whether it runs here
    (not when it needs what ai-eval-lsp cannot give, nor when no PHP starts)."""
    why = plugin.unavailable
    if why is None and runtime is not None and "unavailable" in runtime:
        why = f"needs PHP, and {runtime['unavailable'].split('; ')[0]}"
    origin = plugin.origin
    return {
        "module": origin.module,
        "service": plugin.executor.service_id,
        "class": origin.name,
        "file": project.relative(Path(origin.file)) if origin.file else None,
        "line": origin.line,
        "kinds": [
            {
                "kind": d.kind,
                "read": d.unreadable is None,
                "spliced": d.kind in plugin.kinds,
                "why": d.unreadable,
            }
            for d in plugin.executor.definitions
        ],
        "runsInEditor": why is None,
        "why": why,
        "problems": project.registry.problems_of(plugin),
    }
