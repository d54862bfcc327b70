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

test("a missing server says where and how to install it, and why the bundle did not serve", () => {
  const message = missingServerMessage({ python: "/venv/bin/python", source: "setting" });
  assert.match(message, /not installed for \/venv\/bin\/python \(setting\)/);
  assert.match(message, /\/venv\/bin\/python -m pip install \/path\/to\/ai-eval-lsp \(a checkout of its repository\)/);
  const unserved = missingServerMessage({ python: "python3", source: "default" }, "it is built for CPython 3.11 on Linux x86_64 with glibc, and this is CPython 3.10", "/ext/bundled/wheels");
  assert.match(unserved, /bundled with this extension cannot run there: it is built for CPython 3\.11 .* this is CPython 3\.10\. Install it/);
  assert.match(unserved, /python3 -m pip install --find-links \/ext\/bundled\/wheels ai-eval-lsp,/);
});

test("the bundled server is announced with what was done and how to use one's own", () => {
  const python = { implementation: "cpython", version: [3, 11], abiflags: "", platform: "linux", machine: "x86_64", libc: ["glibc", "2.36"] };
  const message = bundledServerMessage({ python: "/usr/bin/python3", source: "default" }, "0.1.0", python, "/storage/bundled-server/0.1.0-abc-cp311", "/ext/bundled/wheels");
  assert.match(message, /\/usr\/bin\/python3 \(default\) has no ai-eval-lsp, so the extension unpacked the ai-eval-lsp 0\.1\.0 it bundles for CPython 3\.11 into \/storage\/bundled-server\/0\.1\.0-abc-cp311/);
  assert.match(message, /plugins installed for \/usr\/bin\/python3 are still loaded/);
  assert.match(message, /\/usr\/bin\/python3 -m pip install --find-links \/ext\/bundled\/wheels ai-eval-lsp\./);
});

test("an interpreter that cannot start says why, and that -P needs Python 3.11", () => {
  const choice = { python: "/usr/bin/python3.10", source: "setting" };
  assert.match(unusableInterpreterMessage(choice, "Unknown option: -P\nusage: python3 [option] ..."), /: it is older than Python 3\.11 \(it does not know -P\)\. Install Python 3\.11/);
  assert.match(unusableInterpreterMessage({ python: "nope", source: "setting" }, "spawn nope ENOENT"), /cannot start the server with nope \(setting\): spawn nope ENOENT\./);
});
