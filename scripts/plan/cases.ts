// The pull-request changes test/fixtures/preview/ holds a real preview of: each on top of one install of
// the dev stack's config (scripts/plan/capture-fixtures.ts). Pure data, shared with the unit tests.

export const FIXTURE_NAMESPACE = "pulp-fixtures";

/** Secret config values set on the fixture stack: the unit tests check none of them leaks into a fixture. */
export const CANARIES: Record<string, string> = {
  adminPassword: "canary-admin-password-4f1c9e",
  databasePassword: "canary-database-password-7d2a0b",
  secretKey: "canary-django-secret-key-0c5e77a1d9b24f6e",
};
/** The canaries every case has; the others only where a case names them in `secrets`. */
export const BASE_SECRETS = ["adminPassword", "databasePassword"];

export const BASE: Record<string, unknown> = {
  namespace: FIXTURE_NAMESPACE,
  dataVolumes: [{ name: "seed-dump", url: "http://127.0.0.1:1/pulp-db-dump.tar", size: "1Gi" }],
};
const PVC = { size: "5Gi", accessMode: "ReadWriteMany" };

/** Each case: the config a pull request would bring, on top of the installed base. */
export const CASES: { name: string; why: string; changes: Record<string, unknown>; secrets?: string[] }[] = [
  { name: "no-op", why: "nothing changed", changes: {} },
  {
    name: "settings-change",
    why: "contentOrigin changed: new settings Secret and migration Job, api/content/worker roll",
    changes: { contentOrigin: "http://pulp-fixtures.localhost:8080" },
  },
  {
    name: "web-nginx-change",
    why: "pulp-web clientMaxBodySize 10g -> 20g: a new nginx ConfigMap, only pulp-web rolls",
    changes: {
      web: { enabled: true, image: "quay.io/pulp/pulp-web:3.85.0", replicas: 2, clientMaxBodySize: "20g" },
    },
  },
  { name: "replicas-only", why: "api replicas 2 -> 3: nothing rolls", changes: { api: { replicas: 3 } } },
  {
    name: "rolling-upgrade",
    why: "image 3.85.0 -> 3.85.1: no RequireVersion floor crossed",
    changes: { image: "quay.io/pulp/pulp-minimal:3.85.1" },
  },
  {
    name: "stop-the-world",
    why: "image 3.85.0 -> 3.87.0: crosses the 3.87.0 floor (core 0143, 0144): a pulp:upgrade:StopTheWorld",
    changes: { image: "quay.io/pulp/pulp-minimal:3.87.0" },
  },
  {
    name: "downgrade-refused",
    why: "image 3.85.0 -> 3.84.0: Pulp's migrations do not run backwards, the program refuses",
    changes: { image: "quay.io/pulp/pulp-minimal:3.84.0" },
  },
  {
    name: "pvc-storage-class",
    why: "the artifacts PVC gets a storage class: replacing it would lose every artifact",
    changes: { storage: { pvc: { ...PVC, storageClass: "fast-rwx" } } },
  },
  {
    name: "pvc-shrink",
    why: "the artifacts PVC shrinks 5Gi -> 2Gi",
    changes: { storage: { pvc: { ...PVC, size: "2Gi" } } },
  },
  {
    name: "database-external",
    why: "CloudNativePG -> an external database: the Cluster would be deleted",
    changes: { database: { external: { host: "db.example.invalid" } } },
  },
  {
    name: "secret-key-supplied",
    why: "pulp:secretKey set in the stack config: the key Secret's value changes in place",
    changes: {},
    secrets: ["secretKey"],
  },
  { name: "datavolume-removed", why: "the seed-dump DataVolume removed", changes: { dataVolumes: [] } },
  {
    name: "namespace-change",
    why: "namespace pulp-fixtures -> pulp-fixtures-moved: everything namespaced would be replaced",
    changes: { namespace: `${FIXTURE_NAMESPACE}-moved` },
  },
];

/**
 * Drift rather than a config change: after the cases, with the base config back, pulp-api is scaled by
 * hand and the preview refreshed, as the scheduled drift check (.github/workflows/drift.yml) runs it.
 */
export const DRIFT_CASE = {
  name: "drift-replicas",
  why: "pulp-api scaled to 5 by hand; `preview --refresh` puts it back to 2",
  replicas: 5,
};
