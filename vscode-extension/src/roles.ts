// Which documents the server sees, and what its `aiEval/documentRole` notification does to them.
// The server alone decides which YAML is a rubric or cases file (SPEC section 2: names, a
// `rubrics` folder at any depth, the modeline, the globs), so the client sends it every YAML
// document and shows the ones it names in the AI Eval language.

export const AI_EVAL_LANGUAGE = "ai-eval-yaml";
export const YAML_LANGUAGE = "yaml";
export const DOCUMENT_ROLE_NOTIFICATION = "aiEval/documentRole";

export const DOCUMENT_SELECTOR = [YAML_LANGUAGE, AI_EVAL_LANGUAGE].flatMap((language) =>
  ["file", "untitled"].map((scheme) => ({ language, scheme })),
);

export type DocumentRole = "rubric" | "cases" | null;

export interface DocumentRoleParams {
  uri: string;
  role: DocumentRole;
}

// The language a document should switch to, or undefined to leave it. Only plain YAML is switched
// to the AI Eval language, and only documents this extension switched go back: a file that is
// AI Eval YAML by its name, or one the user set by hand, stays as it is.
export function languageForRole(role: DocumentRole, currentLanguage: string, switchedByExtension: boolean): string | undefined {
  if (role !== null && currentLanguage === YAML_LANGUAGE) {
    return AI_EVAL_LANGUAGE;
  }
  if (role === null && currentLanguage === AI_EVAL_LANGUAGE && switchedByExtension) {
    return YAML_LANGUAGE;
  }
  return undefined;
}

// The targets whose run history a document's "Show Run History" offers first: a rubric's id; a
// cases file's rubric (without `@version`) and the site target it mirrors (`site_target`). Read
// from its top-level keys as they are written; the user may still name another.
export interface HistoryTarget {
  target: string;
  what: string;
}

const topLevel = (text: string, key: string): string | undefined =>
  new RegExp(`^${key}:[ \\t]*["']?([^"'\\s#@]+)`, "m").exec(text)?.[1];

export function historyTargets(role: DocumentRole | undefined, text: string): HistoryTarget[] {
  const found: Array<[string | undefined, string]> =
    role === "rubric" ? [[topLevel(text, "id"), "this rubric"]]
    : role === "cases" ? [[topLevel(text, "rubric"), "the rubric these cases run"], [topLevel(text, "site_target"), "the site target these cases mirror"]]
    : [];
  return found.filter((pair): pair is [string, string] => pair[0] !== undefined).map(([target, what]) => ({ target, what }));
}
