import * as k8s from "@pulumi/kubernetes";
import { identityEnv, identityMounts, identityVolumes, PodIdentityRuntime } from "../identity/podIdentity";
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { scratchSize, SMALL_DIR, STREAMING, TINY } from "../config/ephemeral";
import { ParsedConfig } from "../config/schema";
import { holds } from "../contract";
import { databaseCaEnv, databaseCaMounts, databaseCaVolumes } from "../database/database";
import { proxyEnv, ProxyRuntime } from "../proxy/proxy";
import { SecretKeyRef } from "../secrets/pulpSecrets";
import {
  DB_FIELDS_KEY_FILE,
  DatabaseSettings,
  PULP_DATA_DIR,
  TOKEN_PRIVATE_KEY_FILE,
  TOKEN_PUBLIC_KEY_FILE,
} from "../settings/render";
import { fixedName, Identity, labels, runningLabels } from "../common/labels";
import { objectStoreName, ObjectStores } from "../storage/storageMove";
import { PodDefaults, restricted } from "../workload/podSecurity";
import { PULP_PYTHON } from "../workload/pulpProcess";

/** The script the Job runs (shellchecked in the repository, shipped in a ConfigMap). */
export const BACKUP_SCRIPT = fs.readFileSync(path.join(__dirname, "backup.sh"), "utf8");
/** hmac_sha256, which backup.sh and restore.sh source from beside themselves (in each one's ConfigMap). */
export const KEY_DIGEST_SCRIPT = fs.readFileSync(path.join(__dirname, "keyDigest.sh"), "utf8");
/** dump_columns: a table of a pg_dump archive, sourced by backup.sh and restore.sh. */
export const DUMP_COLUMNS_SCRIPT = fs.readFileSync(path.join(__dirname, "dumpColumns.sh"), "utf8");
/** Puts each backup into object storage too, when backup.s3 is set (run with Pulp's interpreter). */
export const UPLOAD_SCRIPT = fs.readFileSync(path.join(__dirname, "upload.py"), "utf8");

/** Where the backup volume is mounted: `<BACKUP_ROOT>/<id>/` is one backup. */
export const BACKUP_ROOT = "/backups";
/** backup.sh's result line, for the upload container (in the pod's shared work volume). */
const RESULT_FILE = "/run/backup/result.json";

/** The key Secrets as the backup stores them, file by file (`keys/<file>` in a backup). */
export const KEY_FILES = {
  secretKey: "secret_key",
  dbFieldsKey: DB_FIELDS_KEY_FILE,
  adminPassword: "admin_password",
  tokenPrivateKey: TOKEN_PRIVATE_KEY_FILE,
  tokenPublicKey: TOKEN_PUBLIC_KEY_FILE,
} as const;

/** The installed Pulp distributions and versions as JSON, so the manifest says what the image carries. */
const VERSIONS_SCRIPT = [
  PULP_PYTHON,
  "exec $py -c 'import importlib.metadata as m, json, sys",
  'names = {(d.metadata["Name"] or "").lower().replace("_", "-"): d.version for d in m.distributions()}',
  'json.dump({n: v for n, v in sorted(names.items()) if n.startswith("pulp")}, sys.stdout)\' >/run/backup/versions.json',
].join("\n");

/**
 * A storage as a backup's manifest names it (`artifacts.storage`): "pvc", "s3://<bucket>" or
 * "azure://<account>/<container>[/<location>]".
 */
export function storageName(storage: ObjectStores): string {
  return objectStoreName(storage) ?? "pvc";
}

export interface BackupKeys {
  secretKey: SecretKeyRef;
  dbFieldsKey: SecretKeyRef;
  adminPassword: SecretKeyRef;
  tokenKeysSecret?: string;
}

/** The key Secrets as one volume, file names as in a backup's keys/ (KEY_FILES). */
export function keyProjection(keys: BackupKeys): k8s.types.input.core.v1.VolumeProjection[] {
  const file = (ref: SecretKeyRef, path: string) => ({
    secret: { name: ref.name, items: [{ key: ref.key, path }] },
  });
  return [
    file(keys.secretKey, KEY_FILES.secretKey),
    file(keys.dbFieldsKey, KEY_FILES.dbFieldsKey),
    file(keys.adminPassword, KEY_FILES.adminPassword),
    ...(keys.tokenKeysSecret
      ? [
          {
            secret: {
              name: keys.tokenKeysSecret,
              items: [
                { key: TOKEN_PRIVATE_KEY_FILE, path: KEY_FILES.tokenPrivateKey },
                { key: TOKEN_PUBLIC_KEY_FILE, path: KEY_FILES.tokenPublicKey },
              ],
            },
          },
        ]
      : []),
  ];
}

/** libpq's environment for Pulp's database: pg_dump, pg_restore and psql read it. */
export function libpqEnv(db: DatabaseSettings, password: SecretKeyRef): k8s.types.input.core.v1.EnvVar[] {
  return [
    { name: "PGHOST", value: db.host },
    { name: "PGPORT", value: String(db.port) },
    { name: "PGDATABASE", value: db.name },
    { name: "PGUSER", value: db.user },
    { name: "PGSSLMODE", value: db.sslmode },
    ...databaseCaEnv(db),
    { name: "PGPASSWORD", valueFrom: { secretKeyRef: { name: password.name, key: password.key } } },
  ];
}

/** What a backup reads and a restore writes: an install's database, artifacts and keys. */
export interface InstallData {
  namespace: pulumi.Input<string>;
  identity: Identity;
  database: DatabaseSettings;
  databasePassword: SecretKeyRef;
  /** The volume at /var/lib/pulp, or undefined when artifacts live in object storage. */
  artifacts?: k8s.types.input.core.v1.Volume;
  keys: BackupKeys;
  podDefaults?: PodDefaults;
}

export interface BackupArgs extends InstallData {
  backup: ParsedConfig["backup"];
  /** The whole parsed config: it goes into every backup as config.json (it holds no secret values). */
  config: ParsedConfig;
  /** The Pulp image: its init container reads the installed versions for the manifest. */
  pulpImage: string;
  /** pulp:backupS3SecretAccessKey, when backup.s3 has a key. */
  s3SecretAccessKey?: pulumi.Input<string>;
  /** The pods' identity (pulp:serviceAccount): the upload's, when backup.s3 has no key. */
  podIdentity?: PodIdentityRuntime;
  /** pulp:proxy: the upload reaches the bucket through it (NO_PROXY spares in-cluster endpoints). */
  proxy?: ProxyRuntime;
  /** A backup must not start before the first migration: there would be no schema to dump. */
  after: pulumi.Resource[];
}

/**
 * Backups of the install into a volume of its own: a CronJob (suspended when no schedule is set; `npm
 * run backup -- now` or `kubectl create job --from=cronjob/<instance>-backup` runs it on demand) whose
 * pod dumps the database, then copies the artifacts and the key Secrets (backup.sh says why in that
 * order). The volume holds every backup: it is never replaced or deleted by the program.
 */
export class Backup extends pulumi.ComponentResource {
  readonly cronJobName: string;
  readonly claimName: string;

  constructor(name: string, args: BackupArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:backup:Backup", name, {}, opts);
    const { identity, backup } = args;
    const image = backup.image ?? args.config.database.cloudnativepg?.imageName;
    if (!image) {
      throw new pulumi.ResourceError("backup.image is not set (parseConfig rejects this)", this);
    }
    this.claimName = fixedName(identity, "backups");
    this.cronJobName = fixedName(identity, "backup");
    const meta = (objectName: string) => ({
      name: objectName,
      namespace: args.namespace,
      labels: labels(identity, "backup"),
    });

    const claim = new k8s.core.v1.PersistentVolumeClaim(
      name,
      {
        metadata: { ...meta(this.claimName), annotations: holds("backups") },
        spec: {
          accessModes: ["ReadWriteOnce"],
          storageClassName: backup.volume.storageClass,
          resources: { requests: { storage: backup.volume.size } },
        },
      },
      { parent: this, protect: true, retainOnDelete: true },
    );
    const script = new k8s.core.v1.ConfigMap(
      name,
      {
        metadata: meta(this.cronJobName),
        data: {
          "backup.sh": BACKUP_SCRIPT,
          "keyDigest.sh": KEY_DIGEST_SCRIPT,
          "dumpColumns.sh": DUMP_COLUMNS_SCRIPT,
          "config.json": JSON.stringify(args.config, null, 2),
          ...(backup.s3 ? { "upload.py": UPLOAD_SCRIPT } : {}),
        },
      },
      { parent: this },
    );

    const keyItems = keyProjection(args.keys);
    const db = args.database;
    const env: k8s.types.input.core.v1.EnvVar[] = [
      { name: "BACKUP_ROOT", value: BACKUP_ROOT },
      { name: "KEEP", value: String(backup.keep) },
      { name: "MEDIA_ROOT", value: args.artifacts ? `${PULP_DATA_DIR}/media` : "" },
      {
        name: "STORAGE",
        // Compared with the target's by a restore (restoreCheck.py): the bucket's objects are not in the backup.
        value: storageName(args.config.storage),
      },
      { name: "KEYS_DIR", value: "/run/keys" },
      { name: "CONFIG_FILE", value: "/opt/backup/config.json" },
      { name: "VERSIONS_FILE", value: "/run/backup/versions.json" },
      { name: "INSTANCE", value: identity.instance },
      { name: "NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
      ...(backup.s3 ? [{ name: "RESULT_FILE", value: RESULT_FILE }] : []),
      ...libpqEnv(db, args.databasePassword),
    ];
    const upload = backup.s3 && this.uploadContainer(name, args, backup.s3, meta);
    const podLabels = runningLabels(identity, "backup");
    const backupContainer: k8s.types.input.core.v1.Container = {
      name: "backup",
      image,
      command: ["/bin/bash", "/opt/backup/backup.sh"],
      env,
      // The kubelet keeps the log's tail in the failed container's status: `npm run backup` prints it.
      terminationMessagePolicy: "FallbackToLogsOnError",
      volumeMounts: [
        { name: "backups", mountPath: BACKUP_ROOT },
        { name: "script", mountPath: "/opt/backup", readOnly: true },
        { name: "keys", mountPath: "/run/keys", readOnly: true },
        { name: "work", mountPath: "/run/backup" },
        { name: "tmp", mountPath: "/tmp" },
        // Read-only: a backup never writes Pulp's data.
        ...(args.artifacts ? [{ name: "artifacts", mountPath: PULP_DATA_DIR, readOnly: true }] : []),
        ...databaseCaMounts(db),
      ],
      resources: backup.resources,
    };
    const versions: k8s.types.input.core.v1.Container = {
      name: "versions",
      image: args.pulpImage,
      command: ["/bin/sh", "-c", VERSIONS_SCRIPT],
      volumeMounts: [{ name: "work", mountPath: "/run/backup" }],
      resources: {
        requests: { cpu: "10m", memory: "64Mi", "ephemeral-storage": TINY.request },
        limits: { memory: "256Mi", "ephemeral-storage": TINY.limit },
      },
    };
    const keyless = upload && !upload.secret ? args.podIdentity : undefined;
    const podSpec = restricted({
      ...args.podDefaults,
      restartPolicy: "Never",
      enableServiceLinks: false,
      ...(keyless ? { serviceAccountName: keyless.serviceAccountName } : {}),
      // With object storage, the upload runs once the backup is complete in the volume.
      initContainers: upload ? [versions, backupContainer] : [versions],
      containers: upload ? [upload.container] : [backupContainer],
      volumes: [
        { name: "backups", persistentVolumeClaim: { claimName: this.claimName } },
        { name: "script", configMap: { name: this.cronJobName, defaultMode: 0o444 } },
        { name: "keys", projected: { sources: keyItems, defaultMode: 0o440 } },
        // versions.json and the result line: a few KB.
        { name: "work", emptyDir: { sizeLimit: SMALL_DIR } },
        // GNU sort's spills of the artifact listings (backup.sh): what the backup container's limit leaves.
        { name: "tmp", emptyDir: { sizeLimit: scratchSize(backup.resources.limits["ephemeral-storage"]) } },
        ...(args.artifacts ? [{ ...args.artifacts, name: "artifacts" }] : []),
        ...identityVolumes(keyless),
        ...databaseCaVolumes(db),
      ],
    });

    new k8s.batch.v1.CronJob(
      name,
      {
        metadata: meta(this.cronJobName),
        spec: {
          // No schedule: suspended, so it runs only when a Job is created from it.
          schedule: backup.schedule ?? "0 0 1 1 *",
          suspend: backup.schedule === undefined,
          // One backup at a time: the next one links to the files of the last complete one.
          concurrencyPolicy: "Forbid",
          successfulJobsHistoryLimit: 3,
          failedJobsHistoryLimit: 3,
          jobTemplate: {
            metadata: { labels: podLabels },
            spec: {
              // A failed backup says why in its status; the next run starts clean (its partial copy is removed).
              backoffLimit: 0,
              template: { metadata: { labels: podLabels }, spec: podSpec },
            },
          },
        },
      },
      { parent: this, dependsOn: [claim, script, ...(upload?.secret ? [upload.secret] : []), ...args.after] },
    );
    this.registerOutputs({ cronJobName: this.cronJobName, claimName: this.claimName });
  }

  /** The container that puts each backup into object storage (upload.py), and its credentials' Secret. */
  private uploadContainer(
    name: string,
    args: BackupArgs,
    s3: NonNullable<ParsedConfig["backup"]["s3"]>,
    meta: (objectName: string) => {
      name: string;
      namespace: pulumi.Input<string>;
      labels: Record<string, string>;
    },
  ): { container: k8s.types.input.core.v1.Container; secret?: k8s.core.v1.Secret } {
    // Without a key, the pods' identity reaches the bucket (pulp:serviceAccount), or the node's.
    const secret =
      s3.accessKeyId === undefined
        ? undefined
        : new k8s.core.v1.Secret(
            `${name}-s3`,
            {
              metadata: meta(fixedName(args.identity, "backup-s3")),
              type: "Opaque",
              stringData: { secret_access_key: pulumi.secret(args.s3SecretAccessKey ?? "") },
            },
            { parent: this },
          );
    const credentials: k8s.types.input.core.v1.EnvVar[] = secret
      ? [
          { name: "AWS_ACCESS_KEY_ID", value: s3.accessKeyId },
          {
            name: "AWS_SECRET_ACCESS_KEY",
            valueFrom: { secretKeyRef: { name: secret.metadata.name, key: "secret_access_key" } },
          },
        ]
      : identityEnv(args.podIdentity);
    const container: k8s.types.input.core.v1.Container = {
      name: "upload",
      image: args.pulpImage,
      command: ["/bin/sh", "-c", `${PULP_PYTHON}\nexec $py /opt/backup/upload.py`],
      env: [
        { name: "BACKUP_ROOT", value: BACKUP_ROOT },
        { name: "RESULT_FILE", value: RESULT_FILE },
        { name: "KEEP", value: String(args.backup.keep) },
        { name: "S3_BUCKET", value: s3.bucket },
        { name: "S3_PREFIX", value: s3.prefix ?? `${args.config.namespace}/${args.identity.instance}/` },
        { name: "S3_ENDPOINT_URL", value: s3.endpointUrl ?? "" },
        { name: "S3_REGION", value: s3.region ?? "" },
        ...credentials,
        ...proxyEnv(args.proxy),
      ],
      terminationMessagePolicy: "FallbackToLogsOnError",
      volumeMounts: [
        { name: "backups", mountPath: BACKUP_ROOT, readOnly: true },
        { name: "script", mountPath: "/opt/backup", readOnly: true },
        { name: "work", mountPath: "/run/backup", readOnly: true },
        { name: "tmp", mountPath: "/tmp" },
        ...(secret ? [] : identityMounts(args.podIdentity)),
      ],
      // Two parts of the multipart upload in memory at a time (upload.py sizes them).
      resources: {
        requests: { cpu: "50m", memory: "128Mi", "ephemeral-storage": STREAMING.request },
        limits: { memory: "1Gi", "ephemeral-storage": STREAMING.limit },
      },
    };
    return { container, secret };
  }
}
