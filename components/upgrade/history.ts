// Each install's upgrade history, kept in its own namespace: the ConfigMap `<instance>-deployed`, which the
// Pulp component writes once its Deployments have rolled out and reads before it plans the next update.
// Per instance, so a program may hold many; in the cluster, so a program that exports nothing still plans
// from it; retained on destroy, like the data it describes. Before it existed, the stack program kept the
// same record in stack outputs (deployed.ts); those are read when the ConfigMap is absent.
import { PULP_PROCESSES } from "../decide";
import type { JobStatus } from "../migration/jobGuard";
import { KEYS_KEPT_IN_ANNOTATION } from "../contract";
import { Deployed, KeysKeptIn, pluginVersionsOf } from "./deployed";
import { KubeApi, KubeTarget, kubeApi } from "./kubeApi";
import { LiveClaim, readClaim } from "../storage/existingClaim";
import { LiveDatabaseCluster, readDatabaseCluster } from "../database/clusterChange";
import { imageAtCommand } from "./plan";

/** The history ConfigMap's name. */
export function historyName(instance: string): string {
  return `${instance}-deployed`;
}

/**
 * The history a person records by hand (the command a refusal prints), read when the component's own is
 * absent. A name of its own, so the component never has to create over an object it did not make
 * (pulumi-kubernetes 4.29 and later refuse that with AlreadyExists).
 */
export function recordedName(instance: string): string {
  return `${instance}-deployed-by-hand`;
}

/** The ConfigMap's data for a deployed release. */
export function historyData(deployed: Deployed): Record<string, string> {
  return {
    pulpcoreVersion: deployed.pulpcoreVersion ?? "",
    idle: String(deployed.idle),
    ...(pluginVersionsOf(deployed.pluginVersions)
      ? { pluginVersions: JSON.stringify(deployed.pluginVersions) }
      : {}),
    ...(deployed.restoredBackup ? { restoredBackup: deployed.restoredBackup } : {}),
    ...(deployed.artifactStorage ? { artifactStorage: deployed.artifactStorage } : {}),
  };
}

/** The ConfigMap's data read back; undefined when it names no pulpcore version. */
export function deployedOf(data: Record<string, string> | undefined): Deployed | undefined {
  if (!data?.pulpcoreVersion) return undefined;
  let plugins: unknown;
  try {
    plugins = data.pluginVersions ? JSON.parse(data.pluginVersions) : undefined;
  } catch {
    plugins = undefined;
  }
  return {
    pulpcoreVersion: data.pulpcoreVersion,
    idle: data.idle === "true",
    pluginVersions: pluginVersionsOf(plugins),
    restoredBackup: data.restoredBackup || undefined,
    artifactStorage: data.artifactStorage || undefined,
  };
}

/** A Deployment of the instance, as the cluster has it (the fields read here). */
export interface LiveDeployment {
  name: string;
  labels: Record<string, string>;
  /** The pod template's `app.kubernetes.io/version`: the pulpcore version this component last rolled. */
  version?: string;
  replicas?: number;
  /** The first container's image. */
  image?: string;
  /** Its ownerReferences, as `<Kind>/<name>` (pulp-operator's are owned by its Pulp resource). */
  owners?: string[];
}

/** What the cluster holds for an instance. */
export interface Found {
  history?: Record<string, string>;
  deployments: LiveDeployment[];
  /** The instance's Jobs (migration, restore, ...), for the job guard. */
  jobs?: JobStatus[];
  /**
   * Where the generated keys are, from the Secret `<instance>-secret-key` (read as metadata only): its
   * annotation (contract.ts KEYS_KEPT_IN_ANNOTATION), else `generated-secret` when an older version made it;
   * undefined without that Secret.
   */
  keys?: KeysKeptIn;
  /** The claim storage.pvc.existingClaim names (null: absent); undefined when none is named. */
  claim?: LiveClaim | null;
  /** The CloudNativePG Cluster the config uses (null: absent); undefined when it uses none. */
  database?: LiveDatabaseCluster | null;
}

/** The Secret whose annotation says where the generated keys are kept. */
export function keySecretName(instance: string): string {
  return `${instance}-secret-key`;
}

/**
 * Reads the history ConfigMap, the instance's Deployments and Jobs, and where its generated keys are (the
 * key Secret's metadata); nothing when the namespace is absent.
 */
export async function findInstall(
  api: KubeApi,
  namespace: string,
  instance: string,
  claim?: string,
  databaseCluster?: string,
): Promise<Found> {
  const ns = encodeURIComponent(namespace);
  const configMap = async (name: string) =>
    (await api.request(
      "GET",
      `/api/v1/namespaces/${ns}/configmaps/${encodeURIComponent(name)}`,
    )) as unknown as { data?: Record<string, string> } | undefined;
  const cm = (await configMap(historyName(instance))) ?? (await configMap(recordedName(instance)));
  type DeploymentList = {
    items?: {
      metadata: {
        name: string;
        labels?: Record<string, string>;
        ownerReferences?: { kind: string; name: string }[];
      };
      spec?: {
        replicas?: number;
        template?: {
          metadata?: { labels?: Record<string, string> };
          spec?: { containers?: { image?: string }[] };
        };
      };
    }[];
  };
  const deployments = async (selector: string) =>
    (
      (
        (await api.request(
          "GET",
          `/apis/apps/v1/namespaces/${ns}/deployments?labelSelector=${encodeURIComponent(selector)}`,
        )) as unknown as DeploymentList | undefined
      )?.items ?? []
    ).map((d) => ({
      name: d.metadata.name,
      labels: d.metadata.labels ?? {},
      version: d.spec?.template?.metadata?.labels?.["app.kubernetes.io/version"],
      replicas: d.spec?.replicas,
      image: d.spec?.template?.spec?.containers?.[0]?.image,
      owners: (d.metadata.ownerReferences ?? []).map((o) => `${o.kind}/${o.name}`),
    }));
  // This instance's, and pulp-operator's under any name: taking over its database is the usual reason
  // to install beside it, and its instance labels (`pulp-api-<cr>`) are not ours.
  const own = await deployments(`app.kubernetes.io/instance=${instance}`);
  const operator = await deployments("app.kubernetes.io/managed-by=pulp-operator");
  const selector = encodeURIComponent(`app.kubernetes.io/instance=${instance}`);
  const jobs = (await api.request(
    "GET",
    `/apis/batch/v1/namespaces/${ns}/jobs?labelSelector=${selector}`,
  )) as { items?: JobStatus[] } | undefined;
  // Metadata only: the program has no use for the key itself.
  const keySecrets = (await api.request(
    "GET",
    `/api/v1/namespaces/${ns}/secrets?fieldSelector=${encodeURIComponent(`metadata.name=${keySecretName(instance)}`)}`,
    undefined,
    undefined,
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
  )) as { items?: { metadata?: { annotations?: Record<string, string> } }[] } | undefined;
  return {
    history: cm ? (cm.data ?? {}) : undefined,
    deployments: [...own, ...operator.filter((o) => !own.some((d) => d.name === o.name))],
    jobs: jobs?.items ?? [],
    keys: keysOf(keySecrets?.items?.[0]),
    ...(claim ? { claim: await readClaim(api, namespace, claim) } : {}),
    ...(databaseCluster ? { database: await readDatabaseCluster(api, namespace, databaseCluster) } : {}),
  };
}

/** Where the generated keys are, from the key Secret's metadata. */
function keysOf(
  secret: { metadata?: { annotations?: Record<string, string> } } | undefined,
): KeysKeptIn | undefined {
  if (!secret) return undefined;
  return secret.metadata?.annotations?.[KEYS_KEPT_IN_ANNOTATION] === "stash" ? "stash" : "generated-secret";
}

/**
 * Where a plan's `deployed` came from: this component's records, the Deployments it rolled, pulp-operator's
 * install it takes over (their image's release), or nothing (a first install).
 */
export type PlannedSource = "history" | "stack outputs" | "deployments" | "pulp-operator" | "none";

/** api, content or worker: the Deployments that run Pulp code (not pulp-web or Redis). */
const isPulpProcess = (d: LiveDeployment) =>
  (PULP_PROCESSES as readonly string[]).includes(d.labels["app.kubernetes.io/component"] ?? "");
const isOperators = (d: LiveDeployment) => d.labels["app.kubernetes.io/managed-by"] === "pulp-operator";
/** The pulpcore release an image's tag names (the upstream images are tagged by pulpcore's), if any. */
const releaseOf = (image: string | undefined) => /:(\d+\.\d+\.\d+)(?:@|$)/.exec(image ?? "")?.[1];

/** Refused: an install is there, and nothing says which release it runs. Printed without a stack trace. */
export class HistoryMissing extends Error {
  readonly __pulumiRunError = true;
}

/**
 * What the next update plans from: the history ConfigMap; else the stack outputs an older version of the
 * stack program kept (`legacy`); else, for Deployments this component rolled, the version on their pod
 * templates (each was rolled only after that release's migrations completed); else, with no api, content
 * or worker Deployment of the instance, a first install. Deployments this component did not roll
 * (pulp-operator's, or made by hand) are refused: nothing says which migrations their database ran, and
 * "install" would run them over it. The refusal prints the command that records the history by hand.
 */
export function plannedFrom(
  found: Found,
  where: { namespace: string; instance: string },
  legacy?: Deployed,
): { deployed: Deployed; source: PlannedSource } {
  const planned = plannedFromRecords(found, where, legacy);
  return found.keys ? { ...planned, deployed: { ...planned.deployed, keysKeptIn: found.keys } } : planned;
}

function plannedFromRecords(
  found: Found,
  where: { namespace: string; instance: string },
  legacy?: Deployed,
): { deployed: Deployed; source: PlannedSource } {
  const recorded = deployedOf(found.history);
  if (recorded) return { deployed: recorded, source: "history" };
  if (legacy?.pulpcoreVersion) return { deployed: legacy, source: "stack outputs" };
  // Pulp's own processes: their version label says which release ran the migrations.
  const pulp = found.deployments.filter(isPulpProcess);
  // api, content and worker are created only once a migration has completed; Redis and pulp-web come
  // before it (an update refused or failed before the migration leaves them), and run no Pulp code.
  if (pulp.length === 0) return { deployed: { idle: false }, source: "none" };
  const ours = pulp.filter((d) => d.labels["app.kubernetes.io/managed-by"] === "pulumi" && d.version);
  const versions = [...new Set(ours.map((d) => d.version!))];
  if (ours.length > 0 && ours.length === pulp.length && versions.length === 1) {
    return {
      deployed: { pulpcoreVersion: versions[0], idle: ours.every((d) => d.replicas === 0) },
      source: "deployments",
    };
  }
  const names = found.deployments.map((d) => d.name).join(", ");
  // Each was rolled after its release's migrations completed: the database runs the newest one's. Else
  // the api image's tag, when it is a version (the upstream images are tagged by pulpcore's).
  const newest = [...versions].sort((a, b) => a.localeCompare(b, "en", { numeric: true })).pop();
  const tagged = releaseOf(pulp.find((d) => d.labels["app.kubernetes.io/component"] === "api")?.image);
  const running = newest ?? tagged ?? "<the pulpcore version it runs>";
  const byOperator = found.deployments.filter(isOperators);
  const operatorCr = byOperator[0]?.labels["pulp_cr"];
  const record =
    `  kubectl create configmap ${recordedName(where.instance)} -n ${where.namespace} ` +
    `--from-literal=pulpcoreVersion=${running} --from-literal=idle=false`;
  if (byOperator.length > 0) {
    const cr = operatorCr ? `its Pulp resource ${operatorCr}` : "its Pulp resource";
    const owned = byOperator.filter((d) => (d.owners ?? []).length > 0);
    if (owned.length > 0) {
      // While the CR owns them the operator reconciles them (it could roll a new release mid-migration),
      // and deleting the CR later would delete its database and its claim with it.
      throw new HistoryMissing(
        `pulp-operator still manages a Pulp in namespace ${where.namespace} (${cr} owns deployments ` +
          `${owned.map((d) => d.name).join(", ")}), and instance ${where.instance} has no upgrade history ` +
          `(configmap ${historyName(where.instance)}); nothing was changed. Before this install takes over its ` +
          `database and volume, take them out of the operator's hands: delete the Pulp resource but not what it ` +
          `made (its pods keep serving, its database, claim and Secrets stay), then run the update again:\n` +
          `  kubectl delete pulp ${operatorCr ?? "<name>"} -n ${where.namespace} --cascade=orphan\n` +
          `To install a separate Pulp instead, give it a namespace of its own (pulp:namespace).`,
      );
    }
    // Out of the operator's hands: its migration Job ran the migrations of the release its image names
    // before its pods rolled, so the database is at that release; the migration Job checks it again.
    // This install's Deployments, there when an earlier takeover stopped before its history was written,
    // were rolled at the same release, or they would not be.
    const images = [...new Set(pulp.filter(isOperators).map((d) => d.image))];
    const release = releaseOf(images[0]);
    const others = pulp.filter((d) => !isOperators(d));
    if (images.length === 1 && release && others.every((d) => d.version === release)) {
      return { deployed: { pulpcoreVersion: release, idle: false }, source: "pulp-operator" };
    }
    throw new HistoryMissing(
      `pulp-operator's install in namespace ${where.namespace} (deployments ` +
        `${byOperator.map((d) => d.name).join(", ")}) runs ` +
        `${images.length > 1 ? `several images (${images.join(", ")})` : `${images[0] ?? "an image"}, whose tag names no release`}, ` +
        `and instance ${where.instance} has no upgrade history (configmap ${historyName(where.instance)}); ` +
        `nothing was changed. Record the pulpcore version its database runs (pulp status shows it), then run ` +
        `the update again:\n${record}`,
    );
  }
  throw new HistoryMissing(
    `Pulp instance ${where.instance} in namespace ${where.namespace} is already installed ` +
      `(deployments ${names}), but has no upgrade history (configmap ${historyName(where.instance)}), ` +
      `and ${versions.length > 1 ? `its Deployments run different versions (${versions.join(", ")})` : "nothing says which release its database runs"}. ` +
      `Planning it as a new install would run migrations over live data, so nothing was changed. ` +
      `Record the pulpcore version it runs (pulp status shows it), then run the update again:\n${record}`,
  );
}

/**
 * Taking over pulp-operator's install runs the release it runs: both serve the same database while the
 * operator's pods are still up, and an upgrade at the switch would have to stop them, which this install
 * does not manage. Once it has taken over, an upgrade is planned as any other.
 */
export function takeoverProblem(
  found: Found,
  deployed: Deployed,
  target: { namespace: string; instance: string; image: string; pulpcoreVersion: string },
): string | undefined {
  if (target.pulpcoreVersion === deployed.pulpcoreVersion) return undefined;
  const names = found.deployments.filter((d) => isOperators(d) && isPulpProcess(d)).map((d) => d.name);
  return (
    `instance ${target.instance} takes over pulp-operator's install in namespace ${target.namespace} ` +
    `(deployments ${names.join(", ")}), which runs pulpcore ${deployed.pulpcoreVersion}, at pulpcore ` +
    `${target.pulpcoreVersion} (${target.image}); nothing was changed. Take it over at the release it runs, then upgrade as any other ` +
    `update: ${imageAtCommand(target.image, deployed.pulpcoreVersion!)}`
  );
}

/** What a takeover leaves to the person: the operator's Deployments serve until they are scaled down. */
export function takeoverNotice(
  found: Found,
  deployed: Deployed,
  where: { namespace: string; instance: string },
): string {
  const names = found.deployments.filter(isOperators).map((d) => d.name);
  return (
    `${where.instance} takes over pulp-operator's install at pulpcore ${deployed.pulpcoreVersion}, the ` +
    `release its image names (the migration Job refuses a database a newer release migrated). Its Deployments keep serving ` +
    `beside this install's; once clients reach this one, stop them: kubectl scale deployment -n ` +
    `${where.namespace} ${names.join(" ")} --replicas=0 (docs/migrate-from-pulp-operator.md)`
  );
}

/**
 * A record kept elsewhere, or how to read it (the stack outputs of an older version of the stack program,
 * through a StackReference): read only when the cluster has no history.
 */
export type LegacyRecord = Deployed | (() => Promise<Deployed>);

/** plannedFrom, with what the cluster holds read through `cluster`. */
export async function readHistory(args: {
  cluster: KubeTarget;
  namespace: string;
  instance: string;
  legacy?: LegacyRecord;
  /** A claim of the user's to read as well (storage.pvc.existingClaim). */
  claim?: string;
  /** The CloudNativePG Cluster to read as well (database.cloudnativepg). */
  databaseCluster?: string;
}): Promise<{ deployed: Deployed; source: string; found: Found }> {
  const found = await findInstall(
    kubeApi(args.cluster),
    args.namespace,
    args.instance,
    args.claim,
    args.databaseCluster,
  );
  const legacy = deployedOf(found.history) ? undefined : await legacyRecord(args.legacy);
  return { ...plannedFrom(found, args, legacy), found };
}

/** The legacy record, read if it has to be. */
export async function legacyRecord(legacy: LegacyRecord | undefined): Promise<Deployed | undefined> {
  return typeof legacy === "function" ? legacy() : legacy;
}

/**
 * The refusal when a program planned from a release other than the one the cluster records (a `deployed`
 * it made up, or FIRST_INSTALL over a live install), or undefined when they agree.
 */
export function historyMismatch(
  found: Found,
  where: { namespace: string; instance: string },
  expected: { pulpcoreVersion?: string },
): string | undefined {
  let actual: Deployed;
  try {
    actual = plannedFrom(found, where).deployed;
  } catch (e) {
    // Foreign Deployments: a plan from a version the caller knows is accepted; a first install is not.
    if (expected.pulpcoreVersion) return undefined;
    return (e as Error).message;
  }
  if (!found.history && expected.pulpcoreVersion) return undefined; // stack outputs of an older program
  if ((actual.pulpcoreVersion ?? "") === (expected.pulpcoreVersion ?? "")) return undefined;
  return (
    `Pulp instance ${where.instance} was planned as ` +
    `${expected.pulpcoreVersion ? `an update from pulpcore ${expected.pulpcoreVersion}` : "a new install"}, ` +
    `but the cluster records pulpcore ${actual.pulpcoreVersion} (configmap ${historyName(where.instance)} ` +
    `in namespace ${where.namespace}); nothing was changed. Let the component read its history: ` +
    `create it with \`await Pulp.create(name, args)\`, or pass \`deployed: (await readHistory(...)).deployed\`.`
  );
}
