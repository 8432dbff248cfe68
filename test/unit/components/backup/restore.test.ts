// Unit: the restore plan (plain calls) and the restore Job (under Pulumi mocks). That a backup really comes
// back as a working Pulp is shown on real Pulp: test/e2e/real/restore.test.ts.
import { restoreRules } from "../../../../components/backup/restore";
import {
  planRestore,
  RESTORE_REFUSED_MARKER,
  RestoreRefused,
} from "../../../../components/backup/restorePlan";
import { parseConfig } from "../../../../components/config/parse";
import { SecretName } from "../../../../components/config/rules";
import { TYPES } from "../../../../components/contract";
import { FIRST_INSTALL } from "../../../../components/upgrade/deployed";
import { restrictedViolations } from "../../../../components/workload/podSecurity";
import { MINIMAL, problemsOf } from "../../helpers/configs";
import { DATA_VOLUME, DEPLOYMENT, JOB, podTemplates, PVC, render, SECRET } from "../../helpers/render";

const ID = "20261124T031500Z";
const KEYS = {
  adminPassword: "old-admin-Pw1",
  // 50 characters, more than 5 different: a key Django's check_secret_key accepts.
  secretKey: "restore-test-secret-key-0123456789abcdefghijklmnop",
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
const SUPPLIED = new Set(Object.keys(KEYS) as SecretName[]);

test("a restore runs into a new install, and again with the same id (the same Job: nothing changes)", () => {
  expect(planRestore(config(undefined), FIRST_INSTALL, SUPPLIED)).toEqual({ kind: "none" });
  // Pulumi.yaml's declared default.
  expect(planRestore(config({}), { ...live }, SUPPLIED)).toEqual({ kind: "none" });
  expect(planRestore(config({ backup: ID }), FIRST_INSTALL, SUPPLIED)).toEqual({
    kind: "restore",
    backup: ID,
    claim: "pulp-backups",
    overwrite: false,
    done: false,
  });
  expect(
    planRestore(config({ backup: ID, claim: "old-backups" }), { ...live, restoredBackup: ID }, SUPPLIED),
  ).toEqual({
    kind: "restore",
    backup: ID,
    claim: "old-backups",
    overwrite: false,
    done: true,
  });
});

test("a restore into a live install is refused, naming what it would overwrite and the way out", () => {
  const refusal = (deployed: object) => {
    try {
      planRestore(config({ backup: ID }), deployed as typeof live, SUPPLIED);
    } catch (e) {
      expect(e).toBeInstanceOf(RestoreRefused);
      return (e as Error).message;
    }
    throw new Error("not refused");
  };
  expect(refusal(live)).toBe(
    `${RESTORE_REFUSED_MARKER} pulp:restore.backup is ${ID}, but this stack is a live install (pulpcore 3.123.1, ` +
      "not restored from a backup): restoring would overwrite its database and artifacts. Restore into a new " +
      "stack instead (pulumi stack init, the same config with pulp:restore), or put the config back: pulumi config rm pulp:restore. " +
      "To replace this install's data with the backup's (Pulp stops meanwhile; take a backup first: npm run backup -- now), " +
      `confirm it: pulumi config set --path pulp:restore.overwrite ${ID}`,
  );
  expect(refusal({ ...live, restoredBackup: "20261101T000000Z" })).toMatch(
    /restored from backup 20261101T000000Z\).*pulumi config set --path pulp:restore.backup 20261101T000000Z\. /,
  );
});

test("a restore into a new install needs the backup's keys; the fix is the command that sets them", () => {
  expect(() => planRestore(config({ backup: ID }), FIRST_INSTALL, new Set(["adminPassword"]))).toThrow(
    `${RESTORE_REFUSED_MARKER} pulp:restore.backup: a restore needs the backup's keys in the stack config, and ` +
      "pulp:dbFieldsEncryptionKey, pulp:secretKey is not set: with new ones the restored encrypted fields and sessions " +
      `could not be read. Fix: npm run backup -- keys ${ID} -n pulp  (sets them from the backup)`,
  );
  expect(problemsOf({ ...RESTORE, restore: { backup: "latest" } })).toEqual([
    expect.stringMatching(/^pulp:restore.backup: must be a backup id such as "20261124T031500Z"/),
  ]);
});

test("over a live install its own keys serve: none need setting, and generated ones stay", async () => {
  const over = { backup: ID, overwrite: ID };
  expect(problemsOf({ ...RESTORE, restore: over })).toEqual([]);
  expect(planRestore(config(over), live, new Set())).toMatchObject({ kind: "restore", overwrite: true });
  // Its keys were generated and stay (setting them would replace protected Secrets): the restore Job
  // compares them with the backup's before it changes anything.
  const run = await render({ ...RESTORE, restore: over }, {}, false, live);
  expect(run.ofType(TYPES.stopTheWorldStep)).toHaveLength(1);
  expect(
    run
      .ofType("pulumi:index:Stash")
      .map((r) => r.name)
      .sort(),
  ).toEqual(["pulp-secrets-admin-password", "pulp-secrets-db-fields-key", "pulp-secrets-secret-key"]);
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

test("pulp:restore.overwrite naming the backup restores over a live install, with the running release only", () => {
  const confirmed = config({ backup: ID, overwrite: ID });
  expect(planRestore(confirmed, { ...live, restoredBackup: "20261101T000000Z" }, SUPPLIED)).toEqual({
    kind: "restore",
    backup: ID,
    claim: "pulp-backups",
    overwrite: true,
    done: false,
  });
  // Once restored, the same id is a no-op again, confirmation or not.
  expect(planRestore(confirmed, { ...live, restoredBackup: ID }, SUPPLIED)).toMatchObject({
    overwrite: false,
    done: true,
  });
  expect(() => planRestore(confirmed, { ...live, pulpcoreVersion: "3.121.3" }, SUPPLIED)).toThrow(
    /pulp:image moves it from 3.121.3 to 3.123.1 in the same update: overwrite with the running release, then upgrade/,
  );
  // The confirmation is for one backup: with another, it is a config error naming the fix.
  expect(problemsOf({ ...RESTORE, restore: { backup: ID, overwrite: "20261101T000000Z" } })).toContain(
    `pulp:restore.overwrite: confirms an overwrite with backup 20261101T000000Z, but pulp:restore.backup is ${ID}`,
  );
});

test("an overwrite stops every Pulp process first, restores, migrates again, then starts them (new pod templates)", async () => {
  const previous = { ...live, restoredBackup: "20261101T000000Z" };
  const over = await render({ ...RESTORE, restore: { backup: ID, overwrite: ID } }, KEYS, false, previous);
  const [step] = over.ofType(TYPES.stopTheWorldStep);
  expect(step.name).toBe(`pulp-stop-the-world-restore-${ID}`);
  expect(step.inputs).toMatchObject({
    restoring: ID,
    heartbeatTtlSeconds: 0,
    deployments: ["pulp-api", "pulp-content", "pulp-worker"],
  });
  const job = over.k8s("Job", `pulp-restore-${ID.toLowerCase()}`);
  expect(over.dependenciesOf(job).has(step.urn)).toBe(true);
  // The confirmation reaches restore.sh through the ConfigMap, so the Job stays the same once it is gone.
  expect(over.k8s("ConfigMap", `pulp-restore-${ID.toLowerCase()}`).inputs.data.overwrite).toBe(ID);

  const after = await render({ ...RESTORE, restore: { backup: ID } }, KEYS, false, {
    ...live,
    restoredBackup: ID,
  });
  expect(after.ofType(TYPES.stopTheWorldStep)).toHaveLength(0);
  expect(after.k8s("ConfigMap", `pulp-restore-${ID.toLowerCase()}`).inputs.data.overwrite).toBeUndefined();
  expect(after.k8s("Job", `pulp-restore-${ID.toLowerCase()}`).inputs).toEqual(job.inputs);
  expect(after.k8s("Job", `pulp-restore-${ID.toLowerCase()}`).ignoreChanges.sort()).toEqual([
    "metadata",
    "spec",
  ]);

  // Against the install as it was (restored from the older backup): a new migration Job and new pod templates.
  const before = await render({ ...RESTORE, restore: { backup: "20261101T000000Z" } }, KEYS, false, previous);
  const migrationName = (run: typeof over) =>
    run.ofType(JOB).find((j) => j.inputs.metadata.name.startsWith("pulp-migrate-"))!.inputs.metadata.name;
  expect(migrationName(over)).not.toBe(migrationName(before));
  const templates = [podTemplates(over), podTemplates(before)];
  expect(over.ofType(DEPLOYMENT).length).toBeGreaterThan(0);
  for (const name of ["pulp-api", "pulp-content", "pulp-worker"]) {
    expect(templates[0][name]).not.toEqual(templates[1][name]);
  }
});

test("with the response cache on, the migration after a restore clears it (answers cached from the replaced data)", async () => {
  const script = async (extra: object, deployed?: typeof live & { restoredBackup: string }) => {
    const run = await render({ ...RESTORE, ...extra }, KEYS, false, deployed);
    const job = run.ofType(JOB).find((j) => j.inputs.metadata.name.startsWith("pulp-migrate-"))!;
    return job.inputs.spec.template.spec.containers[0].command[2] as string;
  };
  const cached = { cacheEnabled: true, redis: { enabled: true } };
  const over = { restore: { backup: ID, overwrite: ID } };
  const previous = { ...live, restoredBackup: "20261101T000000Z" };
  const clears = `"$py" - --clear-cache <<'MIGRATE'`;
  expect(await script({ ...cached, ...over }, previous)).toContain(clears);
  expect(await script(cached)).toContain(clears);
  expect(await script(over, previous)).not.toContain(clears);
  // Without a restore, nothing is cleared: the cache holds answers from this database.
  expect(await script({ ...cached, restore: undefined })).not.toContain(clears);
});

test("a backup over http comes in through a CDI DataVolume of its own, which the restore Job reads", async () => {
  const http = { url: "https://backups.example.com/pulp-backup.tar", size: "20Gi" };
  const name = `pulp-restore-${ID.toLowerCase()}`;
  expect(planRestore(config({ backup: ID, http }), FIRST_INSTALL, SUPPLIED)).toEqual({
    kind: "restore",
    backup: ID,
    claim: name,
    overwrite: false,
    done: false,
    import: { ...http, name, waitForFirstConsumer: false },
  });
  const run = await render({ ...RESTORE, restore: { backup: ID, http } }, KEYS);
  const [dv] = run.ofType(DATA_VOLUME);
  expect(dv.inputs.metadata.name).toBe(name);
  expect(dv.inputs.spec).toMatchObject({ contentType: "archive", source: { http: { url: http.url } } });
  // A copy of its source: kept when the config drops it, but not protected like the install's own data.
  expect(dv.protect).toBe(false);
  const job = run.k8s("Job", name);
  expect(
    job.inputs.spec.template.spec.volumes.find((v: any) => v.name === "backups").persistentVolumeClaim,
  ).toEqual({ claimName: name, readOnly: true });
  expect(run.dependenciesOf(job).has(dv.urn)).toBe(true);

  // Over a live install, nothing stops before the import is in: a wrong URL leaves Pulp serving.
  const over = await render({ ...RESTORE, restore: { backup: ID, http, overwrite: ID } }, KEYS, false, live);
  const [watch] = over.resources.filter((r) => r.name.endsWith(`${name}-import`));
  const [step] = over.ofType(TYPES.stopTheWorldStep);
  expect(over.dependenciesOf(step).has(watch.urn)).toBe(true);

  expect(problemsOf({ ...RESTORE, restore: { backup: ID, http, claim: "pulp-backups" } })).toContain(
    "pulp:restore.claim: and pulp:restore.http each say where the backup is: keep one",
  );
  // The import's scratch space counts against a declared quota like any DataVolume's.
  expect(
    problemsOf({ ...RESTORE, restore: { backup: ID, http }, namespaceQuota: { requestsStorage: "30Gi" } }),
  ).toContainEqual(expect.stringContaining("import restore 2 x 20Gi"));
});

test("a backup in the bucket is fetched with the bucket's credentials into a volume of its own: no URL that grants access anywhere", async () => {
  const s3 = {
    bucket: "pulp-backups",
    endpointUrl: "https://s3.example.com",
    accessKeyId: "AKIA9",
    size: "20Gi",
  };
  const name = `pulp-restore-${ID.toLowerCase()}`;
  const secrets = { ...KEYS, restoreS3SecretAccessKey: "bucket-secret" };
  const supplied = new Set([...SUPPLIED, "restoreS3SecretAccessKey" as SecretName]);
  // The prefix backups go to by default (the same namespace and instance), or the one given.
  const s3Config = (restore: object) =>
    parseConfig({ ...RESTORE, restore }, supplied, secrets as Record<string, string>);
  expect(planRestore(s3Config({ backup: ID, s3 }), FIRST_INSTALL, supplied)).toMatchObject({
    claim: name,
    fetch: { ...s3, name, key: `pulp/pulp/${ID}.tar` },
  });
  expect(
    planRestore(s3Config({ backup: ID, s3: { ...s3, prefix: "dc1/" } }), FIRST_INSTALL, supplied),
  ).toMatchObject({ fetch: { key: `dc1/${ID}.tar` } });

  const run = await render({ ...RESTORE, restore: { backup: ID, s3 } }, secrets);
  const fetch = run.k8s("Job", `pulp-restore-fetch-${ID.toLowerCase()}`);
  const pod = fetch.inputs.spec.template.spec;
  expect(restrictedViolations(pod)).toEqual([]);
  const env = Object.fromEntries(pod.containers[0].env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
  expect(env).toEqual({
    BACKUP_ID: ID,
    DEST: "/backups",
    CLAIM: name,
    S3_BUCKET: "pulp-backups",
    S3_KEY: `pulp/pulp/${ID}.tar`,
    S3_ENDPOINT_URL: "https://s3.example.com",
    S3_REGION: "",
    AWS_ACCESS_KEY_ID: "AKIA9",
    AWS_SECRET_ACCESS_KEY: {
      secretKeyRef: { name: `pulp-restore-fetch-${ID.toLowerCase()}`, key: "secret_access_key" },
    },
  });
  // The secret key is in a Secret only, never in a spec the namespace's readers see.
  const specs = JSON.stringify(run.resources.filter((r) => r.type !== SECRET).map((r) => r.inputs));
  expect(specs).not.toContain("bucket-secret");
  expect(run.ofType(DATA_VOLUME)).toEqual([]);
  const [claim] = run.ofType(PVC).filter((r) => r.inputs.metadata.name === name);
  expect(claim.inputs.spec).toEqual({
    accessModes: ["ReadWriteOnce"],
    resources: { requests: { storage: "20Gi" } },
  });
  expect({ protect: claim.protect, retain: claim.retainOnDelete }).toEqual({ protect: false, retain: true });
  // The check and the restore read the fetched volume after the fetch.
  for (const job of [`pulp-restore-check-${ID.toLowerCase()}`, `pulp-restore-${ID.toLowerCase()}`]) {
    const j = run.k8s("Job", job);
    expect(
      j.inputs.spec.template.spec.volumes.find((v: any) => v.name === "backups").persistentVolumeClaim,
    ).toEqual({
      claimName: name,
      readOnly: true,
    });
    expect(run.dependenciesOf(j).has(fetch.urn)).toBe(true);
  }
  // Over a live install nothing stops before the backup is in: a missing object leaves Pulp serving.
  const over = await render({ ...RESTORE, restore: { backup: ID, s3, overwrite: ID } }, secrets, false, live);
  const [step] = over.ofType(TYPES.stopTheWorldStep);
  expect(over.dependenciesOf(step).has(over.k8s("Job", `pulp-restore-fetch-${ID.toLowerCase()}`).urn)).toBe(
    true,
  );

  // Bad input: the secret key missing; two sources at once.
  expect(problemsOf({ ...RESTORE, restore: { backup: ID, s3 } })).toContain(
    "pulp:restore.s3: reads the backup from the bucket with the secret key pulp:restoreS3SecretAccessKey, which is not set",
  );
  expect(
    problemsOf({
      ...RESTORE,
      restore: { backup: ID, s3, http: { url: "https://x.example.com/b.tar", size: "1Gi" } },
    }),
  ).toContain("pulp:restore.http: and pulp:restore.s3 each say where the backup is: keep one");
});

test("a Job of its own checks the backup against the image and the storage before anything stops or restores", async () => {
  const check = async (storage: object | undefined, secrets: object = {}, deployed?: object) => {
    const run = await render(
      {
        ...RESTORE,
        ...(storage ? { storage } : {}),
        ...(deployed ? { restore: { backup: ID, overwrite: ID } } : {}),
      },
      { ...KEYS, ...secrets },
      false,
      deployed as typeof live | undefined,
    );
    const job = run.k8s("Job", `pulp-restore-check-${ID.toLowerCase()}`);
    const pod = job.inputs.spec.template.spec;
    expect(restrictedViolations(pod)).toEqual([]);
    const [container] = pod.containers;
    expect(container.image).toBe(
      run.k8s("Deployment", "pulp-api").inputs.spec.template.spec.containers[0].image,
    );
    expect(container.command.join(" ")).toContain("/opt/restore/restoreCheck.py");
    // The restore waits for it; over a live install, so does the stop: a refusal leaves Pulp serving.
    const restore = run.k8s("Job", `pulp-restore-${ID.toLowerCase()}`);
    expect(run.dependenciesOf(restore).has(job.urn)).toBe(true);
    for (const step of run.ofType(TYPES.stopTheWorldStep))
      expect(run.dependenciesOf(step).has(job.urn)).toBe(true);
    expect(run.ofType(TYPES.stopTheWorldStep)).toHaveLength(deployed ? 1 : 0);
    return Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
  };
  const RESTORE_RULES = JSON.stringify(restoreRules());
  expect(await check(undefined)).toEqual({
    BACKUP_DIR: `/backups/${ID}`,
    RESTORE_RULES,
    TARGET_STORAGE: "pvc",
  });
  expect(await check(undefined, {}, live)).toMatchObject({ TARGET_STORAGE: "pvc" });
  const s3 = { bucket: "pulp-artifacts", endpointUrl: "https://s3.example.com", accessKeyId: "AKIA1" };
  expect(await check({ s3 }, { s3SecretAccessKey: "secret" })).toEqual({
    BACKUP_DIR: `/backups/${ID}`,
    RESTORE_RULES,
    TARGET_STORAGE: "s3://pulp-artifacts",
    S3_ENDPOINT_URL: "https://s3.example.com",
    S3_REGION: "",
    AWS_ACCESS_KEY_ID: "AKIA1",
    AWS_SECRET_ACCESS_KEY: { secretKeyRef: { name: "pulp-s3", key: "secret_key" } },
  });
});

test("once restored, both Jobs stay as they were created, and no check runs for a restore made before it existed", async () => {
  const [restore, check] = [`pulp-restore-${ID.toLowerCase()}`, `pulp-restore-check-${ID.toLowerCase()}`];
  const pending = await render(RESTORE, KEYS);
  expect(pending.k8s("Job", restore).ignoreChanges).toEqual([]);
  expect(pending.k8s("Job", check).ignoreChanges).toEqual([]);
  expect(pending.k8s("Job", check).inputs.spec.suspend).toBe(false);
  const done = await render(RESTORE, KEYS, false, { ...live, restoredBackup: ID });
  // Whatever an older program created them with, and whatever a later config says (another backup image):
  // a changed Job spec would replace the Job, and run it again over live data.
  expect(done.k8s("Job", restore).ignoreChanges.sort()).toEqual(["metadata", "spec"]);
  expect(done.k8s("Job", check).ignoreChanges.sort()).toEqual(["metadata", "spec"]);
  // A stack restored before the check existed gets it created suspended and not awaited: no pod runs.
  expect(done.k8s("Job", check).inputs.spec.suspend).toBe(true);
  expect(done.k8s("Job", check).inputs.metadata.annotations).toEqual({ "pulumi.com/skipAwait": "true" });
  expect(pending.k8s("Job", check).inputs.metadata.annotations).toEqual({
    "pulumi.com/replaceUnready": "true",
  });
});

test("a restore makes Redis and pulp-web only once its check has passed: a refusal leaves nothing of them", async () => {
  const run = await render({ ...RESTORE, redis: { enabled: true }, web: { enabled: true } }, KEYS);
  const [check] = run.ofType(JOB).filter((j) => j.inputs.metadata.name.startsWith("pulp-restore-check-"));
  expect(check).toBeDefined();
  const made = run.resources.filter(
    (r) => r.custom && /^pulp-(redis|web)/.test(r.state.metadata?.name ?? ""),
  );
  expect(made.map((r) => r.type.split(":").pop()).sort()).toEqual([
    "ConfigMap",
    "Deployment",
    "Deployment",
    "DeploymentPatch",
    "DeploymentPatch",
    "PodDisruptionBudget",
    "PodDisruptionBudget",
    "Service",
    "Service",
  ]);
  for (const r of made)
    expect({ [r.name]: run.dependenciesOf(r).has(check.urn) }).toEqual({ [r.name]: true });
});

const PULPBACKUP = "openshift-backup-2026-11-24-031500";

test("a pulp-operator PulpBackup's directory is a backup id: its Jobs carry a short form of it, and its check reads this install's keys", async () => {
  expect(
    planRestore(config({ backup: PULPBACKUP, claim: "example-backup-claim" }), FIRST_INSTALL, SUPPLIED),
  ).toEqual({
    kind: "restore",
    backup: PULPBACKUP,
    claim: "example-backup-claim",
    overwrite: false,
    done: false,
  });
  const run = await render(
    { ...RESTORE, restore: { backup: PULPBACKUP, claim: "example-backup-claim" } },
    KEYS,
  );
  // op-<date>t<time>: with a 30-character instance, `<instance>-restore-check-<it>` is 63 characters.
  const restore = run.k8s("Job", "pulp-restore-op-20261124t031500");
  const check = run.k8s("Job", "pulp-restore-check-op-20261124t031500");
  expect(restore.inputs.spec.template.spec.containers[0].env).toContainEqual({
    name: "BACKUP_DIR",
    value: `/backups/${PULPBACKUP}`,
  });
  // The PulpBackup's keys are in its YAML files, which the check reads (restore.sh's image has no YAML).
  const pod = check.inputs.spec.template.spec;
  expect(restrictedViolations(pod)).toEqual([]);
  expect(pod.containers[0].env).toContainEqual({ name: "KEYS_DIR", value: "/run/keys" });
  // Which of its files and keys to compare with which of this install's key files.
  const compared = JSON.parse(pod.containers[0].env.find((e: any) => e.name === "PULP_BACKUP_KEYS").value);
  expect(compared.map((k: any) => [k.file, k.keyFile])).toEqual([
    ["pulp_secret_key.yaml", "secret_key"],
    ["db_fields_encryption_secret.yaml", "database_fields.symmetric.key"],
    ["admin_secret.yaml", "admin_password"],
  ]);
  expect(pod.containers[0].volumeMounts).toContainEqual({
    name: "keys",
    mountPath: "/run/keys",
    readOnly: true,
  });
  const sources = pod.volumes.find((v: any) => v.name === "keys").projected.sources;
  expect(sources.map((s: any) => s.secret.items[0].path)).toEqual([
    "secret_key",
    "database_fields.symmetric.key",
    "admin_password",
  ]);
  // This program's backups are checked by restore.sh against their manifest: no keys in the check's pod.
  const own = await render(RESTORE, KEYS);
  expect(
    own.k8s("Job", `pulp-restore-check-${ID.toLowerCase()}`).inputs.spec.template.spec.volumes,
  ).not.toContainEqual(expect.objectContaining({ name: "keys" }));
});

test("a PulpBackup restores into a new install only: an overwrite of a live one is refused, with the way out", () => {
  const overwrite = config({ backup: PULPBACKUP, claim: "example-backup-claim", overwrite: PULPBACKUP });
  expect(() => planRestore(overwrite, live, SUPPLIED)).toThrow(
    `${RESTORE_REFUSED_MARKER} pulp:restore.overwrite: ${PULPBACKUP} is a pulp-operator PulpBackup, which restores ` +
      "into a new install only (it names no releases, so what it would do to a live database cannot be checked " +
      "first). Restore it into a new stack (pulumi stack init), then move the clients; for now: pulumi config rm " +
      "--path pulp:restore.overwrite",
  );
  expect(problemsOf({ ...RESTORE, restore: { backup: "openshift-backup-2026-11-24" } })).toEqual([
    expect.stringMatching(
      /^pulp:restore.backup: must be a backup id such as "20261124T031500Z" .*, or the directory of a pulp-operator PulpBackup such as "openshift-backup-2026-11-24-031500"/,
    ),
  ]);
});
