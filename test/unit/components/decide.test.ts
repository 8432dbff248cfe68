// Unit: the install decision as plain data. decideInstall (components/decide.ts) is called with a parsed
// config, what the stack deployed last and the secret names the stack sets; no Pulumi mocks, no resources.
// That the Pulp component wires what it decides is shown by the dev-stack snapshot (pulp/devStack.test.ts)
// and the rendering tests beside it.
import { RESTORE_REFUSED_MARKER, RestoreRefused } from "../../../components/backup/restorePlan";
import { parseConfig } from "../../../components/config/parse";
import { SecretName } from "../../../components/config/rules";
import { decideInstall, InstallDecision } from "../../../components/decide";
import { Deployed, FIRST_INSTALL } from "../../../components/upgrade/deployed";
import { UpgradeRefused } from "../../../components/upgrade/plan";
import { MINIMAL } from "../helpers/configs";

const ID = "20261124T031500Z";
// What a restore into a new install needs set (the backup's keys).
const KEYS = {
  adminPassword: "old-admin-Pw1",
  secretKey: "decide-test-secret-key-0123456789abcdefghijklmnopq",
  dbFieldsEncryptionKey: "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
};
const NONE = new Set<SecretName>();

/** The decision for MINIMAL with `changes` (raw keys), the stack's last outputs and the secrets it sets. */
function decide(
  changes: Record<string, unknown> = {},
  deployed: Deployed = FIRST_INSTALL,
  secrets: Partial<Record<SecretName, string>> = {},
): InstallDecision {
  const supplied = new Set(Object.keys(secrets) as SecretName[]);
  return decideInstall(parseConfig({ ...MINIMAL, ...changes }, supplied, secrets), deployed, supplied);
}
const image = (version: string) => ({ image: `quay.io/pulp/pulp-minimal:${version}` });
const live = (pulpcoreVersion: string, more: Partial<Deployed> = {}): Deployed => ({
  idle: false,
  pulpcoreVersion,
  ...more,
});

test("a first install: nothing stops, nothing is restored, every process at its replicas, all at once", () => {
  const d = decide(image("3.85.0"));
  expect(d.upgrade.kind).toBe("install");
  expect(d.restore).toEqual({ kind: "none" });
  expect(d.restoredBackup).toBeUndefined();
  expect(d.stop).toBeUndefined();
  expect(d.identity).toEqual({ instance: "pulp", version: "3.85.0" });
  expect(d.creation).toEqual(["api", "content", "worker"]);
  expect(d.waitFor).toEqual({ api: [], content: [], worker: [] });
  expect(d.replicas).toEqual({ api: 2, content: 2, worker: 2, web: 2, redis: 1 });
  expect(d.apiUrl).toBe("https://pulp.example.com/pulp/api/v3/");
  expect(d.contentUrl).toBe("https://pulp.example.com/pulp/content/");
  expect(d.migration).toEqual({ clearStaleAppStatus: true, clearCache: false });
  expect(d.tokenServer).toBeUndefined();
  // Container clients are sent to the token server at the origin, whatever the API root.
  expect(decide({ tokenAuth: true, apiRoot: "/pulp-api/" }).tokenServer).toBe(
    "https://pulp.example.com/token/",
  );
  expect(d.parts).toEqual({
    redis: false,
    web: false,
    ingress: false,
    backup: false,
    trustedCa: false,
    restoreImport: undefined,
    restoreFetch: undefined,
    restoreCheck: false,
    restoreImage: undefined,
  });
  expect(d.dataVolumes).toEqual([]);
});

test("a rolling upgrade rolls the workers first; a patch downgrade rolls them last; nothing stops", () => {
  const up = decide(image("3.85.1"), live("3.85.0"));
  expect(up.upgrade).toMatchObject({ kind: "rolling", from: "3.85.0", to: "3.85.1" });
  expect(up.stop).toBeUndefined();
  expect(up.creation).toEqual(["worker", "api", "content"]);
  expect(up.waitFor).toEqual({ api: ["worker"], content: ["worker"], worker: [] });

  const down = decide(image("3.85.0"), live("3.85.1"));
  expect(down.upgrade.kind).toBe("rolling");
  expect(down.creation).toEqual(["api", "content", "worker"]);
  expect(down.waitFor).toEqual({ api: [], content: [], worker: ["api", "content"] });
});

test("a stop-the-world upgrade: the reason names the releases, the floor and the migration that needs it", () => {
  const d = decide({ ...image("3.87.0"), worker: { terminationGracePeriodSeconds: 900 } }, live("3.84.0"));
  expect(d.upgrade.kind).toBe("stop-the-world");
  expect(d.stop).toEqual({
    from: "3.84.0",
    to: "3.87.0",
    floor: "core 3.85.0",
    migrations: "core 0140_require_appstatus_zdu (3.87.0)",
    heartbeatTtlSeconds: 120,
    deployments: ["pulp-api", "pulp-content", "pulp-worker"],
    // The longest grace period of the three, plus a minute.
    podsGoneTimeoutSeconds: 960,
  });
  expect(d.stop).not.toHaveProperty("restoring");
  // Not rolling: everything comes up together after the migration.
  expect(d.creation).toEqual(["api", "content", "worker"]);
});

test("a restore over a live install stops Pulp with `restoring`, at the running release", () => {
  const d = decide(
    {
      ...image("3.85.0"),
      database: { cloudnativepg: { imageName: "localhost/postgresql:15" } },
      restore: { backup: ID, overwrite: ID },
    },
    live("3.85.0"),
  );
  expect(d.restore).toEqual({
    kind: "restore",
    backup: ID,
    claim: "pulp-backups",
    overwrite: true,
    done: false,
  });
  expect(d.stop).toEqual({
    from: "3.85.0",
    to: "3.85.0",
    floor: "",
    migrations: "",
    heartbeatTtlSeconds: 0,
    restoring: ID,
    deployments: ["pulp-api", "pulp-content", "pulp-worker"],
    podsGoneTimeoutSeconds: expect.any(Number),
  });
  expect(d.restoredBackup).toBe(ID);
  expect(d.parts).toMatchObject({
    restoreCheck: true,
    restoreImage: "localhost/postgresql:15",
    restoreImport: undefined,
    restoreFetch: undefined,
  });
  // With Redis's cache on, the migration clears what the old database answered.
  const cached = decide(
    {
      ...image("3.85.0"),
      database: { cloudnativepg: { imageName: "localhost/postgresql:15" } },
      restore: { backup: ID, overwrite: ID },
      cacheEnabled: true,
      redis: { enabled: true },
    },
    live("3.85.0"),
  );
  expect(cached.migration.clearCache).toBe(true);
  expect(cached.parts.redis).toBe(true);
  // The next update, with the same config: the restore is history, nothing stops again.
  const after = decide(
    {
      ...image("3.85.0"),
      database: { cloudnativepg: { imageName: "localhost/postgresql:15" } },
      restore: { backup: ID, overwrite: ID },
    },
    live("3.85.0", { restoredBackup: ID }),
  );
  expect(after.restore).toMatchObject({ kind: "restore", done: true, overwrite: false });
  expect(after.stop).toBeUndefined();
});

test("a restore from http is imported into a DataVolume; one from s3 is fetched; both before anything stops", () => {
  const db = { cloudnativepg: { imageName: "localhost/postgresql:15" } };
  const http = { url: "https://backups.example.com/pulp-backup.tar", size: "20Gi" };
  const name = `pulp-restore-${ID.toLowerCase()}`;
  const imported = decide({ database: db, restore: { backup: ID, http } }, FIRST_INSTALL, KEYS);
  expect(imported.parts.restoreImport).toEqual({ ...http, name, waitForFirstConsumer: false });
  expect(imported.parts.restoreFetch).toBeUndefined();
  expect(imported.restore).toMatchObject({ kind: "restore", claim: name, overwrite: false, done: false });
  // Into a new install nothing runs yet: nothing stops.
  expect(imported.stop).toBeUndefined();

  const s3 = {
    bucket: "pulp-backups",
    endpointUrl: "https://s3.example.com",
    accessKeyId: "AKIA9",
    size: "20Gi",
  };
  const fetched = decide({ database: db, restore: { backup: ID, s3 } }, FIRST_INSTALL, {
    ...KEYS,
    restoreS3SecretAccessKey: "bucket-secret",
  });
  expect(fetched.parts.restoreFetch).toMatchObject({ ...s3, name, key: `pulp/pulp/${ID}.tar` });
  expect(fetched.parts.restoreImport).toBeUndefined();
  expect(fetched.parts).toMatchObject({ restoreCheck: true, restoreImage: "localhost/postgresql:15" });
  expect(fetched.restoredBackup).toBe(ID);
});

test("web on: every route goes to pulp-web; web off: content paths to content, the rest to api", () => {
  expect(
    decide({ web: { enabled: true }, ingress: { enabled: true, host: "pulp.example.com" } }).routes,
  ).toEqual([{ path: "/", backend: { service: "pulp-web", port: 8080 } }]);
  const off = decide({ web: { enabled: false }, ingress: { enabled: true, host: "pulp.example.com" } });
  expect(off.parts).toMatchObject({ web: false, ingress: true });
  expect(off.routes).toEqual([
    { path: "/pulp/content/", backend: { service: "pulp-content", port: 24816 } },
    { path: "/", backend: { service: "pulp-api", port: 24817 } },
    { path: "/pulp/container/", backend: { service: "pulp-content", port: 24816 } },
  ]);
  expect(off.backends).toEqual({
    api: { service: "pulp-api", port: 24817 },
    content: { service: "pulp-content", port: 24816 },
  });
});

test("backup on and off; idle and maintenance set the replicas", () => {
  expect(decide({ backup: { enabled: false } }).parts.backup).toBe(false);
  expect(
    decide({
      backup: { enabled: true },
      database: { cloudnativepg: { imageName: "localhost/postgresql:15" } },
    }).parts.backup,
  ).toBe(true);
  expect(decide({ idle: true, redis: { enabled: true } }).replicas).toEqual({
    api: 0,
    content: 0,
    worker: 0,
    web: 0,
    redis: 0,
  });
  expect(decide({ maintenance: true, api: { replicas: 2 } }).replicas).toMatchObject({ api: 2, worker: 0 });
});

test("refusals are thrown by the decision, before anything could be created", () => {
  // An upgrade across a release that must be stopped at (core's squashed migrations).
  expect(() => decide(image("3.123.1"), live("3.40.0"))).toThrow(UpgradeRefused);
  // A restore over a live install without the overwrite confirmed.
  const db = { cloudnativepg: { imageName: "localhost/postgresql:15" } };
  expect(() => decide({ ...image("3.85.0"), database: db, restore: { backup: ID } }, live("3.85.0"))).toThrow(
    RestoreRefused,
  );
  // A restore into a new install without the backup's keys.
  expect(() =>
    decideInstall(
      parseConfig({ ...MINIMAL, database: db, restore: { backup: ID } }, NONE),
      FIRST_INSTALL,
      NONE,
    ),
  ).toThrow(`${RESTORE_REFUSED_MARKER} pulp:restore.backup: a restore needs the backup's keys`);
});
