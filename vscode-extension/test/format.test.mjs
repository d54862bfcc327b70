import assert from "node:assert/strict";
import { test } from "node:test";
import { rowDetails, runNotice, statusText } from "../dist-test/format.mjs";

const row = {
  id: 7, target_id: "support_tone", run_id: 3, timestamp: 1795984870, avg_score: 2.5, pass_rate: 0.5,
  pass_rate_ci_low: 0.0945, pass_rate_ci_high: 0.9055, passed_gate: 1, question_count: 2, error_count: 0,
  scores_json: "{\"a\": 5.0, \"b\": 0.0}", source: "editor", duration: 0.12, config_json: null,
};
const line = "support_tone: pass rate 0.50 [0.09, 0.91], average 2.50/5, gate passed, 2 cases, 0 errors";
const change = (flipped) => ({ target: "support_tone", base: { ...row, run_id: 2 }, head: row, flipped });

const casesUri = "file:///work/tone.cases.yaml";

test("a run the user started is shown with the server's line, and a failed gate warns", () => {
  assert.deepEqual(runNotice({ ...row, trigger: "command", summary: line, casesUri }), {
    text: `AI Eval: ${line}`, warning: false, target: "support_tone", uri: casesUri, diff: undefined,
  });
  assert.equal(runNotice({ ...row, passed_gate: 0, trigger: "command", summary: line }).warning, true);
});

test("a run on save is shown only when a case flipped, with the diff to offer", () => {
  assert.equal(runNotice({ ...row, trigger: "save", summary: line }), undefined); // a first run
  assert.equal(runNotice({ ...row, trigger: "save", summary: line, change: change([]) }), undefined);
  const flipped = "support_tone: 1 case now fails: curt";
  assert.deepEqual(runNotice({ ...row, trigger: "save", summary: flipped, change: change(["curt"]), casesUri }), {
    text: `AI Eval: ${flipped}`, warning: true, target: "support_tone", uri: casesUri, diff: { base: 2, head: 3 },
  });
});

// A row the site inserted, as the server sends it: the site's id, `run_id` null on the Drush path.
const siteRun = {
  ...row, id: 3, siteId: 3, target_id: "support_bot", run_id: null, passed_gate: 0, source: "drush", trigger: "site",
  summary: "site run 3 of support_bot: pass rate 0.00 [0.00, 0.20], average 1.50/5, gate failed, 2 questions, 0 errors; average -2.50 against site run 2",
  regressed: true, projectUri: "file:///work/shop",
};

test("a site's run is always shown with the server's line, opening its target's history in its project", () => {
  assert.deepEqual(runNotice(siteRun), {
    text: `AI Eval: ${siteRun.summary}`, warning: true, target: "support_bot", uri: "file:///work/shop",
  });
  // a failed gate alone is the site's usual state: it warns only when the server says it regressed
  assert.equal(runNotice({ ...siteRun, regressed: false }).warning, false);
});

test("the results view shows every field of the row and nothing else", () => {
  const details = Object.fromEntries(rowDetails({ ...row, trigger: "save", summary: line, change: change([]) }));
  assert.equal(Object.keys(details).length, 15);
  assert.equal(details.config_json, "null");
  assert.equal(details.pass_rate_ci_low, "0.0945");
  assert.equal(details.summary, undefined);
});

test("the status bar shows the server's kinds line once it runs", () => {
  const kinds = "23 kinds: 14 core, 1 from plugins, 8 from Drupal modules";
  assert.equal(statusText("running", kinds), `$(beaker) AI Eval: ${kinds}`);
  assert.equal(statusText("running"), "$(beaker) AI Eval: running");
  assert.equal(statusText("starting"), "$(beaker) AI Eval: starting");
});
