// How runs reach the user. The server writes every word (`summary` in `aiEval/runComplete`, and
// `aiEval.render` for histories, diffs and the report); this client only decides where they go.
// Pure, so node's test runner checks it.

export interface ResultRow {
  id: number;
  target_id: string;
  // null in a site's row that `drush ai-eval:run` wrote (that path has no run id)
  run_id: number | null;
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

// A run of this project's own (not the site's): it always has its run id.
export type LocalRow = ResultRow & { run_id: number };

// SPEC section 5's diff JSON, as far as this client reads it: two runs of one cases file.
export interface Change {
  target: string;
  base: LocalRow;
  head: LocalRow;
  flipped: string[];
}

// A case of a run as the server renders it (a run answer's `cases`): the state to show and its
// lines, in the words `ai-eval-lsp run` prints; `expected` and `actual` make a diff.
export interface CaseShown {
  state: "passed" | "failed" | "errored";
  messages: Array<{ text: string; expected?: string; actual?: string }>;
}

// `aiEval/runComplete`: the row, what started the run, the line to show and, after an earlier run
// of the same cases file, what changed; a run on save also carries its cases as shown. A site's run
// (`trigger: "site"`, a row the site inserted) carries its id on the site, whether its average fell
// more than `site.regressionTolerance`, and the project folder whose results hold it.
export interface RunComplete extends ResultRow {
  trigger: "command" | "save" | "site";
  summary: string;
  casesUri?: string;
  change?: Change;
  cases?: Record<string, CaseShown>;
  siteId?: number;
  regressed?: boolean;
  projectUri?: string;
}

// A run as the server's commands take it (`aiEval.diff`'s `base` and `head`): a local run id, or
// a name such as `site:412`.
export type RunName = number | string;

export interface RunPair {
  base: RunName;
  head: RunName;
}

// The fields of the result row (SPEC section 3), in its order: what the results view lists.
const ROW_FIELDS: Array<keyof ResultRow> = [
  "id", "target_id", "run_id", "timestamp", "avg_score", "pass_rate", "pass_rate_ci_low", "pass_rate_ci_high",
  "passed_gate", "question_count", "error_count", "scores_json", "source", "duration", "config_json",
];

export function rowDetails(row: ResultRow): Array<[string, string]> {
  return ROW_FIELDS.map((key) => [key, row[key] === null ? "null" : String(row[key])]);
}

// A notification and the history panel its button opens: of `target`, read from the results of
// the project holding `uri`, on `diff` when there is one to offer ("Show Diff"; else "Show History").
export interface Notice {
  text: string;
  warning: boolean;
  target: string;
  uri?: string;
  diff?: RunPair;
}

// What to tell the user of a finished run: a run the user started, always; a run on save, only
// when a case flipped (nothing is shown when nothing did); a site's run, always, warning when it
// regressed.
export function runNotice(run: RunComplete): Notice | undefined {
  const text = `AI Eval: ${run.summary}`;
  if (run.trigger === "site") return { text, warning: run.regressed === true, target: run.target_id, uri: run.projectUri };
  const flipped = run.change?.flipped.length ?? 0;
  if (run.trigger === "save" && flipped === 0) return undefined;
  const diff = flipped && run.change ? { base: run.change.base.run_id, head: run.change.head.run_id } : undefined;
  return { text, warning: run.passed_gate !== 1 || flipped > 0, target: run.target_id, uri: run.casesUri, diff };
}

// `kinds`: the server's line for the active file's project (`aiEval.render` of "kinds").
export function statusText(state: "starting" | "running" | "stopped", kinds?: string): string {
  return `$(beaker) AI Eval: ${state === "running" && kinds ? kinds : state}`;
}
