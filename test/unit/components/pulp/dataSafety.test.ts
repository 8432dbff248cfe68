// Nothing that holds data (artifacts, the database, the keys) is replaced or deleted by a config change,
// and the keys are generated once and never again.
import fc from "fast-check";
import { generatedSecretProvider } from "../../../../components/secrets/generatedSecret";
import { loadConfig } from "../../../../components/config/load";
import { KEYS_KEPT_IN_ANNOTATION } from "../../../../components/contract";
import { Pulp } from "../../../../components/pulp";
import { Deployed, FIRST_INSTALL } from "../../../../components/upgrade/deployed";
import { MockRun, Registered, runWithMocks } from "../../helpers/pulumiMocks";
import { MINIMAL } from "../../helpers/configs";
import { CNPG, PVC, render, SECRET } from "../../helpers/render";

const GENERATED = "pulumi:index:Stash";
const GENERATED_SECRET = "pulumi-nodejs:dynamic/pulp:GeneratedSecret";
// Not the admin password's Secret: it changes by design (components/secrets/pulpSecrets.ts), its value kept
// in the stack config or the protected Stash.
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
      ).toBe(generated.state.output.value);
      // Kept as created: a later run's value is ignored.
      expect(generated.ignoreChanges).toEqual(["input"]);
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

/** A stack of its own (Stashes are kept per stack under mocks), as an update from `deployed`. */
async function renderStack(stack: string, deployed: Deployed): Promise<MockRun> {
  return runWithMocks(
    {
      config: { "pulp:contentOrigin": "https://pulp.example.com", "pulp:database": { cloudnativepg: {} } },
      stack,
    },
    () => {
      const loaded = loadConfig();
      new Pulp(loaded.config.instanceName, { ...loaded, deployed, cluster: {} });
    },
  );
}

test("an install an older version made moves each key from its GeneratedSecret into a Stash, unchanged", async () => {
  const older = { pulpcoreVersion: "3.85.0", idle: false, keysKeptIn: "generated-secret" } as const;
  const run = await renderStack("from-0.1", older);
  const old = run.ofType(GENERATED_SECRET);
  expect(old.map((g) => g.name).sort()).toEqual([
    "pulp-secrets-admin-password",
    "pulp-secrets-db-fields-key",
    "pulp-secrets-secret-key",
  ]);
  for (const g of old) {
    // Unprotected and retained: the update after the next history record drops it from the state.
    expect([g.protect, g.retainOnDelete]).toEqual([false, true]);
    const stash = run.get(GENERATED, g.name);
    expect(stash.inputs.input.value).toBe(g.state.value);
    expect([stash.protect, stash.ignoreChanges]).toEqual([true, ["input"]]);
  }
  const fernet = run.get(GENERATED_SECRET, "db-fields-key").state.value;
  expect(
    run.k8s("Secret", "pulp-db-fields-encryption").inputs.stringData["database_fields.symmetric.key"],
  ).toBe(fernet);
  // The key Secret says where the keys are now, once every Stash exists; the next update, reading it,
  // registers no GeneratedSecret.
  const keySecret = run.k8s("Secret", "pulp-secret-key");
  expect(keySecret.inputs.metadata.annotations[KEYS_KEPT_IN_ANNOTATION]).toBe("stash");
  for (const stash of run.ofType(GENERATED)) expect(keySecret.dependencies).toContain(stash.urn);
  const next = await renderStack("from-0.1", { ...older, keysKeptIn: "stash" });
  expect(next.ofType(GENERATED_SECRET)).toEqual([]);
  expect(
    next.k8s("Secret", "pulp-db-fields-encryption").inputs.stringData["database_fields.symmetric.key"],
  ).toBe(fernet);
});

test("a new install registers no GeneratedSecret; an older version's install that never rolled out does", async () => {
  expect((await renderStack("new", FIRST_INSTALL)).ofType(GENERATED_SECRET)).toEqual([]);
  // Pulp.history says so when the key Secret exists without the annotation (upgrade/history.ts).
  const unfinished = await renderStack("unfinished", { idle: false, keysKeptIn: "generated-secret" });
  expect(unfinished.ofType(GENERATED_SECRET)).toHaveLength(3);
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
