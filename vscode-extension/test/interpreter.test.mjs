import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import {
  PROBE, bundledServerMessage, chooseInterpreter, missingServerMessage, parseProbe, serverCommand, unusableInterpreterMessage, withPythonPath,
} from "../dist-test/interpreter.mjs";

test("the aiEval.interpreter setting comes first", () => {
  assert.deepEqual(chooseInterpreter(" /venv/bin/python ", "/usr/bin/python3.12"), { python: "/venv/bin/python", source: "setting" });
});

test("then the Python extension's active interpreter", () => {
  assert.deepEqual(chooseInterpreter("", "/work/.venv/bin/python"), { python: "/work/.venv/bin/python", source: "python extension" });
  assert.deepEqual(chooseInterpreter(undefined, "/work/.venv/bin/python"), { python: "/work/.venv/bin/python", source: "python extension" });
});

test("then python3", () => {
  assert.deepEqual(chooseInterpreter(undefined, undefined), { python: "python3", source: "default" });
  assert.deepEqual(chooseInterpreter("  ", ""), { python: "python3", source: "default" });
});

test("the server starts with -P, so the workspace never lands on sys.path", () => {
  assert.deepEqual(serverCommand("/venv/bin/python"), { command: "/venv/bin/python", args: ["-P", "-m", "ai_eval_lsp", "serve"] });
});

test("the probe tells a real Python's version, platform, and whether it has the server", () => {
  const probe = parseProbe(execFileSync("python3", ["-P", "-c", PROBE], { cwd: "/", encoding: "utf8", env: { ...process.env, PYTHONPATH: "" } }));
  assert.equal(probe.implementation, "cpython");
  assert.equal(probe.version[0], 3);
  assert.equal(typeof probe.machine, "string");
  assert.equal(probe.platform, "linux");
  assert.ok(probe.server === null || typeof probe.server === "string");
  assert.throws(() => parseProbe("{}"), /unexpected answer/);
});

test("the bundled site goes before the user's PYTHONPATH, which stays", () => {
  assert.equal(withPythonPath({ PATH: "/bin" }, "/s/site").PYTHONPATH, "/s/site");
  assert.deepEqual(withPythonPath({ PATH: "/bin", PYTHONPATH: "/mine" }, "/s/site"), { PATH: "/bin", PYTHONPATH: "/s/site:/mine" });
  assert.equal(withPythonPath({ PYTHONPATH: "C:\\mine" }, "C:\\s\\site", ";").PYTHONPATH, "C:\\s\\site;C:\\mine");
});

// A notification is read in one glance: one short sentence, no path (the details have them).
function glanceable(message) {
  assert.ok(message.text.length <= 100, message.text);
  assert.doesNotMatch(message.text, /[.!?;] /); // one sentence
  assert.doesNotMatch(message.text, /\//);
}

test("a missing server says so in a sentence, and in the details where and how to install it and why the bundle did not serve", () => {
  const message = missingServerMessage({ python: "/venv/bin/python", source: "setting" });
  glanceable(message);
  assert.equal(message.text, "AI Eval cannot start: the aiEval.interpreter Python has no ai-eval-lsp.");
  assert.match(message.details, /not installed for \/venv\/bin\/python \(setting\)\. Install it where your ai_eval plugins are: \/venv\/bin\/python -m pip install ai-eval-lsp, or point/);
  const unserved = missingServerMessage({ python: "python3", source: "default" }, "it is built for CPython 3.11 on Linux x86_64 with glibc, and this is CPython 3.10");
  glanceable(unserved);
  assert.equal(unserved.text, "AI Eval cannot start: python3 has no ai-eval-lsp, and the bundled one does not fit it.");
  assert.match(unserved.details, /bundled with this extension cannot run there: it is built for CPython 3\.11 .* this is CPython 3\.10\. Install it/);
  assert.match(unserved.details, /python3 -m pip install ai-eval-lsp,/);
});

test("the bundled server is announced in a sentence, with what was done and how to use one's own in the details", () => {
  const python = { implementation: "cpython", version: [3, 11], abiflags: "", platform: "linux", machine: "x86_64", libc: ["glibc", "2.36"] };
  const message = bundledServerMessage({ python: "/usr/bin/python3", source: "default" }, "0.1.0", python, "/storage/bundled-server/0.1.0-abc-cp311", "/ext/bundled/wheels");
  glanceable(message);
  assert.equal(message.text, "AI Eval runs its bundled ai-eval-lsp 0.1.0, as python3 has none installed.");
  assert.match(message.details, /\/usr\/bin\/python3 \(default\) has no ai-eval-lsp, so the extension unpacked the ai-eval-lsp 0\.1\.0 it bundles for CPython 3\.11 into \/storage\/bundled-server\/0\.1\.0-abc-cp311/);
  assert.match(message.details, /plugins installed for \/usr\/bin\/python3 are still loaded/);
  assert.match(message.details, /\/usr\/bin\/python3 -m pip install ai-eval-lsp \(offline, from this extension's wheels: \/usr\/bin\/python3 -m pip install --no-index --find-links \/ext\/bundled\/wheels ai-eval-lsp\)\./);
});

test("an interpreter that cannot start says so in a sentence, and in the details why, and that -P needs Python 3.11", () => {
  const choice = { python: "/usr/bin/python3.10", source: "setting" };
  const old = unusableInterpreterMessage(choice, "Unknown option: -P\nusage: python3 [option] ...");
  glanceable(old);
  assert.equal(old.text, "AI Eval cannot start its server with the aiEval.interpreter Python.");
  assert.match(old.details, /: it is older than Python 3\.11 \(it does not know -P\)\. Install Python 3\.11/);
  const missing = unusableInterpreterMessage({ python: "nope", source: "python extension" }, "spawn nope ENOENT");
  assert.equal(missing.text, "AI Eval cannot start its server with the Python extension's interpreter.");
  assert.match(missing.details, /cannot start the server with nope \(python extension\): spawn nope ENOENT\./);
});
