// Unit, under Pulumi mocks: the pod `npm run backup -- list|export` reads the backups volume with is made
// from the CronJob the program renders, so it passes Pod Security restricted and cannot write a backup.
import { readerPod } from "../../../../tools/backup/volume";
import { restrictedViolations } from "../../../../components/workload/podSecurity";
import { MINIMAL } from "../../helpers/configs";
import { render } from "../../helpers/render";

test("the reader pod runs the backup image as the backup does, with the volume read-only", async () => {
  const run = await render({
    ...MINIMAL,
    backup: { enabled: true, image: "ghcr.io/cloudnative-pg/postgresql:16.4" },
    imagePullSecrets: ["registry"],
    scheduling: { nodeSelector: { pool: "infra" } },
  });
  const cronJob = run.k8s("CronJob", "pulp-backup").inputs;
  const pod = readerPod(cronJob, "pulp-backup-reader-1") as any;
  expect(restrictedViolations(pod.spec)).toEqual([]);
  expect(pod.spec.containers[0].image).toBe("ghcr.io/cloudnative-pg/postgresql:16.4");
  expect(pod.spec.securityContext).toMatchObject({ runAsUser: 700, fsGroup: 700 });
  expect(pod.spec.containers[0].volumeMounts).toEqual([
    { name: "backups", mountPath: "/backups", readOnly: true },
  ]);
  expect(pod.spec.volumes).toEqual([
    { name: "backups", persistentVolumeClaim: { claimName: "pulp-backups", readOnly: true } },
  ]);
  expect([pod.spec.nodeSelector, pod.spec.imagePullSecrets]).toEqual([
    { pool: "infra" },
    [{ name: "registry" }],
  ]);
  expect(pod.metadata.namespace).toBe("pulp");
});

/** An install whose backups go to object storage too. */
const renderWithBucket = () =>
  render(
    {
      ...MINIMAL,
      backup: {
        enabled: true,
        image: "ghcr.io/cloudnative-pg/postgresql:16.4",
        s3: { bucket: "pulp-backups", accessKeyId: "AKIAEXAMPLE" },
      },
    },
    { backupS3SecretAccessKey: "s3-secret" },
  );

test("with backups also in object storage (the backup an init container), the reader still runs the backup image", async () => {
  const run = await renderWithBucket();
  const pod = readerPod(run.k8s("CronJob", "pulp-backup").inputs, "pulp-backup-reader-2") as any;
  expect(pod.spec.containers[0].image).toBe("ghcr.io/cloudnative-pg/postgresql:16.4");
  expect(restrictedViolations(pod.spec)).toEqual([]);
});

test("for `list` with backups in object storage, a second container reads the bucket as the upload does", async () => {
  const run = await renderWithBucket();
  const cronJob = run.k8s("CronJob", "pulp-backup").inputs;
  const upload = cronJob.spec.jobTemplate.spec.template.spec.containers[0];
  const pod = readerPod(cronJob, "pulp-backup-reader-3", { bucket: true }) as any;
  expect(restrictedViolations(pod.spec)).toEqual([]);
  const bucket = pod.spec.containers.find((c: any) => c.name === "bucket");
  expect([bucket.image, bucket.env]).toEqual([upload.image, upload.env]);
  expect(bucket.env).toContainEqual({
    name: "AWS_SECRET_ACCESS_KEY",
    valueFrom: { secretKeyRef: { name: "pulp-backup-s3", key: "secret_access_key" } },
  });
  // It reads upload.py from the CronJob's ConfigMap; the backups volume is not mounted in it.
  expect(bucket.volumeMounts.map((m: any) => m.name)).toEqual(["script", "tmp"]);
  expect(pod.spec.volumes.map((v: any) => v.name)).toEqual(["backups", "script", "tmp"]);
  // export and keys read only the volume: no credentials in their pod.
  expect((readerPod(cronJob, "pulp-backup-reader-4") as any).spec.containers).toHaveLength(1);
});

test("without object storage, `list` reads the volume alone", async () => {
  const run = await render({
    ...MINIMAL,
    backup: { enabled: true, image: "ghcr.io/cloudnative-pg/postgresql:16.4" },
  });
  const pod = readerPod(run.k8s("CronJob", "pulp-backup").inputs, "pulp-backup-reader-5", {
    bucket: true,
  }) as any;
  expect(pod.spec.containers.map((c: any) => c.name)).toEqual(["reader"]);
});
