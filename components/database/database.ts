import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { PulpConfig } from "../config/parse";
import { postgresMajorOf } from "../config/rules";
import { DATABASE_CA_DIR, DATABASE_CA_FILE, DatabaseSettings } from "../settings/render";
import { holds } from "../contract";
import { fixedName, Identity, labels } from "../common/labels";
import { SecretKeyRef } from "../secrets/pulpSecrets";
import { POOLER_DEFAULTS, poolerDnsNames, poolerName } from "./pooler";

/** The CloudNativePG Cluster's name: `<instance>-db`. */
export function databaseClusterName(instance: string): string {
  return `${instance}-db`;
}

export interface DatabaseArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  database: PulpConfig["database"];
  /** Where the database pods may run (the `scheduling` config). */
  scheduling?: PulpConfig["scheduling"];
  /** Secrets the operator pulls the PostgreSQL image with (the `imagePullSecrets` config). */
  imagePullSecrets?: string[];
  /** The external database's password, from the stack config. */
  externalPassword?: pulumi.Output<string>;
}

/**
 * What `up` awaits on the Cluster: Ready, and with an image whose tag names its major, the data directory
 * at that major. A new major is upgraded in place after the update is accepted, while the Cluster still
 * reports Ready from before: awaiting Ready alone, `up` returned in seconds while the operator was still
 * stopping the instance for pg_upgrade (postgresMajorUpgrade.test.ts).
 */
export function clusterAwait(imageName: string | undefined): string {
  const major = imageName ? postgresMajorOf(imageName) : undefined;
  return major === undefined
    ? "condition=Ready"
    : JSON.stringify(["condition=Ready", `jsonpath={.status.pgDataImageInfo.majorVersion}=${major}`]);
}

/**
 * Where Pulp's PostgreSQL is: an external server (its password kept in a Secret made here) or a
 * CloudNativePG `Cluster` in the namespace, awaited until Ready. The operator makes the `<cluster>-app`
 * Secret and the `<cluster>-rw` Service; settings point at them.
 */
export class Database extends pulumi.ComponentResource {
  /** Where Pulp's processes and the migration Job connect: the pooler when there is one. */
  readonly settings: DatabaseSettings;
  /**
   * The server itself, for the clients a session pooler would only get in the way of: pg_dump and
   * pg_restore (one long session each) and the task-queue scaler's query. The same as `settings` without
   * a pooler.
   */
  readonly direct: DatabaseSettings;
  readonly password: SecretKeyRef;
  /** What must exist before anything connects (for dependsOn). */
  readonly ready: pulumi.Resource[];
  readonly cluster?: k8s.apiextensions.CustomResource;
  readonly pooler?: k8s.apiextensions.CustomResource;

  constructor(name: string, args: DatabaseArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:database:Database", name, {}, opts);
    const { external, cloudnativepg } = args.database;
    if (external) {
      const secret = new k8s.core.v1.Secret(
        name,
        {
          metadata: {
            name: fixedName(args.identity, "database"),
            namespace: args.namespace,
            labels: labels(args.identity, "database"),
          },
          type: "Opaque",
          stringData: { password: args.externalPassword ?? pulumi.secret("") },
        },
        { parent: this },
      );
      this.settings = {
        host: external.host,
        port: external.port,
        name: external.name,
        user: external.user,
        sslmode: external.sslmode,
      };
      this.direct = this.settings;
      this.password = { name: fixedName(args.identity, "database"), key: "password" };
      this.ready = [secret];
    } else if (cloudnativepg) {
      const clusterName = databaseClusterName(args.identity.instance);
      const pooler = cloudnativepg.pooler ? poolerName(clusterName) : undefined;
      this.cluster = new k8s.apiextensions.CustomResource(
        name,
        {
          apiVersion: "postgresql.cnpg.io/v1",
          kind: "Cluster",
          metadata: {
            name: clusterName,
            namespace: args.namespace,
            labels: labels(args.identity, "database"),
            annotations: {
              "pulumi.com/waitFor": clusterAwait(cloudnativepg.imageName),
              ...holds("database"),
            },
          },
          spec: pulumi
            .output(args.namespace)
            .apply((namespace) =>
              cloudNativePgSpec(
                cloudnativepg,
                args.scheduling,
                args.imagePullSecrets,
                pooler ? poolerDnsNames(pooler, namespace) : [],
              ),
            ),
        },
        // The cluster holds every byte of Pulp's metadata: never replaced or deleted by a config change.
        {
          parent: this,
          protect: true,
          retainOnDelete: true,
          customTimeouts: { create: "20m", update: "20m" },
        },
      );
      // TLS with the server verified: the operator's CA (renewed with the same key, cloudnative-pg
      // pkg/certs RenewCertificate) signs a server certificate for `<cluster>-rw` and its longer names.
      this.direct = {
        host: `${clusterName}-rw`,
        port: 5432,
        name: "pulp",
        user: "pulp",
        sslmode: "verify-full",
        ca: { secretName: `${clusterName}-ca`, key: "ca.crt" },
      };
      this.password = { name: `${clusterName}-app`, key: "password" };
      if (pooler && cloudnativepg.pooler) {
        this.pooler = new k8s.apiextensions.CustomResource(
          `${name}-pooler`,
          {
            apiVersion: "postgresql.cnpg.io/v1",
            kind: "Pooler",
            metadata: { name: pooler, namespace: args.namespace, labels: labels(args.identity, "database") },
            spec: poolerSpec(clusterName, cloudnativepg.pooler, args.scheduling, args.imagePullSecrets),
          },
          // Holds no data: replaced or deleted with the config like any Deployment.
          { parent: this, dependsOn: [this.cluster] },
        );
        // The pooler serves the Cluster's own server certificate (GetClientTLSSecretNameOrDefault,
        // api/v1/pooler_funcs.go), which carries the pooler's names (serverAltDNSNames): verify-full holds.
        this.settings = { ...this.direct, host: pooler };
        this.ready = [this.cluster, this.pooler];
      } else {
        this.settings = this.direct;
        this.ready = [this.cluster];
      }
    } else {
      throw new pulumi.ResourceError(
        "database: neither external nor cloudnativepg is set (parseConfig rejects this)",
        this,
      );
    }
    this.registerOutputs({ host: this.settings.host });
  }
}

type CloudNativePgConfig = NonNullable<PulpConfig["database"]["cloudnativepg"]>;

export function cloudNativePgSpec(
  cnpg: CloudNativePgConfig,
  scheduling?: PulpConfig["scheduling"],
  imagePullSecrets: string[] = [],
  /** Further names the server certificate must carry: the pooler's Service. */
  serverAltDNSNames: string[] = [],
): Record<string, unknown> {
  // CloudNativePG's own affinity block: nodeSelector, tolerations and nodeAffinity (pod affinity terms
  // written for Pulp's pods would not mean anything for the database's).
  const affinity = {
    ...(scheduling && Object.keys(scheduling.nodeSelector).length > 0
      ? { nodeSelector: scheduling.nodeSelector }
      : {}),
    ...(scheduling && scheduling.tolerations.length > 0 ? { tolerations: scheduling.tolerations } : {}),
    ...(scheduling?.affinity?.nodeAffinity ? { nodeAffinity: scheduling.affinity.nodeAffinity } : {}),
  };
  return {
    ...(Object.keys(affinity).length > 0 ? { affinity } : {}),
    instances: cnpg.instances,
    ...(cnpg.imageName ? { imageName: cnpg.imageName } : {}),
    ...(imagePullSecrets.length > 0 ? { imagePullSecrets: imagePullSecrets.map((name) => ({ name })) } : {}),
    // Updates move the primary by switchover to an updated replica instead of restarting it in place.
    primaryUpdateStrategy: "unsupervised",
    primaryUpdateMethod: "switchover",
    storage: { size: cnpg.storageSize, ...(cnpg.storageClass ? { storageClass: cnpg.storageClass } : {}) },
    bootstrap: { initdb: { database: "pulp", owner: "pulp" } },
    resources: cnpg.resources,
    // Only when set: an install without them keeps the spec it had.
    ...(cnpg.parameters && Object.keys(cnpg.parameters).length > 0
      ? { postgresql: { parameters: cnpg.parameters } }
      : {}),
    enablePDB: true,
    // Only with a pooler: an install without one keeps the spec it had.
    ...(serverAltDNSNames.length > 0 ? { certificates: { serverAltDNSNames } } : {}),
  };
}

/**
 * The Pooler's spec: PgBouncer in session mode (Pulp's workers hold advisory locks and LISTEN on their
 * session, which transaction mode would hand to another client), in front of the primary (`rw`).
 */
export function poolerSpec(
  clusterName: string,
  pooler: NonNullable<CloudNativePgConfig["pooler"]>,
  scheduling?: PulpConfig["scheduling"],
  imagePullSecrets: string[] = [],
): Record<string, unknown> {
  return {
    cluster: { name: clusterName },
    instances: pooler.instances,
    type: "rw",
    pgbouncer: { poolMode: "session", parameters: { ...POOLER_DEFAULTS, ...pooler.parameters } },
    // The operator sets the pods' app.kubernetes.io labels itself (pkg/specs/pgbouncer/deployments.go).
    template: {
      spec: {
        ...(scheduling && Object.keys(scheduling.nodeSelector).length > 0
          ? { nodeSelector: scheduling.nodeSelector }
          : {}),
        ...(scheduling && scheduling.tolerations.length > 0 ? { tolerations: scheduling.tolerations } : {}),
        ...(scheduling?.affinity?.nodeAffinity
          ? { affinity: { nodeAffinity: scheduling.affinity.nodeAffinity } }
          : {}),
        ...(imagePullSecrets.length > 0
          ? { imagePullSecrets: imagePullSecrets.map((name) => ({ name })) }
          : {}),
        containers: [
          {
            name: "pgbouncer",
            ...(pooler.imageName ? { image: pooler.imageName } : {}),
            resources: pooler.resources,
          },
        ],
      },
    },
  };
}

/** The volume with the database's CA certificate (only that key of its Secret), when it has one. */
export function databaseCaVolumes(db: DatabaseSettings): k8s.types.input.core.v1.Volume[] {
  if (!db.ca) return [];
  return [
    {
      name: "database-ca",
      secret: {
        secretName: db.ca.secretName,
        items: [{ key: db.ca.key, path: "ca.crt" }],
        defaultMode: 0o444,
      },
    },
  ];
}

export function databaseCaMounts(db: DatabaseSettings): k8s.types.input.core.v1.VolumeMount[] {
  return db.ca ? [{ name: "database-ca", mountPath: DATABASE_CA_DIR, readOnly: true }] : [];
}

/** libpq's environment for the CA (pg_dump, pg_restore and psql): beside PGSSLMODE. */
export function databaseCaEnv(db: DatabaseSettings): k8s.types.input.core.v1.EnvVar[] {
  return db.ca ? [{ name: "PGSSLROOTCERT", value: DATABASE_CA_FILE }] : [];
}
