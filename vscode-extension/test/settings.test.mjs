import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { SERVER_SETTINGS, configurationAnswer, serverSettings } from "../dist-test/settings.mjs";

const manifest = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"));

// The `aiEval` section as VS Code's configuration API returns it: dotted keys nested.
const section = {
  interpreter: "/venv/bin/python",
  rubricGlobs: ["evals/**/*.yaml"],
  runTimeoutSeconds: 20,
  drupal: { root: "web" },
  php: { command: ["ddev", "exec", "php"], run: true },
  site: { database: "mysql://reader:secret@127.0.0.1:3307/drupal", pollSeconds: 5 },
  trace: { server: "off" },
};

test("the server gets its own keys, nested, and none of the client's", () => {
  assert.deepEqual(serverSettings(section, true), {
    rubricGlobs: ["evals/**/*.yaml"],
    runTimeoutSeconds: 20,
    drupal: { root: "web" },
    php: { command: ["ddev", "exec", "php"], run: true },
    site: { database: "mysql://reader:secret@127.0.0.1:3307/drupal", pollSeconds: 5 },
  });
  assert.deepEqual(serverSettings(undefined, true), {});
});

test("in a workspace VS Code does not trust, PHP never runs, whatever the settings say", () => {
  assert.deepEqual(serverSettings(section, false).php, { command: ["ddev", "exec", "php"], run: false });
  assert.deepEqual(serverSettings({}, false), { php: { run: false }, workspaceTrusted: false });
});

test("every workspace/configuration answer is shaped, for the section, a part of it, or everything", () => {
  assert.deepEqual(configurationAnswer("aiEval", section, false), serverSettings(section, false));
  assert.deepEqual(configurationAnswer("aiEval.php", { command: "php", run: true }, false), { command: "php", run: false });
  assert.equal(configurationAnswer("aiEval.php.run", true, false), false);
  assert.equal(configurationAnswer("aiEval.php.run", true, true), true);
  assert.equal(configurationAnswer("aiEval.interpreter", "/venv/bin/python", true), null);
  const everything = configurationAnswer(undefined, { aiEval: section, editor: { tabSize: 2 } }, false);
  assert.deepEqual(everything.editor, { tabSize: 2 });
  assert.equal(everything.aiEval.php.run, false);
  assert.equal(everything.aiEval.interpreter, undefined);
  assert.deepEqual(configurationAnswer("yaml", { validate: true }, false), { validate: true });
});

test("package.json declares every setting the server gets, and restricts the ones that start programs or read a database", () => {
  const declared = Object.keys(manifest.contributes.configuration.properties);
  for (const key of SERVER_SETTINGS) assert.ok(declared.includes(`aiEval.${key}`), key);
  const trust = manifest.capabilities.untrustedWorkspaces;
  assert.equal(trust.supported, "limited");
  for (const key of ["aiEval.interpreter", "aiEval.php.command", "aiEval.php.run", "aiEval.site.database"]) {
    assert.ok(trust.restrictedConfigurations.includes(key), key);
  }
});

test("rubrics by name alone are the AI Eval language's; the server decides the rest", () => {
  const [language] = manifest.contributes.languages;
  assert.deepEqual(language.filenamePatterns, ["*.rubric.yaml", "*.rubric.yml", "*.cases.yaml", "*.cases.yml"]);
  assert.ok(manifest.activationEvents.includes("onLanguage:yaml"));
});
