// A run's cases as the Testing view shows them, and the history panel's frame around what the
// server renders (`aiEval.render`: the history with its trend, a diff); pure, so node's test runner
// checks them. The server renders every word of both; this module only places them.
import { CaseShown, ResultRow, RunName } from "./format";

// `aiEval.runCases`'s answer (SPEC section 5's `row`, plus `summary` and `cases`), as far as this
// client reads it.
export interface RunAnswer {
  row: ResultRow;
  summary: string;
  cases?: Record<string, CaseShown>;
}

// A case as the server shows it; one the answer does not name (renamed since the Testing view
// listed it, or a server older than this extension) is an error that says so.
export function caseShown(cases: Record<string, CaseShown> | undefined, caseId: string): CaseShown {
  return cases?.[caseId] ?? { state: "errored", messages: [{ text: `the run has no result for \`${caseId}\`` }] };
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

// The server's words (a note, an error) as a paragraph of the panel.
export const paragraph = (text: string): string => `<p>${escapeHtml(text)}</p>`;

// A run a diff may compare, as the server names it (`aiEval.history`'s `runs`): its name for
// `aiEval.diff` and its label (`run 12`, `site run 412`).
export interface RunChoice {
  name: RunName;
  label: string;
}

// The runs a diff may compare, and the two shown.
export interface Picker {
  runs: RunChoice[];
  base?: RunName;
  head?: RunName;
}

function runOptions(runs: RunChoice[], selected: RunName | undefined): string {
  return runs
    .map(({ name, label }) => `<option value="${escapeHtml(String(name))}"${String(name) === String(selected) ? " selected" : ""}>${escapeHtml(label)}</option>`)
    .join("");
}

// The whole panel: the server's history (its trend and runs) and diff (or why there is none) as they
// come, and two lists to pick the runs to compare (the script only posts the picked runs' names; the
// extension answers with the server's diff). Nothing is loaded and only this script runs. The
// panel is as narrow as the editor beside it: a diff's lines wrap, a table's cells never do (a
// date or an interval reads as one), and a table too wide for the panel scrolls.
export function historyHtml(target: string, history: string, diff: string, picker: Picker, nonce: string, cspSource: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'unsafe-inline'; script-src 'nonce-${nonce}';">
<title>${escapeHtml(target)}</title>
<style>
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em; }
table { border-collapse: collapse; display: block; overflow-x: auto; }
td, th { padding: 0.15em 0.4em; text-align: left; white-space: nowrap; }
svg { max-width: 100%; height: auto; } svg text { font-size: 11px; fill: var(--vscode-descriptionForeground); }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
</style></head><body>
<div id="history">${history}</div>
<p>Compare <select id="base">${runOptions(picker.runs, picker.base)}</select> with <select id="head">${runOptions(picker.runs, picker.head)}</select></p>
<div id="diff">${diff}</div>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const pick = () => vscode.postMessage({ base: document.getElementById("base").value, head: document.getElementById("head").value });
document.getElementById("base").addEventListener("change", pick);
document.getElementById("head").addEventListener("change", pick);
window.addEventListener("message", (event) => { document.getElementById("diff").innerHTML = event.data.html; });
</script>
</body></html>`;
}
