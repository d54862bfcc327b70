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

// A case on one side of a diff: its 0..5 score (null: errored) and verdict. A site question's
// verdict is null where the server cannot tell it (a tie at its row's pass line, SPEC section 3):
// unknown, never a pass or a fail, and never a flip.
export interface DiffSide {
  score: number | null;
  passed: boolean | null;
}

// SPEC section 5's diff JSON, as far as this client reads it: two runs of one cases file. What
// flipped is the server's `flipped`; the client never compares the two sides itself.
export interface Change {
  target: string;
  base: LocalRow;
  head: LocalRow;
  cases?: Array<{ caseId: string; base: DiffSide | null; head: DiffSide | null }>;
  flipped: string[];
}

// A case of a run as the server renders it (a run answer's `cases`): the state to show and its
// lines, in the words `ai-eval-lsp run` prints; `expected` and `actual` make a diff.
export interface CaseShown {
  state: "passed" | "failed" | "errored";
  messages: Array<{ text: string; expected?: string; actual?: string }>;
}

// A run as a person reads it, fact by fact, in the server's words: `["date", "2026-05-28 20:46
// UTC"]`, `["pass rate", "0.62 [0.49, 0.74]"]`, the average, gate, cases or questions, errors and
// source.
export type Facts = Array<[string, string]>;

// A site's run as the server gives it (each row of `aiEval.siteRuns`, and `aiEval/runComplete`
// with `trigger: "site"`): the row, its id on the site, the server's line and facts for it,
// whether its average fell more than `site.regressionTolerance` below the site's run before it,
// and the project folder whose results hold it.
export interface SiteRun extends ResultRow {
  siteId: number;
  summary?: string;
  facts?: Facts;
  regressed?: boolean;
  projectUri?: string;
}

// `aiEval.siteRuns`'s answer: the site's runs newest first, or a note on why there are none (or
// why the site could not be read just now).
export interface SiteRunsAnswer {
  rows: SiteRun[];
  note?: string;
}

// `aiEval/runComplete`: the row, what started the run, the line to show and its facts, after an earlier run
// of the same cases file, what changed; a run on save also carries its cases as shown. A site's run
// (`trigger: "site"`, a row the site inserted) carries what `SiteRun` holds.
export interface RunComplete extends ResultRow {
  trigger: "command" | "save" | "site";
  summary: string;
  facts?: Facts;
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

// A run as the runs view lists it: one line (which run, then beside it what stands out, a
// regression or flips, before its date, so a narrow side bar still shows it; the server's line as
// its tooltip) and an icon: a warning for a site's run that regressed, else its gate.
export interface RunLine {
  label: string;
  description: string;
  tooltip: string;
  icon: "warning" | "pass" | "error";
}

const SITE_ID = "siteId";

type Listed = ResultRow & { siteId?: number; summary?: string; facts?: Facts; regressed?: boolean; change?: Change };

const isSiteRun = (row: Listed): row is SiteRun => typeof row[SITE_ID] === "number";

export function runLine(run: Listed): RunLine {
  const flipped = run.change?.flipped.length ?? 0;
  const site = isSiteRun(run);
  const marked = site ? (run.regressed ? "regressed" : "") : flipped ? `${flipped} flipped` : "";
  const date = run.facts?.find(([name]) => name === "date")?.[1];
  return {
    label: site ? `site run ${run.siteId} of ${run.target_id}` : `run ${run.run_id} of ${run.target_id}`,
    description: [marked, date].filter(Boolean).join(", "),
    tooltip: run.summary ?? "",
    icon: site && run.regressed ? "warning" : run.passed_gate === 1 ? "pass" : "error",
  };
}

// What a person reads of a run, expanded in the runs view: the server's facts and what flipped,
// never the row's raw columns.
export function runFacts(run: Listed): Facts {
  const facts: Facts = [...(run.facts ?? [])];
  const flipped = run.change?.flipped ?? [];
  if (flipped.length) facts.push(["flipped", flipped.join(", ")]);
  return facts;
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
  if (run.trigger === "site") {
    // The warning says it in words too, whether or not the server's line does.
    const regressed = run.regressed === true;
    const said = regressed && !/\bregressed\b/.test(run.summary) ? `AI Eval: regressed: ${run.summary}` : text;
    return { text: said, warning: regressed, target: run.target_id, uri: run.projectUri };
  }
  const flipped = run.change?.flipped.length ?? 0;
  if (run.trigger === "save" && flipped === 0) return undefined;
  const diff = flipped && run.change ? { base: run.change.base.run_id, head: run.change.head.run_id } : undefined;
  return { text, warning: run.passed_gate !== 1 || flipped > 0, target: run.target_id, uri: run.casesUri, diff };
}

// `kinds`: the server's line for the active file's project (`aiEval.render` of "kinds").
export function statusText(state: "starting" | "running" | "stopped", kinds?: string): string {
  return `$(beaker) AI Eval: ${state === "running" && kinds ? kinds : state}`;
}
