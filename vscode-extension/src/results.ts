// What a run means for each case in the Testing view, and the history panel's frame around what
// the server renders (`aiEval.render`: the history with its trend, a diff); pure, so node's test
// runner checks them. The shapes are SPEC section 5's (`aiEval.runCases`), plus the `errors` and
// `expected` a run answer carries.
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
  summary?: string;
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

const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

// The runs a diff may compare, and the two shown.
export interface Picker {
  runIds: number[];
  base?: number;
  head?: number;
}

function runOptions(runIds: number[], selected: number | undefined): string {
  return runIds.map((id) => `<option value="${id}"${id === selected ? " selected" : ""}>run ${id}</option>`).join("");
}

// The whole panel: the server's history (its trend and runs) and diff as they come, and two lists
// to pick the runs to compare (the script only posts the picked run ids; the extension answers with
// the server's diff). Nothing is loaded and only this script runs.
export function historyHtml(target: string, history: string, diff: string | undefined, picker: Picker, nonce: string, cspSource: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'unsafe-inline'; script-src 'nonce-${nonce}';">
<title>${escapeHtml(target)}</title>
<style>
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em; }
table { border-collapse: collapse; } td, th { padding: 0.15em 0.8em; text-align: left; }
svg { max-width: 100%; height: auto; } svg text { font-size: 11px; fill: var(--vscode-descriptionForeground); }
pre { white-space: pre; overflow-x: auto; }
</style></head><body>
<div id="history">${history}</div>
<p>Compare <select id="base">${runOptions(picker.runIds, picker.base)}</select> with <select id="head">${runOptions(picker.runIds, picker.head)}</select></p>
<div id="diff">${diff ?? "<p>One run so far: nothing to compare.</p>"}</div>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const pick = () => vscode.postMessage({ base: Number(document.getElementById("base").value), head: Number(document.getElementById("head").value) });
document.getElementById("base").addEventListener("change", pick);
document.getElementById("head").addEventListener("change", pick);
window.addEventListener("message", (event) => { document.getElementById("diff").innerHTML = event.data.html; });
</script>
</body></html>`;
}
