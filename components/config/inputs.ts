// Config values a program passes as Outputs of other resources (schema.ts orOutput: storage classes, the
// ingress host, TLS Secret and annotation values). The schema lets them through unresolved; here each is
// checked, once it resolves, by the same schema a plain value meets, and a bad one fails the update with
// its key and fix, as parseConfig would have before anything was created.
import * as pulumi from "@pulumi/pulumi";
import { ConfigError, ConfigProblem, keyOf, OUTPUT_GIVEN, TAKERS_HELD } from "./problems";
import { isOutput, OUTPUT_CHECKS } from "./schema";

/**
 * The config with every Output in it replaced by one that fails the update when its value breaks the
 * schema. `restate` puts a problem in the caller's terms (parseArgs: argument paths).
 */
export function checkOutputs<T>(config: T, restate: Restate = configError): T {
  return walk(config, [], restate) as T;
}

type Restate = (problems: ConfigProblem[], consequence: string) => Error;
const configError: Restate = (problems, consequence) => new ConfigError(problems, consequence);

function walk(value: unknown, path: PropertyKey[], restate: Restate): unknown {
  if (isOutput(value)) {
    const schema = OUTPUT_CHECKS.get(value);
    if (!schema) return value;
    return (value as pulumi.Output<unknown>).apply((resolved) => {
      const result = schema.safeParse(resolved);
      if (result.success) return result.data;
      throw restate(
        result.error.issues.map((issue) => ({
          key: keyOf(path),
          given: OUTPUT_GIVEN,
          message: `${issue.message} (the Output given resolved to a value that is not)`,
          fix: "correct the resource the Output comes from, or pass a plain value",
        })),
        TAKERS_HELD,
      );
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => walk(item, [...path, i], restate));
  if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, [...path, k], restate)]));
  }
  return value;
}
