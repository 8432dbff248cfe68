import { z } from "zod";
import { ConfigError, ConfigProblem, closest, keyOf, removeCommand, setCommand, valueAt } from "./problems";
import { checkRules, SecretName } from "./rules";
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
) {
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    throw new ConfigError(result.error.issues.flatMap((issue) => toProblems(issue, raw)));
  }
  const problems = checkRules(result.data, raw, suppliedSecrets);
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
        fix: suggestion
          ? `${removeCommand(keyOf(path))} && ${setCommand(keyOf([...issue.path, suggestion]))}`
          : removeCommand(keyOf(path)),
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
  return [{ key: keyOf(issue.path), given, message, fix: setCommand(keyOf(issue.path)) }];
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
