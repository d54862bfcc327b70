// A target's run history in a webview: the trend, every run, and a diff of any two runs (the
// latest two at first). Opened from the rubric's last-run lens or the "Show Run History" command.
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { ResultRow } from "./format";
import { Diff, diffHtml, historyHtml } from "./results";

const panels = new Map<string, vscode.WebviewPanel>();

async function command<T>(client: LanguageClient, name: string, argument: Record<string, unknown>): Promise<T> {
  return client.sendRequest<T>("workspace/executeCommand", { command: name, arguments: [argument] });
}

// `uri`: a file of the workspace folder whose results database holds the runs.
export async function showHistory(client: LanguageClient, target: string, uri: string | undefined, rows?: ResultRow[]): Promise<void> {
  rows ??= (await command<{ rows: ResultRow[] }>(client, "aiEval.history", { target, uri })).rows;
  const diff = rows.length > 1 ? await command<Diff>(client, "aiEval.diff", { target, uri }) : undefined;
  let panel = panels.get(target);
  if (!panel) {
    panel = vscode.window.createWebviewPanel("aiEval.history", `Runs: ${target}`, vscode.ViewColumn.Beside, { enableScripts: true });
    panels.set(target, panel);
    panel.onDidDispose(() => panels.delete(target));
    const shown = panel;
    panel.webview.onDidReceiveMessage(async ({ base, head }: { base: number; head: number }) => {
      try {
        const picked = base === head ? undefined : await command<Diff>(client, "aiEval.diff", { base, head, uri });
        await shown.webview.postMessage({ html: picked ? diffHtml(picked) : "<p>Pick two different runs.</p>" });
      } catch (error) {
        await shown.webview.postMessage({ html: `<p>${String(error instanceof Error ? error.message : error).replace(/</g, "&lt;")}</p>` });
      }
    });
  }
  panel.webview.html = historyHtml(target, rows, diff, randomBytes(16).toString("base64"), panel.webview.cspSource);
  panel.reveal(undefined, true);
}
