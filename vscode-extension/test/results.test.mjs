import assert from "node:assert/strict";
import { test } from "node:test";
import { caseResult, diffHtml, historyHtml, trendSvg } from "../dist-test/results.mjs";

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

test("the trend has a point per run and a band only where there is an interval", () => {
  const svg = trendSvg([row(1, 0.5, 2.5), row(2, 1, 5, null, null), row(3, 0, 0)]);
  const points = (cls) => svg.match(new RegExp(`class="${cls}" points="([^"]*)"`))[1].split(" ");
  assert.equal(points("rate").length, 3);
  assert.equal(points("score").length, 3);
  assert.equal(points("band").length, 4); // runs 1 and 3, high then low
  assert.deepEqual(points("rate")[0], "28.0,90.0"); // run 1: x at the left edge, 0.5 halfway up
});

test("a diff marks flipped cases and escapes case ids", () => {
  const html = diffHtml({
    target: "tone", base: row(1, 0.5, 2.5), head: row(2, 0.5, 2.5), notice: null,
    cases: [{ caseId: "<a>", base: { score: 5, passed: true }, head: { score: 0, passed: false } }, { caseId: "new", base: null, head: { score: null, passed: null } }],
    flipped: ["<a>"], deltas: { pass_rate: 0, avg_score: 0 }, mcnemar_p: 1, sign_test_p: 1,
  });
  assert.match(html, /<tr class="flipped"><td>&lt;a&gt;<\/td><td>pass 5.00<\/td><td>fail 0.00<\/td><td>flipped to fail<\/td><\/tr>/);
  assert.match(html, /<td>new<\/td><td>–<\/td><td>error<\/td><td>new<\/td>/);
  assert.match(html, /1 verdict flipped; exact McNemar p = 1.00/);
});

test("the history panel loads nothing and runs only its own script", () => {
  const html = historyHtml("tone", [row(2, 1, 5), row(1, 0.5, 2.5)], undefined, "abc", "vscode-resource:");
  assert.match(html, /default-src 'none'; style-src vscode-resource: 'unsafe-inline'; script-src 'nonce-abc';/);
  assert.equal((html.match(/<script/g) ?? []).length, 1);
  assert.match(html, /<script nonce="abc">/);
  assert.doesNotMatch(html, /src="|href="|url\(/);
  assert.match(html, /<option value="2">run 2 \(/);
  assert.match(html, /One run so far: nothing to compare/);
});
