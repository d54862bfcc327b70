// The "AI Eval Runs" view: every run the server told of this session, newest first, each
// expanded to its row.
import * as vscode from "vscode";
import { RunComplete, rowDetails } from "./format";

type Node = RunComplete | [string, string];

export class RunsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly runs: RunComplete[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  dispose(): void {
    this.changed.dispose();
  }

  add(run: RunComplete): void {
    this.runs.push(run);
    this.changed.fire();
  }

  getTreeItem(element: Node): vscode.TreeItem {
    if (Array.isArray(element)) {
      return new vscode.TreeItem(`${element[0]}: ${element[1]}`);
    }
    const item = new vscode.TreeItem(element.summary, vscode.TreeItemCollapsibleState.Collapsed);
    item.iconPath = new vscode.ThemeIcon(element.passed_gate === 1 ? "pass" : "error");
    return item;
  }

  getChildren(element?: Node): Node[] {
    if (!element) return [...this.runs].reverse();
    return Array.isArray(element) ? [] : rowDetails(element);
  }
}
