// How runs look to the user; pure, so node's test runner checks them.

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

export function interval(row: ResultRow): string {
  if (row.pass_rate_ci_low === null || row.pass_rate_ci_high === null) {
    return "no interval";
  }
  return `95% CI ${row.pass_rate_ci_low.toFixed(2)}–${row.pass_rate_ci_high.toFixed(2)}`;
}

export function runSummary(row: ResultRow): string {
  const gate = row.passed_gate === 1 ? "gate passed" : "gate FAILED";
  const errors = row.error_count ? `, ${row.error_count} of ${row.question_count} cases errored` : "";
  return `${row.target_id}: pass rate ${row.pass_rate.toFixed(2)} (${interval(row)}), average ${row.avg_score.toFixed(2)}/5, ${gate}${errors}`;
}

export function rowDetails(row: ResultRow): Array<[string, string]> {
  return Object.entries(row).map(([key, value]) => [key, value === null ? "null" : String(value)]);
}

const CORE_KINDS = 14;

export function statusText(state: "starting" | "running" | "stopped", schema?: { $defs?: Record<string, unknown> }): string {
  if (state !== "running" || !schema) {
    return `$(beaker) AI Eval: ${state}`;
  }
  const kinds = Object.keys(schema.$defs ?? {}).filter((name) => name.startsWith("check_") && name !== "check_base").length;
  const extra = Math.max(0, kinds - CORE_KINDS);
  return `$(beaker) AI Eval: ${kinds} kinds, ${extra} from plugins`;
}
