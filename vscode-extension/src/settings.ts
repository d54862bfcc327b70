// The `aiEval` settings as the server receives them, in initializationOptions, in every
// `workspace/configuration` answer and in `workspace/didChangeConfiguration`: only the keys the
// server reads, nested as VS Code returns dotted keys, and with PHP runs off in a workspace VS Code
// does not trust (SPEC section 4, "Trust"), whatever the settings say.

export const SECTION = "aiEval";

export const SERVER_SETTINGS = [
  "rubricGlobs",
  "casesGlobs",
  "schemaFragments",
  "resultsDatabase",
  "exportEnvelopeOnComplete",
  "runTimeoutSeconds",
  "drupal.root",
  "drupal.site",
  "php.command",
  "php.run",
  "runOnSave",
  "site.database",
  "site.pollSeconds",
  "site.regressionTolerance",
] as const;

type Settings = Record<string, unknown>;

const isObject = (value: unknown): value is Settings => typeof value === "object" && value !== null && !Array.isArray(value);

function valueAt(settings: unknown, dotted: string): unknown {
  return dotted.split(".").reduce<unknown>((value, key) => (isObject(value) ? value[key] : undefined), settings);
}

function setAt(settings: Settings, dotted: string, value: unknown): void {
  const keys = dotted.split(".");
  const last = keys.pop() as string;
  let level = settings;
  for (const key of keys) {
    if (!isObject(level[key])) level[key] = {};
    level = level[key] as Settings;
  }
  level[last] = value;
}

// `section` is the `aiEval` section as VS Code's configuration API returns it (client-only keys
// such as `interpreter` included); the result holds the server's keys that are set.
export function serverSettings(section: unknown, trusted: boolean): Settings {
  const settings: Settings = {};
  for (const key of SERVER_SETTINGS) {
    const value = valueAt(section, key);
    if (value !== undefined) setAt(settings, key, value);
  }
  if (!trusted) {
    // The server then also ignores the repository's own settings files for these keys.
    setAt(settings, "php.run", false);
    setAt(settings, "workspaceTrusted", false);
  }
  return settings;
}

// One item of a `workspace/configuration` answer, given the item's section and VS Code's value for
// it. The server asks for `aiEval`; a whole-configuration item or a part of the section (`aiEval.php`)
// is shaped the same way, so no question can read past the trust override.
export function configurationAnswer(section: string | undefined, value: unknown, trusted: boolean): unknown {
  if (section === undefined || section === "") {
    return isObject(value) ? { ...value, [SECTION]: serverSettings(value[SECTION], trusted) } : value;
  }
  if (section !== SECTION && !section.startsWith(`${SECTION}.`)) {
    return value;
  }
  const inside = section.slice(SECTION.length + 1);
  if (!inside) return serverSettings(value, trusted);
  const whole: Settings = {};
  setAt(whole, inside, value);
  return valueAt(serverSettings(whole, trusted), inside) ?? null;
}
