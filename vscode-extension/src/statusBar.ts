// The status bar item: the server's state, then its count of the kinds of the active AI Eval
// document's folder (each folder has its own plugins and Drupal codebase), shown only while an AI
// Eval document is active. The server loads folders in the background, so until it can answer for
// that folder the count is asked again whenever the document's diagnostics arrive.
import * as vscode from "vscode";
import { LanguageClient, State } from "vscode-languageclient/node";
import { statusText } from "./format";
import { AI_EVAL_LANGUAGE } from "./roles";

function folderOf(document: vscode.TextDocument): string {
  return vscode.workspace.getWorkspaceFolder(document.uri)?.uri.toString() ?? "";
}

export class StatusBar implements vscode.Disposable {
  readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  // The folder whose kinds the item shows, and the question under way.
  private showsFolder: string | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.item.command = "aiEval.client.showOutput";
    this.item.text = statusText("starting");
    this.showForActiveEditor();
  }

  dispose(): void {
    this.item.dispose();
  }

  stopped(): void {
    this.item.text = statusText("stopped");
  }

  serverState(state: State): void {
    this.showsFolder = undefined;
    this.item.text = statusText(state === State.Running ? "running" : state === State.Starting ? "starting" : "stopped");
  }

  refresh(): Promise<void> {
    this.refreshing ??= this.askForKinds().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async askForKinds(): Promise<void> {
    const client = this.client();
    const document = vscode.window.activeTextEditor?.document;
    if (!client || document?.languageId !== AI_EVAL_LANGUAGE) return;
    try {
      const kinds = await client.sendRequest<{ text: string }>("workspace/executeCommand", {
        command: "aiEval.render",
        arguments: [{ what: "kinds", uri: document.uri.toString() }],
      });
      this.item.text = statusText("running", kinds.text);
      this.showsFolder = folderOf(document);
    } catch (error) {
      this.showsFolder = undefined;
      this.output.appendLine(`could not count the kinds yet: ${error instanceof Error ? error.message : error}`);
    }
  }

  diagnosticsArrived(uri: vscode.Uri): void {
    const document = vscode.window.activeTextEditor?.document;
    if (document?.uri.toString() === uri.toString() && this.showsFolder !== folderOf(document)) void this.refresh();
  }

  showForActiveEditor(): void {
    if (vscode.window.activeTextEditor?.document.languageId === AI_EVAL_LANGUAGE) this.item.show();
    else this.item.hide();
  }
}
