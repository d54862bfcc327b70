// The VS Code client: starts `ai-eval-lsp serve` with the user's Python (or the server bundled in
// the .vsix when that Python lacks it), shows the documents the server names as rubric or cases
// files in the AI Eval language, and gives the server's runs, and the Drupal site's runs it reads,
// a face (commands, one notification per run, a results view, cases as tests in the Testing view,
// a run history panel, a status bar). Behaviour lives in the server.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import * as vscode from "vscode";
import {
  ClientCapabilities,
  DidChangeConfigurationNotification,
  FeatureState,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StaticFeature,
} from "vscode-languageclient/node";
import { selectWheels } from "./bundle";
import { RunComplete, rowDetails, runNotice, statusText } from "./format";
import {
  InterpreterChoice,
  Message,
  PROBE,
  Probe,
  bundledServerMessage,
  chooseInterpreter,
  missingServerMessage,
  parseProbe,
  serverCommand,
  unusableInterpreterMessage,
  withPythonPath,
} from "./interpreter";
import { provideBundledServer, readManifest } from "./provision";
import { AI_EVAL_LANGUAGE, DOCUMENT_ROLE_NOTIFICATION, DOCUMENT_SELECTOR, DocumentRoleParams, languageForRole } from "./roles";
import { passwordsOf, redactingChannel, redactor } from "./redact";
import { SECTION, configurationAnswer, serverSettings } from "./settings";
import { HistoryAnswer, showHistory } from "./historyPanel";
import { CasesTests } from "./testing";

const run = promisify(execFile);
let client: LanguageClient | undefined;
let casesTests: CasesTests | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.StatusBarItem;
const runs: RunComplete[] = [];
const runsChanged = new vscode.EventEmitter<void>();
// Documents this extension switched from YAML to the AI Eval language, by URI: only these go back.
const switchedToAiEval = new Set<string>();

class RunsView implements vscode.TreeDataProvider<RunComplete | [string, string]> {
  onDidChangeTreeData = runsChanged.event;
  getTreeItem(element: RunComplete | [string, string]): vscode.TreeItem {
    if (Array.isArray(element)) {
      return new vscode.TreeItem(`${element[0]}: ${element[1]}`);
    }
    const item = new vscode.TreeItem(element.summary, vscode.TreeItemCollapsibleState.Collapsed);
    item.iconPath = new vscode.ThemeIcon(element.passed_gate === 1 ? "pass" : "error");
    return item;
  }
  getChildren(element?: RunComplete | [string, string]): Array<RunComplete | [string, string]> {
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

// This client shows every `aiEval/runComplete` itself, so the server sends no message of its own
// for a run (one notification per run, not two).
const showsRuns: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), aiEval: { runComplete: true } };
  },
  initialize(): void {},
  getState(): FeatureState {
    return { kind: "static" };
  },
  clear(): void {},
};

// A message's sentence goes to a notification, its details to the output channel.
function fail(message: Message): void {
  output.appendLine(message.details);
  status.text = statusText("stopped");
  void vscode.window.showErrorMessage(message.text, "Show Output", "Open Settings").then((picked) => {
    if (picked === "Show Output") output.show();
    if (picked === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "aiEval.interpreter");
  });
}

function inform(message: Message): void {
  output.appendLine(message.details);
  void vscode.window.showInformationMessage(message.text, "Show Output").then((picked) => {
    if (picked) output.show();
  });
}

// The environment the server starts in: the user's own when their Python has ai_eval_lsp, else
// one whose PYTHONPATH holds the bundled copy; undefined (after telling the user) when neither works.
async function serverEnvironment(context: vscode.ExtensionContext, choice: InterpreterChoice, probe: Probe): Promise<NodeJS.ProcessEnv | undefined> {
  if (probe.server !== null) {
    output.appendLine(`using ai-eval-lsp ${probe.server} installed for ${choice.python}`);
    return process.env;
  }
  const wheelsFolder = vscode.Uri.joinPath(context.extensionUri, "bundled", "wheels").fsPath;
  const manifest = await readManifest(wheelsFolder);
  if (!manifest) {
    fail(missingServerMessage(choice));
    return undefined;
  }
  const selection = selectWheels(manifest, probe);
  if (!selection.ok) {
    fail(missingServerMessage(choice, selection.reason));
    return undefined;
  }
  try {
    const { site, unpacked } = await provideBundledServer({
      python: choice.python,
      manifest,
      selection,
      wheelsFolder,
      unpackScript: vscode.Uri.joinPath(context.extensionUri, "bundled", "unpack_wheels.py").fsPath,
      storage: context.globalStorageUri.fsPath,
    });
    const message = bundledServerMessage(choice, manifest.serverVersion, probe, site, wheelsFolder);
    if (unpacked) inform(message);
    else output.appendLine(message.details);
    return withPythonPath(process.env, site);
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    fail({ text: "AI Eval could not unpack its bundled server.", details: `AI Eval could not unpack its bundled server with ${choice.python}: ${cause}` });
    return undefined;
  }
}

// The settings the server sees, with PHP runs off while the workspace is not trusted.
function currentServerSettings(): Record<string, unknown> {
  return serverSettings(vscode.workspace.getConfiguration().get(SECTION), vscode.workspace.isTrusted);
}

async function applyDocumentRole({ uri, role }: DocumentRoleParams): Promise<void> {
  const key = vscode.Uri.parse(uri).toString();
  const document = vscode.workspace.textDocuments.find((candidate) => candidate.uri.toString() === key);
  if (!document) return;
  const language = languageForRole(role, document.languageId, switchedToAiEval.has(key));
  if (!language) return;
  await vscode.languages.setTextDocumentLanguage(document, language);
  if (language === AI_EVAL_LANGUAGE) switchedToAiEval.add(key);
  else switchedToAiEval.delete(key);
  showStatusForActiveEditor();
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  // One server serves every workspace folder; the first one only picks the Python extension's
  // interpreter and the working directory. In a workspace VS Code does not trust, that interpreter
  // may be a program of the workspace itself, so only the user's own setting (the workspace's
  // value of this restricted setting is ignored) or python3 starts there.
  const folder = vscode.workspace.workspaceFolders?.[0];
  const setting = vscode.workspace.getConfiguration(SECTION).get<string>("interpreter");
  const fromPythonExtension = setting || !vscode.workspace.isTrusted ? undefined : await pythonExtensionInterpreter(folder?.uri);
  const choice = chooseInterpreter(setting, fromPythonExtension);
  let probe: Probe;
  try {
    probe = parseProbe((await run(choice.python, ["-P", "-c", PROBE], { cwd: folder?.uri.fsPath })).stdout);
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr || (error instanceof Error ? error.message : String(error));
    fail(unusableInterpreterMessage(choice, detail));
    return;
  }
  const env = await serverEnvironment(context, choice, probe);
  if (!env) return;
  const { command, args } = serverCommand(choice.python);
  output.appendLine(`starting ${command} ${args.join(" ")} (interpreter from the ${choice.source})`);
  const serverOptions: ServerOptions = { command, args, options: { cwd: folder?.uri.fsPath, env } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: output,
    traceOutputChannel: output,
    initializationOptions: { [SECTION]: currentServerSettings() },
    synchronize: { configurationSection: SECTION },
    middleware: {
      handleDiagnostics: (uri, diagnostics, next) => {
        next(uri, diagnostics);
        diagnosticsArrived(uri);
      },
      provideDiagnostics: async (document, previousResultId, token, next) => {
        const report = await next(document, previousResultId, token);
        diagnosticsArrived(document instanceof vscode.Uri ? document : document.uri);
        return report;
      },
      // The last-run lens names `aiEval.history`: its answer opens the history panel.
      executeCommand: async (command, args, next) => {
        const result = await next(command, args);
        const argument = args[0] as { target?: string; uri?: string } | undefined;
        if (command === "aiEval.history" && argument?.target && result) {
          await showHistory(languageClient, argument.target, argument.uri, result as HistoryAnswer);
        }
        return result;
      },
      workspace: {
        configuration: async (params, token, next) => {
          const values = await next(params, token);
          if (!Array.isArray(values)) return values;
          return params.items.map((item, index) => configurationAnswer(item.section, values[index], vscode.workspace.isTrusted));
        },
        // The push carries the same shaped settings as the pull, never the raw section.
        didChangeConfiguration: async () => {
          await languageClient.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: currentServerSettings() } });
        },
      },
    },
  };
  const languageClient = new LanguageClient("aiEval", "AI Eval", serverOptions, clientOptions);
  languageClient.registerFeature(showsRuns);
  client = languageClient;
  languageClient.onDidChangeState(({ newState }) => {
    statusShowsFolder = undefined;
    status.text = statusText(newState === State.Running ? "running" : newState === State.Starting ? "starting" : "stopped");
  });
  languageClient.onNotification(DOCUMENT_ROLE_NOTIFICATION, (params: DocumentRoleParams) => {
    applyDocumentRole(params).catch((error) => output.appendLine(`could not switch the language of ${params.uri}: ${error}`));
  });
  languageClient.onNotification("aiEval/runComplete", (run: RunComplete) => {
    runs.push(run);
    runsChanged.fire();
    if (run.trigger === "save") casesTests?.showSaved(run);
    else if (run.trigger === "command" && casesTests?.running) return; // the Test Results view shows it
    const notice = runNotice(run);
    if (!notice) return;
    const show = notice.warning ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(notice.text, notice.diff ? "Show Diff" : "Show History").then((picked) => {
      if (!picked) return;
      showHistory(languageClient, notice.target, notice.uri, undefined, notice.diff).catch((error) => output.appendLine(`${error}`));
    });
  });
  await languageClient.start();
  await refreshStatus();
  void casesTests?.refresh();
  context.subscriptions.push({ dispose: () => void languageClient.stop() });
}

// The status shows the server's count of the kinds of the active AI Eval document's folder (each
// folder has its own plugins and Drupal codebase). The server loads folders in the background, so
// until it can answer for that folder the status is asked again whenever the document's
// diagnostics arrive.
let statusShowsFolder: string | undefined;
let statusRefresh: Promise<void> | undefined;

function folderOf(document: vscode.TextDocument): string {
  return vscode.workspace.getWorkspaceFolder(document.uri)?.uri.toString() ?? "";
}

function refreshStatus(): Promise<void> {
  statusRefresh ??= askForKinds().finally(() => (statusRefresh = undefined));
  return statusRefresh;
}

async function askForKinds(): Promise<void> {
  const document = vscode.window.activeTextEditor?.document;
  if (!client || document?.languageId !== AI_EVAL_LANGUAGE) return;
  try {
    const kinds = await client.sendRequest<{ text: string }>("workspace/executeCommand", {
      command: "aiEval.render",
      arguments: [{ what: "kinds", uri: document.uri.toString() }],
    });
    status.text = statusText("running", kinds.text);
    statusShowsFolder = folderOf(document);
  } catch (error) {
    statusShowsFolder = undefined;
    output.appendLine(`could not count the kinds yet: ${error instanceof Error ? error.message : error}`);
  }
}

function diagnosticsArrived(uri: vscode.Uri): void {
  const document = vscode.window.activeTextEditor?.document;
  if (document?.uri.toString() === uri.toString() && statusShowsFolder !== folderOf(document)) void refreshStatus();
}

function showStatusForActiveEditor(): void {
  if (vscode.window.activeTextEditor?.document.languageId === AI_EVAL_LANGUAGE) status.show();
  else status.hide();
}

// Starts and restarts run one after another, so a restart asked for while the server is still
// starting (a settings change, trust granted) never leaves two servers running.
let lifecycle: Promise<void> = Promise.resolve();

function restart(context: vscode.ExtensionContext): Promise<void> {
  lifecycle = lifecycle
    .then(async () => {
      if (client) {
        await client.stop();
        client = undefined;
      }
      await start(context);
    })
    // The language client has shown its own error; the next restart must still run.
    .catch((error) => output.appendLine(`the server did not start: ${error instanceof Error ? error.message : error}`));
  return lifecycle;
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
  // The server words the outcome (`text`), as `ai-eval-lsp run` words a case.
  const result = (await serverCommandOnActive("aiEval.runCheck", { ...runCheck.arguments[0], response })) as { text?: string } | undefined;
  if (result?.text) void vscode.window.showInformationMessage(`AI Eval: ${result.text}`);
}

// The active rubric's history (its id from its last-run lens), else a target the user names.
async function showHistoryOfActive(): Promise<void> {
  if (!client) return;
  const document = vscode.window.activeTextEditor?.document;
  const lenses = document ? await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", document.uri) : [];
  const lens = (lenses ?? []).find((candidate) => candidate.command?.command === "aiEval.history");
  const argument = lens?.command?.arguments?.[0] as { target: string; uri?: string } | undefined;
  const target = argument?.target ?? (await vscode.window.showInputBox({ prompt: "The rubric id whose runs to show" }));
  if (!target) return;
  try {
    await showHistory(client, target, argument?.uri ?? document?.uri.toString());
  } catch (error) {
    void vscode.window.showErrorMessage(`AI Eval: ${error instanceof Error ? error.message : error}`);
  }
}

async function exportSchema(): Promise<void> {
  if (!client) return;
  // Each workspace folder has its own combined schema: the active document's, else the first's.
  const document = vscode.window.activeTextEditor?.document;
  const schema = await client.sendRequest("workspace/executeCommand", {
    command: "aiEval.exportSchema",
    arguments: [document ? { uri: document.uri.toString() } : {}],
  });
  const folder = (document && vscode.workspace.getWorkspaceFolder(document.uri)?.uri) ?? vscode.workspace.workspaceFolders?.[0]?.uri;
  const target = await vscode.window.showSaveDialog({ defaultUri: folder && vscode.Uri.joinPath(folder, "rubric.combined.json"), filters: { JSON: ["json"] } });
  if (!target) return;
  await vscode.workspace.fs.writeFile(target, Buffer.from(JSON.stringify(schema, null, 2) + "\n"));
  void vscode.window.showInformationMessage(`AI Eval: combined schema written to ${target.fsPath}`);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  // Whatever reaches the channel (the trace of `verbose` included, which writes the settings sent
  // to the server) leaves out the site's password.
  const sitePasswords = (): string[] => passwordsOf(vscode.workspace.getConfiguration(SECTION).get("site.database"));
  output = redactingChannel(vscode.window.createOutputChannel("AI Eval", { log: true }), redactor(sitePasswords));
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.command = "aiEval.client.showOutput";
  status.text = statusText("starting");
  // The server starts for any YAML workspace; the status shows where it matters, in AI Eval files.
  showStatusForActiveEditor();
  casesTests = new CasesTests(() => client, output);
  // Cases come and go with YAML files: the tests are listed again a moment after a change.
  let relist: NodeJS.Timeout | undefined;
  const relistSoon = (uris: readonly vscode.Uri[]): void => {
    if (!uris.some((uri) => /\.ya?ml$/.test(uri.path))) return;
    clearTimeout(relist);
    relist = setTimeout(() => void casesTests?.refresh(), 500);
  };
  context.subscriptions.push(
    output,
    status,
    casesTests,
    vscode.workspace.onDidSaveTextDocument((document) => relistSoon([document.uri])),
    vscode.workspace.onDidCreateFiles((event) => relistSoon(event.files)),
    vscode.workspace.onDidDeleteFiles((event) => relistSoon(event.files)),
    vscode.workspace.onDidRenameFiles((event) => relistSoon(event.files.flatMap((file) => [file.oldUri, file.newUri]))),
    vscode.commands.registerCommand("aiEval.client.showHistory", showHistoryOfActive),
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
    vscode.commands.registerCommand("aiEval.client.restartServer", () => restart(context)),
    vscode.commands.registerCommand("aiEval.client.showOutput", () => output.show()),
    vscode.window.onDidChangeActiveTextEditor(() => {
      showStatusForActiveEditor();
      void refreshStatus();
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("aiEval.interpreter")) void restart(context);
    }),
    // Trust may change the interpreter (the workspace's own setting, the Python extension's
    // choice) as well as allow PHP runs, so the server starts again rather than only re-reading.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void restart(context)),
  );
  await restart(context);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
