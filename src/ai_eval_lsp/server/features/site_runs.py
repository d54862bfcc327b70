"""The site's own runs in the editor (SPEC 3, "The site's own runs"): a project with a site
database reads the site's rows when it loads (silently: that read fills the history), then every
`site.pollSeconds` while one of its rubric or cases files is open, and when asked
(`aiEval.siteRuns`). Each row found after the first read is announced once: `aiEval/runComplete`
with `trigger: "site"`, its line and `regressed`, and the line in the log, or, for a regression
and a client that does not show runs itself, a message instead of the log line.

The database is read on a daemon thread, never on the event loop, so an unreachable site delays
neither typing, a run, nor the server's exit. Each folder's `SiteWatch` is changed on the loop only,
through the session's methods.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from ai_eval_lsp.drupal.site_address import SETTING
from ai_eval_lsp.runs.render import count, run_facts
from ai_eval_lsp.runs.site import SiteError, SiteReader, SiteRun, announce, pull
from ai_eval_lsp.runs.store import ResultStore, StoreError
from ai_eval_lsp.server.loop.off_loop import DAEMON, off_loop
from ai_eval_lsp.server.loop.server import AiEvalServer
from ai_eval_lsp.server.loop.session import ProjectFolder, SiteWatch
from ai_eval_lsp.server.loop.take import loaded
from ai_eval_lsp.server.lsp import names
from ai_eval_lsp.server.lsp.convert import NotApplicable, path_of, uri_of


def watch(server: AiEvalServer, folder: ProjectFolder) -> None:
    """A folder's project (re)loaded: read its site, and keep reading it, when it has one; the
    watch of a site it no longer names ends. A note on why there is none goes to the log."""
    project = folder.project
    assert project is not None
    address = project.site
    current = folder.site
    if current is not None and address is not None and current.address == address:
        settings = project.settings
        server.session.retune_site(current, settings.site_poll_seconds, settings.site_regression_tolerance)
        return
    server.session.watch_site(folder, None)
    if current is not None:
        server.spawn(off_loop(current.reader.close, DAEMON))
    if address is None:
        if project.site_note is not None:
            server.log(f"{folder.root}: {project.site_note}")
        return
    site = SiteWatch(
        SiteReader(address),
        ResultStore(project.results_database, project.root),
        project.settings.site_poll_seconds,
        project.settings.site_regression_tolerance,
    )
    server.session.watch_site(folder, site)
    server.spawn(_poll(server, folder, site))


async def _poll(server: AiEvalServer, folder: ProjectFolder, site: SiteWatch) -> None:
    """The first read, then one every `poll_seconds` while a rubric or cases file of the folder
    is open; ends when the folder no longer watches this site."""

    def watched() -> bool:
        return server.session.still_has(folder) and folder.site is site

    try:
        await read(server, folder, site)
        while watched() and site.poll_seconds > 0:
            await asyncio.sleep(site.poll_seconds)
            if watched() and any(doc.role is not None for doc in server.session.documents_of(folder)):
                await read(server, folder, site)
    finally:
        if not watched():
            await off_loop(site.reader.close, DAEMON)


async def read(server: AiEvalServer, folder: ProjectFolder, site: SiteWatch) -> str | None:
    """Read the site's new rows; announce each unless this is the first read. Returns why the
    site could not be read, or None."""
    async with site.reading:
        first = site.cursor is None
        try:
            pulled = await off_loop(lambda: pull(site.store, site.reader, site.cursor), DAEMON)
            runs = [] if first else await off_loop(lambda: _announced(site, pulled.rows), DAEMON)
        except (SiteError, StoreError) as err:
            _failed(server, folder, site, str(err))
            return str(err)
        if server.session.site_read(site, pulled.last_id) is not None:
            server.log(f"{folder.root}: the site's runs are read again from {site.address}")
        for note in pulled.skipped:
            server.log(f"{folder.root}: {note}", types.MessageType.Warning)
        if first and pulled.stored:
            server.log(f"{folder.root}: {count(len(pulled.stored), 'site run')} read from {site.address}")
    for run in runs:
        _tell(server, folder, run)
    if runs:
        server.refresh_lenses()
    return None


def _announced(site: SiteWatch, rows: list[dict[str, Any]]) -> list[SiteRun]:
    return announce(site.store, site.address.identity, rows, site.tolerance)


def _listed(site: SiteWatch, target: str | None, limit: int | None) -> list[SiteRun]:
    """The site's runs in the store (of `target`, or of every one), newest first, each with its
    line and whether it regressed, as when it was told."""
    return _announced(site, site.store.site_history(site.address.identity, target, limit))


def _failed(server: AiEvalServer, folder: ProjectFolder, site: SiteWatch, why: str) -> None:
    """A read that failed: said in a message once (and logged) until a read succeeds again."""
    if not server.session.site_failed(site, why):
        return
    again = f"; tried again every {site.poll_seconds:g} s" if site.poll_seconds > 0 else ""
    server.log(f"{folder.root}: {why}{again}", types.MessageType.Warning)
    server.window_show_message(types.ShowMessageParams(types.MessageType.Warning, f"AI Eval: {why}{again}"))


def _shown(folder: ProjectFolder, run: SiteRun) -> dict[str, Any]:
    """A site's run as clients get it, told of (`aiEval/runComplete`) or listed (`aiEval.siteRuns`):
    the row with the server's line and facts, whether it regressed, and the project whose results
    hold it."""
    return {
        **run.row,
        "summary": run.summary,
        "facts": run_facts(run.row),
        "regressed": run.regressed,
        "projectUri": uri_of(folder.root),
    }


def _tell(server: AiEvalServer, folder: ProjectFolder, run: SiteRun) -> None:
    """`aiEval/runComplete`, and the line in the log; a client that does not show runs itself
    gets a regression as a message instead (one of the two, never both)."""
    params = {**_shown(folder, run), "trigger": "site"}
    server.notify(names.RUN_COMPLETE, params)
    kind = types.MessageType.Warning if run.regressed else types.MessageType.Info
    if run.regressed and not server.client_shows_runs():
        server.window_show_message(types.ShowMessageParams(kind, run.summary))
    else:
        server.log(f"{folder.root}: {run.summary}", kind)


async def site_runs(server: AiEvalServer, argument: dict[str, Any]) -> dict[str, Any]:
    """`aiEval.siteRuns`: read the site's new rows now (of the project of `uri`, else of every
    project with a site), then its rows of `target` (or of every target), newest first, each as
    `aiEval/runComplete` tells of one (its line, `regressed`, `projectUri`)."""
    uri, target, limit = argument.get("uri"), argument.get("target"), argument.get("limit")
    if target is not None and not isinstance(target, str):
        raise NotApplicable(f"`target` must be a site target, not {target!r}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise NotApplicable(f"`limit` must be a number of runs, not {limit!r}")
    folders = await loaded(server)
    path = path_of(uri) if isinstance(uri, str) else None
    if path is not None:
        home = server.project_folders.home_of(path.resolve(), server.session.settings)
        await home.ready.wait()
        folders = [home]
    watched = [(folder, folder.site) for folder in folders if folder.site is not None]
    if not watched:
        notes = [f.project.site_note for f in folders if f.project is not None and f.project.site_note]
        return {
            "rows": [],
            "note": notes[0] if notes else f"no project names a site database: give `{SETTING}`",
        }
    troubles = [why for folder, site in watched if (why := await read(server, folder, site)) is not None]
    rows = []
    for folder, site in watched:
        listed = await off_loop(lambda site=site: _listed(site, target, limit), DAEMON)  # type: ignore[misc]
        rows += [_shown(folder, run) for run in listed]
    rows.sort(key=lambda row: (row["timestamp"], row["id"]), reverse=True)
    answer: dict[str, Any] = {"rows": rows[:limit] if limit else rows}
    if troubles:
        answer["note"] = "; ".join(troubles)
    return answer
