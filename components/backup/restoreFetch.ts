import * as fs from "fs";
import * as path from "path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { scratchSize, STREAMING } from "../config/ephemeral";
import { holds } from "../contract";
import { fixedName, Identity, labels, runningLabels } from "../common/labels";
import { PodDefaults, restricted } from "../workload/podSecurity";
import { PULP_PYTHON } from "../workload/pulpProcess";
import { backupSlug } from "./backupIds";
import { RestoreFetchSource } from "./restorePlan";

/** What the Job runs, with Pulp's interpreter and its boto3. */
export const FETCH_SCRIPT = fs.readFileSync(path.join(__dirname, "fetch.py"), "utf8");

export interface RestoreFetchArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  backup: string;
  source: RestoreFetchSource;
  /** pulp:restoreS3SecretAccessKey. */
  secretAccessKey: pulumi.Input<string>;
  pulpImage: string;
  /** As RestoreArgs.done: once restored, the Job stays as it was and no pod runs for it again. */
  done: boolean;
  /** How long `pulumi up` awaits the Job (pulp:migration.timeout). */
  timeout: string;
  podDefaults?: PodDefaults;
}

/**
 * A backup fetched from the bucket into a volume of its own (`<instance>-restore-<id>`, the restore's
 * claim) by a Job with the bucket's credentials from a Secret, before anything stops: a missing object
 * leaves a live install serving. Unlike an http import (a CDI DataVolume), no URL that grants access is in
 * any object's spec. The volume is ReadWriteOnce (the fetch, the check and the restore use it one after
 * the other), not protected, and kept when the config drops it.
 */
export class RestoreFetch extends pulumi.ComponentResource {
  readonly claim: k8s.core.v1.PersistentVolumeClaim;
  readonly job: k8s.batch.v1.Job;

  constructor(name: string, args: RestoreFetchArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:backup:RestoreFetch", name, {}, opts);
    const { source } = args;
    const jobName = fixedName(args.identity, `restore-fetch-${backupSlug(args.backup)}`);
    const meta = (objectName: string) => ({
      name: objectName,
      namespace: args.namespace,
      labels: labels(args.identity, "backup"),
    });
    this.claim = new k8s.core.v1.PersistentVolumeClaim(
      `${name}-volume`,
      {
        metadata: { ...meta(source.name), annotations: holds("import") },
        spec: {
          accessModes: ["ReadWriteOnce"],
          resources: { requests: { storage: source.size } },
          ...(source.storageClass ? { storageClassName: source.storageClass } : {}),
        },
      },
      // A copy of the backup: kept when the config drops it, like an http import's volume.
      { parent: this, retainOnDelete: true },
    );
    const secret = new k8s.core.v1.Secret(
      `${name}-s3`,
      {
        metadata: meta(jobName),
        type: "Opaque",
        stringData: { secret_access_key: pulumi.secret(args.secretAccessKey) },
      },
      { parent: this },
    );
    const script = new k8s.core.v1.ConfigMap(
      name,
      { metadata: meta(jobName), data: { "fetch.py": FETCH_SCRIPT } },
      { parent: this },
    );
    const podLabels = runningLabels(args.identity, "backup");
    this.job = new k8s.batch.v1.Job(
      name,
      {
        metadata: {
          name: jobName,
          namespace: args.namespace,
          labels: podLabels,
          // A failed fetch (no such backup, no room) runs again on the next `up` once its cause is fixed.
          annotations: args.done
            ? { "pulumi.com/skipAwait": "true" }
            : { "pulumi.com/replaceUnready": "true" },
        },
        spec: {
          backoffLimit: 0,
          suspend: args.done,
          template: {
            metadata: { labels: podLabels },
            spec: restricted({
              ...args.podDefaults,
              restartPolicy: "Never",
              enableServiceLinks: false,
              containers: [
                {
                  name: "fetch",
                  image: args.pulpImage,
                  command: ["/bin/sh", "-c", `${PULP_PYTHON}\nexec "$py" /opt/restore/fetch.py`],
                  terminationMessagePolicy: "FallbackToLogsOnError",
                  env: [
                    { name: "BACKUP_ID", value: args.backup },
                    { name: "DEST", value: "/backups" },
                    { name: "CLAIM", value: source.name },
                    { name: "S3_BUCKET", value: source.bucket },
                    { name: "S3_KEY", value: source.key },
                    { name: "S3_ENDPOINT_URL", value: source.endpointUrl ?? "" },
                    { name: "S3_REGION", value: source.region ?? "" },
                    // rules.ts refuses restore.s3 without a key.
                    { name: "AWS_ACCESS_KEY_ID", value: source.accessKeyId! },
                    {
                      name: "AWS_SECRET_ACCESS_KEY",
                      valueFrom: { secretKeyRef: { name: secret.metadata.name, key: "secret_access_key" } },
                    },
                  ],
                  volumeMounts: [
                    { name: "backups", mountPath: "/backups" },
                    { name: "script", mountPath: "/opt/restore", readOnly: true },
                    { name: "tmp", mountPath: "/tmp" },
                  ],
                  // One chunk of the stream at a time, besides the interpreter and boto3.
                  resources: {
                    requests: { cpu: "50m", memory: "128Mi", "ephemeral-storage": STREAMING.request },
                    limits: { memory: "512Mi", "ephemeral-storage": STREAMING.limit },
                  },
                },
              ],
              volumes: [
                { name: "backups", persistentVolumeClaim: { claimName: this.claim.metadata.name } },
                { name: "script", configMap: { name: jobName, defaultMode: 0o444 } },
                { name: "tmp", emptyDir: { sizeLimit: scratchSize(STREAMING.limit) } },
              ],
            }),
          },
        },
      },
      {
        parent: this,
        dependsOn: [script, secret, this.claim],
        customTimeouts: { create: args.timeout, update: args.timeout },
        ...(args.done ? { ignoreChanges: ["spec", "metadata"] } : {}),
      },
    );
    this.registerOutputs({ jobName, claimName: source.name });
  }
}
