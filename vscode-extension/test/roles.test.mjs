import assert from "node:assert/strict";
import { test } from "node:test";
import { AI_EVAL_LANGUAGE, DOCUMENT_SELECTOR, languageForRole } from "../dist-test/roles.mjs";

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
