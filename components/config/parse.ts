import { z } from "zod";
import {
  ConfigError,
  ConfigProblem,
  closest,
  OUTPUT_GIVEN,
  keyOf,
  removeCommand,
  SECRET_GIVEN,
  secretSetCommand,
  setCommand,
  valueAt,
} from "./problems";
import { checkRules, checkSecrets, SecretName } from "./rules";
import { configSchema, isOutput, ParsedConfig } from "./schema";
import { checkOutputs } from "./inputs";
import { parseImage } from "./formats";
import { withEphemeralStorage } from "./ephemeral";

/** The validated, fully defaulted install. Produce it with `parseConfig`. */
export interface PulpConfig extends ParsedConfig {
  pulpcoreVersion: string;
}

/**
 * Validates raw config (keys without the `pulp:` prefix) and returns it with every default applied.
 * Throws a ConfigError listing every problem; nothing is half-applied.
 *
 * @param suppliedSecrets which secret keys (e.g. `databasePassword`) the stack config sets
 * @param secretConfigKeys which other top-level keys the stack config holds as secrets, in whole or in part
 *   (loadConfig reads it from the engine); without it, credentials in plain text are not looked for
 * @param restate how a problem with an Output's value, found once it resolves, is thrown (parseArgs:
 *   in argument terms)
 */
export function parseConfig(
  raw: Record<string, unknown>,
  suppliedSecrets: ReadonlySet<SecretName> = new Set(),
  secretValues: Partial<Record<SecretName, string>> = {},
  secretConfigKeys?: ReadonlySet<string>,
  restate?: (problems: ConfigProblem[], consequence: string) => Error,
): PulpConfig {
  const secretProblems = checkSecrets(secretValues);
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    throw new ConfigError(
      hideSecretValues([
        ...result.error.issues.flatMap((issue) => toProblems(issue, raw)),
        ...secretProblems,
      ]),
    );
  }
  const problems = [...checkRules(result.data, raw, suppliedSecrets, secretConfigKeys), ...secretProblems];
  if (problems.length > 0) throw new ConfigError(hideSecretValues(problems));
  const image = parseImage(result.data.image);
  const data = withEphemeralStorage(result.data, raw);
  return checkOutputs({ ...data, pulpcoreVersion: data.pulpcoreVersion ?? image?.tag ?? "" }, restate);
}

/** A backup's URL is a credential (usually presigned): never shown, whatever the problem with it. */
function hideSecretValues(problems: ConfigProblem[]): ConfigProblem[] {
  return problems.map((p) => (p.key === keyOf(SECRET_URL) ? { ...p, given: SECRET_GIVEN } : p));
}
const SECRET_URL = ["restore", "http", "url"];

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
  if (isOutput(given)) return [outputProblem(issue.path)];
  let message = issue.message;
  if (issue.code === "invalid_type" && given === undefined) message = `is required (${issue.message})`;
  else if (issue.code === "invalid_type" && ["object", "record", "array"].includes(issue.expected))
    return [shapeProblem(issue.path, issue.expected, given, raw)];
  else if (issue.code === "invalid_type" && issue.expected !== "int")
    message = `must be of type ${issue.expected}`;
  else if (issue.code === "invalid_key") message = issue.issues.map((i) => i.message).join("; ");
  else if (issue.code === "invalid_value")
    message = `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  else if (issue.code === "invalid_union") message = unionMessage(issue.path);
  return [{ key: keyOf(issue.path), given, message, fix: fixFor(issue.path, raw) }];
}

/**
 * An Output where the component needs the value itself: it reads the install's history in the namespace,
 * and plans the upgrade from the image, before it creates anything.
 */
function outputProblem(path: PropertyKey[]): ConfigProblem {
  return {
    key: keyOf(path),
    given: OUTPUT_GIVEN,
    message:
      "must be a plain value, not an Output: the component decides its plan from it before it creates anything " +
      "(Outputs are taken for storage classes, the ingress host, TLS Secret and annotation values)",
    fix: "pass the value itself (a string known when the program runs)",
  };
}

/**
 * For objects that turn a feature on (no default): one field and a value that works, so a fix can set it
 * after removing what was there. Paths with `*` for array items.
 */
const OBJECT_EXAMPLES: Record<string, [PropertyKey[], string | number | boolean]> = {
  "database.cloudnativepg": [["instances"], 3],
  "database.external": [["host"], "db.example.com"],
  "storage.pvc": [["size"], "50Gi"],
  "storage.s3": [["bucket"], "pulp-artifacts"],
  "backup.s3": [["bucket"], "pulp-backups"],
  "restore.http": [["size"], "10Gi"],
  database: [["cloudnativepg", "instances"], 3],
};
/** For objects with a default, a field to show in the message (removing the object is the fix). */
const FIELD_EXAMPLES: Record<string, [PropertyKey[], string | number | boolean]> = {
  api: [["replicas"], 2],
  content: [["replicas"], 2],
  worker: [["replicas"], 2],
  web: [["enabled"], true],
  redis: [["enabled"], true],
  ingress: [["host"], "pulp.example.com"],
  backup: [["enabled"], true],
  resources: [["requests", "memory"], "512Mi"],
  requests: [["memory"], "512Mi"],
  limits: [["memory"], "2Gi"],
  probes: [["startup", "failureThreshold"], 30],
  startup: [["failureThreshold"], 30],
  readiness: [["periodSeconds"], 10],
  liveness: [["periodSeconds"], 10],
  podDisruptionBudget: [["maxUnavailable"], 1],
  volume: [["size"], "100Gi"],
  namespaceQuota: [["requestsStorage"], "100Gi"],
  migration: [["backoffLimit"], 2],
  trustedCa: [["configMap"], "pulp-ca"],
  scheduling: [["nodeSelector", "kubernetes.io/os"], "linux"],
};

const pattern = (path: readonly PropertyKey[]) =>
  path.map((p) => (typeof p === "number" ? "*" : String(p))).join(".");

/**
 * A value of the wrong type where an object, map or list belongs: the message shows the shape with a
 * command that sets one field, and the fix removes the value (its default applies), or for a feature's
 * object replaces it with that one field.
 */
function shapeProblem(
  path: readonly PropertyKey[],
  expected: string,
  given: unknown,
  raw: Record<string, unknown>,
): ConfigProblem {
  const key = keyOf(path);
  const rm = removeCommand(key);
  const known = knownKeysAt(configSchema, path);
  if (expected === "array") {
    const example = keyOf([...path, 0]);
    return {
      key,
      given,
      message: `must be a list, not a single value: set its items one by one with --path, e.g. ${setCommand(example)}`,
      fix: fixFor(path, raw),
    };
  }
  if (expected === "record") {
    return {
      key,
      given,
      message: `must be a map of names to values: set each entry with --path, e.g. ${setCommand(keyOf([...path, "name"]), "value")}`,
      fix: fixFor(path, raw),
    };
  }
  const feature = OBJECT_EXAMPLES[pattern(path)];
  const field = feature ?? FIELD_EXAMPLES[String(path.at(-1))];
  const example = field ? setCommand(keyOf([...path, ...field[0]]), field[1]) : undefined;
  const fields = known.length > 0 ? ` with the keys ${known.join(", ")}` : "";
  const how = example ? `; set each with --path, e.g. ${example}` : "; set each with --path";
  return {
    key,
    given,
    message: `must be an object${fields}, not a single value${how}`,
    fix: feature && example ? `${rm} && ${example}` : fixFor(path, raw),
  };
}

/** Moves a misspelt key's value to the right name when it is a scalar; else removes it. */
function renameFix(from: PropertyKey[], to: PropertyKey[], raw: Record<string, unknown>): string {
  const value = valueAt(raw, from);
  const scalar = ["string", "number", "boolean"].includes(typeof value);
  return scalar
    ? `${removeCommand(keyOf(from))} && ${setCommand(keyOf(to), value as string | number | boolean)}`
    : removeCommand(keyOf(from));
}

/**
 * Values for keys a fix sets rather than removes, so it is still a command that works as printed: by path
 * first, then by the key's last name.
 */
const PATH_EXAMPLES: Record<string, string> = {
  // Optional, but needed once their feature is on: removing them would only bring the next problem.
  "ingress.host": "pulp.example.com",
  "backup.image": "ghcr.io/cloudnative-pg/postgresql:17",
};
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
  // A backup's URL is secret config: the CLI asks for it.
  if (pattern(path) === pattern(SECRET_URL)) return secretSetCommand(keyOf(path));
  const leaf = path.at(-1);
  const example = PATH_EXAMPLES[pattern(path)] ?? (typeof leaf === "string" ? EXAMPLES[leaf] : undefined);
  if (path.length > 0 && removable(configSchema, path) && !(example && neededAfterRemoval(path, raw)))
    return removeCommand(keyOf(path));
  if (example) return setCommand(keyOf(path), example);
  for (let n = path.length - 1; n > 0; n--) {
    if (removable(configSchema, path.slice(0, n))) return removeCommand(keyOf(path.slice(0, n)));
  }
  return setCommand(keyOf(path));
}

/** Whether removing the key at `path` only makes a rule ask for it (a feature that is on needs it). */
function neededAfterRemoval(path: readonly PropertyKey[], raw: Record<string, unknown>): boolean {
  const after = structuredClone(raw);
  const parent = valueAt(after, path.slice(0, -1));
  if (parent === null || typeof parent !== "object") return false;
  delete (parent as Record<PropertyKey, unknown>)[path.at(-1)!];
  const parsed = configSchema.safeParse(after);
  return parsed.success && checkRules(parsed.data, after, new Set()).some((p) => p.key === keyOf(path));
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
