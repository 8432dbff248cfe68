import { createHmac } from "crypto";
import * as fs from "fs";
import * as path from "path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ResourcesConfig } from "../config/schema";
import { SETTINGS_PATH } from "../settings/render";
import { SecretKeyRef } from "../secrets/pulpSecrets";
import { signing, SigningRuntime } from "../signing/signing";
import { contentHash } from "../common/hash";
import { fixedName, Identity, runningLabels } from "../common/labels";
import { deepMerge, PodSpecOverrides } from "../common/merge";
import { PodDefaults, restricted } from "../workload/podSecurity";
import {
  initDirsContainer,
  pulpEnv,
  pulpVolumeMounts,
  PULP_PYTHON,
  pulpVolumes,
  PulpRuntime,
} from "../workload/pulpProcess";

export interface MigrationJobArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  runtime: PulpRuntime;
  /** The settings text: part of what names the Job, so new settings or a new image get a new Job. */
  settingsHash: string;
  adminPassword: SecretKeyRef;
  /**
   * pulp:adminPassword when the stack sets it (a secret); undefined for the generated password, which never
   * changes. Only its HMAC keyed by SECRET_KEY goes into the Job's name: a new value runs the Job again.
   */
  adminPasswordValue?: pulumi.Input<string>;
  /** Keys the digest of the admin password (SECRET_KEY's value). */
  digestKey?: pulumi.Input<string>;
  resources: ResourcesConfig;
  backoffLimit: number;
  /** How long `pulumi up` awaits the Job (pulp:migration.timeout), such as "6h". */
  timeout: string;
  podAnnotations: Record<string, string>;
  /** Pod labels beside the program's own (Workload's podLabels). */
  podLabels?: Record<string, string>;
  /** Merged over the generated pod spec, lists by name (common/merge.ts). Part of the Job's name. */
  podSpecOverrides?: PodSpecOverrides;
  /** nodeSelector, tolerations and affinity of the Job's pod (before podSpecOverrides). */
  podDefaults?: PodDefaults;
  /**
   * Plugin versions the image carries (pulp:plugins): part of the Job's name, so a new plugin set under
   * the same image tag migrates again.
   */
  plugins?: Record<string, string>;
  /** Delete AppStatus rows past their TTL before `migrate` (targets without pulpcore's own cleanup). */
  clearStaleAppStatus?: boolean;
  /** The backup the database was restored from: a restore over a live install migrates again. */
  restoredBackup?: string;
  /** Delete Pulp's cached responses after `migrate` (a restore replaced what they were cached from). */
  clearCache?: boolean;
  /** pulp:signing: registers the services after `migrate`, again whenever the key or the services change. */
  signing?: SigningRuntime;
  /** Settings, secrets, database and storage: the Job itself must wait for them, not only this component. */
  after: pulumi.Resource[];
}

/** Registers pulp:signing's services (components/signing/register.py) with the key the init container imported. */
export const REGISTER_SIGNING_SERVICES =
  "/usr/local/bin/pulpcore-manager shell -c \"exec(open('/etc/pulp/signing/scripts/register.py').read())\"";

const isEmpty = (o?: object) => o === undefined || Object.keys(o).length === 0;

/**
 * A Python script of this folder as the Job ships it: without its docstring, which explains it here and in
 * the repository, not in every Job's description; a comment names the file instead.
 */
const shippedScript = (file: string) =>
  fs
    .readFileSync(path.join(__dirname, file), "utf8")
    .replace(/^"""[\s\S]*?"""\n/, `# Pulp on Kubernetes, components/migration/${file}\n`);

/**
 * Runs before `migrate` without loading Pulp's settings (its docstring says why): waits for the database,
 * optionally clears AppStatus rows past their TTL, and drops or names INVALID indexes.
 */
export const PRE_MIGRATE_SCRIPT = shippedScript("preMigrate.py");

/**
 * Pulp's manager commands in one process (migrate.py): migrate, handle-artifact-checksums, the system checks,
 * (after a restore) the response cache, the admin password.
 */
export const MIGRATE_PY = shippedScript("migrate.py");

/**
 * What the Job runs: preMigrate.py (wait for the database; for targets without pulpcore's own pre-migrate
 * cleanup, clear AppStatus rows past their TTL; INVALID indexes), then migrate.py: migrate, bring artifact
 * checksums in line with ALLOWED_CONTENT_CHECKSUMS, run the system checks, (after a restore) clear the
 * response cache, and make sure the admin password is the managed one (after a restore it is the backup's).
 * Nothing before migrate.py loads Pulp's settings, and it loads them as `migrate` (its docstring says why).
 * `migrate` and handle-artifact-checksums skip the system checks because pulpcore's database check E002
 * (artifacts missing a newly allowed checksum) fails them before the checksums could be fixed (seen on
 * real Pulp 3.123.1); the checks still run after, and fail the Job if anything else is wrong.
 */
export function migrateScript(options: { clearStaleAppStatus: boolean; clearCache?: boolean }): string {
  return [
    "set -eu",
    PULP_PYTHON,
    `"$py" - ${SETTINGS_PATH}${options.clearStaleAppStatus ? " --clear-stale-appstatus" : ""} <<'PRE_MIGRATE'`,
    PRE_MIGRATE_SCRIPT.trimEnd(),
    "PRE_MIGRATE",
    `"$py" -${options.clearCache ? " --clear-cache" : ""} <<'MIGRATE'`,
    MIGRATE_PY.trimEnd(),
    "MIGRATE",
  ].join("\n");
}

/** The script for targets that clean AppStatus themselves (and for installs). */
export const MIGRATE_SCRIPT = migrateScript({ clearStaleAppStatus: false });

/**
 * `pulpcore-manager migrate` as one Job per release, settings and admin password (its name hashes everything
 * it runs, so a change always makes a new Job, created before the old one is deleted): never by hand, never
 * per pod (several pods migrating at once raced into UniqueViolation, pulp-operator #991). Awaited until
 * Complete, with no TTL (Kubernetes would delete it and the next run would recreate it). Everything that runs
 * Pulp code depends on it, so `pulumi up` rolls nothing until the schema is ready, and a failed migration
 * stops the update before any Deployment changes.
 */
export class MigrationJob extends pulumi.ComponentResource {
  readonly job: k8s.batch.v1.Job;
  readonly jobName: pulumi.Output<string>;
  /** Registers pulp:signing's services (when set). */
  readonly signingJob?: k8s.batch.v1.Job;

  constructor(name: string, args: MigrationJobArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:migration:MigrationJob", name, {}, opts);
    const rt = args.runtime;
    // The Job ends by setting the admin password, so a new pulp:adminPassword must run it again: its HMAC keyed
    // by SECRET_KEY (which only the install and its stack hold) is part of the name, and nothing of the value
    // is kept. Not a secret output: the name of a Job is not one. The generated password never changes, and
    // an install without pulp:adminPassword keeps its Job's name.
    const passwordDigest = pulumi.unsecret(
      pulumi
        .all([args.adminPasswordValue ?? "", args.digestKey ?? ""])
        .apply(([v, key]) =>
          v ? createHmac("sha256", key).update(`pulp:adminPassword ${v}`).digest("hex") : undefined,
        ),
    );
    this.jobName = passwordDigest.apply((adminPassword) =>
      fixedName(
        args.identity,
        `migrate-${contentHash(
          {
            image: rt.image,
            settings: args.settingsHash,
            backoffLimit: args.backoffLimit,
            resources: args.resources,
            podAnnotations: args.podAnnotations,
            podSpecOverrides: args.podSpecOverrides ?? {},
            // Only when set, so an install without it keeps its Job name (and does not migrate again).
            ...(isEmpty(args.podDefaults) ? {} : { podDefaults: args.podDefaults }),
            ...(isEmpty(args.plugins) ? {} : { plugins: args.plugins }),
            ...(args.clearStaleAppStatus ? { clearStaleAppStatus: true } : {}),
            ...(args.restoredBackup ? { restoredBackup: args.restoredBackup } : {}),
            ...(isEmpty(rt.secretSettings) ? {} : { secretSettings: rt.secretSettings }),
            ...(adminPassword ? { adminPassword } : {}),
            secrets: [
              rt.secretKey,
              rt.dbFieldsKey,
              rt.databasePassword,
              rt.s3SecretKey,
              rt.tokenKeysSecret,
              args.adminPassword,
            ],
          },
          8,
        )}`,
      ),
    );
    const podLabels = runningLabels(args.identity, "migration");
    // The Jobs that run Pulp's manager commands differ in name, command and signing key only. A failed one is
    // run again by the next `up` once its cause is fixed (a lock released, a database back), instead of the
    // provider awaiting the same failed Job again: same name, so the provider deletes it before it creates
    // the new one.
    const managerJob = (
      jobName: pulumi.Input<string>,
      script: string,
      signingRt?: SigningRuntime,
    ): k8s.batch.v1.JobArgs => ({
      metadata: {
        name: jobName,
        namespace: args.namespace,
        labels: podLabels,
        annotations: { "pulumi.com/replaceUnready": "true" },
      },
      spec: {
        backoffLimit: args.backoffLimit,
        template: {
          metadata: { labels: { ...args.podLabels, ...podLabels }, annotations: args.podAnnotations },
          spec: pulpJobPodSpec(args, script, signingRt),
        },
      },
    });
    this.job = new k8s.batch.v1.Job(
      name,
      managerJob(
        this.jobName,
        migrateScript({
          clearStaleAppStatus: args.clearStaleAppStatus ?? false,
          clearCache: args.clearCache,
        }),
      ),
      {
        parent: this,
        dependsOn: args.after,
        customTimeouts: { create: args.timeout, update: args.timeout },
      },
    );

    // The signing services: after `migrate` (their tables), and again under the same name when the key, the
    // services or their scripts change, or the database was restored (a backup's services may differ).
    if (args.signing) {
      const sign = args.signing;
      this.signingJob = new k8s.batch.v1.Job(
        `${name}-signing-services`,
        managerJob(fixedName(args.identity, "signing-services"), REGISTER_SIGNING_SERVICES, sign),
        {
          parent: this,
          dependsOn: [this.job, ...sign.resources],
          replacementTrigger: pulumi
            .all([sign.hash, args.restoredBackup ?? ""])
            .apply(([hash, restored]) => contentHash({ hash, restored }, 16)),
          deleteBeforeReplace: true,
          customTimeouts: { create: "10m", update: "10m" },
        },
      );
    }
    this.registerOutputs({ jobName: this.jobName });
  }
}

/**
 * The pod of the migration Job and the signing services' Job: Pulp's settings, secrets and volumes, one
 * command (with the signing key's init container and keyring for the second). The container is "migrate" in
 * both, so pulp:migration.podSpecOverrides, merged by container name, reach both.
 */
function pulpJobPodSpec(args: MigrationJobArgs, script: string, signingRt?: SigningRuntime) {
  const rt = args.runtime;
  return restricted(
    deepMerge<k8s.types.input.core.v1.PodSpec>(
      {
        ...args.podDefaults,
        restartPolicy: "Never",
        enableServiceLinks: false, // see Workload: dynaconf would read service-link env as settings
        ...(rt.podIdentity ? { serviceAccountName: rt.podIdentity.serviceAccountName } : {}),
        initContainers: [initDirsContainer(rt), ...(signingRt ? [signingRt.initContainer(rt.image)] : [])],
        containers: [
          signing(signingRt, {
            name: "migrate",
            image: rt.image,
            command: ["/bin/sh", "-c", script],
            // The kubelet keeps the log's tail in the failed container's status, and the provider's Job
            // await puts that status in the error `pulumi up` prints: the migration error, not just "exit 1".
            terminationMessagePolicy: "FallbackToLogsOnError",
            env: [
              ...pulpEnv(rt),
              {
                name: "ADMIN_PASSWORD", // no PULP_ prefix: dynaconf would read it as a setting
                valueFrom: {
                  secretKeyRef: { name: args.adminPassword.name, key: args.adminPassword.key },
                },
              },
              // No PULP_ prefix either: register.py reads it.
              ...(signingRt ? [{ name: "SIGNING_SERVICES", value: signingRt.services }] : []),
            ],
            volumeMounts: pulpVolumeMounts(rt),
            resources: args.resources,
          }),
        ],
        volumes: [...pulpVolumes(rt, args.resources), ...(signingRt?.volumes ?? [])],
      },
      args.podSpecOverrides ?? {},
    ),
  );
}
