import assert from "node:assert/strict";
import { test } from "node:test";
import { caseResult, historyHtml } from "../dist-test/results.mjs";

const row = (run_id, pass_rate, avg_score, low = 0.1, high = 0.9) => ({
  id: run_id, target_id: "tone", run_id, timestamp: 1796000000 + run_id * 60, avg_score, pass_rate,
  pass_rate_ci_low: low, pass_rate_ci_high: high, passed_gate: 1, question_count: 2, error_count: 0,
  scores_json: "{}", source: "editor", duration: 0.1, config_json: null,
});

const failing = {
  score: 0, passed: false, reason: "all_pass: 1 of 2 checks passed | failed: length (1 words, minimum 3)", skipped: [],
  outcomes: [
    { checkId: "apologises", kind: "must_contain_any", score: 1, passed: true, reason: "found sorry" },
    { checkId: "length", kind: "word_count", score: 0, passed: false, reason: "1 words, minimum 3" },
  ],
};
const passing = { ...failing, score: 1, passed: true, outcomes: [] };

test("a failed case says which checks failed, with its score", () => {
  const answer = { row: row(1, 0, 0), verdicts: { curt: failing } };
  assert.deepEqual(caseResult("curt", answer), {
    state: "failed", messages: [{ text: "fail (0.00/5)" }, { text: "length: 1 words, minimum 3" }],
  });
});

test("a case with expect passes when its verdict is the one expected, and shows both when not", () => {
  const answer = { row: row(1, 0, 0), verdicts: { curt: failing, polite: failing }, expected: { curt: "fail", polite: "pass" } };
  assert.deepEqual(caseResult("curt", answer), { state: "passed", messages: [] });
  assert.deepEqual(caseResult("polite", answer), {
    state: "failed",
    messages: [{ text: "expected pass, got fail (0.00/5)", expected: "pass", actual: "fail" }, { text: "length: 1 words, minimum 3" }],
  });
  assert.deepEqual(caseResult("polite", { ...answer, verdicts: { polite: passing } }), { state: "passed", messages: [] });
});

test("an errored case is an error with its cause", () => {
  const answer = { row: row(1, 0, 0), verdicts: { broken: null }, errors: { broken: "the case has no `response` string" } };
  assert.deepEqual(caseResult("broken", answer), { state: "errored", messages: [{ text: "the case has no `response` string" }] });
});

test("the history panel frames the server's history and diff, loads nothing and runs only its own script", () => {
  const history = '<h2>tone: 2 runs, newest first</h2><svg xmlns="http://www.w3.org/2000/svg"></svg><table></table>';
  const html = historyHtml("tone", history, "<pre>tone: run 1 -> run 2</pre>", { runIds: [2, 1], base: 1, head: 2 }, "abc", "vscode-resource:");
  assert.match(html, /default-src 'none'; style-src vscode-resource: 'unsafe-inline'; script-src 'nonce-abc';/);
  assert.equal((html.match(/<script/g) ?? []).length, 1);
  assert.match(html, /<script nonce="abc">/);
  assert.doesNotMatch(html, /src="|href="|url\(/);
  assert.ok(html.includes(`<div id="history">${history}</div>`));
  assert.match(html, /<option value="1" selected>run 1<\/option>/);
  assert.match(html, /<div id="diff"><pre>tone: run 1 -> run 2<\/pre><\/div>/);
  const single = historyHtml("tone", history, undefined, { runIds: [1] }, "abc", "vscode-resource:");
  assert.match(single, /One run so far: nothing to compare/);
});
