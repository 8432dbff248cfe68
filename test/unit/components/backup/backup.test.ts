// Unit, under Pulumi mocks: the backup CronJob, its volume and what its pod reads. (That a backup really
// holds a restorable install is shown on real Pulp: test/e2e/real/backup.test.ts.)
import { HOLDS_ANNOTATION } from "../../../../components/contract";
import { restrictedViolations } from "../../../../components/workload/podSecurity";
import { MINIMAL, problemsOf } from "../../helpers/configs";
import { JOB, PVC, render } from "../../helpers/render";

const CRONJOB = "kubernetes:batch/v1:CronJob";
const CONFIGMAP = "kubernetes:core/v1:ConfigMap";
const PG_IMAGE = "ghcr.io/cloudnative-pg/postgresql:16.4";
const ON_DEMAND = {
  ...MINIMAL,
  database: { cloudnativepg: { imageName: PG_IMAGE } },
  backup: { enabled: true },
};

const podOf = (cronJob: { inputs: any }) => cronJob.inputs.spec.jobTemplate.spec.template.spec;
const envOf = (container: any) =>
  Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));

test("without backup.enabled there is no backup CronJob and no backups volume", async () => {
  const run = await render(MINIMAL);
  expect(run.ofType(CRONJOB)).toEqual([]);
  expect(run.ofType(PVC).map((p) => p.inputs.metadata.name)).toEqual(["pulp-artifacts"]);
});

test("without a schedule the CronJob is suspended (on demand only); with one it runs on it", async () => {
  const onDemand = (await render(ON_DEMAND)).k8s("CronJob", "pulp-backup");
  expect(onDemand.inputs.spec.suspend).toBe(true);
  const nightly = (await render({ ...ON_DEMAND, backup: { enabled: true, schedule: "0 3 * * *" } })).k8s(
    "CronJob",
    "pulp-backup",
  );
  expect([nightly.inputs.spec.suspend, nightly.inputs.spec.schedule]).toEqual([false, "0 3 * * *"]);
  // One at a time: each backup links to the files of the last complete one.
  expect(nightly.inputs.spec.concurrencyPolicy).toBe("Forbid");
});

test("the backups volume is protected, kept on destroy, and marked as holding data", async () => {
  const claim = (await render(ON_DEMAND)).k8s("PersistentVolumeClaim", "pulp-backups");
  expect([claim.protect, claim.retainOnDelete]).toEqual([true, true]);
  expect(claim.inputs.metadata.annotations[HOLDS_ANNOTATION]).toBe("backups");
  expect(claim.inputs.spec.resources.requests.storage).toBe("100Gi");
});

test("the pod dumps the CloudNativePG database with its own image and the operator's app Secret", async () => {
  const pod = podOf((await render(ON_DEMAND)).k8s("CronJob", "pulp-backup"));
  const backup = pod.containers[0];
  expect(backup.image).toBe(PG_IMAGE);
  const env = envOf(backup);
  expect([env.PGHOST, env.PGDATABASE, env.PGUSER]).toEqual(["pulp-db-rw", "pulp", "pulp"]);
  expect(env.PGPASSWORD).toEqual({ secretKeyRef: { name: "pulp-db-app", key: "password" } });
  expect(env.MEDIA_ROOT).toBe("/var/lib/pulp/media");
  // The versions in the manifest come from the Pulp image itself.
  expect(pod.initContainers[0].image).toBe(MINIMAL.image ?? "quay.io/pulp/pulp-minimal:3.123.1");
});

test("the pod reads the artifacts read-only and carries every key Secret, the db-fields key first of all", async () => {
  const run = await render({ ...ON_DEMAND, tokenAuth: true });
  const pod = podOf(run.k8s("CronJob", "pulp-backup"));
  const mounts = Object.fromEntries(pod.containers[0].volumeMounts.map((m: any) => [m.mountPath, m]));
  expect(mounts["/var/lib/pulp"].readOnly).toBe(true);
  const artifacts = pod.volumes.find((v: any) => v.name === "artifacts");
  expect(artifacts.persistentVolumeClaim.claimName).toBe("pulp-artifacts");
  const keys = pod.volumes.find((v: any) => v.name === "keys").projected.sources;
  const files = keys.flatMap((s: any) =>
    s.secret.items.map((i: any) => `${s.secret.name}/${i.key} -> ${i.path}`),
  );
  expect(files).toEqual([
    "pulp-secret-key/secret_key -> secret_key",
    "pulp-db-fields-encryption/database_fields.symmetric.key -> database_fields.symmetric.key",
    "pulp-admin-password/password -> admin_password",
    "pulp-container-auth/container_auth_private_key.pem -> container_auth_private_key.pem",
    "pulp-container-auth/container_auth_public_key.pem -> container_auth_public_key.pem",
  ]);
});

test("with object storage the artifacts are not in the backup, and the manifest names the bucket a restore needs", async () => {
  const run = await render(
    { ...ON_DEMAND, storage: { s3: { bucket: "pulp-artifacts", accessKeyId: "AKIA0" } } },
    { s3SecretAccessKey: "s3-secret" },
  );
  const pod = podOf(run.k8s("CronJob", "pulp-backup"));
  const env = envOf(pod.containers[0]);
  expect(env.MEDIA_ROOT).toBe("");
  // What the restore check compares with the target's storage (restoreCheck.py).
  expect(env.STORAGE).toBe("s3://pulp-artifacts");
  expect(pod.volumes.find((v: any) => v.name === "artifacts")).toBeUndefined();
});

test("the config copied into each backup holds no secret value", async () => {
  const secrets = { adminPassword: "admin-Secret-9f2", databasePassword: "db-Secret-4c1" };
  const run = await render(
    {
      ...ON_DEMAND,
      database: { external: { host: "db.example.com" } },
      backup: { enabled: true, image: PG_IMAGE },
    },
    secrets,
  );
  const data = run.k8s("ConfigMap", "pulp-backup").inputs.data;
  expect(JSON.parse(data["config.json"]).database.external.host).toBe("db.example.com");
  for (const value of Object.values(secrets)) expect(data["config.json"]).not.toContain(value);
  expect(data["backup.sh"]).toMatch(/^#!\/bin\/bash/);
});

test("the backup pod passes Pod Security restricted, and no backup starts before the first migration", async () => {
  const run = await render(ON_DEMAND);
  const cronJob = run.k8s("CronJob", "pulp-backup");
  expect(restrictedViolations(podOf(cronJob))).toEqual([]);
  const migration = run.ofType(JOB)[0];
  expect(run.dependenciesOf(cronJob).has(migration.urn)).toBe(true);
  expect(run.ofType(CONFIGMAP).some((c) => c.inputs.metadata.name === "pulp-backup")).toBe(true);
});

test("backups need a PostgreSQL image: without one the error names the key and a fix", () => {
  expect(problemsOf({ backup: { enabled: true } })).toEqual([
    expect.stringMatching(/^pulp:backup\.image: backups run pg_dump, and no PostgreSQL image is known/),
  ]);
  expect(problemsOf({ backup: { enabled: true, image: PG_IMAGE } })).toEqual([]);
  expect(problemsOf({ backup: { enabled: true, schedule: "nightly", image: PG_IMAGE } })).toEqual([
    expect.stringMatching(/^pulp:backup\.schedule: must be a cron schedule/),
  ]);
});

const S3 = { bucket: "pulp-backups", endpointUrl: "https://s3.example.com", accessKeyId: "AKIAEXAMPLE" };

test("with backup.s3 the backup runs first, then the Pulp image puts it into the bucket with its own Secret", async () => {
  const secret = "backup-s3-Secret-5e1";
  const run = await render(
    { ...ON_DEMAND, backup: { enabled: true, s3: S3 } },
    { backupS3SecretAccessKey: secret },
  );
  const cronJob = run.k8s("CronJob", "pulp-backup");
  const pod = podOf(cronJob);
  expect(pod.initContainers.map((c: any) => c.name)).toEqual(["versions", "backup"]);
  expect(envOf(pod.initContainers[1]).RESULT_FILE).toBe("/run/backup/result.json");
  const [upload] = pod.containers;
  expect([upload.name, upload.image]).toEqual([
    "upload",
    MINIMAL.image ?? "quay.io/pulp/pulp-minimal:3.123.1",
  ]);
  expect(envOf(upload)).toMatchObject({
    S3_BUCKET: "pulp-backups",
    S3_PREFIX: "pulp/pulp/",
    S3_ENDPOINT_URL: "https://s3.example.com",
    AWS_ACCESS_KEY_ID: "AKIAEXAMPLE",
    AWS_SECRET_ACCESS_KEY: { secretKeyRef: { name: "pulp-backup-s3", key: "secret_access_key" } },
    KEEP: "7",
  });
  // It reads the backups volume, never writes it.
  expect(upload.volumeMounts.find((m: any) => m.name === "backups").readOnly).toBe(true);
  expect(run.k8s("Secret", "pulp-backup-s3").inputs.stringData.secret_access_key).toBe(secret);
  expect(run.k8s("ConfigMap", "pulp-backup").inputs.data["config.json"]).not.toContain(secret);
  expect(run.k8s("ConfigMap", "pulp-backup").inputs.data["upload.py"]).toContain(
    "TransferManager(s3, config)",
  );
  expect(restrictedViolations(pod)).toEqual([]);
  // Without backup.s3 the pod is as before: no upload container, no Secret.
  const plain = podOf((await render(ON_DEMAND)).k8s("CronJob", "pulp-backup"));
  expect(plain.containers.map((c: any) => c.name)).toEqual(["backup"]);
});

test("backup.s3 needs its secret key and backups on; a bad bucket or prefix names the key and the form", () => {
  const withImage = (s3: object, enabled = true) => ({ backup: { enabled, image: PG_IMAGE, s3 } });
  expect(problemsOf(withImage(S3))).toEqual([
    "pulp:backup.s3.accessKeyId: a static key needs its secret, pulp:backupS3SecretAccessKey (or leave the key out: the pods' identity, pulp:serviceAccount)",
  ]);
  expect(problemsOf(withImage({ ...S3, bucket: "Pulp_Backups" }))).toContainEqual(
    expect.stringMatching(/^pulp:backup\.s3\.bucket: must be an S3 bucket name/),
  );
  expect(problemsOf(withImage({ ...S3, prefix: "pulp/prod" }))).toContainEqual(
    expect.stringMatching(/^pulp:backup\.s3\.prefix: must be empty or end with "\/"/),
  );
  expect(problemsOf(withImage(S3, false))).toContainEqual(
    expect.stringMatching(/^pulp:backup\.s3: says where backups go, but pulp:backup\.enabled is not true/),
  );
});
