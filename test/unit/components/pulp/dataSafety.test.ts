// Nothing that holds data (artifacts, the database, the keys) is replaced or deleted by a config change,
// and the keys are generated once and never again.
import fc from "fast-check";
import { generatedSecretProvider } from "../../../../components/secrets/generatedSecret";
import { MockRun, Registered } from "../../helpers/pulumiMocks";
import { MINIMAL } from "../../helpers/configs";
import { CNPG, PVC, render, SECRET } from "../../helpers/render";

const GENERATED = "pulumi-nodejs:dynamic/pulp:GeneratedSecret";
// Not the admin password's Secret: it changes by design (components/secrets/pulpSecrets.ts), its value kept
// in the stack config or the protected GeneratedSecret.
const KEY_SECRETS = ["pulp-secret-key", "pulp-db-fields-encryption"];

/** Resources that hold data, with what identifies them to the engine (a change there is a replacement). */
function dataResources(run: MockRun): Record<string, Registered> {
  const result: Record<string, Registered> = {};
  for (const r of [...run.ofType(PVC), ...run.ofType(CNPG), ...run.ofType(GENERATED)]) result[r.urn] = r;
  for (const name of KEY_SECRETS) {
    const secret = run.k8s("Secret", name);
    result[secret.urn] = secret;
  }
  return result;
}

const identity = (r: Registered) => ({
  urn: r.urn,
  name: r.inputs.metadata?.name,
  namespace: r.inputs.metadata?.namespace,
  kind: r.inputs.kind,
});

/** Random config changes a person might make to a running install (same namespace and instance). */
const mutation = fc.record(
  {
    image: fc.constantFrom("quay.io/pulp/pulp-minimal:3.85.0", "quay.io/pulp/pulp-minimal:3.86.1"),
    contentOrigin: fc.constantFrom("https://pulp.example.com", "https://repo.example.org:8443"),
    apiRoot: fc.constantFrom("/pulp/", "/api/"),
    api: fc.record({ replicas: fc.integer({ min: 0, max: 6 }) }),
    worker: fc.record({
      replicas: fc.integer({ min: 0, max: 6 }),
      terminationGracePeriodSeconds: fc.integer({ min: 30, max: 7200 }),
    }),
    web: fc.record({ enabled: fc.boolean(), clientMaxBodySize: fc.constantFrom("1g", "10g") }),
    cacheEnabled: fc.boolean(),
    tokenAuth: fc.boolean(),
    maintenance: fc.boolean(),
    allowedContentChecksums: fc.constantFrom(["sha256"], ["sha256", "sha512"]),
    storage: fc.record({ pvc: fc.record({ size: fc.constantFrom("50Gi", "80Gi") }) }),
    database: fc.record({
      cloudnativepg: fc.record({
        instances: fc.integer({ min: 1, max: 5 }),
        storageSize: fc.constantFrom("10Gi", "20Gi"),
      }),
    }),
    extraSettings: fc.dictionary(
      fc.constantFrom("TELEMETRY", "ANALYTICS", "REMOTE_USER_ENVIRON_NAME"),
      fc.boolean(),
    ),
  },
  { requiredKeys: [] },
);

// Each run renders the whole program (about a second). `npm test` runs a few with a fixed seed, so it
// stays fast and repeatable; `npm run test:thorough` runs the full count with a fresh seed.
const PROPERTY_RUNS = Number(process.env.PULP_PROPERTY_RUNS ?? 5);
const PROPERTY_SEED = process.env.PULP_PROPERTY_RUNS ? undefined : 20261123;

test("no config change replaces a data-holding resource or a key, and all of them are protected", async () => {
  const baseline = await render(MINIMAL);
  const before = dataResources(baseline);
  await fc.assert(
    fc.asyncProperty(mutation, async (change) => {
      const run = await render({ ...MINIMAL, redis: { enabled: true }, ...change });
      const after = dataResources(run);
      for (const [urn, resource] of Object.entries(before)) {
        expect(after[urn]).toBeDefined();
        expect(identity(after[urn])).toEqual(identity(resource));
      }
      for (const resource of Object.values(after)) {
        expect({ urn: resource.urn, protect: resource.protect, retain: resource.retainOnDelete }).toEqual({
          urn: resource.urn,
          protect: true,
          retain: true,
        });
      }
      // The Fernet key Secret holds the generated key of this stack, never a value from config.
      const generated = run.ofType(GENERATED).find((g) => g.name.endsWith("db-fields-key"))!;
      expect(
        run.k8s("Secret", "pulp-db-fields-encryption").inputs.stringData["database_fields.symmetric.key"],
      ).toBe(generated.state.value);
    }),
    { numRuns: PROPERTY_RUNS, seed: PROPERTY_SEED },
  );
}, 120000);

test("the generator never regenerates: any input change is reported as no change", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom("django-secret-key", "fernet-key", "password", "ec-p256-keypair"),
      fc.anything(),
      async (kind, other) => {
        const diff = await generatedSecretProvider.diff!(
          "id",
          { kind, value: "old" },
          { kind: other as never },
        );
        expect(diff.changes).toBe(false);
        expect(diff.replaces ?? []).toEqual([]);
      },
    ),
  );
});

test("generated keys have the shape Pulp needs", async () => {
  const create = generatedSecretProvider.create.bind(generatedSecretProvider);
  const fernet = (await create({ kind: "fernet-key" })).outs.value as string;
  expect(Buffer.from(fernet.replace(/-/g, "+").replace(/_/g, "/"), "base64")).toHaveLength(32);
  expect(fernet).toMatch(/^[A-Za-z0-9_-]{43}=$/);
  expect(((await create({ kind: "django-secret-key" })).outs.value as string).length).toBe(50);
  const pair = (await create({ kind: "ec-p256-keypair" })).outs;
  expect(pair.value).toContain("BEGIN PRIVATE KEY");
  expect(pair.publicKey).toContain("BEGIN PUBLIC KEY");
  const [a, b] = [await create({ kind: "password" }), await create({ kind: "password" })];
  expect(a.outs.value).not.toBe(b.outs.value);
});

test("the namespace and the key Secrets are kept by destroy", async () => {
  const run = await render(MINIMAL);
  expect(run.ofType("kubernetes:core/v1:Namespace")[0].retainOnDelete).toBe(true);
  for (const name of KEY_SECRETS) expect(run.k8s("Secret", name).retainOnDelete).toBe(true);
  // Settings Secrets are derived from config and may come and go.
  const settings = run.ofType(SECRET).find((s) => s.inputs.metadata.name.startsWith("pulp-settings-"))!;
  expect(settings.protect).toBe(false);
  // A new admin password replaces its Secret (the provider's Secrets are immutable): replaceable, its fixed
  // name gone before the new one is made.
  const admin = run.k8s("Secret", "pulp-admin-password");
  expect({
    protect: admin.protect,
    retain: admin.retainOnDelete,
    deleteFirst: admin.deleteBeforeReplace,
  }).toEqual({
    protect: false,
    retain: false,
    deleteFirst: true,
  });
});
