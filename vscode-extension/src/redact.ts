// The site's password kept out of the output channel. With `aiEval.trace.server` at `verbose`,
// vscode-languageclient writes every message whole, and the settings sent to the server hold
// `aiEval.site.database`, password included: the trace passes the same redaction as everything
// the server itself says (SPEC section 6, "Secrets never leave"; the server's `drupal/secrets.py`).

export const MASK = "***";
export const SHORTEST = 4;

// The password of a database URL as the server reads it: the user information ends at the last
// `@`, the password after the user's `:`. As written, and percent-decoded where it decodes.
export function passwordsOf(url: unknown): string[] {
  if (typeof url !== "string") return [];
  const rest = url.trim().replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, "");
  const at = rest.lastIndexOf("@");
  if (at < 0) return [];
  const userinfo = rest.slice(0, at);
  const colon = userinfo.indexOf(":");
  if (colon < 0) return [];
  const written = userinfo.slice(colon + 1);
  const found = [written];
  try {
    found.push(decodeURIComponent(written));
  } catch {
    // not percent-encoded as UTF-8: the server refuses it; as written is all there is
  }
  return found;
}

// Each way a secret is written where the trace may show it: as it is, percent-encoded, and
// escaped as JSON (how the trace writes a message's parameters).
export function formsOf(secret: string): string[] {
  const encoded = [encodeURIComponent(secret), encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())];
  const forms = new Set([secret, ...encoded]);
  for (const form of [...forms]) forms.add(JSON.stringify(form).slice(1, -1));
  return [...forms].filter((form) => form.length >= SHORTEST);
}

// A redaction of the secrets `current()` gives at the time of each call (settings change).
export function redactor(current: () => string[]): (text: string) => string {
  return (text) => {
    const forms = current().flatMap(formsOf).sort((a, b) => b.length - a.length);
    return forms.reduce((redacted, form) => redacted.split(form).join(MASK), text);
  };
}

const WRITERS = new Set(["append", "appendLine", "replace", "trace", "debug", "info", "warn", "error"]);

// `channel` (an output channel, a log output channel), each text written to it redacted first;
// everything else (its log level, its events, show) as it is.
export function redactingChannel<T extends object>(channel: T, redact: (text: string) => string): T {
  return new Proxy(channel, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (typeof property !== "string" || !WRITERS.has(property)) return value.bind(target);
      return (message: unknown, ...rest: unknown[]) =>
        value.call(target, typeof message === "string" ? redact(message) : message, ...rest);
    },
  });
}
