import assert from "node:assert/strict";
import { test } from "node:test";
import { AI_EVAL_LANGUAGE, DOCUMENT_SELECTOR, historyTargets, languageForRole } from "../dist-test/roles.mjs";

test("the server sees every YAML document, saved or untitled, and the AI Eval language", () => {
  assert.deepEqual(DOCUMENT_SELECTOR, [
    { language: "yaml", scheme: "file" },
    { language: "yaml", scheme: "untitled" },
    { language: "ai-eval-yaml", scheme: "file" },
    { language: "ai-eval-yaml", scheme: "untitled" },
  ]);
});

test("a YAML document the server names a rubric or cases file switches to the AI Eval language", () => {
  assert.equal(languageForRole("rubric", "yaml", false), AI_EVAL_LANGUAGE);
  assert.equal(languageForRole("cases", "yaml", false), AI_EVAL_LANGUAGE);
});

test("a document already in the AI Eval language, or in another language, is left alone", () => {
  assert.equal(languageForRole("rubric", AI_EVAL_LANGUAGE, true), undefined);
  assert.equal(languageForRole("rubric", "plaintext", false), undefined);
  assert.equal(languageForRole(null, "yaml", false), undefined);
});

test("only a document the extension switched goes back to YAML when it stops being a rubric", () => {
  assert.equal(languageForRole(null, AI_EVAL_LANGUAGE, true), "yaml");
  assert.equal(languageForRole(null, AI_EVAL_LANGUAGE, false), undefined); // by its name, or by the user
});

test("Show Run History offers a cases file's rubric and the site target it mirrors, a rubric its own id", () => {
  const cases = "# mirrors the site's bot\nrubric: 'support_tone@1.2'\ngate: {pass_rate: 0.5}\nsite_target: support_bot  # the site's\ncases:\n  - id: a\n    rubric: nested\n";
  assert.deepEqual(historyTargets("cases", cases), [
    { target: "support_tone", what: "the rubric these cases run" },
    { target: "support_bot", what: "the site target these cases mirror" },
  ]);
  assert.deepEqual(historyTargets("cases", "rubric: support_tone\ncases: []\n"), [{ target: "support_tone", what: "the rubric these cases run" }]);
  assert.deepEqual(historyTargets("rubric", 'version: "1.0"\nid: "support_tone"\nchecks: []\n'), [{ target: "support_tone", what: "this rubric" }]);
  // a file the server did not name, or one with nothing to offer: the user names the target
  assert.deepEqual(historyTargets(undefined, "rubric: support_tone\n"), []);
  assert.deepEqual(historyTargets("cases", "cases: []\n"), []);
});
