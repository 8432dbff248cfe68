// Unit, plain parseConfig calls (no mocks): what config errors say. Secret values never appear in them,
// keys are printed the way `pulumi config set --path` takes them, and every fix is a command (no
// placeholders). test/e2e/configFix.test.ts pastes the fixes into the real CLI.
import fc from "fast-check";
import { parseConfig } from "../../../../components/config/parse";
import { ConfigError, keyOf, setCommand } from "../../../../components/config/problems";
import { SECRET_NAMES, SecretName } from "../../../../components/config/rules";
import { MINIMAL } from "../../helpers/configs";

const errorOf = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (e) {
    return e as ConfigError;
  }
  throw new Error("expected a ConfigError");
};

/** Configs with other problems beside the secrets, so every code path of the report runs. */
const brokenConfig = fc.constantFrom<Record<string, unknown>>(
  MINIMAL,
  { ...MINIMAL, api: { replicas: "two" } },
  { contentOrigin: "pulp.example.com" },
  { ...MINIMAL, database: { external: { host: "db.example.com" } }, storage: { s3: { bucket: "b" } } },
  { ...MINIMAL, instanceName: "1pulp", extraSettings: { SECRET_KEY: "x" } },
);

test("random secret values never appear in any error text", () => {
  fc.assert(
    fc.property(
      brokenConfig,
      fc.dictionary(fc.constantFrom(...SECRET_NAMES), fc.string({ minLength: 12 })),
      fc.boolean(),
      (raw, secrets, newline) => {
        const values = Object.fromEntries(
          Object.entries(secrets).map(([k, v]) => [k, newline ? `${v}\n` : v]),
        ) as Partial<Record<SecretName, string>>;
        let text = "";
        try {
          parseConfig(raw, new Set(Object.keys(values) as SecretName[]), values);
        } catch (e) {
          text = `${(e as Error).message} ${JSON.stringify((e as ConfigError).problems ?? [])}`;
        }
        for (const value of Object.values(values)) expect(text).not.toContain(value!.trim());
      },
    ),
    { numRuns: 200 },
  );
});

test("a malformed secret is reported by key, with a fix, and without its value", () => {
  const error = errorOf(() =>
    parseConfig(MINIMAL, new Set(["dbFieldsEncryptionKey", "adminPassword"]), {
      dbFieldsEncryptionKey: "not-a-fernet-key-at-all",
      adminPassword: "",
    }),
  );
  expect(error.problems.map((p) => [p.key, p.fix])).toEqual([
    ["pulp:adminPassword", "pulumi config rm pulp:adminPassword"],
    ["pulp:dbFieldsEncryptionKey", "pulumi config rm pulp:dbFieldsEncryptionKey"],
  ]);
  expect(error.message).toContain("(a secret value, not shown)");
  expect(error.message).not.toContain("not-a-fernet-key-at-all");
});

test("keys are printed as the CLI's --path takes them: nested, array items, keys with dots", () => {
  expect(keyOf(["api", "replicas"])).toBe("pulp:api.replicas");
  expect(keyOf(["dataVolumes", 0, "name"])).toBe("pulp:dataVolumes[0].name");
  expect(keyOf(["migration", "podAnnotations", "sidecar.istio.io/inject"])).toBe(
    'pulp:migration.podAnnotations["sidecar.istio.io/inject"]',
  );
  expect(setCommand("pulp:api.podAnnotations.a", "true")).toBe(
    "pulumi config set --path 'pulp:api.podAnnotations.a' --type string true",
  );
  expect(setCommand("pulp:image", "a b")).toBe("pulumi config set pulp:image 'a b'");
});

test("no fix contains a placeholder", () => {
  const configs: Record<string, unknown>[] = [
    { ...MINIMAL, api: { replicas: "two", replica: 2 } },
    { database: { cloudnativepg: { storageSize: "0" } } },
    { ...MINIMAL, dataVolumes: [{ name: "Bad", url: "ftp://x", size: "1Gi" }], instanceName: "1pulp" },
    { ...MINIMAL, migration: { podAnnotations: { "bad key!": "x" } }, scheduling: { tolerations: [{}] } },
  ];
  for (const raw of configs) {
    for (const p of errorOf(() => parseConfig(raw)).problems) {
      expect({ key: p.key, fix: p.fix }).toEqual({ key: p.key, fix: expect.not.stringMatching(/<[a-z-]+>/) });
      expect(p.fix).toMatch(/^pulumi config (set|rm) /);
    }
  }
});
