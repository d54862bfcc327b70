import assert from "node:assert/strict";
import { test } from "node:test";
import { formsOf, passwordsOf, redactingChannel, redactor } from "../dist-test/redact.mjs";

test("a URL's password is read as the server reads it: up to the last @, as written and decoded", () => {
  assert.deepEqual(passwordsOf("mysql://reader:p@ss/w%23rd@127.0.0.1:3306/drupal"), ["p@ss/w%23rd", "p@ss/w#rd"]);
  assert.deepEqual(passwordsOf("mysql://reader:Kx7\uff03Secret@[::1/drupal"), ["Kx7\uff03Secret", "Kx7\uff03Secret"]);
  assert.deepEqual(passwordsOf("mysql://reader:%ff-not-utf8@h/d"), ["%ff-not-utf8"]);
  assert.deepEqual(passwordsOf("sqlite://localhost/sites/default/files/.ht.sqlite"), []);
  assert.deepEqual(passwordsOf(undefined), []);
});

test("each form a password takes in the trace is taken out, longest first", () => {
  const redact = redactor(() => passwordsOf('mysql://reader:p%C3%A4ss"w@h/d'));
  const params = JSON.stringify({ settings: { aiEval: { site: { database: 'mysql://reader:p%C3%A4ss"w@h/d' } } } }, null, 4);
  assert.match(redact(params), /"database": "mysql:\/\/reader:\*\*\*@h\/d"/);
  assert.equal(redact('password päss\\"w, or päss"w'), "password ***, or ***");
  assert.ok(formsOf("päss").includes("p%c3%a4ss"));
  assert.deepEqual(formsOf("db"), []); // a few letters: no secret worth garbling every line that holds them
});

test("the channel redacts every text written to it and keeps the rest as it is", () => {
  const written = [];
  const channel = {
    logLevel: 1,
    trace: (message) => written.push(["trace", message]),
    appendLine: (message) => written.push(["appendLine", message]),
    show() {
      written.push(["show", this === channel]);
    },
  };
  const redacting = redactingChannel(channel, redactor(() => ["Kx7-Secret"]));
  redacting.trace("Sending notification 'workspace/didChangeConfiguration'. Params: Kx7-Secret");
  redacting.appendLine("twice: Kx7-Secret Kx7-Secret");
  redacting.show();
  assert.equal(redacting.logLevel, 1);
  assert.deepEqual(written, [
    ["trace", "Sending notification 'workspace/didChangeConfiguration'. Params: ***"],
    ["appendLine", "twice: *** ***"],
    ["show", true],
  ]);
});
