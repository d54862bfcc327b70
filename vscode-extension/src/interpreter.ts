// Which Python runs the server: the `aiEval.interpreter` setting first, then the Python
// extension's active interpreter, then `python3`. The server must run where the user's check
// executor plugins are installed, or it cannot see their kinds.

export interface InterpreterChoice {
  python: string;
  source: "setting" | "python extension" | "default";
}

export function chooseInterpreter(setting: string | undefined, pythonExtension: string | undefined): InterpreterChoice {
  if (setting && setting.trim()) {
    return { python: setting.trim(), source: "setting" };
  }
  if (pythonExtension && pythonExtension.trim()) {
    return { python: pythonExtension.trim(), source: "python extension" };
  }
  return { python: "python3", source: "default" };
}

// `-P` keeps the workspace folder off sys.path: the server never imports from the workspace.
export function serverCommand(python: string): { command: string; args: string[] } {
  return { command: python, args: ["-P", "-m", "ai_eval_lsp", "serve"] };
}

export function missingServerMessage(choice: InterpreterChoice): string {
  return (
    `ai-eval-lsp is not installed for ${choice.python} (${choice.source}). ` +
    `Install it where your ai_eval plugins are: ${choice.python} -m pip install ai-eval-lsp, ` +
    "or point the aiEval.interpreter setting at that environment's Python."
  );
}
