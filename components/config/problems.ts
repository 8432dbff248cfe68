import * as pulumi from "@pulumi/pulumi";

export const CONFIG_NAMESPACE = "pulp";

/** One thing wrong with the stack config: where, what was given, what is allowed, how to fix it. */
export interface ConfigProblem {
  /** Config key path as `pulumi config set --path` takes it, e.g. `pulp:api.replicas`. */
  key: string;
  given: unknown;
  message: string;
  fix: string;
}

/**
 * Every problem with the config at once. A RunError, so Pulumi prints the message without a stack trace:
 * a typo in the stack config is not a bug in the program.
 */
export class ConfigError extends pulumi.RunError {
  constructor(readonly problems: ConfigProblem[]) {
    super(formatProblems(problems));
    this.name = "ConfigError";
  }
}

export function formatProblems(problems: ConfigProblem[]): string {
  const lines = problems.map(
    (p) => `  - ${p.key}: ${p.message}\n      given: ${describe(p.given)}\n      fix:   ${p.fix}`,
  );
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  return `Invalid Pulp stack config (${count}); nothing was created or changed:\n${lines.join("\n")}`;
}

function describe(value: unknown): string {
  if (value === undefined) return "(not set)";
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** The command that sets a key, in the form a person can paste. */
export function setCommand(key: string, value = "<value>"): string {
  return key.includes(".")
    ? `pulumi config set --path '${key}' ${value}`
    : `pulumi config set ${key} ${value}`;
}

export function removeCommand(key: string): string {
  return key.includes(".") ? `pulumi config rm --path '${key}'` : `pulumi config rm ${key}`;
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

export function keyOf(path: readonly PropertyKey[]): string {
  let key = CONFIG_NAMESPACE + ":";
  path.forEach((part, i) => {
    if (typeof part === "number") key += `[${part}]`;
    else key += (i === 0 ? "" : ".") + String(part);
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
