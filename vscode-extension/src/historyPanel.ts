// A target's run history in a webview: the server's history (trend and runs, `aiEval.render`)
// and a diff of any two runs (the latest two at first, or those asked for). Opened from the
// rubric's last-run lens, the "Show Run History" command or a run's "Show Diff".
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { ResultRow } from "./format";
import { historyHtml } from "./results";

const panels = new Map<string, vscode.WebviewPanel>();

async function command<T>(client: LanguageClient, name: string, argument: Record<string, unknown>): Promise<T> {
  return client.sendRequest<T>("workspace/executeCommand", { command: name, arguments: [argument] });
}

async function rendered(client: LanguageClient, argument: Record<string, unknown>): Promise<string> {
  return (await command<{ text: string }>(client, "aiEval.render", { ...argument, format: "html" })).text;
}

// `uri`: a file of the workspace folder whose results database holds the runs; `pair`: the runs
// to compare (default: the latest and the one before).
export async function showHistory(
  client: LanguageClient,
  target: string,
  uri: string | undefined,
  rows?: ResultRow[],
  pair?: { base: number; head: number },
): Promise<void> {
  rows ??= (await command<{ rows: ResultRow[] }>(client, "aiEval.history", { target, uri })).rows;
  const history = await rendered(client, { what: "history", target, uri });
  const base = pair?.base ?? rows[1]?.run_id;
  const head = pair?.head ?? rows[0]?.run_id;
  const diff = rows.length > 1 ? await rendered(client, { what: "diff", target, uri, base, head }) : undefined;
  let panel = panels.get(target);
  if (!panel) {
    panel = vscode.window.createWebviewPanel("aiEval.history", `Runs: ${target}`, vscode.ViewColumn.Beside, { enableScripts: true });
    panels.set(target, panel);
    panel.onDidDispose(() => panels.delete(target));
    const shown = panel;
    panel.webview.onDidReceiveMessage(async (picked: { base: number; head: number }) => {
      try {
        const html = picked.base === picked.head ? "<p>Pick two different runs.</p>" : await rendered(client, { what: "diff", uri, ...picked });
        await shown.webview.postMessage({ html });
      } catch (error) {
        await shown.webview.postMessage({ html: `<p>${String(error instanceof Error ? error.message : error).replace(/</g, "&lt;")}</p>` });
      }
    });
  }
  const picker = { runIds: rows.map((row) => row.run_id), base, head };
  panel.webview.html = historyHtml(target, history, diff, picker, randomBytes(16).toString("base64"), panel.webview.cspSource);
  panel.reveal(undefined, true);
}
