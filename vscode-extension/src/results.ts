// What a run means for each case, and a target's history and diffs as HTML; pure, so node's test
// runner checks them. The shapes are SPEC section 5's (`aiEval.runCases`, `aiEval.history`,
// `aiEval.diff`), plus the `errors` and `expected` a run answer carries.
import { ResultRow } from "./format";

export interface Outcome {
  checkId: string;
  kind: string;
  score: number;
  passed: boolean;
  reason: string;
}

export interface Verdict {
  score: number;
  passed: boolean;
  reason: string;
  outcomes: Outcome[];
  skipped: string[];
}

export interface RunAnswer {
  row: ResultRow;
  verdicts: Record<string, Verdict | null>;
  errors?: Record<string, string>;
  expected?: Record<string, "pass" | "fail">;
}

export interface CaseResult {
  state: "passed" | "failed" | "errored";
  // One message per line of evidence: the verdict (with expected vs actual where `expect` is set
  // and not met), then why: the failed checks' reasons, or the error.
  messages: Array<{ text: string; expected?: string; actual?: string }>;
}

// A case is a test: with `expect`, it passes when its verdict is the one expected (as a pytest
// assertion does); without, when the rubric passes it. An errored case is an error, not a failure.
export function caseResult(caseId: string, answer: RunAnswer): CaseResult {
  const verdict = answer.verdicts[caseId];
  const expect = answer.expected?.[caseId];
  if (!verdict) {
    return { state: "errored", messages: [{ text: answer.errors?.[caseId] ?? "the case has no verdict" }] };
  }
  const actual = verdict.passed ? "pass" : "fail";
  if (expect !== undefined ? expect === actual : verdict.passed) return { state: "passed", messages: [] };
  const failedChecks = verdict.outcomes.filter((outcome) => !outcome.passed).map((outcome) => `${outcome.checkId}: ${outcome.reason}`);
  const why = { text: failedChecks.length ? failedChecks.join("\n") : verdict.reason };
  const score = `${(5 * verdict.score).toFixed(2)}/5`;
  const head = expect !== undefined ? { text: `expected ${expect}, got ${actual} (${score})`, expected: expect, actual } : { text: `fail (${score})` };
  return { state: "failed", messages: [head, why] };
}

export interface DiffCase {
  caseId: string;
  base: { score: number | null; passed: boolean | null } | null;
  head: { score: number | null; passed: boolean | null } | null;
}

export interface Diff {
  target: string;
  base: ResultRow;
  head: ResultRow;
  notice?: string | null;
  cases: DiffCase[];
  flipped: string[];
  deltas: { pass_rate: number; avg_score: number };
  mcnemar_p: number;
  sign_test_p: number;
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const WIDTH = 640;
const HEIGHT = 180;
const PAD = 28;
const x = (index: number, count: number): number => PAD + (WIDTH - 2 * PAD) * (count > 1 ? index / (count - 1) : 0.5);
const y = (fraction: number): number => HEIGHT - PAD - (HEIGHT - 2 * PAD) * Math.max(0, Math.min(1, fraction));
const point = (index: number, count: number, fraction: number): string => `${x(index, count).toFixed(1)},${y(fraction).toFixed(1)}`;

// Pass rate with its Wilson band, and average score / 5, over runs oldest first: the same picture
// as `ai-eval-lsp report`.
export function trendSvg(rowsOldestFirst: ResultRow[]): string {
  const n = rowsOldestFirst.length;
  const banded = rowsOldestFirst.map((row, index) => ({ row, index })).filter(({ row }) => row.pass_rate_ci_low !== null);
  const band = [
    ...banded.map(({ row, index }) => point(index, n, row.pass_rate_ci_high ?? 0)),
    ...[...banded].reverse().map(({ row, index }) => point(index, n, row.pass_rate_ci_low ?? 0)),
  ].join(" ");
  const rate = rowsOldestFirst.map((row, index) => point(index, n, row.pass_rate)).join(" ");
  const score = rowsOldestFirst.map((row, index) => point(index, n, row.avg_score / 5)).join(" ");
  const labels = rowsOldestFirst
    .map((row, index) => `<text x="${x(index, n).toFixed(1)}" y="${HEIGHT - 8}" text-anchor="middle">${row.run_id}</text>`)
    .join("");
  const grid = [0, 0.5, 1]
    .map((f) => `<line x1="${PAD}" x2="${WIDTH - PAD}" y1="${y(f).toFixed(1)}" y2="${y(f).toFixed(1)}" class="grid"/><text x="2" y="${(y(f) + 4).toFixed(1)}">${f.toFixed(1)}</text>`)
    .join("");
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" style="width: 100%; max-width: ${WIDTH}px" role="img" aria-label="pass rate with its 95% Wilson band, and average score over runs">` +
    `${grid}<polygon class="band" points="${band}"/><polyline class="rate" points="${rate}"/><polyline class="score" points="${score}"/>${labels}</svg>`
  );
}

function verdictText(entry: DiffCase["base"]): string {
  if (!entry) return "–";
  if (entry.score === null) return "error";
  const state = entry.passed === null ? "" : entry.passed ? "pass " : "fail ";
  return `${state}${entry.score.toFixed(2)}`;
}

function change(flipped: Set<string>, entry: DiffCase): string {
  if (flipped.has(entry.caseId)) return entry.head?.passed ? "flipped to pass" : "flipped to fail";
  if (!entry.base) return "new";
  if (!entry.head) return "gone";
  if (entry.base.score !== null && entry.head.score !== null && entry.base.score !== entry.head.score) {
    return entry.head.score > entry.base.score ? "up" : "down";
  }
  return "";
}

const signed = (value: number): string => `${value >= 0 ? "+" : ""}${value.toFixed(2)}`;

export function diffHtml(diff: Diff): string {
  const flipped = new Set(diff.flipped);
  const rows = diff.cases
    .map((entry) => {
      const what = change(flipped, entry);
      return `<tr class="${what.startsWith("flipped") ? "flipped" : ""}"><td>${escapeHtml(entry.caseId)}</td><td>${verdictText(entry.base)}</td><td>${verdictText(entry.head)}</td><td>${what}</td></tr>`;
    })
    .join("");
  const notice = diff.notice ? `<p class="notice">${escapeHtml(diff.notice)}</p>` : "";
  return (
    `<h2>Run ${diff.base.run_id} → run ${diff.head.run_id}</h2>${notice}` +
    `<p>pass rate ${diff.base.pass_rate.toFixed(2)} → ${diff.head.pass_rate.toFixed(2)} (${signed(diff.deltas.pass_rate)}), ` +
    `average ${diff.base.avg_score.toFixed(2)} → ${diff.head.avg_score.toFixed(2)} (${signed(diff.deltas.avg_score)}) of 5</p>` +
    `<p>${diff.flipped.length} verdict${diff.flipped.length === 1 ? "" : "s"} flipped; exact McNemar p = ${diff.mcnemar_p.toPrecision(3)}, sign test on scores p = ${diff.sign_test_p.toPrecision(3)}</p>` +
    `<table class="diff"><tr><th>case</th><th>base</th><th>head</th><th>change</th></tr>${rows}</table>`
  );
}

function runOptions(rows: ResultRow[], selected: number | undefined): string {
  return rows
    .map((row) => `<option value="${row.run_id}"${row.run_id === selected ? " selected" : ""}>run ${row.run_id} (${new Date(row.timestamp * 1000).toISOString().slice(0, 16).replace("T", " ")})</option>`)
    .join("");
}

// The whole panel: the trend, every run, and the diff of two runs the user picks (the script only
// posts the picked run ids; the extension answers with the diff's HTML).
export function historyHtml(target: string, rowsNewestFirst: ResultRow[], diff: Diff | undefined, nonce: string, cspSource: string): string {
  const table = rowsNewestFirst
    .map((row) => {
      const band = row.pass_rate_ci_low === null ? "n/a" : `${row.pass_rate_ci_low.toFixed(2)}–${(row.pass_rate_ci_high ?? 0).toFixed(2)}`;
      return `<tr><td>${row.run_id}</td><td>${new Date(row.timestamp * 1000).toISOString().slice(0, 16).replace("T", " ")}</td><td>${row.pass_rate.toFixed(2)}</td><td>${band}</td><td>${row.avg_score.toFixed(2)}/5</td><td>${row.passed_gate === 1 ? "passed" : "FAILED"}</td><td>${row.question_count}</td><td>${row.error_count}</td><td>${escapeHtml(row.source)}</td></tr>`;
    })
    .join("");
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'unsafe-inline'; script-src 'nonce-${nonce}';">
<title>${escapeHtml(target)}</title>
<style>
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em; }
table { border-collapse: collapse; } td, th { padding: 0.15em 0.8em; text-align: left; }
tr.flipped { color: var(--vscode-charts-red); } .notice { color: var(--vscode-editorWarning-foreground); }
svg text { font-size: 11px; fill: var(--vscode-descriptionForeground); } .grid { stroke: var(--vscode-panel-border); }
.band { fill: var(--vscode-charts-blue); fill-opacity: 0.2; } .rate { fill: none; stroke: var(--vscode-charts-blue); stroke-width: 2; }
.score { fill: none; stroke: var(--vscode-charts-yellow); stroke-width: 2; stroke-dasharray: 5 3; }
</style></head><body>
<h1>${escapeHtml(target)}: ${rowsNewestFirst.length} run${rowsNewestFirst.length === 1 ? "" : "s"}</h1>
<div class="trend">${trendSvg([...rowsNewestFirst].reverse())}</div>
<p>solid: pass rate, its 95% Wilson band shaded; dashed: average score / 5; x: run id</p>
<table class="runs"><tr><th>run</th><th>when (UTC)</th><th>pass rate</th><th>95% CI</th><th>average</th><th>gate</th><th>cases</th><th>errors</th><th>source</th></tr>${table}</table>
<p>Compare <select id="base">${runOptions(rowsNewestFirst, diff?.base.run_id)}</select> with <select id="head">${runOptions(rowsNewestFirst, diff?.head.run_id)}</select></p>
<div id="diff">${diff ? diffHtml(diff) : "<p>One run so far: nothing to compare.</p>"}</div>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const pick = () => vscode.postMessage({ base: Number(document.getElementById("base").value), head: Number(document.getElementById("head").value) });
document.getElementById("base").addEventListener("change", pick);
document.getElementById("head").addEventListener("change", pick);
window.addEventListener("message", (event) => { document.getElementById("diff").innerHTML = event.data.html; });
</script>
</body></html>`;
}
