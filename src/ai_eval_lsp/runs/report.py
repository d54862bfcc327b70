"""Stored runs as HTML (the report: one self-contained file, inline CSS and SVG, nothing loaded,
no script; a target's history and a diff as fragments of it), and `render_stored`, what the CLI
and the server's `aiEval.render` show, in every format, from one place."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ai_eval_lsp.core.compare import SITE_ID, CaseRecord, Diff, run_label, run_name
from ai_eval_lsp.drupal.secrets import redact
from ai_eval_lsp.runs.render import (
    TIED,
    format_diff,
    format_diff_markdown,
    format_history,
    format_history_markdown,
    history_table,
    history_title,
    interval,
    nothing_to_compare,
    when,
)
from ai_eval_lsp.runs.store import ResultStore, RunName

WIDTH, HEIGHT, PAD = 640, 180, 28

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #1f2328; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #d0d7de; }
table { border-collapse: collapse; margin: 0.5em 0; } td, th { padding: 0.2em 0.8em; text-align: left; }
tr:nth-child(even) { background: #f6f8fa; } .fail { color: #cf222e; } .pass { color: #1a7f37; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; }
svg text { font-size: 11px; fill: #57606a; }
"""


def _x(index: int, count: int) -> float:
    return PAD + (WIDTH - 2 * PAD) * (index / (count - 1) if count > 1 else 0.5)


def _y(fraction: float) -> float:
    return HEIGHT - PAD - (HEIGHT - 2 * PAD) * max(0.0, min(1.0, fraction))


def trend_svg(rows: Sequence[Mapping[str, Any]]) -> str:
    """Average score (of 5) and pass rate over runs, oldest first, the pass rate's Wilson band
    shaded; both on one 0..1 axis (the average divided by 5). Its viewBox lets a view narrower
    than the picture (an editor's panel) scale it down whole."""
    n = len(rows)
    banded = [(i, row) for i, row in enumerate(rows) if row["pass_rate_ci_low"] is not None]
    band = [f"{_x(i, n):.1f},{_y(row['pass_rate_ci_high']):.1f}" for i, row in banded]
    band += [f"{_x(i, n):.1f},{_y(row['pass_rate_ci_low']):.1f}" for i, row in reversed(banded)]
    rate = " ".join(f"{_x(i, n):.1f},{_y(row['pass_rate']):.1f}" for i, row in enumerate(rows))
    score = " ".join(f"{_x(i, n):.1f},{_y(row['avg_score'] / 5):.1f}" for i, row in enumerate(rows))
    grid = "".join(
        f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{_y(f):.1f}" y2="{_y(f):.1f}" stroke="#d0d7de"/>'
        f'<text x="2" y="{_y(f) + 4:.1f}">{f:.1f}</text>'
        for f in (0.0, 0.5, 1.0)
    )
    labels = "".join(
        f'<text x="{_x(i, n):.1f}" y="{HEIGHT - 8}" text-anchor="middle">{escape(_short(row))}</text>'
        for i, row in enumerate(rows)
    )
    dots = "".join(
        _dot(
            _x(i, n),
            _y(row["pass_rate"]),
            "#0969da",
            row,
            f"pass rate {row['pass_rate']:.2f} {interval(row)}",
        )
        + _dot(_x(i, n), _y(row["avg_score"] / 5), "#bf8700", row, f"average {row['avg_score']:.2f}/5")
        for i, row in enumerate(rows)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'role="img" '
        f'aria-label="pass rate with its 95% Wilson band, and average score over runs">{grid}'
        f'<polygon points="{" ".join(band)}" fill="#0969da" fill-opacity="0.15"/>'
        f'<polyline points="{rate}" fill="none" stroke="#0969da" stroke-width="2"/>'
        f'<polyline points="{score}" fill="none" stroke="#bf8700" stroke-width="2" stroke-dasharray="5 3"/>'
        f"{dots}{labels}</svg>"
        '<p><span style="color:#0969da">&#9644; pass rate (band: 95% Wilson interval)</span> &nbsp; '
        f'<span style="color:#bf8700">&#9476; average score / 5</span> &nbsp; {_axis(rows)}</p>'
    )


def _axis(rows: Sequence[Mapping[str, Any]]) -> str:
    """What the trend's axis names, with the newest site run drawn as its example."""
    site = next((row for row in reversed(rows) if SITE_ID in row), None)
    if site is None:
        return "x: run id"
    return f"x: run id (hollow, {escape(_short(site))}: {escape(run_label(site))})"


def _short(row: Mapping[str, Any]) -> str:
    """A run on the trend's axis: its run id, or `s412` for the site's run 412."""
    return f"s{row[SITE_ID]}" if SITE_ID in row else str(row["run_id"])


def _dot(x: float, y: float, color: str, row: Mapping[str, Any], what: str) -> str:
    """A run's point on a line: filled for a local run, hollow for the site's."""
    fill = "#ffffff" if SITE_ID in row else color
    return (
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{fill}" stroke="{color}" stroke-width="1.5">'
        f"<title>{escape(run_label(row))}: {what}</title></circle>"
    )


def _cases_table(cases: Sequence[CaseRecord]) -> str:
    rows = []
    for case in cases:
        if case.score is None:
            state, css = "error", "fail"
        elif case.tied:
            state, css = "tied", ""
        elif case.passed is None:
            state, css = "scored", ""
        else:
            state, css = ("pass", "pass") if case.passed else ("fail", "fail")
        score = "" if case.score is None else f"{case.score:.2f}"
        rows.append(
            f'<tr><td>{escape(case.case_id)}</td><td class="{css}">{state}</td><td>{score}</td>'
            f"<td>{escape(case.reason or '')}</td></tr>"
        )
    legend = f"<p>{escape(TIED)}</p>" if any(case.tied for case in cases) else ""
    return (
        "<table><tr><th>case</th><th>verdict</th><th>score (of 5)</th><th>reason</th></tr>"
        + "".join(rows)
        + "</table>"
        + legend
    )


def render_report(
    targets: Sequence[tuple[str, Sequence[Mapping[str, Any]], Sequence[CaseRecord], Diff | None]],
) -> str:
    """`targets`: each target's rows (oldest first), its latest run's cases, and the diff of its
    latest run to the one before; an exported file, with no secret the process holds."""
    sections = []
    for target, rows, cases, comparison in targets:
        latest = rows[-1]
        sections.append(
            f"<h2>{escape(target)}</h2>"
            f"<p>{len(rows)} run{'s' * (len(rows) != 1)}; latest: {run_label(latest)} at {when(latest)} UTC, "
            f"pass rate {latest['pass_rate']:.2f} {interval(latest)}, average {latest['avg_score']:.2f}/5, "
            f"gate {'passed' if latest['passed_gate'] else 'failed'}</p>"
            f"{trend_svg(rows)}"
            f"<h3>Latest run's cases</h3>{_cases_table(cases)}"
            + (f"<h3>Against the run before</h3>{diff_html(comparison)}" if comparison else "")
        )
    body = "".join(sections) or "<p>No runs are stored yet: run a cases file first.</p>"
    return redact(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>ai-eval runs</title><style>{_STYLE}</style></head>"
        f"<body><h1>ai-eval runs</h1>{body}</body></html>\n"
    )


def diff_html(comparison: Diff) -> str:
    return f"<pre>{escape(format_diff(comparison))}</pre>"


def history_html(target: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """A target's trend and its runs, newest first: a fragment of a page."""
    header, *table = history_table(rows)
    cells = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in line) + "</tr>" for line in table)
    return (
        f"<h2>{escape(history_title(target, rows))}</h2>{trend_svg(rows[::-1]) if rows else ''}"
        "<table><tr>" + "".join(f"<th>{escape(cell)}</th>" for cell in header) + f"</tr>{cells}</table>"
    )


ReportTarget = tuple[str, list[dict[str, Any]], list[CaseRecord], Diff | None]


def report_targets(store: ResultStore, only: str | None = None) -> list[ReportTarget]:
    """What the report shows of each target with runs (or of `only`): its rows oldest first, its
    latest run's cases, and the diff of that run to the one before."""
    targets = []
    for target in store.targets() if only is None else [only]:
        rows = store.history(target)[::-1]
        if rows:
            comparison = store.diff(target=target) if len(rows) > 1 else None
            targets.append((target, rows, store.cases(rows[-1]), comparison))
    return targets


def history_answer(store: ResultStore, target: str, limit: int | None) -> dict[str, Any]:
    """`aiEval.history`'s answer: SPEC's `rows`, and for a history view `runs`, each row's
    `name` (what `aiEval.diff` takes: a local run id or `site:412`) and `label` (`run 12`, `site
    run 412`), so a client offers runs to compare without naming them itself, then the runs it
    compares with across the site (`ResultStore.mirroring`, labelled with their target: a
    rubric's history offers the site's runs its cases file mirrors, and the reverse), and
    `compare`, the diff it opens on."""
    rows = store.history(target, limit)
    runs = [{"name": run_name(row), "label": run_label(row)} for row in rows]
    runs += [
        {"name": run_name(row), "label": f"{run_label(row)} of {row['target_id']}"}
        for row in store.mirroring(target)
    ]
    return {"rows": rows, "runs": runs, "compare": opening_comparison(store, target)}


def opening_comparison(store: ResultStore, target: str) -> dict[str, Any]:
    """The diff a history view opens on: `{base, head}` (run names, `RunName`), the target's
    latest run and the newest run of its kind before it that shares a case with it (runs of
    another cases file pair nothing; the site's runs share questions); else `{note}`, why there is
    none."""
    latest, runs = store.last_run(target)
    base = store.sharing_cases(latest) if latest else None
    if latest is None or base is None:
        return {"note": nothing_to_compare(target, latest, runs)}
    return {"base": run_name(base), "head": run_name(latest)}


WHAT = ("history", "diff", "report")
FORMATS = ("text", "markdown", "html")


def render_stored(
    store: ResultStore, what: str, form: str, target: str | None, base: RunName, head: RunName
) -> str:
    """A target's history, a diff (default: the latest run and the one before) or the report (of
    every target, or of `target`), as the CLI prints it. The report is HTML only; a history needs
    its target. Raises ValueError for what cannot be rendered, StoreError for the store's trouble."""
    if what not in WHAT or form not in FORMATS:
        raise ValueError(
            f"`what` is one of {', '.join(WHAT)} and `format` one of {', '.join(FORMATS)}, not {what!r} and {form!r}"
        )
    if what == "report":
        if form != "html":
            raise ValueError(f"the report is HTML only, not {form}")
        return render_report(report_targets(store, target))
    if what == "diff":
        comparison = store.diff(base, head, target)
        return {"text": format_diff, "markdown": format_diff_markdown, "html": diff_html}[form](comparison)
    if target is None:
        raise ValueError("a history needs its `target`, a rubric id or site target")
    rows = store.history(target)
    return {"text": format_history, "markdown": format_history_markdown, "html": history_html}[form](
        target, rows
    )
