// What a Pulp install is, decided as plain data before anything is created: the upgrade and restore
// plans, whether and why Pulp stops, replicas, the order Deployments roll in, routes, URLs and which
// optional parts exist. The Pulp component (pulp.ts) only wires resources from it; the decision is tested
// as data (test/unit/components/decide.test.ts).
import { planRestore, RestoreFetchSource, RestoreImport, RestorePlan } from "./backup/restorePlan";
import { PulpConfig } from "./config/parse";
import { webService } from "./config/schema";
import { SecretName } from "./config/rules";
import { Backend } from "./ingress/ingress";
import { fixedName, Identity } from "./common/labels";
import { artifactStorageName, StorageMoveRefused, storageMoveProblem } from "./storage/storageMove";
import { Deployed } from "./upgrade/deployed";
import { needsAppStatusCleanup, rollOrder, UpgradePlan } from "./upgrade/plan";
import { StopTheWorldArgs } from "./upgrade/stopTheWorld";
import { decideUpgrade } from "./upgrade/upgrade";
import { CONTAINER_CONTENT_PREFIX } from "./web/nginx";
import { API_PORT, CONTENT_PORT, PulpProcess } from "./workload/pulpProcess";

/** The processes that heartbeat into the database, and so the ones a stop-the-world upgrade stops. */
export const PULP_PROCESSES = ["api", "content", "worker"] as const;

/** What the stop-the-world step is given, but the namespace and the cluster (the wiring's). */
export type StopDecision = Omit<StopTheWorldArgs, "namespace" | "kube">;

/** How an update treats the count of an autoscaled Deployment. */
export interface AutoscalingDecision {
  /**
   * Whether the Deployment leaves spec.replicas to the autoscaler in this update. Not when the count must be
   * set: held at zero (idle, workers in maintenance), or back from zero after an idle install or a stop,
   * which a HorizontalPodAutoscaler takes as "autoscaling off" and would never leave.
   */
  leaveReplicas: boolean;
  /** KEDA holds the workers where they are (idle, maintenance, and a stop-the-world step while it runs). */
  paused: boolean;
}

/** One path of the Ingress and the Service it goes to. */
export interface Route {
  path: string;
  backend: Backend;
}

export interface InstallDecision {
  /** Labels' instance and version, and the prefix of every fixed name. */
  identity: Identity;
  /** How this update upgrades Pulp (upgrade/plan.ts). */
  upgrade: UpgradePlan;
  /** Whether this update restores a backup, and how it arrives (backup/restorePlan.ts). */
  restore: RestorePlan;
  /** The backup this install was restored from: this update's restore, or an earlier one's. */
  restoredBackup?: string;
  /** Where the artifacts are (storage/storageMove.ts), recorded in the history for the next update's check. */
  artifactStorage: string;
  /**
   * Why and how every Pulp process stops before the migration: a stop-the-world upgrade, or a restore
   * over the live install (`restoring`, the backup id). Undefined when nothing stops.
   */
  stop?: StopDecision;
  /** Effective replicas: 0 when idle, no workers in maintenance; an autoscaled process starts at its minimum. */
  replicas: Record<PulpProcess | "web" | "redis", number>;
  /** The processes an autoscaler sizes (pulp:<process>.autoscaling), and how this update treats their count. */
  autoscaling: Partial<Record<PulpProcess | "web", AutoscalingDecision>>;
  /** The order the Pulp Deployments are created in (workers first in an upgrade: plan.ts rollOrder). */
  creation: PulpProcess[];
  /** The Pulp Deployments each one waits for, beside the migration Job. */
  waitFor: Record<PulpProcess, PulpProcess[]>;
  /** The Ingress's paths: everything to pulp-web when it runs, else content paths to content, the rest to api. */
  routes: Route[];
  /** Where api and content listen in the cluster; pulp-web's upstreams. */
  backends: { api: Backend; content: Backend };
  apiUrl: string;
  contentUrl: string;
  /** The token server a container client is sent to; undefined without token auth. */
  tokenServer?: string;
  /** The migration Job's one-off duties. */
  migration: { clearStaleAppStatus: boolean; clearCache: boolean };
  /** Which optional parts exist. */
  parts: {
    redis: boolean;
    web: boolean;
    ingress: boolean;
    backup: boolean;
    trustedCa: boolean;
    /** A backup brought in over http into a CDI DataVolume, before anything stops. */
    restoreImport?: RestoreImport;
    /** A backup fetched from the bucket into a volume of its own, before anything stops. */
    restoreFetch?: RestoreFetchSource;
    /** The check that the backup fits this install, before anything stops. */
    restoreCheck: boolean;
    /** The image the restore Job runs (psql and tar); set when this update restores. */
    restoreImage?: string;
  };
  /** The DataVolumes imported before the migration (pulp:dataVolumes). */
  dataVolumes: PulpConfig["dataVolumes"];
}

/**
 * Everything the Pulp component decides, from the validated config, what the stack deployed last and
 * the names of the secrets the stack config sets. Throws UpgradeRefused, RestoreRefused or StorageMoveRefused before anything
 * is created. Creates nothing; the upgrade plan is announced as a diagnostic (upgrade/upgrade.ts).
 */
export function decideInstall(
  config: PulpConfig,
  deployed: Deployed,
  suppliedSecretNames: ReadonlySet<SecretName>,
): InstallDecision {
  const upgrade = decideUpgrade(config, deployed);
  const restore = planRestore(config, deployed, suppliedSecretNames);
  const restoredBackup = restore.kind === "restore" ? restore.backup : deployed.restoredBackup;
  const identity: Identity = { instance: config.instanceName, version: config.pulpcoreVersion };
  const moved = storageMoveProblem(config, identity, deployed.artifactStorage);
  if (moved) throw new StorageMoveRefused(moved);

  // When a migration needs every older process gone, they stop and their heartbeats expire before `migrate`;
  // a restore over the live install stops them so that nothing writes while its data is replaced.
  const overwrite = restore.kind === "restore" && restore.overwrite ? restore.backup : undefined;
  const reason =
    upgrade.kind === "stop-the-world"
      ? {
          from: upgrade.from,
          to: upgrade.to,
          floor: upgrade.floor,
          migrations: upgrade.migrations,
          heartbeatTtlSeconds: upgrade.minimumDowntimeSeconds,
        }
      : overwrite
        ? {
            from: config.pulpcoreVersion,
            to: config.pulpcoreVersion,
            floor: "",
            migrations: "",
            heartbeatTtlSeconds: 0,
            restoring: overwrite,
          }
        : undefined;
  const stop: StopDecision | undefined = reason && {
    ...reason,
    deployments: PULP_PROCESSES.map((p) => fixedName(identity, p)),
    podsGoneTimeoutSeconds:
      Math.max(...PULP_PROCESSES.map((p) => config[p].terminationGracePeriodSeconds)) + 60,
    ...(config.worker.autoscaling ? { scaledObjects: [fixedName(identity, "worker")] } : {}),
  };

  const held = (process: PulpProcess | "web"): boolean =>
    config.idle || (config.maintenance && process === "worker");
  const count = (process: PulpProcess | "web"): number =>
    held(process) ? 0 : (config[process].autoscaling?.minReplicas ?? config[process].replicas);
  const replicas = {
    api: count("api"),
    content: count("content"),
    worker: count("worker"),
    web: count("web"),
    redis: config.idle ? 0 : 1,
  };
  const autoscaling: InstallDecision["autoscaling"] = {};
  for (const process of [...PULP_PROCESSES, "web"] as const) {
    if (!config[process].autoscaling || (process === "web" && !config.web.enabled)) continue;
    // KEDA brings workers back from zero itself once unpaused; a HorizontalPodAutoscaler does not.
    const fromZero = process !== "worker" && (deployed.idle || (stop !== undefined && process !== "web"));
    autoscaling[process] = { leaveReplicas: !held(process) && !fromZero, paused: held(process) };
  }

  // Workers before the task dispatchers in an upgrade, after them in a downgrade (plan.ts rollOrder).
  const order = rollOrder(upgrade);
  const waitFor = (process: PulpProcess): PulpProcess[] => {
    if (order === "workers-first" && process !== "worker") return ["worker"];
    if (order === "workers-last" && process === "worker") return ["api", "content"];
    return [];
  };
  const creation: PulpProcess[] =
    order === "workers-first" ? ["worker", "api", "content"] : [...PULP_PROCESSES];

  const api: Backend = { service: fixedName(identity, "api"), port: API_PORT };
  const content: Backend = { service: fixedName(identity, "content"), port: CONTENT_PORT };
  const routes: Route[] = config.web.enabled
    ? [{ path: "/", backend: { service: fixedName(identity, "web"), port: webService(config.web).port } }]
    : [
        { path: config.contentPathPrefix, backend: content },
        { path: "/", backend: api },
        // Last, so the Routes named by position before it keep their names (paths match by longest prefix).
        { path: CONTAINER_CONTENT_PREFIX, backend: content },
      ];

  const restoring = restore.kind === "restore" ? restore : undefined;
  const origin = new URL(config.contentOrigin);
  return {
    identity,
    upgrade,
    restore,
    restoredBackup,
    artifactStorage: artifactStorageName(config.storage, identity),
    stop,
    replicas,
    autoscaling,
    creation,
    waitFor: { api: waitFor("api"), content: waitFor("content"), worker: waitFor("worker") },
    routes,
    backends: { api, content },
    apiUrl: `${config.contentOrigin}${config.apiRoot}api/v3/`,
    contentUrl: `${config.contentOrigin}${config.contentPathPrefix}`,
    tokenServer: config.tokenAuth ? `${origin.origin}/token/` : undefined,
    migration: {
      clearStaleAppStatus: needsAppStatusCleanup(config.pulpcoreVersion),
      clearCache: restoredBackup !== undefined && config.cacheEnabled,
    },
    parts: {
      redis: config.redis.enabled,
      web: config.web.enabled,
      ingress: config.ingress.enabled,
      backup: config.backup.enabled,
      trustedCa: Boolean(config.trustedCa.certificates || config.trustedCa.configMap),
      restoreImport: restoring?.import,
      restoreFetch: restoring?.fetch,
      restoreCheck: restoring !== undefined,
      restoreImage: restoring && (config.backup.image ?? config.database.cloudnativepg?.imageName)!,
    },
    dataVolumes: config.dataVolumes,
  };
}
