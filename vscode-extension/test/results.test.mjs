import assert from "node:assert/strict";
import { test } from "node:test";
import { caseShown, historyHtml, paragraph } from "../dist-test/results.mjs";

// What the server sends for a run's cases (`cases` of `aiEval.runCases`'s answer): its words.
const cases = {
  polite: { state: "passed", messages: [] },
  curt: { state: "passed", messages: [{ text: "fail 0.00/5  all_pass: 0 of 2 checks passed | failed: apologises (none of the values found)" }] },
  rude: {
    state: "failed",
    messages: [
      { text: "fail 0.00/5  all_pass: 0 of 2 checks passed | failed: apologises (none of the values found)" },
      { text: "expected pass, which it did not get", expected: "pass", actual: "fail" },
    ],
  },
  broken: { state: "errored", messages: [{ text: "ERROR the case has no `response` string" }] },
};

test("a case shows the state and the lines the server gives it, as they come", () => {
  for (const caseId of Object.keys(cases)) assert.deepEqual(caseShown(cases, caseId), cases[caseId]);
});

test("a case the run does not name is an error that says so", () => {
  const missing = { state: "errored", messages: [{ text: "the run has no result for `renamed`" }] };
  assert.deepEqual(caseShown(cases, "renamed"), missing);
  assert.deepEqual(caseShown(undefined, "renamed"), missing); // a server older than the extension
});

test("the history panel frames the server's history and diff, loads nothing and runs only its own script", () => {
  const history = '<h2>tone: 2 runs, newest first</h2><svg xmlns="http://www.w3.org/2000/svg"></svg><table></table>';
  const runs = [{ name: 2, label: "run 2" }, { name: 1, label: "run 1" }];
  const html = historyHtml("tone", history, "<pre>tone: run 1 -> run 2</pre>", { runs, base: 1, head: 2 }, "abc", "vscode-resource:");
  assert.match(html, /default-src 'none'; style-src vscode-resource: 'unsafe-inline'; script-src 'nonce-abc';/);
  assert.equal((html.match(/<script/g) ?? []).length, 1);
  assert.match(html, /<script nonce="abc">/);
  assert.doesNotMatch(html, /src="|href="|url\(/);
  assert.ok(html.includes(`<div id="history">${history}</div>`));
  assert.match(html, /<option value="1" selected>run 1<\/option>/);
  assert.match(html, /<div id="diff"><pre>tone: run 1 -> run 2<\/pre><\/div>/);
  assert.match(html, /pre \{ white-space: pre-wrap; overflow-wrap: anywhere; \}/); // a diff's lines wrap
  assert.match(html, /td, th \{[^}]*white-space: nowrap;/); // a table's cells do not
});

test("the runs to compare are the server's, by its names and labels, the site's among them", () => {
  const runs = [{ name: "site:3", label: "site run 3" }, { name: 4, label: "run 4" }, { name: "site:2", label: "site run 2" }];
  const html = historyHtml("support_bot", "", "", { runs, base: "site:2", head: "site:3" }, "abc", "vscode-resource:");
  const [base, head] = html.match(/<select id="\w+">.*?<\/select>/g);
  assert.equal(base, '<select id="base"><option value="site:3">site run 3</option><option value="4">run 4</option><option value="site:2" selected>site run 2</option></select>');
  assert.match(head, /<option value="site:3" selected>site run 3<\/option>/);
  // the script posts the names picked as they are: the server reads `4` and `site:2` alike
  assert.match(html, /vscode\.postMessage\(\{ base: document\.getElementById\("base"\)\.value, head: document\.getElementById\("head"\)\.value \}\)/);
});

test("the server's note stands where the diff would, as text", () => {
  const note = "No run before run 3 (it ran <u>.cases.yaml) has a case in common with it";
  assert.equal(paragraph(note), "<p>No run before run 3 (it ran &lt;u&gt;.cases.yaml) has a case in common with it</p>");
});
