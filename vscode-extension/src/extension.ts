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
  StaticFeature,
} from "vscode-languageclient/node";
import { selectWheels } from "./bundle";
import { RunComplete, SiteRunsAnswer, runNotice } from "./format";
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
import {
  AI_EVAL_LANGUAGE,
  DOCUMENT_ROLE_NOTIFICATION,
  DOCUMENT_SELECTOR,
  DocumentRole,
  DocumentRoleParams,
  HistoryTarget,
  historyTargets,
  languageForRole,
} from "./roles";
import { passwordsOf, redactingChannel, redactor } from "./redact";
import { SECTION, configurationAnswer, serverSettings } from "./settings";
import { HistoryAnswer, showHistory } from "./historyPanel";
import { RunsView, SITE_RUNS_LISTED } from "./runsView";
import { StatusBar } from "./statusBar";
import { CasesTests } from "./testing";

const run = promisify(execFile);

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

// The settings the server sees, with PHP runs off while the workspace is not trusted.
function currentServerSettings(): Record<string, unknown> {
  return serverSettings(vscode.workspace.getConfiguration().get(SECTION), vscode.workspace.isTrusted);
}

// The extension while it is active: its views, the language client of the server it started (one
// server serves every workspace folder), and the commands, which act through that client.
class Extension {
  // Whatever reaches the channel (the trace of `verbose` included, which writes the settings sent
  // to the server) leaves out the site's password.
  readonly output = redactingChannel(
    vscode.window.createOutputChannel("AI Eval", { log: true }),
    redactor(() => passwordsOf(vscode.workspace.getConfiguration(SECTION).get("site.database"))),
  );
  readonly status = new StatusBar(() => this.client, this.output);
  readonly runs = new RunsView();
  readonly casesTests = new CasesTests(() => this.client, this.output);
  client: LanguageClient | undefined;
  // Documents this extension switched from YAML to the AI Eval language, by URI: only these go back.
  private readonly switchedToAiEval = new Set<string>();
  // The role the server gave each rubric and cases file, by URI.
  private readonly roles = new Map<string, DocumentRole>();
  // Starts and restarts run one after another, so a restart asked for while the server is still
  // starting (a settings change, trust granted) never leaves two servers running.
  private lifecycle: Promise<void> = Promise.resolve();

  constructor(readonly context: vscode.ExtensionContext) {}

  restart(): Promise<void> {
    this.lifecycle = this.lifecycle
      .then(async () => {
        if (this.client) {
          await this.client.stop();
          this.client = undefined;
        }
        await this.start();
      })
      // The language client has shown its own error; the next restart must still run.
      .catch((error) => this.output.appendLine(`the server did not start: ${error instanceof Error ? error.message : error}`));
    return this.lifecycle;
  }

  // One server serves every workspace folder; the first one only picks the Python extension's
  // interpreter and the working directory.
  private async start(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const probed = await this.probeInterpreter(folder);
    if (!probed) return;
    const env = await this.serverEnvironment(probed.choice, probed.probe);
    if (!env) return;
    const { command, args } = serverCommand(probed.choice.python);
    this.output.appendLine(`starting ${command} ${args.join(" ")} (interpreter from the ${probed.choice.source})`);
    const client = new LanguageClient("aiEval", "AI Eval", { command, args, options: { cwd: folder?.uri.fsPath, env } }, this.clientOptions());
    client.registerFeature(showsRuns);
    this.client = client;
    this.listen(client);
    await client.start();
    await this.status.refresh();
    void this.casesTests.refresh();
    void this.readSiteRuns(false);
    this.context.subscriptions.push({ dispose: () => void client.stop() });
  }

  // The Python to start and what it has. In a workspace VS Code does not trust, the Python
  // extension's interpreter may be a program of the workspace itself, so only the user's own
  // setting (the workspace's value of this restricted setting is ignored) or python3 starts there.
  private async probeInterpreter(folder: vscode.WorkspaceFolder | undefined): Promise<{ choice: InterpreterChoice; probe: Probe } | undefined> {
    const setting = vscode.workspace.getConfiguration(SECTION).get<string>("interpreter");
    const fromPythonExtension = setting || !vscode.workspace.isTrusted ? undefined : await this.pythonExtensionInterpreter(folder?.uri);
    const choice = chooseInterpreter(setting, fromPythonExtension);
    try {
      return { choice, probe: parseProbe((await run(choice.python, ["-P", "-c", PROBE], { cwd: folder?.uri.fsPath })).stdout) };
    } catch (error) {
      const detail = (error as { stderr?: string }).stderr || (error instanceof Error ? error.message : String(error));
      this.fail(unusableInterpreterMessage(choice, detail));
      return undefined;
    }
  }

  private async pythonExtensionInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
    const extension = vscode.extensions.getExtension("ms-python.python");
    if (!extension) return undefined;
    try {
      const api = extension.isActive ? extension.exports : await extension.activate();
      const environments = api?.environments;
      const active = environments?.getActiveEnvironmentPath(resource);
      const resolved = active ? await environments.resolveEnvironment(active) : undefined;
      return resolved?.executable?.uri?.fsPath ?? active?.path;
    } catch (error) {
      this.output.appendLine(`could not ask the Python extension for its interpreter: ${error}`);
      return undefined;
    }
  }

  // The environment the server starts in: the user's own when their Python has ai_eval_lsp, else
  // one whose PYTHONPATH holds the bundled copy; undefined (after telling the user) when neither works.
  private async serverEnvironment(choice: InterpreterChoice, probe: Probe): Promise<NodeJS.ProcessEnv | undefined> {
    if (probe.server !== null) {
      this.output.appendLine(`using ai-eval-lsp ${probe.server} installed for ${choice.python}`);
      return process.env;
    }
    const extensionUri = this.context.extensionUri;
    const wheelsFolder = vscode.Uri.joinPath(extensionUri, "bundled", "wheels").fsPath;
    const manifest = await readManifest(wheelsFolder);
    if (!manifest) {
      this.fail(missingServerMessage(choice));
      return undefined;
    }
    const selection = selectWheels(manifest, probe);
    if (!selection.ok) {
      this.fail(missingServerMessage(choice, selection.reason));
      return undefined;
    }
    try {
      const { site, unpacked } = await provideBundledServer({
        python: choice.python,
        manifest,
        selection,
        wheelsFolder,
        unpackScript: vscode.Uri.joinPath(extensionUri, "bundled", "unpack_wheels.py").fsPath,
        storage: this.context.globalStorageUri.fsPath,
      });
      const message = bundledServerMessage(choice, manifest.serverVersion, probe, site, wheelsFolder);
      if (unpacked) this.inform(message);
      else this.output.appendLine(message.details);
      return withPythonPath(process.env, site);
    } catch (error) {
      const cause = error instanceof Error ? error.message : String(error);
      this.fail({ text: "AI Eval could not unpack its bundled server.", details: `AI Eval could not unpack its bundled server with ${choice.python}: ${cause}` });
      return undefined;
    }
  }

  // What the language client sends and how: every YAML document, the shaped settings (pulled and
  // pushed), and the server's answers passed on to the status bar and the history panel.
  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: this.output,
      traceOutputChannel: this.output,
      initializationOptions: { [SECTION]: currentServerSettings() },
      synchronize: { configurationSection: SECTION },
      middleware: {
        handleDiagnostics: (uri, diagnostics, next) => {
          next(uri, diagnostics);
          this.status.diagnosticsArrived(uri);
        },
        provideDiagnostics: async (document, previousResultId, token, next) => {
          const report = await next(document, previousResultId, token);
          this.status.diagnosticsArrived(document instanceof vscode.Uri ? document : document.uri);
          return report;
        },
        // The last-run lens names `aiEval.history`: its answer opens the history panel.
        executeCommand: async (command, args, next) => {
          const result = await next(command, args);
          const argument = args[0] as { target?: string; uri?: string } | undefined;
          if (command === "aiEval.history" && argument?.target && result && this.client) {
            await showHistory(this.client, argument.target, argument.uri, result as HistoryAnswer);
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
            await this.client?.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: currentServerSettings() } });
          },
        },
      },
    };
  }

  // What the server tells: its state, a document's role, a finished run.
  private listen(client: LanguageClient): void {
    client.onDidChangeState(({ newState }) => this.status.serverState(newState));
    client.onNotification(DOCUMENT_ROLE_NOTIFICATION, (params: DocumentRoleParams) => {
      this.applyDocumentRole(params).catch((error) => this.output.appendLine(`could not switch the language of ${params.uri}: ${error}`));
    });
    client.onNotification("aiEval/runComplete", (complete: RunComplete) => this.runComplete(client, complete));
  }

  private async applyDocumentRole({ uri, role }: DocumentRoleParams): Promise<void> {
    const key = vscode.Uri.parse(uri).toString();
    if (role) this.roles.set(key, role);
    else this.roles.delete(key);
    const document = vscode.workspace.textDocuments.find((candidate) => candidate.uri.toString() === key);
    if (!document) return;
    const language = languageForRole(role, document.languageId, this.switchedToAiEval.has(key));
    if (!language) return;
    await vscode.languages.setTextDocumentLanguage(document, language);
    if (language === AI_EVAL_LANGUAGE) this.switchedToAiEval.add(key);
    else this.switchedToAiEval.delete(key);
    this.status.showForActiveEditor();
  }

  private runComplete(client: LanguageClient, complete: RunComplete): void {
    this.runs.add(complete);
    if (complete.trigger === "save") this.casesTests.showSaved(complete);
    else if (complete.trigger === "command" && this.casesTests.running) return; // the Test Results view shows it
    const notice = runNotice(complete);
    if (!notice) return;
    const show = notice.warning ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(notice.text, notice.diff ? "Show Diff" : "Show History").then((picked) => {
      if (!picked) return;
      showHistory(client, notice.target, notice.uri, undefined, notice.diff).catch((error) => this.output.appendLine(`${error}`));
    });
  }

  // A message's sentence goes to a notification, its details to the output channel.
  private fail(message: Message): void {
    this.output.appendLine(message.details);
    this.status.stopped();
    void vscode.window.showErrorMessage(message.text, "Show Output", "Open Settings").then((picked) => {
      if (picked === "Show Output") this.output.show();
      if (picked === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "aiEval.interpreter");
    });
  }

  private inform(message: Message): void {
    this.output.appendLine(message.details);
    void vscode.window.showInformationMessage(message.text, "Show Output").then((picked) => {
      if (picked) this.output.show();
    });
  }

  // --- commands ------------------------------------------------------------------------------

  async serverCommandOnActive(name: string, extra: Record<string, unknown> = {}): Promise<unknown> {
    const editor = vscode.window.activeTextEditor;
    if (!this.client || !editor) {
      void vscode.window.showWarningMessage("AI Eval: open a rubric or cases file first.");
      return undefined;
    }
    try {
      return await this.client.sendRequest("workspace/executeCommand", { command: name, arguments: [{ uri: editor.document.uri.toString(), ...extra }] });
    } catch (error) {
      void vscode.window.showErrorMessage(`AI Eval: ${name} failed: ${error instanceof Error ? error.message : error}`);
      return undefined;
    }
  }

  async runCheckOnResponse(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!this.client || !editor) return;
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
    const result = (await this.serverCommandOnActive("aiEval.runCheck", { ...runCheck.arguments[0], response })) as { text?: string } | undefined;
    if (result?.text) void vscode.window.showInformationMessage(`AI Eval: ${result.text}`);
  }

  // The active rubric's history; from a cases file, the history of its rubric or of the site target
  // it mirrors, offered first; else the target the user names.
  async showHistoryOfActive(): Promise<void> {
    if (!this.client) return;
    const document = vscode.window.activeTextEditor?.document;
    const role = document && this.roles.get(document.uri.toString());
    const offered = document ? historyTargets(role, document.getText()) : [];
    const target = role === "rubric" && offered.length ? offered[0].target : await pickTarget(offered);
    if (!target) return;
    try {
      await showHistory(this.client, target, document?.uri.toString());
    } catch (error) {
      void vscode.window.showErrorMessage(`AI Eval: ${error instanceof Error ? error.message : error}`);
    }
  }

  // The site's runs, read now (`aiEval.siteRuns`, every project's), listed in the runs view. Asked
  // for by the user, the view is shown, or the server's note on why there are none; read when the
  // server starts, the note goes to the output channel only.
  async readSiteRuns(asked: boolean): Promise<void> {
    const client = this.client;
    if (!client) {
      if (asked) void vscode.window.showWarningMessage("AI Eval: the server is not running (AI Eval: Show Output says why).");
      return;
    }
    let answer: SiteRunsAnswer;
    try {
      answer = await client.sendRequest<SiteRunsAnswer>("workspace/executeCommand", {
        command: "aiEval.siteRuns",
        arguments: [{ limit: SITE_RUNS_LISTED + 1 }],
      });
    } catch (error) {
      const why = `could not read the site's runs: ${error instanceof Error ? error.message : error}`;
      if (asked) void vscode.window.showErrorMessage(`AI Eval: ${why}`);
      else this.output.appendLine(why);
      return;
    }
    this.runs.siteAnswered(answer);
    if (!asked) {
      if (answer.note) this.output.appendLine(answer.note);
      return;
    }
    if (answer.rows.length) void vscode.commands.executeCommand("aiEval.runs.focus");
    if (answer.note && answer.rows.length) void vscode.window.showWarningMessage(`AI Eval: ${answer.note}`);
    else if (answer.note) {
      void vscode.window.showInformationMessage(`AI Eval: ${answer.note}`, "Open Settings").then((picked) => {
        if (picked) void vscode.commands.executeCommand("workbench.action.openSettings", "aiEval.site.database");
      });
    } else if (!answer.rows.length) void vscode.window.showInformationMessage("AI Eval: the site has no runs yet.");
  }

  async exportSchema(): Promise<void> {
    if (!this.client) return;
    // Each workspace folder has its own combined schema: the active document's, else the first's.
    const document = vscode.window.activeTextEditor?.document;
    const schema = await this.client.sendRequest("workspace/executeCommand", {
      command: "aiEval.exportSchema",
      arguments: [document ? { uri: document.uri.toString() } : {}],
    });
    const folder = (document && vscode.workspace.getWorkspaceFolder(document.uri)?.uri) ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({ defaultUri: folder && vscode.Uri.joinPath(folder, "rubric.combined.json"), filters: { JSON: ["json"] } });
    if (!target) return;
    await vscode.workspace.fs.writeFile(target, Buffer.from(JSON.stringify(schema, null, 2) + "\n"));
    void vscode.window.showInformationMessage(`AI Eval: combined schema written to ${target.fsPath}`);
  }

  async reloadPlugins(): Promise<void> {
    if (!this.client) return;
    await this.client.sendRequest("workspace/executeCommand", { command: "aiEval.reloadPlugins", arguments: [{}] });
    await this.status.refresh();
  }

  // Everything the extension registers, disposed with it.
  register(): void {
    // Cases come and go with YAML files: the tests are listed again a moment after a change.
    let relist: NodeJS.Timeout | undefined;
    const relistSoon = (uris: readonly vscode.Uri[]): void => {
      if (!uris.some((uri) => /\.ya?ml$/.test(uri.path))) return;
      clearTimeout(relist);
      relist = setTimeout(() => void this.casesTests.refresh(), 500);
    };
    const command = (name: string, action: () => unknown) => vscode.commands.registerCommand(name, action);
    this.context.subscriptions.push(
      this.output,
      this.status,
      this.runs,
      this.casesTests,
      vscode.workspace.onDidSaveTextDocument((document) => relistSoon([document.uri])),
      vscode.workspace.onDidCreateFiles((event) => relistSoon(event.files)),
      vscode.workspace.onDidDeleteFiles((event) => relistSoon(event.files)),
      vscode.workspace.onDidRenameFiles((event) => relistSoon(event.files.flatMap((file) => [file.oldUri, file.newUri]))),
      command("aiEval.client.showHistory", () => this.showHistoryOfActive()),
      vscode.window.registerTreeDataProvider("aiEval.runs", this.runs),
      command("aiEval.client.runCheckOnResponse", () => this.runCheckOnResponse()),
      command("aiEval.client.runRubric", () => this.serverCommandOnActive("aiEval.runRubric")),
      command("aiEval.client.runCases", () => this.serverCommandOnActive("aiEval.runCases")),
      command("aiEval.client.readSiteRuns", () => this.readSiteRuns(true)),
      command("aiEval.client.exportSchema", () => this.exportSchema()),
      command("aiEval.client.reloadPlugins", () => this.reloadPlugins()),
      command("aiEval.client.restartServer", () => this.restart()),
      command("aiEval.client.showOutput", () => this.output.show()),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.status.showForActiveEditor();
        void this.status.refresh();
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("aiEval.interpreter")) void this.restart();
      }),
      // Trust may change the interpreter (the workspace's own setting, the Python extension's
      // choice) as well as allow PHP runs, so the server starts again rather than only re-reading.
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.restart()),
    );
  }
}

// The target the user picks: those offered first (a document's rubric, the site target it
// mirrors), or any other typed in.
function pickTarget(offered: HistoryTarget[]): Promise<string | undefined> {
  const offers = offered.map(({ target, what }) => ({ label: target, description: what }));
  const pick = vscode.window.createQuickPick();
  pick.title = "AI Eval: Show Run History";
  pick.placeholder = "A rubric id or site target whose runs to show (or type another)";
  pick.items = offers;
  pick.onDidChangeValue((typed) => {
    const value = typed.trim();
    pick.items = value && !offers.some((offer) => offer.label === value) ? [...offers, { label: value, description: "the target typed" }] : offers;
  });
  return new Promise((resolve) => {
    pick.onDidAccept(() => {
      resolve(pick.selectedItems[0]?.label ?? (pick.value.trim() || undefined));
      pick.hide();
    });
    pick.onDidHide(() => {
      resolve(undefined);
      pick.dispose();
    });
    pick.show();
  });
}

let extension: Extension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new Extension(context);
  extension.register();
  await extension.restart();
}

export async function deactivate(): Promise<void> {
  await extension?.client?.stop();
}
