// A target's run history in a webview: the server's history (trend and runs, `aiEval.render`)
// and a diff of any two runs (at first those asked for, else the pair the server opens on: the
// latest run and the newest of its kind before it that shares a case, or a question for the
// site's runs, or its note why there is none). Opened from the rubric's last-run lens, the "Show
// Run History" command, a run's "Show Diff" or a site run's "Show History". Runs are named as the
// server names them (`12`, `site:412`).
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { ResultRow, RunPair } from "./format";
import { RunChoice, historyHtml, paragraph } from "./results";

// `aiEval.history`'s answer: SPEC's rows, `runs` (each row's run by name and label, to pick from)
// and `compare`, the diff a history opens on.
export interface HistoryAnswer {
  rows: ResultRow[];
  runs: RunChoice[];
  compare: RunPair | { note: string };
}

const panels = new Map<string, vscode.WebviewPanel>();

async function command<T>(client: LanguageClient, name: string, argument: Record<string, unknown>): Promise<T> {
  return client.sendRequest<T>("workspace/executeCommand", { command: name, arguments: [argument] });
}

async function rendered(client: LanguageClient, argument: Record<string, unknown>): Promise<string> {
  return (await command<{ text: string }>(client, "aiEval.render", { ...argument, format: "html" })).text;
}

// `uri`: a file of the workspace folder whose results database holds the runs; `pair`: the runs
// to compare (default: the server's `compare`).
export async function showHistory(
  client: LanguageClient,
  target: string,
  uri: string | undefined,
  answer?: HistoryAnswer,
  pair?: RunPair,
): Promise<void> {
  answer ??= await command<HistoryAnswer>(client, "aiEval.history", { target, uri });
  const history = await rendered(client, { what: "history", target, uri });
  const opened = pair ?? ("note" in answer.compare ? answer.compare.note : answer.compare);
  const diff = typeof opened === "string" ? paragraph(opened) : await rendered(client, { what: "diff", target, uri, ...opened });
  let panel = panels.get(target);
  if (!panel) {
    panel = vscode.window.createWebviewPanel("aiEval.history", `Runs: ${target}`, vscode.ViewColumn.Beside, { enableScripts: true });
    panels.set(target, panel);
    panel.onDidDispose(() => panels.delete(target));
    const shown = panel;
    panel.webview.onDidReceiveMessage(async (picked: RunPair) => {
      try {
        const html = picked.base === picked.head ? paragraph("Pick two different runs.") : await rendered(client, { what: "diff", uri, ...picked });
        await shown.webview.postMessage({ html });
      } catch (error) {
        await shown.webview.postMessage({ html: paragraph(String(error instanceof Error ? error.message : error)) });
      }
    });
  }
  const selected = typeof opened === "string" ? { head: answer.runs[0]?.name } : opened;
  const picker = { runs: answer.runs, ...selected };
  panel.webview.html = historyHtml(target, history, diff, picker, randomBytes(16).toString("base64"), panel.webview.cspSource);
  panel.reveal(undefined, true);
}
