// Which Python runs the server: the `aiEval.interpreter` setting first, then the Python
// extension's active interpreter, then `python3`. The server must run where the user's check
// executor plugins are installed, or it cannot see their kinds. When that Python lacks
// ai_eval_lsp, the extension runs its bundled copy with it (bundle.ts), so plugins still load.
import path from "node:path";
import type { PythonFacts } from "./bundle";

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

// Run as `python -P -c PROBE`: one line of JSON with what the bundle needs to know, and the
// version of ai_eval_lsp when that Python can import it (null when it cannot).
export const PROBE = [
  "import json, platform, sys",
  "try:",
  "    import ai_eval_lsp",
  "    server = getattr(ai_eval_lsp, '__version__', '')",
  "except Exception:",
  "    server = None",
  "print(json.dumps({'implementation': sys.implementation.name, 'version': list(sys.version_info[:2]),",
  "    'abiflags': getattr(sys, 'abiflags', ''), 'platform': sys.platform, 'machine': platform.machine(), 'libc': list(platform.libc_ver()),",
  "    'server': server}))",
].join("\n");

export interface Probe extends PythonFacts {
  server: string | null;
}

export function parseProbe(stdout: string): Probe {
  const lines = stdout.trim().split("\n");
  const facts = JSON.parse(lines[lines.length - 1]) as Probe;
  if (!Array.isArray(facts.version) || typeof facts.implementation !== "string") {
    throw new Error(`unexpected answer from the interpreter: ${stdout.trim().slice(0, 200)}`);
  }
  return facts;
}

// The bundled site folder goes first, so its ai_eval_lsp and dependencies win; the user's own
// PYTHONPATH and site-packages stay after it, so their plugins are still found. The separator is
// the system's (`;` on Windows).
export function withPythonPath(
  env: Record<string, string | undefined>,
  site: string,
  separator: string = path.delimiter,
): Record<string, string | undefined> {
  return { ...env, PYTHONPATH: env.PYTHONPATH ? `${site}${separator}${env.PYTHONPATH}` : site };
}

const describe = (choice: InterpreterChoice) => `${choice.python} (${choice.source})`;
// The Python in a few words, without its path (which the details give).
const SOURCE_NAMES: Record<InterpreterChoice["source"], string> = {
  setting: "the aiEval.interpreter Python",
  "python extension": "the Python extension's interpreter",
  default: "python3",
};

// What the user is told: one short sentence for the notification, and the details (what was done,
// where, the commands to run) for the output channel.
export interface Message {
  text: string;
  details: string;
}

// ai-eval-lsp installed for that Python from PyPI; from the extension's own wheels when offline
// (`wheelsFolder`, when they fit that Python).
export function installCommands(python: string, wheelsFolder?: string): string {
  const online = `${python} -m pip install ai-eval-lsp`;
  return wheelsFolder ? `${online} (offline, from this extension's wheels: ${python} -m pip install --no-index --find-links ${wheelsFolder} ai-eval-lsp)` : online;
}

export function unusableInterpreterMessage(choice: InterpreterChoice, error: string): Message {
  const lines = error.trim().split("\n");
  const cause = /unknown option:? -P/i.test(error) ? "it is older than Python 3.11 (it does not know -P)" : lines[lines.length - 1];
  return {
    text: `AI Eval cannot start its server with ${SOURCE_NAMES[choice.source]}.`,
    details: `AI Eval cannot start the server with ${describe(choice)}: ${cause}. Install Python 3.11 or later, or point the aiEval.interpreter setting at one.`,
  };
}

// `reason`: why the bundled server cannot run with that Python; none when this .vsix bundles none.
export function missingServerMessage(choice: InterpreterChoice, reason?: string): Message {
  const bundle = reason ? `, and the server bundled with this extension cannot run there: ${reason}` : "";
  return {
    text: `AI Eval cannot start: ${SOURCE_NAMES[choice.source]} has no ai-eval-lsp${reason ? ", and the bundled one does not fit it" : ""}.`,
    details:
      `ai-eval-lsp is not installed for ${describe(choice)}${bundle}. ` +
      `Install it where your ai_eval plugins are: ${installCommands(choice.python)}, ` +
      "or point the aiEval.interpreter setting at that environment's Python.",
  };
}

export function bundledServerMessage(
  choice: InterpreterChoice,
  serverVersion: string,
  python: PythonFacts,
  site: string,
  wheelsFolder: string,
): Message {
  return {
    text: `AI Eval runs its bundled ai-eval-lsp ${serverVersion}, as ${SOURCE_NAMES[choice.source]} has none installed.`,
    details:
      `${describe(choice)} has no ai-eval-lsp, so the extension unpacked the ai-eval-lsp ${serverVersion} ` +
      `it bundles for CPython ${python.version.join(".")} into ${site} and runs the server from there with ` +
      `${choice.python}; Python plugins installed for ${choice.python} are still loaded. Nothing was downloaded. ` +
      `To use your own copy instead: ${installCommands(choice.python, wheelsFolder)}.`,
  };
}
