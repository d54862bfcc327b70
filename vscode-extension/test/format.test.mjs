import assert from "node:assert/strict";
import { test } from "node:test";
import { interval, rowDetails, runSummary, statusText } from "../dist-test/format.mjs";

const row = {
  id: 7, target_id: "support_tone", run_id: 3, timestamp: 1795984870, avg_score: 2.5, pass_rate: 0.5,
  pass_rate_ci_low: 0.0945, pass_rate_ci_high: 0.9055, passed_gate: 1, question_count: 2, error_count: 0,
  scores_json: "{\"a\": 5.0, \"b\": 0.0}", source: "editor", duration: 0.12, config_json: null,
};

test("a run reads as pass rate, interval, average and gate", () => {
  assert.equal(runSummary(row), "support_tone: pass rate 0.50 (95% CI 0.09–0.91), average 2.50/5, gate passed");
});

test("errors and a failed gate are said", () => {
  assert.equal(
    runSummary({ ...row, passed_gate: 0, error_count: 1 }),
    "support_tone: pass rate 0.50 (95% CI 0.09–0.91), average 2.50/5, gate FAILED, 1 of 2 cases errored",
  );
});

test("no scored case has no interval", () => {
  assert.equal(interval({ ...row, pass_rate_ci_low: null, pass_rate_ci_high: null }), "no interval");
});

test("the results view shows every field of the row", () => {
  const details = Object.fromEntries(rowDetails(row));
  assert.equal(Object.keys(details).length, 15);
  assert.equal(details.config_json, "null");
  assert.equal(details.pass_rate_ci_low, "0.0945");
});

test("the status bar counts the kinds plugins add", () => {
  const defs = Object.fromEntries([..."abcdefghijklmn"].map((c) => [`check_${c}`, {}]).concat([["check_base", {}], ["scoring", {}], ["check_word_count", {}]]));
  assert.equal(statusText("running", { $defs: defs }), "$(beaker) AI Eval: 15 kinds, 1 from plugins");
  assert.equal(statusText("starting"), "$(beaker) AI Eval: starting");
});
