// Pulumi.yaml declares every top-level key the schema knows, with the schema's own defaults, so
// `pulumi config` shows a person what they get; and the committed dev stack is valid.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { parseConfig } from "../../../components/config/parse";
import { SECRET_NAMES } from "../../../components/config/rules";
import { configSchema } from "../../../components/config/schema";
import { MINIMAL, rawOf, REPO, stackConfig } from "../helpers/configs";

const project = yaml.load(fs.readFileSync(path.join(REPO, "Pulumi.yaml"), "utf8")) as {
  name: string;
  config: Record<string, { type?: string; description?: string; default?: unknown; secret?: boolean }>;
};

test("the project is pulp on nodejs", () => {
  expect(project.name).toBe("pulp");
});

test("every schema key and every secret is declared, and nothing else", () => {
  const schemaKeys = Object.keys(configSchema.shape);
  expect(Object.keys(project.config).sort()).toEqual([...schemaKeys, ...SECRET_NAMES].sort());
  for (const [key, decl] of Object.entries(project.config)) {
    expect({ key, type: typeof decl.type, description: typeof decl.description }).toEqual({
      key,
      type: "string",
      description: "string",
    });
  }
  for (const name of SECRET_NAMES) expect(project.config[name].secret).toBe(true);
});

test("declared defaults are the schema's defaults", () => {
  const defaults = parseConfig(MINIMAL) as unknown as Record<string, unknown>;
  for (const [key, decl] of Object.entries(project.config)) {
    if (decl.default === undefined) continue;
    expect({ key, value: decl.default }).toEqual({ key, value: defaults[key] });
  }
});

test("scalar keys without a default are exactly the optional and required ones", () => {
  const scalar = Object.entries(project.config).filter(
    ([, d]) => d.type !== "object" && !(d.type === "array" && d.default === undefined),
  );
  const withoutDefault = scalar
    .filter(([, d]) => d.default === undefined)
    .map(([k]) => k)
    .sort();
  expect(withoutDefault).toEqual(["contentOrigin", "pulpcoreVersion", ...SECRET_NAMES].sort());
});

test("the dev stack config is valid", () => {
  expect(() => parseConfig(rawOf(stackConfig("dev")))).not.toThrow();
});
