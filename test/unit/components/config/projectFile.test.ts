// Pulumi.yaml declares every top-level key the schema knows, with the schema's own defaults, so
// `pulumi config` shows a person what they get; and the committed dev stack is valid.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { parseConfig } from "../../../../components/config/parse";
import { SECRET_NAMES } from "../../../../components/config/rules";
import { configSchema } from "../../../../components/config/schema";
import { MINIMAL, rawOf, REPO, stackConfig } from "../../helpers/configs";

const project = yaml.load(fs.readFileSync(path.join(REPO, "Pulumi.yaml"), "utf8")) as {
  name: string;
  config: Record<string, { type?: string; description?: string; default?: unknown; secret?: boolean }>;
};

test("the project is pulp on nodejs", () => {
  expect(project.name).toBe("pulp");
});

test("every schema key is declared with a type and a description; secrets are not declared", () => {
  const schemaKeys = Object.keys(configSchema.shape);
  expect(Object.keys(project.config).sort()).toEqual([...schemaKeys].sort());
  for (const [key, decl] of Object.entries(project.config)) {
    expect({ key, type: typeof decl.type, description: typeof decl.description }).toEqual({
      key,
      type: "string",
      description: "string",
    });
  }
  for (const name of SECRET_NAMES) expect(project.config[name]).toBeUndefined();
});

test("only contentOrigin has no default; database's default {} is refused naming both choices", () => {
  const required = Object.entries(project.config)
    .filter(([, d]) => d.default === undefined)
    .map(([k]) => k);
  expect(required.sort()).toEqual(["contentOrigin"]);
  // Declared required, the CLI refused a stack without it naming only the key ("missing configuration
  // value"); with the default the program names both databases, each with its command.
  expect(project.config.database.default).toEqual({});
  expect(() => parseConfig({ ...MINIMAL, database: {} })).toThrow(
    /pulp:database: names no database; choose one: pulp:database.cloudnativepg .* or pulp:database.external/,
  );
});

test("each declared default means the same as leaving the key to the schema", () => {
  const bySchema = parseConfig(MINIMAL) as unknown as Record<string, unknown>;
  for (const [key, decl] of Object.entries(project.config)) {
    // database's default stands for "not chosen yet" (test above).
    if (decl.default === undefined || key === "database") continue;
    const byProject = parseConfig({ ...MINIMAL, [key]: decl.default }) as unknown as Record<string, unknown>;
    expect({ key, value: byProject[key] }).toEqual({ key, value: bySchema[key] });
  }
});

test("the dev stack config is valid and holds no secret: CloudNativePG makes the database password", () => {
  const dev = stackConfig("dev");
  const supplied = new Set(SECRET_NAMES.filter((name) => dev[`pulp:${name}`] !== undefined));
  expect([...supplied]).toEqual([]);
  expect(() => parseConfig(rawOf(dev), supplied)).not.toThrow();
});
