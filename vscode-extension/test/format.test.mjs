import assert from "node:assert/strict";
import { test } from "node:test";
import { runFacts, runLine, runNotice, statusText } from "../dist-test/format.mjs";

const row = {
  id: 7, target_id: "support_tone", run_id: 3, timestamp: 1795984870, avg_score: 2.5, pass_rate: 0.5,
  pass_rate_ci_low: 0.0945, pass_rate_ci_high: 0.9055, passed_gate: 1, question_count: 2, error_count: 0,
  scores_json: "{\"a\": 5.0, \"b\": 0.0}", source: "editor", duration: 0.12, config_json: null,
};
const line = "support_tone: pass rate 0.50 [0.09, 0.91], average 2.50/5, gate passed, 2 cases, 0 errors";
// The run as the server words it, fact by fact (`facts` of `aiEval/runComplete` and `aiEval.siteRuns`).
const facts = [
  ["date", "2026-11-29 20:41 UTC"], ["pass rate", "0.50 [0.09, 0.91]"], ["average", "2.50/5"], ["gate", "passed"],
  ["cases", "2"], ["errors", "0"], ["source", "editor"],
];
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
const siteFacts = [
  ["date", "2026-11-29 20:41 UTC"], ["pass rate", "0.00 [0.00, 0.20]"], ["average", "1.50/5"], ["gate", "failed"],
  ["questions", "2"], ["errors", "0"], ["source", "drush"],
];
const siteRun = {
  ...row, id: 3, siteId: 3, target_id: "support_bot", run_id: null, passed_gate: 0, source: "drush", trigger: "site", facts: siteFacts,
  summary: "site run 3 of support_bot: pass rate 0.00 [0.00, 0.20], average 1.50/5, gate failed, 2 questions, 0 errors; average -2.50 against site run 2",
  regressed: true, projectUri: "file:///work/shop",
};

test("a site's run is always shown with the server's line, opening its target's history in its project", () => {
  assert.deepEqual(runNotice({ ...siteRun, regressed: false }), {
    text: `AI Eval: ${siteRun.summary}`, warning: false, target: "support_bot", uri: "file:///work/shop",
  });
});

test("a site's run that regressed is a warning that says so, once, whatever the server's line says", () => {
  // a failed gate alone is the site's usual state: it warns only when the server says it regressed
  assert.deepEqual(runNotice(siteRun), {
    text: `AI Eval: regressed: ${siteRun.summary}`, warning: true, target: "support_bot", uri: "file:///work/shop",
  });
  const said = "site run 3 of support_bot: pass rate 0.00 [0.00, 0.20], average 1.50/5; regressed: average -2.50 against site run 2";
  assert.equal(runNotice({ ...siteRun, summary: said }).text, `AI Eval: ${said}`);
});

// SPEC section 5's diff JSON as the server sends it in `change`, with a site question's verdict it
// cannot tell (a tie at its row's pass line): `passed` null on one side.
const unknownVerdict = {
  target: "support_tone", base: { ...row, run_id: 2 }, head: row,
  cases: [
    { caseId: "q1", base: { score: 5.0, passed: true }, head: { score: 4.0, passed: null } },
    { caseId: "q2", base: { score: 4.0, passed: null }, head: { score: 4.0, passed: null } },
    { caseId: "q3", base: { score: 0.0, passed: false }, head: { score: 5.0, passed: true } },
  ],
  deltas: { pass_rate: 0.0, avg_score: 0.0 }, mcnemar_p: 1, sign_test_p: 1,
};

test("an unknown verdict (passed: null) is never a flip: the client counts the server's `flipped` alone", () => {
  // pass -> unknown is no flip: a save that changed only that shows nothing
  assert.equal(runNotice({ ...row, trigger: "save", summary: line, change: { ...unknownVerdict, flipped: [] } }), undefined);
  const [base, head] = [unknownVerdict.cases[0].base, unknownVerdict.cases[0].head];
  assert.notEqual(base.passed, head.passed); // the sides differ, and still nothing flipped
  // q3 went fail -> pass: the server's one flip, the only one shown and listed
  const flipped = { ...unknownVerdict, flipped: ["q3"] };
  const notice = runNotice({ ...row, trigger: "save", summary: "support_tone: 1 case fixed: q3", change: flipped, casesUri });
  assert.deepEqual(notice.diff, { base: 2, head: 3 });
  assert.equal(runLine({ ...row, facts, change: flipped }).description, "1 flipped, 2026-11-29 20:41 UTC");
  assert.deepEqual(runFacts({ ...row, facts, change: flipped }).at(-1), ["flipped", "q3"]);
});

test("the runs view lists a run in one line: which, what stands out (regressed, flips), when; its icon", () => {
  assert.deepEqual(runLine(siteRun), {
    label: "site run 3 of support_bot", description: "regressed, 2026-11-29 20:41 UTC", tooltip: siteRun.summary, icon: "warning",
  });
  // a failed gate alone is the site's usual state: its icon says it, nothing more
  assert.deepEqual(runLine({ ...siteRun, regressed: false }), {
    label: "site run 3 of support_bot", description: "2026-11-29 20:41 UTC", tooltip: siteRun.summary, icon: "error",
  });
  assert.deepEqual(runLine({ ...row, trigger: "command", summary: line, facts }), {
    label: "run 3 of support_tone", description: "2026-11-29 20:41 UTC", tooltip: line, icon: "pass",
  });
});

test("a run expanded shows the server's facts, never the row's raw columns", () => {
  assert.deepEqual(runFacts(siteRun), siteFacts);
  assert.deepEqual(runFacts({ ...row, trigger: "command", summary: line, facts }), facts);
  assert.deepEqual(runFacts({ ...row, trigger: "command", summary: line }), []); // a server that sends none
  const shown = JSON.stringify(runFacts(siteRun));
  for (const column of ["timestamp", "run_id", "scores_json", "config_json", "passed_gate", "1795984870"]) {
    assert.ok(!shown.includes(column), column);
  }
});

test("the status bar shows the server's kinds line once it runs", () => {
  const kinds = "23 kinds: 14 core, 1 from plugins, 8 from Drupal modules";
  assert.equal(statusText("running", kinds), `$(beaker) AI Eval: ${kinds}`);
  assert.equal(statusText("running"), "$(beaker) AI Eval: running");
  assert.equal(statusText("starting"), "$(beaker) AI Eval: starting");
});
