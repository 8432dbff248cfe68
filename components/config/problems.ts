export const CONFIG_NAMESPACE = "pulp";

/** One thing wrong with the stack config: where, what was given, what is allowed, how to fix it. */
export interface ConfigProblem {
  /** Config key path as `pulumi config set --path` takes it, e.g. `pulp:api.replicas`. */
  key: string;
  given: unknown;
  message: string;
  /** One whole command that fixes it, pasteable as printed. */
  fix: string;
  /** Other whole commands that fix it another way (another choice), each pasteable alone. */
  alternatives?: string[];
}

/**
 * Every problem with the config at once. A RunError to Pulumi, so it prints the message without a stack
 * trace: a typo in the stack config is not a bug in the program. Pulumi recognises RunErrors by this marker
 * (errors.js `RunError.isInstance`), which spares the validation kit, and its tests, loading the SDK.
 */
export class ConfigError extends Error {
  readonly __pulumiRunError = true;
  constructor(
    readonly problems: ConfigProblem[],
    consequence?: string,
  ) {
    super(formatProblems(problems, consequence));
    this.name = "ConfigError";
  }
}

export function formatProblems(problems: ConfigProblem[], consequence = NOTHING_CHANGED): string {
  const lines = problems.map(
    (p) =>
      `  - ${p.key}: ${p.message}\n      given: ${describe(p.given)}\n      fix:   ${p.fix}` +
      (p.alternatives ?? []).map((a) => `\n      or:    ${a}`).join(""),
  );
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  return `Invalid Pulp stack config (${count}); ${consequence}:\n${lines.join("\n")}`;
}

const NOTHING_CHANGED = "nothing was created or changed";
/** An Output's value is checked when it resolves, in the update: only what takes it is held back. */
export const TAKERS_HELD = "what takes this value was not created or changed";

/** The `given` of a problem with a secret value: the value itself never reaches a message. */
export const SECRET_GIVEN = Symbol("secret value, not shown");

/** The `given` of a problem with an Output's value: it may be anything, a credential too. */
export const OUTPUT_GIVEN = Symbol("an Output's value, not shown");

function describe(value: unknown): string {
  if (value === SECRET_GIVEN) return "(a secret value, not shown)";
  if (value === OUTPUT_GIVEN) return "(an Output's value, not shown)";
  if (value === undefined) return "(not set)";
  const text = JSON.stringify(redactUrls(value));
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/**
 * The value with the credentials of every URL in it left out: user info and query (a presigned URL's
 * signature, an Azure SAS), e.g. "https://s3.example.com/b/x.tar?(query not shown)".
 */
export function redactUrls(value: unknown): unknown {
  if (typeof value === "string") {
    const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*@)?([^?#]*)([?#].*)?$/i.exec(value);
    if (!match || (!match[2] && !match[4])) return value;
    return `${match[1]}${match[2] ? "(user info not shown)@" : ""}${match[3]}${match[4] ? "?(query not shown)" : ""}`;
  }
  if (Array.isArray(value)) return value.map(redactUrls);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactUrls(v)]));
  return value;
}

/** Whether a key needs `--path` (it names something inside a top-level key). */
const isPath = (key: string) => /[.[]/.test(key.slice(key.indexOf(":") + 1));

/** A shell word: as is when safe, else single-quoted. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command that sets a key, pasteable as printed. Pass booleans and numbers as such: with `--path` the
 * CLI stores "true", "false" and integers as booleans and numbers and everything else as a string, so a
 * string that looks like a boolean or an integer gets `--type string`, and a fraction `--type float`. (A
 * boolean or number key's fix given as a string stored a string, and the same problem came back.)
 * Top-level keys are always strings to the CLI; loadConfig decodes them (`decode`).
 */
export function setCommand(key: string, value: string | number | boolean = "<value>"): string {
  // The bare default is the delivery program's placeholder (its fixes are not part of this change).
  const word = value === "<value>" ? value : shellQuote(String(value));
  const type =
    typeof value === "string" && /^(true|false|-?\d+)$/.test(value)
      ? " --type string"
      : typeof value === "number" && !Number.isInteger(value)
        ? " --type float"
        : "";
  // The CLI refuses a value that looks random under a key named like a secret unless told it is not one
  // (pkg/cmd/pulumi/config looksLikeSecret): `pulp:ingress.tlsSecretName`, `pulp:imagePullSecrets`. It
  // takes --plaintext or --type, not both (a typed value does not look random).
  const plain = SECRET_LOOKING_KEY.test(key) && !(isPath(key) && type) ? " --plaintext" : "";
  if (!isPath(key)) return `pulumi config set${plain} ${key} ${word}`;
  return `pulumi config set${plain} --path '${key}'${type} ${word}`;
}

/** The key names the Pulumi CLI checks for secret-looking values (its keyPattern, 3.248.0). */
const SECRET_LOOKING_KEY = /passwd|pass|password|pwd|secret|token/i;

/**
 * The command that sets a secret key: without a value, so the CLI asks for it without echoing it (or reads
 * it from stdin), and the value never lands in a shell history or in the message.
 */
export function secretSetCommand(key: string): string {
  return isPath(key) ? `pulumi config set --secret --path '${key}'` : `pulumi config set --secret ${key}`;
}

export function removeCommand(key: string): string {
  return isPath(key) ? `pulumi config rm --path '${key}'` : `pulumi config rm ${key}`;
}

/** The closest known name, for "did you mean" hints on typos. */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}

/**
 * The key as `pulumi config set --path` takes it: `pulp:api.replicas`, `pulp:dataVolumes[0].name`, and keys
 * with dots or slashes quoted, `pulp:migration.podAnnotations["sidecar.istio.io/inject"]`.
 */
export function keyOf(path: readonly PropertyKey[]): string {
  let key = CONFIG_NAMESPACE + ":";
  path.forEach((part, i) => {
    if (typeof part === "number") key += `[${part}]`;
    else if (i === 0 || /^[A-Za-z_][A-Za-z0-9_-]*$/.test(String(part)))
      key += (i === 0 ? "" : ".") + String(part);
    else key += `[${JSON.stringify(String(part))}]`;
  });
  return key;
}

export function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const part of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}
