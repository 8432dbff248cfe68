// The kinds table (stacks/kinds.ts) is exactly what the Pulp program registers: with every
// optional feature on, the set of Kubernetes types differs from the table in neither direction. A new
// kind in the program without a grant (or a grant the program no longer needs) fails here.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { OWNED_BY_DELIVERY, PULP_KINDS, pulumiType } from "../../../stacks/kinds";
import { MINIMAL } from "../helpers/configs";
import { render } from "../helpers/render";
import { CRDS } from "../helpers/delivery";

// Whole-program renders under mocks: seconds each on a loaded 2-core machine, not the default 5.
jest.setTimeout(60_000);

/** Every optional feature, in the two shapes that exclude each other (database, storage, ingress kind). */
const EVERYTHING = [
  {
    ...MINIMAL,
    createNamespace: false,
    database: { cloudnativepg: { instances: 3, pooler: { instances: 2 } } },
    storage: { pvc: { size: "10Gi", storageClass: "cephfs" } },
    web: { enabled: true },
    redis: { enabled: true },
    cacheEnabled: true,
    image: "quay.io/pulp/pulp-minimal:3.108.0", // the redis worker type needs it
    workerType: "redis",
    tokenAuth: true,
    ingress: { enabled: true, kind: "Ingress", host: "pulp.example.com", tlsSecretName: "pulp-tls" },
    dataVolumes: [{ name: "seed", url: "https://mirror.example.com/seed.tar", size: "1Gi" }],
    namespaceQuota: { requestsStorage: "1Ti" },
  },
  {
    ...MINIMAL,
    createNamespace: false,
    database: { external: { host: "db.example.com" } },
    storage: { s3: { bucket: "pulp-artifacts", accessKeyId: "AKIAEXAMPLE", region: "eu-west-1" } },
    ingress: { enabled: true, kind: "Route", host: "pulp.example.com" },
    maintenance: true,
  },
];
// A database password only where the database is external: beside CloudNativePG it is refused.
const secretsFor = (raw: Record<string, unknown>) => ({
  ...((raw.database as Record<string, unknown>).external ? { databasePassword: "db-pass" } : {}),
  s3SecretAccessKey: "s3-secret",
});

async function kubernetesTypes(raw: Record<string, unknown>): Promise<Set<string>> {
  const run = await render(raw, secretsFor(raw));
  return new Set(
    run.resources
      .filter((r) => r.custom && r.type.startsWith("kubernetes:"))
      // A patch resource (a Deployment's rollout check) server-side applies to its kind: the same grant.
      .map((r) => r.type.replace(/Patch$/, "")),
  );
}

test("with every feature on, the Pulp program registers exactly the kinds in the table", async () => {
  const registered = new Set<string>();
  for (const raw of EVERYTHING) for (const t of await kubernetesTypes(raw)) registered.add(t);
  const table = new Set(PULP_KINDS.map(pulumiType));
  expect({ missingFromTable: [...registered].filter((t) => !table.has(t)).sort() }).toEqual({
    missingFromTable: [],
  });
  expect({ neverRegistered: [...table].filter((t) => !registered.has(t)).sort() }).toEqual({
    neverRegistered: [],
  });
});

test("creating the namespace is the only difference createNamespace makes, and the delivery program owns it", async () => {
  const without = await kubernetesTypes(EVERYTHING[0]);
  const withNs = await kubernetesTypes({ ...EVERYTHING[0], createNamespace: true });
  expect([...withNs].filter((t) => !without.has(t))).toEqual(OWNED_BY_DELIVERY.map(pulumiType));
});

test("every kind the workspace manages is namespaced", () => {
  expect(PULP_KINDS.filter((k) => !k.namespaced)).toEqual([]);
});

test("resource names of custom kinds are the plurals their CRDs declare", () => {
  const plurals: Record<string, string> = {};
  for (const file of fs.readdirSync(CRDS).filter((f) => f.endsWith(".yaml"))) {
    const crd = yaml.load(fs.readFileSync(path.join(CRDS, file), "utf8")) as {
      spec: { group: string; names: { kind: string; plural: string }; scope: string };
    };
    plurals[`${crd.spec.group}/${crd.spec.names.kind}`] = `${crd.spec.names.plural} ${crd.spec.scope}`;
  }
  const custom = PULP_KINDS.filter((k) => `${k.apiGroup}/${k.kind}` in plurals);
  // Cluster and Pooler (CloudNativePG) and DataVolume (CDI) have their CRDs here; Route (OpenShift) does not.
  expect(custom.map((k) => k.kind).sort()).toEqual(["Cluster", "DataVolume", "Pooler"]);
  for (const k of custom) expect(plurals[`${k.apiGroup}/${k.kind}`]).toBe(`${k.resource} Namespaced`);
});

test("a Route with its own certificate: the router's Role and RoleBinding, which the Stack leaves to the delivery program", async () => {
  const route = {
    ...EVERYTHING[1],
    ingress: { enabled: true, kind: "Route", host: "pulp.example.com", tlsSecretName: "pulp-tls" },
  };
  const table = new Set(PULP_KINDS.map(pulumiType));
  const granting = await kubernetesTypes(route);
  expect([...granting].filter((t) => !table.has(t)).sort()).toEqual([
    "kubernetes:rbac.authorization.k8s.io/v1:Role",
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
  ]);
  // As the Stack runs it (stacks/stackSpec.ts sets routerAccess false): only kinds the workspace manages.
  const asWorkspace = await kubernetesTypes({ ...route, ingress: { ...route.ingress, routerAccess: false } });
  expect([...asWorkspace].filter((t) => !table.has(t))).toEqual([]);
});
