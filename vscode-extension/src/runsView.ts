// The "AI Eval Runs" view: the site's runs (as `aiEval.siteRuns` lists them, and each new one the
// server tells of), then every run of this project the server told of this session, newest first;
// each a line with what stands out and its date, expanded to what a person reads of it (`runFacts`).
import * as vscode from "vscode";
import { RunComplete, SiteRun, SiteRunsAnswer, runFacts, runLine } from "./format";

// How many of the site's runs the view lists, newest first.
export const SITE_RUNS_LISTED = 100;

type Run = RunComplete | SiteRun;
// Each node has an id, so a refresh keeps what is expanded.
type Node = { id: string } & ({ site: true } | { run: Run } | { fact: [string, string] });

const key = (run: SiteRun): string => `${run.projectUri ?? ""}#${run.siteId}`;
const newestFirst = (a: SiteRun, b: SiteRun): number => b.timestamp - a.timestamp || b.siteId - a.siteId;

export class RunsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly runs: RunComplete[] = [];
  private siteRuns: SiteRun[] = [];
  // Whether the site has more runs than the view lists.
  private more = false;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  dispose(): void {
    this.changed.dispose();
  }

  // A run the server told of: the site's join its runs, the project's own are listed apart.
  add(run: RunComplete): void {
    if (run.trigger === "site" && typeof run.siteId === "number") {
      this.showSiteRuns([run as SiteRun, ...this.siteRuns.filter((listed) => key(listed) !== key(run as SiteRun))], this.more);
    } else {
      this.runs.push(run);
      this.changed.fire();
    }
  }

  // `aiEval.siteRuns`'s answer to a request for one more than the view lists.
  siteAnswered(answer: SiteRunsAnswer): void {
    this.showSiteRuns(answer.rows, answer.rows.length > SITE_RUNS_LISTED);
  }

  private showSiteRuns(rows: SiteRun[], more: boolean): void {
    this.siteRuns = [...rows].sort(newestFirst).slice(0, SITE_RUNS_LISTED);
    this.more = more || rows.length > SITE_RUNS_LISTED;
    this.changed.fire();
  }

  getTreeItem(element: Node): vscode.TreeItem {
    if ("fact" in element) {
      const [name, value] = element.fact;
      const item = new vscode.TreeItem(name);
      item.id = element.id;
      item.description = value;
      item.tooltip = `${name}: ${value}`;
      return item;
    }
    if ("site" in element) {
      const item = new vscode.TreeItem("The site's runs", vscode.TreeItemCollapsibleState.Expanded);
      item.id = element.id;
      const count = this.siteRuns.length;
      item.description = this.more ? `the newest ${count}` : `${count} run${count === 1 ? "" : "s"}, newest first`;
      item.iconPath = new vscode.ThemeIcon("server");
      return item;
    }
    const line = runLine(element.run);
    const item = new vscode.TreeItem(line.label, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = element.id;
    item.description = line.description;
    item.tooltip = line.tooltip || undefined;
    item.iconPath = new vscode.ThemeIcon(line.icon, line.icon === "warning" ? new vscode.ThemeColor("list.warningForeground") : undefined);
    return item;
  }

  getChildren(element?: Node): Node[] {
    if (!element) {
      const own = this.runs.map((run, index) => ({ id: `run ${index}`, run })).reverse();
      return this.siteRuns.length ? [{ id: "site", site: true }, ...own] : own;
    }
    if ("site" in element) return this.siteRuns.map((run) => ({ id: `site run ${key(run)}`, run }));
    if ("run" in element) return runFacts(element.run).map((fact) => ({ id: `${element.id} ${fact[0]}`, fact }));
    return [];
  }
}
