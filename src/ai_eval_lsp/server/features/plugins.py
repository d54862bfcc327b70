"""The kinds the projects have: the combined schema (`aiEval.exportSchema`), and plugins
rediscovered, schemas rebuilt and open documents checked again (`aiEval.reloadPlugins`)."""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING, Any

from ai_eval_lsp.server.query import rubrics
from ai_eval_lsp.server.query.snapshots import WorkspaceSnapshot

if TYPE_CHECKING:
    from ai_eval_lsp.server.loop.server import AiEvalServer


def export_schema(workspace: WorkspaceSnapshot, argument: dict[str, Any]) -> dict[str, Any]:
    """The combined schema of the project of `uri` (else of the first project)."""
    folder = rubrics.folder_of_target(workspace, None)
    assert folder.project is not None, "a folder is found once its project is loaded"
    return folder.project.registry.combined.schema


async def reload_plugins(server: AiEvalServer, argument: dict[str, Any]) -> dict[str, Any]:
    """Every project loaded again: the kinds they have now, by origin, and what failed."""
    importlib.invalidate_caches()
    folders = list(server.session.folders.values())
    await asyncio.gather(*(server.project_folders.load(folder, walk=False) for folder in folders))
    kinds: dict[str, str] = {}
    problems: list[str] = []
    for folder in folders:
        if folder.project is not None:
            registry = folder.project.registry
            kinds.update({kind: str(origin) for kind, origin in registry.combined.origins.items()})
            problems += [p for p in registry.problems() if p not in problems]
    return {"kinds": kinds, "problems": problems}
