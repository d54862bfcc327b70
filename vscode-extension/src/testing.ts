// Cases files as tests in VS Code's Testing view: file -> cases, found through the server's
// workspace symbols (every case of every cases file, where it is), run with `aiEval.runCases`
// (a case alone with `caseIds`). A failed case's message stands at the case in its file.
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { CaseShown, RunComplete } from "./format";
import { RunAnswer, caseShown } from "./results";

interface SymbolInformation {
  name: string;
  kind: number;
  location: { uri: string; range: { start: { line: number; character: number }; end: { line: number; character: number } } };
  containerName?: string;
}

const EVENT = 24; // SymbolKind.Event: how the server lists cases

export class CasesTests implements vscode.Disposable {
  readonly controller = vscode.tests.createTestController("aiEval.cases", "AI Eval cases");
  private refreshing: Promise<void> | undefined;
  private again = false;
  // How many test runs are under way: their runs show in the Test Results view, so the extension
  // does not raise a notification for each (ten cases files would make ten).
  running = 0;

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.controller.refreshHandler = () => this.refresh();
    this.controller.createRunProfile("Run", vscode.TestRunProfileKind.Run, (request, token) => this.run(request, token), true);
  }

  dispose(): void {
    this.controller.dispose();
  }

  // Ask the server again for every case, one listing at a time: one asked for while another is
  // under way runs once that one is done, so the last change is always seen.
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        await this.discover();
      } while (this.again);
    })().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async discover(): Promise<void> {
    const client = this.client();
    if (!client) return;
    let symbols: SymbolInformation[];
    try {
      symbols = (await client.sendRequest<SymbolInformation[] | null>("workspace/symbol", { query: "" })) ?? [];
    } catch (error) {
      this.output.appendLine(`could not list the cases: ${error instanceof Error ? error.message : error}`);
      return;
    }
    const files = new Map<string, vscode.TestItem>();
    for (const symbol of symbols.filter((s) => s.kind === EVENT)) {
      const uri = vscode.Uri.parse(symbol.location.uri);
      const key = uri.toString();
      let file = files.get(key);
      if (!file) {
        file = this.controller.createTestItem(key, symbol.containerName ?? vscode.workspace.asRelativePath(uri), uri);
        files.set(key, file);
      }
      const { start, end } = symbol.location.range;
      const item = this.controller.createTestItem(`${key}#${symbol.name}`, symbol.name, uri);
      item.range = new vscode.Range(start.line, start.character, end.line, end.character);
      file.children.add(item);
    }
    this.controller.items.replace([...files.values()].sort((a, b) => a.label.localeCompare(b.label)));
  }

  private async run(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    this.running++;
    try {
      await this.runFiles(request, token);
    } finally {
      this.running--;
    }
  }

  private async runFiles(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    const client = this.client();
    const run = this.controller.createTestRun(request);
    // What to run, by cases file: the whole file, or the cases asked for.
    const wanted = new Map<vscode.TestItem, Set<vscode.TestItem> | "all">();
    const roots: vscode.TestItem[] = request.include ? [...request.include] : [];
    if (!request.include) this.controller.items.forEach((item) => roots.push(item));
    for (const item of roots) {
      const file = item.parent ?? item;
      const chosen = wanted.get(file);
      if (item === file || chosen === "all") wanted.set(file, "all");
      else wanted.set(file, (chosen ?? new Set<vscode.TestItem>()).add(item));
    }
    for (const [file, chosen] of wanted) {
      const cases: vscode.TestItem[] = [];
      file.children.forEach((item) => {
        if ((chosen === "all" || chosen.has(item)) && !request.exclude?.includes(item)) cases.push(item);
      });
      if (!client || token.isCancellationRequested) {
        cases.forEach((item) => run.skipped(item));
        continue;
      }
      cases.forEach((item) => run.started(item));
      const argument: Record<string, unknown> = { uri: file.uri?.toString() };
      if (chosen !== "all" || cases.length !== file.children.size) argument.caseIds = cases.map((item) => item.label);
      try {
        const answer = await client.sendRequest<RunAnswer>("workspace/executeCommand", { command: "aiEval.runCases", arguments: [argument] }, token);
        run.appendOutput(`${file.label}: ${answer.summary}\r\n`);
        for (const item of cases) this.report(run, item, caseShown(answer.cases, item.label));
      } catch (error) {
        const message = new vscode.TestMessage(`the run did not finish: ${error instanceof Error ? error.message : error}`);
        cases.forEach((item) => (token.isCancellationRequested ? run.skipped(item) : run.errored(item, message)));
      }
    }
    run.end();
  }

  // A run the server started on save: its cases' results replace theirs in the Testing view.
  showSaved(complete: RunComplete): void {
    const cases = complete.cases;
    if (!complete.casesUri || !cases) return;
    const file = this.controller.items.get(vscode.Uri.parse(complete.casesUri).toString());
    if (!file) return;
    const run = this.controller.createTestRun(new vscode.TestRunRequest([file]), `${file.label} (on save)`, false);
    file.children.forEach((item) => {
      if (item.label in cases) this.report(run, item, cases[item.label]);
    });
    run.end();
  }

  // The server's state and lines for the case, each line a message at the case (a diff where it
  // gives expected and actual).
  private report(run: vscode.TestRun, item: vscode.TestItem, shown: CaseShown): void {
    if (shown.state === "passed") {
      run.passed(item);
      return;
    }
    const messages = shown.messages.map(({ text, expected, actual }) => {
      const message = expected !== undefined && actual !== undefined ? vscode.TestMessage.diff(text, expected, actual) : new vscode.TestMessage(text);
      if (item.uri && item.range) message.location = new vscode.Location(item.uri, item.range);
      return message;
    });
    if (shown.state === "errored") run.errored(item, messages);
    else run.failed(item, messages);
  }
}
