// The VS Code client: starts `ai-eval-lsp serve` with the user's Python, and gives the server's
// runs a face (commands, a notification, a results view, a status bar). Behaviour lives in the server.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from "vscode-languageclient/node";
import { chooseInterpreter, missingServerMessage, serverCommand } from "./interpreter";
import { ResultRow, rowDetails, runSummary, serverSettings, statusText } from "./format";

const run = promisify(execFile);
let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.StatusBarItem;
const runs: ResultRow[] = [];
const runsChanged = new vscode.EventEmitter<void>();

class RunsView implements vscode.TreeDataProvider<ResultRow | [string, string]> {
  onDidChangeTreeData = runsChanged.event;
  getTreeItem(element: ResultRow | [string, string]): vscode.TreeItem {
    if (Array.isArray(element)) {
      return new vscode.TreeItem(`${element[0]}: ${element[1]}`);
    }
    const item = new vscode.TreeItem(runSummary(element), vscode.TreeItemCollapsibleState.Collapsed);
    item.iconPath = new vscode.ThemeIcon(element.passed_gate === 1 ? "pass" : "error");
    return item;
  }
  getChildren(element?: ResultRow | [string, string]): Array<ResultRow | [string, string]> {
    if (!element) return [...runs].reverse();
    return Array.isArray(element) ? [] : rowDetails(element);
  }
}

async function pythonExtensionInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension("ms-python.python");
  if (!extension) return undefined;
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const environments = api?.environments;
    const active = environments?.getActiveEnvironmentPath(resource);
    const resolved = active ? await environments.resolveEnvironment(active) : undefined;
    return resolved?.executable?.uri?.fsPath ?? active?.path;
  } catch (error) {
    output.appendLine(`could not ask the Python extension for its interpreter: ${error}`);
    return undefined;
  }
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const setting = vscode.workspace.getConfiguration("aiEval", folder).get<string>("interpreter");
  const choice = chooseInterpreter(setting, setting ? undefined : await pythonExtensionInterpreter(folder?.uri));
  try {
    await run(choice.python, ["-P", "-c", "import ai_eval_lsp"], { cwd: folder?.uri.fsPath });
  } catch {
    const message = missingServerMessage(choice);
    output.appendLine(message);
    status.text = statusText("stopped");
    void vscode.window.showErrorMessage(message, "Open Settings").then((picked) => {
      if (picked) void vscode.commands.executeCommand("workbench.action.openSettings", "aiEval.interpreter");
    });
    return;
  }
  const { command, args } = serverCommand(choice.python);
  output.appendLine(`starting ${command} ${args.join(" ")} (interpreter from the ${choice.source})`);
  const serverOptions: ServerOptions = { command, args, options: { cwd: folder?.uri.fsPath } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: "ai-eval-yaml" }],
    outputChannel: output,
    traceOutputChannel: output,
    initializationOptions: { aiEval: serverSettings((key) => vscode.workspace.getConfiguration("aiEval").get(key)) },
    synchronize: { configurationSection: "aiEval" },
  };
  client = new LanguageClient("aiEval", "AI Eval", serverOptions, clientOptions);
  client.onDidChangeState(({ newState }) => {
    status.text = statusText(newState === State.Running ? "running" : newState === State.Starting ? "starting" : "stopped");
  });
  await client.start();
  client.onNotification("aiEval/runComplete", (row: ResultRow) => {
    runs.push(row);
    runsChanged.fire();
    const show = row.passed_gate === 1 ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    void show(`AI Eval run complete: ${runSummary(row)}`);
  });
  await refreshStatus();
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

async function refreshStatus(): Promise<void> {
  if (!client) return;
  try {
    const schema = await client.sendRequest<{ $defs?: Record<string, unknown> }>("workspace/executeCommand", { command: "aiEval.exportSchema", arguments: [{}] });
    status.text = statusText("running", schema);
  } catch (error) {
    output.appendLine(`could not read the combined schema: ${error}`);
  }
}

async function serverCommandOnActive(name: string, extra: Record<string, unknown> = {}): Promise<unknown> {
  const editor = vscode.window.activeTextEditor;
  if (!client || !editor) {
    void vscode.window.showWarningMessage("AI Eval: open a rubric or cases file first.");
    return undefined;
  }
  try {
    return await client.sendRequest("workspace/executeCommand", { command: name, arguments: [{ uri: editor.document.uri.toString(), ...extra }] });
  } catch (error) {
    void vscode.window.showErrorMessage(`AI Eval: ${name} failed: ${error instanceof Error ? error.message : error}`);
    return undefined;
  }
}

async function runCheckOnResponse(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!client || !editor) return;
  const selected = editor.document.getText(editor.selection);
  const response = selected || (await vscode.window.showInputBox({ prompt: "The response to run the check on" }));
  if (response === undefined) return;
  const actions = await vscode.commands.executeCommand<Array<vscode.CodeAction | vscode.Command>>(
    "vscode.executeCodeActionProvider", editor.document.uri, new vscode.Range(editor.selection.start, editor.selection.start));
  const runCheck = (actions ?? []).map((a) => ("command" in a && typeof a.command === "object" ? a.command : undefined))
    .find((command) => command?.command === "aiEval.runCheck");
  if (!runCheck?.arguments?.[0]) {
    void vscode.window.showWarningMessage("AI Eval: put the cursor on a check.");
    return;
  }
  const result = (await serverCommandOnActive("aiEval.runCheck", { ...runCheck.arguments[0], response })) as { outcome?: { passed: boolean; score: number; reason: string } } | undefined;
  const outcome = result?.outcome;
  if (outcome) {
    void vscode.window.showInformationMessage(`AI Eval: ${outcome.passed ? "passed" : "failed"} (${outcome.score.toFixed(2)}): ${outcome.reason}`);
  } else if (result) {
    void vscode.window.showInformationMessage("AI Eval: this check is not executed at run time.");
  }
}

async function exportSchema(): Promise<void> {
  if (!client) return;
  const schema = await client.sendRequest("workspace/executeCommand", { command: "aiEval.exportSchema", arguments: [{}] });
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const target = await vscode.window.showSaveDialog({ defaultUri: folder && vscode.Uri.joinPath(folder, "rubric.combined.json"), filters: { JSON: ["json"] } });
  if (!target) return;
  await vscode.workspace.fs.writeFile(target, Buffer.from(JSON.stringify(schema, null, 2) + "\n"));
  void vscode.window.showInformationMessage(`AI Eval: combined schema written to ${target.fsPath}`);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("AI Eval", { log: true });
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.command = "aiEval.client.showOutput";
  status.text = statusText("starting");
  status.show();
  context.subscriptions.push(
    output,
    status,
    vscode.window.registerTreeDataProvider("aiEval.runs", new RunsView()),
    vscode.commands.registerCommand("aiEval.client.runCheckOnResponse", runCheckOnResponse),
    vscode.commands.registerCommand("aiEval.client.runRubric", () => serverCommandOnActive("aiEval.runRubric")),
    vscode.commands.registerCommand("aiEval.client.runCases", () => serverCommandOnActive("aiEval.runCases")),
    vscode.commands.registerCommand("aiEval.client.exportSchema", exportSchema),
    vscode.commands.registerCommand("aiEval.client.reloadPlugins", async () => {
      if (!client) return;
      await client.sendRequest("workspace/executeCommand", { command: "aiEval.reloadPlugins", arguments: [{}] });
      await refreshStatus();
    }),
    vscode.commands.registerCommand("aiEval.client.restartServer", async () => {
      if (client) {
        await client.stop();
        client = undefined;
      }
      await start(context);
    }),
    vscode.commands.registerCommand("aiEval.client.showOutput", () => output.show()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("aiEval.interpreter")) {
        void vscode.commands.executeCommand("aiEval.client.restartServer");
      }
    }),
  );
  await start(context);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
