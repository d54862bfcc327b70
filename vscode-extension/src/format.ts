// How runs reach the user. The server writes every word (`summary` in `aiEval/runComplete`, and
// `aiEval.render` for histories, diffs and the report); this client only decides where they go.
// Pure, so node's test runner checks it.

export interface ResultRow {
  id: number;
  target_id: string;
  run_id: number;
  timestamp: number;
  avg_score: number;
  pass_rate: number;
  pass_rate_ci_low: number | null;
  pass_rate_ci_high: number | null;
  passed_gate: number;
  question_count: number;
  error_count: number;
  scores_json: string;
  source: string;
  duration: number;
  config_json: string | null;
}

// SPEC section 5's diff JSON, as far as this client reads it.
export interface Change {
  target: string;
  base: ResultRow;
  head: ResultRow;
  flipped: string[];
}

// A case of a run as the server renders it (a run answer's `cases`): the state to show and its
// lines, in the words `ai-eval-lsp run` prints; `expected` and `actual` make a diff.
export interface CaseShown {
  state: "passed" | "failed" | "errored";
  messages: Array<{ text: string; expected?: string; actual?: string }>;
}

// `aiEval/runComplete`: the row, what started the run, the line to show and, after an earlier run
// of the same cases file, what changed; a run on save also carries its cases as shown.
export interface RunComplete extends ResultRow {
  trigger: "command" | "save";
  summary: string;
  casesUri?: string;
  change?: Change;
  cases?: Record<string, CaseShown>;
}

// The fields of the result row (SPEC section 3), in its order: what the results view lists.
const ROW_FIELDS: Array<keyof ResultRow> = [
  "id", "target_id", "run_id", "timestamp", "avg_score", "pass_rate", "pass_rate_ci_low", "pass_rate_ci_high",
  "passed_gate", "question_count", "error_count", "scores_json", "source", "duration", "config_json",
];

export function rowDetails(row: ResultRow): Array<[string, string]> {
  return ROW_FIELDS.map((key) => [key, row[key] === null ? "null" : String(row[key])]);
}

export interface Notice {
  text: string;
  warning: boolean;
  // A diff to offer: the runs it compares.
  diff?: { base: number; head: number };
}

// What to tell the user of a finished run: a run the user started, always; a run on save, only
// when a case flipped (nothing is shown when nothing did).
export function runNotice(run: RunComplete): Notice | undefined {
  const flipped = run.change?.flipped.length ?? 0;
  if (run.trigger === "save" && flipped === 0) return undefined;
  const diff = flipped && run.change ? { base: run.change.base.run_id, head: run.change.head.run_id } : undefined;
  return { text: `AI Eval: ${run.summary}`, warning: run.passed_gate !== 1 || flipped > 0, diff };
}

// `kinds`: the server's line for the active file's project (`aiEval.render` of "kinds").
export function statusText(state: "starting" | "running" | "stopped", kinds?: string): string {
  return `$(beaker) AI Eval: ${state === "running" && kinds ? kinds : state}`;
}
