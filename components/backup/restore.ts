import { databaseCaMounts, databaseCaVolumes } from "../database/database";
import * as fs from "fs";
import * as path from "path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { RESTORE, scratchSize, STREAMING } from "../config/ephemeral";
import { PULP_DATA_DIR } from "../settings/render";
import { SecretKeyRef } from "../secrets/pulpSecrets";
import { fixedName, Identity, labels, runningLabels } from "../common/labels";
import { PodDefaults, restricted } from "../workload/podSecurity";
import { PACKAGE_OF, WAYPOINTS } from "../upgrade/migrations";
import { PULP_PYTHON } from "../workload/pulpProcess";
import { gcsEnv, gcsMounts, GcsRuntime, gcsVolumes } from "../storage/gcs";
import {
  BackupKeys,
  DUMP_COLUMNS_SCRIPT,
  InstallData,
  KEY_DIGEST_SCRIPT,
  KEY_FILES,
  keyProjection,
  libpqEnv,
  storageName,
} from "./backup";
import { backupSlug, isOperatorBackup, PULP_BACKUP_KEYS } from "./backupIds";

/** The script the Job runs (shellchecked in the repository, shipped in a ConfigMap). */
export const RESTORE_SCRIPT = fs.readFileSync(path.join(__dirname, "restore.sh"), "utf8");
/**
 * What runs first, with Pulp's interpreter: the backup's releases against the image's, and its artifacts
 * against this install's storage.
 */
export const RESTORE_CHECK_SCRIPT = fs.readFileSync(path.join(__dirname, "restoreCheck.py"), "utf8");

/**
 * PULP_BACKUP_KEYS as restoreCheck.py compares them: each with the file this install's key has in KEYS_DIR
 * (KEY_FILES, as a backup's keys/ names them).
 */
export function pulpBackupKeyFiles(): { keyFile: string; file: string; key: string }[] {
  const keyFile = {
    secretKey: KEY_FILES.secretKey,
    dbFieldsEncryptionKey: KEY_FILES.dbFieldsKey,
    adminPassword: KEY_FILES.adminPassword,
  } satisfies Record<keyof typeof PULP_BACKUP_KEYS, string>;
  return Object.entries(PULP_BACKUP_KEYS).map(([config, { file, key }]) => ({
    keyFile: keyFile[config as keyof typeof PULP_BACKUP_KEYS],
    file,
    key,
  }));
}

/**
 * The upgrade planner's tables as restoreCheck.py applies them to a backup's releases (the backup's
 * database is the deployed side, the image the target): which packages carry migrations the planner
 * knows, and the squash purges a database must have been migrated past.
 */
export function restoreRules(): { packages: string[]; waypoints: object[] } {
  return {
    packages: [...new Set(Object.values(PACKAGE_OF))].sort(),
    waypoints: WAYPOINTS.map((w) => ({ ...w, package: PACKAGE_OF[w.app] })),
  };
}

/** Where this install keeps its artifacts, as the artifact check compares it with the backup's. */
export type ArtifactTarget =
  | { kind: "pvc" }
  | {
      kind: "s3";
      bucket: string;
      endpointUrl?: string;
      region?: string;
      accessKeyId: string;
      secretKey: SecretKeyRef;
    }
  | {
      kind: "azure";
      accountName: string;
      container: string;
      location?: string;
      /** The connection string with the account's key (storage/artifactStorage.ts). */
      connection: SecretKeyRef;
    }
  | {
      kind: "gcs";
      bucket: string;
      location?: string;
      /** The key (rules.ts refuses a restore without one) and the endpoint, as the pods get them. */
      runtime: GcsRuntime;
    };

export interface RestoreArgs extends InstallData {
  /** The backup id and the PVC in the namespace that holds `<id>/` (restorePlan.ts). */
  backup: string;
  claim: string;
  /**
   * Over a live install's data (restorePlan.ts): restore.sh replaces a database that is not empty. Carried
   * in the ConfigMap, not the Job, so the Job stays the same when the confirmation goes away.
   */
  overwrite: boolean;
  /** A PostgreSQL image: pg_restore must be at least the dump's version. */
  image: string;
  /**
   * Restored by an earlier update (restorePlan.ts): the Job stays exactly as it was created, whatever this
   * version of the program would make of it, so that it is never replaced and run again over live data.
   */
  done: boolean;
  /** The release this install runs: a backup from a newer one is refused. */
  pulpcoreVersion: string;
  /** How long `pulumi up` awaits the Job (pulp:migration.timeout), such as "6h". */
  timeout: string;
  /** The keys (InstallData.keys) are this install's: the Job checks they are the backup's first. */
  after: pulumi.Resource[];
}

export interface RestoreCheckArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  backup: string;
  claim: string;
  /** The Pulp image: the check runs with its interpreter, its releases and boto3. */
  pulpImage: string;
  /** This install's artifact storage, which must hold (or receive) every artifact the backup references. */
  target: ArtifactTarget;
  /** As RestoreArgs.done: once restored, the Job stays as it was and no pod runs for it again. */
  done: boolean;
  /**
   * This install's keys: a PulpBackup's are in its YAML files, which the check reads with Pulp's own YAML
   * library (restore.sh's image has none). Mounted for PulpBackups only; backup.sh's are checked by
   * restore.sh against its manifest.
   */
  keys: BackupKeys;
  podDefaults?: PodDefaults;
  /** The backup's volume (a CDI import) and the storage's Secret. */
  after: pulumi.Resource[];
}

/**
 * Whether a backup fits this install (restoreCheck.py: the releases, the artifacts against the storage),
 * as a Job of its own that runs before anything stops or changes: over a live install a refusal leaves Pulp
 * serving, and the refusal is what `pulumi up` prints (the provider's Job await reports a failed
 * container's termination message, not an init container's). Kept like the restore Job, and created
 * suspended once the restore is done, so that a stack restored before this check existed runs none.
 */
export class RestoreCheck extends pulumi.ComponentResource {
  readonly job: k8s.batch.v1.Job;

  constructor(name: string, args: RestoreCheckArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:backup:RestoreCheck", name, {}, opts);
    const jobName = fixedName(args.identity, `restore-check-${backupSlug(args.backup)}`);
    const script = new k8s.core.v1.ConfigMap(
      name,
      {
        metadata: { name: jobName, namespace: args.namespace, labels: labels(args.identity, "backup") },
        data: { "restoreCheck.py": RESTORE_CHECK_SCRIPT },
      },
      { parent: this },
    );
    const s3 = args.target.kind === "s3" ? args.target : undefined;
    const azure = args.target.kind === "azure" ? args.target : undefined;
    const gcs = args.target.kind === "gcs" ? args.target : undefined;
    const keys = isOperatorBackup(args.backup);
    const podLabels = runningLabels(args.identity, "backup");
    this.job = new k8s.batch.v1.Job(
      name,
      {
        metadata: {
          name: jobName,
          namespace: args.namespace,
          labels: podLabels,
          // A refusal runs the check again on the next `up` once its cause is fixed. Not once done: a
          // suspended Job never completes, and the provider would replace it on every update.
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
                  name: "check",
                  image: args.pulpImage,
                  command: ["/bin/sh", "-c", `${PULP_PYTHON}\nexec "$py" /opt/restore/restoreCheck.py`],
                  terminationMessagePolicy: "FallbackToLogsOnError",
                  env: [
                    { name: "BACKUP_DIR", value: `/backups/${args.backup}` },
                    { name: "RESTORE_RULES", value: JSON.stringify(restoreRules()) },
                    { name: "TARGET_STORAGE", value: storageName({ s3, azure, gcs }) },
                    ...(keys
                      ? [
                          { name: "KEYS_DIR", value: "/run/keys" },
                          { name: "PULP_BACKUP_KEYS", value: JSON.stringify(pulpBackupKeyFiles()) },
                        ]
                      : []),
                    ...(s3
                      ? [
                          { name: "S3_ENDPOINT_URL", value: s3.endpointUrl ?? "" },
                          { name: "S3_REGION", value: s3.region ?? "" },
                          { name: "AWS_ACCESS_KEY_ID", value: s3.accessKeyId },
                          {
                            name: "AWS_SECRET_ACCESS_KEY",
                            valueFrom: { secretKeyRef: { name: s3.secretKey.name, key: s3.secretKey.key } },
                          },
                        ]
                      : []),
                    ...(azure
                      ? [
                          {
                            name: "AZURE_CONNECTION_STRING",
                            valueFrom: {
                              secretKeyRef: { name: azure.connection.name, key: azure.connection.key },
                            },
                          },
                        ]
                      : []),
                    ...gcsEnv(gcs?.runtime),
                  ],
                  volumeMounts: [
                    { name: "backups", mountPath: "/backups", readOnly: true },
                    { name: "script", mountPath: "/opt/restore", readOnly: true },
                    { name: "tmp", mountPath: "/tmp" },
                    ...(keys ? [{ name: "keys", mountPath: "/run/keys", readOnly: true }] : []),
                    ...gcsMounts(gcs?.runtime),
                  ],
                  // One listing page (1,000 keys) at a time, merged with the sorted list as it streams.
                  resources: {
                    requests: { cpu: "50m", memory: "128Mi", "ephemeral-storage": STREAMING.request },
                    limits: { memory: "512Mi", "ephemeral-storage": STREAMING.limit },
                  },
                },
              ],
              volumes: [
                { name: "backups", persistentVolumeClaim: { claimName: args.claim, readOnly: true } },
                { name: "script", configMap: { name: jobName, defaultMode: 0o444 } },
                { name: "tmp", emptyDir: { sizeLimit: scratchSize(STREAMING.limit) } },
                ...(keys
                  ? [{ name: "keys", projected: { sources: keyProjection(args.keys), defaultMode: 0o440 } }]
                  : []),
                ...gcsVolumes(gcs?.runtime),
              ],
            }),
          },
        },
      },
      {
        parent: this,
        dependsOn: [script, ...args.after],
        ...(args.done ? { ignoreChanges: ["spec", "metadata"] } : {}),
      },
    );
    this.registerOutputs({ jobName });
  }
}

/**
 * Loads a backup into a new install before its first migration, or over a stopped live install's data:
 * one Job named by the backup id, awaited by `pulumi up` (the migration Job depends on it), kept
 * afterwards, so the same id again changes nothing. restore.sh refuses, changing nothing, when the backup
 * does not fit this install.
 */
export class RestoreJob extends pulumi.ComponentResource {
  readonly job: k8s.batch.v1.Job;

  constructor(name: string, args: RestoreArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:backup:RestoreJob", name, {}, opts);
    const jobName = fixedName(args.identity, `restore-${backupSlug(args.backup)}`);
    const script = new k8s.core.v1.ConfigMap(
      name,
      {
        metadata: { name: jobName, namespace: args.namespace, labels: labels(args.identity, "backup") },
        data: {
          "restore.sh": RESTORE_SCRIPT,
          "keyDigest.sh": KEY_DIGEST_SCRIPT,
          "dumpColumns.sh": DUMP_COLUMNS_SCRIPT,
          ...(args.overwrite ? { overwrite: args.backup } : {}),
        },
      },
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
          // A refused or failed restore runs again on the next `up` once its cause is fixed.
          annotations: { "pulumi.com/replaceUnready": "true" },
        },
        spec: {
          backoffLimit: 0,
          template: {
            metadata: { labels: podLabels },
            spec: restricted({
              ...args.podDefaults,
              restartPolicy: "Never",
              enableServiceLinks: false,
              containers: [
                {
                  name: "restore",
                  image: args.image,
                  command: ["/bin/bash", "/opt/restore/restore.sh"],
                  // The kubelet keeps the refusal in the container's status; the Job await prints it.
                  terminationMessagePolicy: "FallbackToLogsOnError",
                  env: [
                    { name: "BACKUP_DIR", value: `/backups/${args.backup}` },
                    { name: "MEDIA_ROOT", value: args.artifacts ? `${PULP_DATA_DIR}/media` : "" },
                    { name: "KEYS_DIR", value: "/run/keys" },
                    { name: "TARGET_PULPCORE", value: args.pulpcoreVersion },
                    ...libpqEnv(args.database, args.databasePassword),
                  ],
                  volumeMounts: [
                    { name: "backups", mountPath: "/backups", readOnly: true },
                    { name: "script", mountPath: "/opt/restore", readOnly: true },
                    { name: "keys", mountPath: "/run/keys", readOnly: true },
                    { name: "tmp", mountPath: "/tmp" },
                    ...(args.artifacts ? [{ name: "artifacts", mountPath: PULP_DATA_DIR }] : []),
                    ...databaseCaMounts(args.database),
                  ],
                  // /tmp: GNU sort spills the listing of every restored artifact there (restore.sh).
                  resources: {
                    requests: { cpu: "100m", memory: "256Mi", "ephemeral-storage": RESTORE.request },
                    limits: { memory: "1Gi", "ephemeral-storage": RESTORE.limit },
                  },
                },
              ],
              volumes: [
                { name: "backups", persistentVolumeClaim: { claimName: args.claim, readOnly: true } },
                { name: "script", configMap: { name: jobName, defaultMode: 0o444 } },
                { name: "keys", projected: { sources: keyProjection(args.keys), defaultMode: 0o440 } },
                { name: "tmp", emptyDir: { sizeLimit: scratchSize(RESTORE.limit) } },
                ...(args.artifacts ? [{ ...args.artifacts, name: "artifacts" }] : []),
                ...databaseCaVolumes(args.database),
              ],
            }),
          },
        },
      },
      {
        parent: this,
        dependsOn: [script, ...args.after],
        customTimeouts: { create: args.timeout, update: args.timeout },
        ...(args.done ? { ignoreChanges: ["spec", "metadata"] } : {}),
      },
    );
    this.registerOutputs({ jobName });
  }
}
