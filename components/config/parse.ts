import { z } from "zod";
import { ConfigError, ConfigProblem, closest, keyOf, removeCommand, setCommand, valueAt } from "./problems";
import { checkRules, checkSecrets, SecretName } from "./rules";
import { configSchema, ParsedConfig } from "./schema";
import { parseImage } from "./formats";

/** The validated, fully defaulted install. Produce it with `parseConfig`. */
export interface PulpConfig extends ParsedConfig {
  pulpcoreVersion: string;
}

/**
 * Validates raw config (keys without the `pulp:` prefix) and returns it with every default applied.
 * Throws a ConfigError listing every problem; nothing is half-applied.
 *
 * @param suppliedSecrets which secret keys (e.g. `databasePassword`) the stack config sets
 */
export function parseConfig(
  raw: Record<string, unknown>,
  suppliedSecrets: ReadonlySet<SecretName> = new Set(),
  secretValues: Partial<Record<SecretName, string>> = {},
) {
  const secretProblems = checkSecrets(secretValues);
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    throw new ConfigError([
      ...result.error.issues.flatMap((issue) => toProblems(issue, raw)),
      ...secretProblems,
    ]);
  }
  const problems = [...checkRules(result.data, raw, suppliedSecrets), ...secretProblems];
  if (problems.length > 0) throw new ConfigError(problems);
  const image = parseImage(result.data.image);
  return { ...result.data, pulpcoreVersion: result.data.pulpcoreVersion ?? image?.tag ?? "" } as PulpConfig;
}

function toProblems(issue: z.core.$ZodIssue, raw: Record<string, unknown>): ConfigProblem[] {
  if (issue.code === "unrecognized_keys") {
    const known = knownKeysAt(configSchema, issue.path);
    return issue.keys.map((name) => {
      const path = [...issue.path, name];
      const suggestion = closest(name, known);
      return {
        key: keyOf(path),
        given: valueAt(raw, path),
        message: `unknown key "${name}"${suggestion ? `; did you mean "${suggestion}"?` : ""} Known keys here: ${known.join(", ")}`,
        fix: suggestion ? renameFix(path, [...issue.path, suggestion], raw) : removeCommand(keyOf(path)),
      };
    });
  }
  const given = valueAt(raw, issue.path);
  let message = issue.message;
  if (issue.code === "invalid_type" && given === undefined) message = `is required (${issue.message})`;
  else if (issue.code === "invalid_type" && issue.expected !== "int")
    message = `must be of type ${issue.expected}`;
  else if (issue.code === "invalid_key") message = issue.issues.map((i) => i.message).join("; ");
  else if (issue.code === "invalid_value")
    message = `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  else if (issue.code === "invalid_union") message = unionMessage(issue.path);
  return [{ key: keyOf(issue.path), given, message, fix: fixFor(issue.path, raw) }];
}

/** Moves a misspelt key's value to the right name when it is a scalar; else removes it. */
function renameFix(from: PropertyKey[], to: PropertyKey[], raw: Record<string, unknown>): string {
  const value = valueAt(raw, from);
  const scalar = ["string", "number", "boolean"].includes(typeof value);
  return scalar
    ? `${removeCommand(keyOf(from))} && ${setCommand(keyOf(to), value as string | number | boolean)}`
    : removeCommand(keyOf(from));
}

/** Values for required keys without a default, so their fix is still a command that works as printed. */
const EXAMPLES: Record<string, string> = {
  contentOrigin: "https://pulp.example.com",
  host: "db.example.com",
  url: "https://example.com/data.tar",
  size: "10Gi",
  name: "data",
  bucket: "pulp-artifacts",
  accessKeyId: "AKIAEXAMPLE",
  mountPath: "/mnt/data",
};

/**
 * A command that makes the value at `path` valid: removing it where the schema has a default or the key is
 * optional (the default then applies), else setting an example of a valid value, else removing the
 * nearest enclosing key that may be removed.
 */
export function fixFor(path: readonly PropertyKey[], raw: Record<string, unknown> = {}): string {
  // A toleration's operator: removing it leaves "Equal", which needs a key; say which operator fits.
  if (path.at(-1) === "operator" && path.includes("tolerations")) {
    const hasKey = typeof valueAt(raw, [...path.slice(0, -1), "key"]) === "string";
    return setCommand(
      keyOf(path),
      hasKey && valueAt(raw, [...path.slice(0, -1), "value"]) ? "Equal" : "Exists",
    );
  }
  if (path.length > 0 && removable(configSchema, path)) return removeCommand(keyOf(path));
  const leaf = path.at(-1);
  if (typeof leaf === "string" && EXAMPLES[leaf]) return setCommand(keyOf(path), EXAMPLES[leaf]);
  for (let n = path.length - 1; n > 0; n--) {
    if (removable(configSchema, path.slice(0, n))) return removeCommand(keyOf(path.slice(0, n)));
  }
  return setCommand(keyOf(path));
}

/** Whether the key at `path` is optional or has a default (removing it leaves a valid config). */
function removable(schema: z.ZodType, path: readonly PropertyKey[]): boolean {
  let current: unknown = schema;
  let inRecord = false;
  for (const part of path) {
    current = unwrap(current);
    const def = (current as z.ZodType)?._zod?.def as unknown as Record<string, unknown> | undefined;
    inRecord = def?.type === "record";
    if (def?.type === "object") current = (def.shape as Record<string, unknown>)[String(part)];
    else if (def?.type === "record") current = def.valueType;
    else if (def?.type === "array") current = def.element;
    else return false;
    if (current === undefined) return def?.type === "object";
  }
  // An entry of a map (annotations, nodeSelector, extraSettings) may always go.
  const type = ((current as z.ZodType)?._zod?.def as unknown as { type?: string })?.type;
  return inRecord || ["default", "prefault", "optional"].includes(type ?? "");
}

function unionMessage(path: readonly PropertyKey[]): string {
  if (path.at(-1) === "podDisruptionBudget") {
    return "must be either {maxUnavailable: N} with N >= 1 or {minAvailable: N} (not both, and maxUnavailable 0 would block every node drain)";
  }
  return "does not match any allowed form";
}

/** The keys an object schema allows at `path`, for "did you mean" hints. */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current: unknown = schema;
  for (const part of [...path, undefined]) {
    current = unwrap(current);
    if (part === undefined) break;
    const def = (current as z.ZodType)._zod.def as unknown as Record<string, unknown>;
    if (def.type === "object") current = (def.shape as Record<string, unknown>)[String(part)];
    else if (def.type === "array") current = def.element;
    else return [];
  }
  const def = (current as z.ZodType)?._zod?.def as unknown as Record<string, unknown> | undefined;
  if (def?.type === "object") return Object.keys(def.shape as object);
  if (def?.type === "union") return (def.options as z.ZodType[]).flatMap((o) => knownKeysAt(o, []));
  return [];
}

function unwrap(schema: unknown): unknown {
  let current = schema as z.ZodType;
  for (;;) {
    const def = current._zod.def as unknown as Record<string, unknown>;
    if (["default", "prefault", "optional", "nullable", "readonly", "catch"].includes(def.type as string)) {
      current = def.innerType as z.ZodType;
    } else if (def.type === "pipe") {
      current = def.in as z.ZodType;
    } else {
      return current;
    }
  }
}
