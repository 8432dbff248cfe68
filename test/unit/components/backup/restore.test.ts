// Unit: the restore plan (plain calls) and the restore Job (under Pulumi mocks). That a backup really comes
// back as a working Pulp is shown on real Pulp: test/e2e/real/restore.test.ts.
import {
  planRestore,
  RESTORE_REFUSED_MARKER,
  RestoreRefused,
} from "../../../../components/backup/restorePlan";
import { parseConfig } from "../../../../components/config/parse";
import { FIRST_INSTALL } from "../../../../components/upgrade/deployed";
import { restrictedViolations } from "../../../../components/workload/podSecurity";
import { MINIMAL, problemsOf } from "../../helpers/configs";
import { JOB, render } from "../../helpers/render";

const ID = "20261124T031500Z";
const KEYS = {
  adminPassword: "old-admin-Pw1",
  secretKey: "k".repeat(50),
  dbFieldsEncryptionKey: "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
};
const RESTORE = {
  ...MINIMAL,
  database: { cloudnativepg: { imageName: "localhost/postgresql:15" } },
  restore: { backup: ID },
};
const config = (restore?: object) =>
  parseConfig(
    { ...RESTORE, restore },
    new Set(["adminPassword", "secretKey", "dbFieldsEncryptionKey"]),
    KEYS,
  );
const live = { idle: false, pulpcoreVersion: "3.123.1" };

test("a restore runs into a new install, and again with the same id (the same Job: nothing changes)", () => {
  expect(planRestore(config(undefined), FIRST_INSTALL)).toEqual({ kind: "none" });
  // Pulumi.yaml's declared default.
  expect(planRestore(config({}), { ...live })).toEqual({ kind: "none" });
  expect(planRestore(config({ backup: ID }), FIRST_INSTALL)).toEqual({
    kind: "restore",
    backup: ID,
    claim: "pulp-backups",
  });
  expect(planRestore(config({ backup: ID, claim: "old-backups" }), { ...live, restoredBackup: ID })).toEqual({
    kind: "restore",
    backup: ID,
    claim: "old-backups",
  });
});

test("a restore into a live install is refused, naming what it would overwrite and the way out", () => {
  const refusal = (deployed: object) => {
    try {
      planRestore(config({ backup: ID }), deployed as typeof live);
    } catch (e) {
      expect(e).toBeInstanceOf(RestoreRefused);
      return (e as Error).message;
    }
    throw new Error("not refused");
  };
  expect(refusal(live)).toBe(
    `${RESTORE_REFUSED_MARKER} pulp:restore.backup is ${ID}, but this stack is a live install (pulpcore 3.123.1, ` +
      "not restored from a backup): restoring would overwrite its database and artifacts. Restore into a new " +
      "stack instead (pulumi stack init, the same config with pulp:restore), or put the config back: pulumi config rm pulp:restore",
  );
  expect(refusal({ ...live, restoredBackup: "20261101T000000Z" })).toMatch(
    /restored from backup 20261101T000000Z\).*pulumi config set --path pulp:restore.backup 20261101T000000Z$/,
  );
});

test("a restore needs the backup's keys in the stack config; the fix is the command that sets them", () => {
  expect(problemsOf({ ...RESTORE, restore: { backup: ID } })).toEqual([
    "pulp:restore.backup: a restore needs the backup's keys in the stack config, and pulp:dbFieldsEncryptionKey, " +
      "pulp:secretKey, pulp:adminPassword is not set: with new ones the restored encrypted fields and sessions could not be read",
  ]);
  expect(problemsOf({ ...RESTORE, restore: { backup: "latest" } })).toEqual([
    expect.stringMatching(/^pulp:restore.backup: must be a backup id such as "20261124T031500Z"/),
  ]);
});

test("the restore Job reads the backup read-only, writes the artifacts, checks the keys, and runs before the migration", async () => {
  const run = await render(RESTORE, KEYS);
  const job = run.k8s("Job", `pulp-restore-${ID.toLowerCase()}`);
  const pod = job.inputs.spec.template.spec;
  expect(restrictedViolations(pod)).toEqual([]);
  const env = Object.fromEntries(pod.containers[0].env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
  expect([env.BACKUP_DIR, env.TARGET_PULPCORE, env.PGHOST]).toEqual([
    `/backups/${ID}`,
    "3.123.1",
    "pulp-db-rw",
  ]);
  expect(pod.volumes.find((v: any) => v.name === "backups").persistentVolumeClaim).toEqual({
    claimName: "pulp-backups",
    readOnly: true,
  });
  const mounts = Object.fromEntries(
    pod.containers[0].volumeMounts.map((m: any) => [m.mountPath, m.readOnly ?? false]),
  );
  expect(mounts).toMatchObject({ "/backups": true, "/var/lib/pulp": false, "/run/keys": true });
  const migration = run.ofType(JOB).find((j) => j.inputs.metadata.name.startsWith("pulp-migrate-"))!;
  expect(run.dependenciesOf(migration).has(job.urn)).toBe(true);
});
