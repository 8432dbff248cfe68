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

test("with backups also in object storage (the backup an init container), the reader still runs the backup image", async () => {
  const run = await render(
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
  const pod = readerPod(run.k8s("CronJob", "pulp-backup").inputs, "pulp-backup-reader-2") as any;
  expect(pod.spec.containers[0].image).toBe("ghcr.io/cloudnative-pg/postgresql:16.4");
  expect(restrictedViolations(pod.spec)).toEqual([]);
});
