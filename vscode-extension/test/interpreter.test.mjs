import assert from "node:assert/strict";
import { test } from "node:test";
import { chooseInterpreter, missingServerMessage, serverCommand } from "../dist-test/interpreter.mjs";

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

test("a missing server says where and how to install it", () => {
  const message = missingServerMessage({ python: "/venv/bin/python", source: "setting" });
  assert.match(message, /not installed for \/venv\/bin\/python \(setting\)/);
  assert.match(message, /\/venv\/bin\/python -m pip install ai-eval-lsp/);
});
