// A change to the CloudNativePG cluster checked against the live Cluster before anything is registered:
// what the operator's webhook would refuse halfway through an update, and the major upgrade that stops
// the database. (CloudNativePG v1.29.1, internal/webhook/v1/cluster_webhook.go: validateImageChange,
// validateConfigurationChange.)
import { postgresMajorOf } from "../config/rules";
import type { KubeApi } from "../upgrade/kubeApi";

/** The Cluster as the cluster has it (the fields the checks read). */
export interface LiveDatabaseCluster {
  name: string;
  imageName?: string;
  /** spec.postgresql.parameters: the user's, and the defaults the operator's webhook fills in. */
  parameters: Record<string, string>;
  /** The major version of the data directory (status.pgDataImageInfo.majorVersion), once it reports one. */
  dataMajor?: number;
}

export async function readDatabaseCluster(
  api: KubeApi,
  namespace: string,
  name: string,
): Promise<LiveDatabaseCluster | null> {
  const cluster = (await api.request(
    "GET",
    `/apis/postgresql.cnpg.io/v1/namespaces/${encodeURIComponent(namespace)}/clusters/${encodeURIComponent(name)}`,
  )) as
    | {
        spec?: { imageName?: string; postgresql?: { parameters?: Record<string, string> } };
        status?: { pgDataImageInfo?: { majorVersion?: number } };
      }
    | undefined;
  if (!cluster) return null;
  return {
    name,
    imageName: cluster.spec?.imageName,
    parameters: cluster.spec?.postgresql?.parameters ?? {},
    dataMajor: cluster.status?.pgDataImageInfo?.majorVersion,
  };
}

/** What the config asks of the cluster. */
export interface WantedDatabaseCluster {
  imageName?: string;
  parameters?: Record<string, string>;
}

const IMAGE_KEY = "pulp:database.cloudnativepg.imageName";
const setImage = (image: string) => `pulumi config set --path '${IMAGE_KEY}' ${image}`;

/** Refused: the operator would refuse the change halfway through the update. Printed without a stack trace. */
export class DatabaseChangeRefused extends Error {
  readonly __pulumiRunError = true;
}

/** Why the operator would refuse this change of the live Cluster, with the fix; undefined when it would not. */
export function databaseChangeProblem(
  live: LiveDatabaseCluster | null | undefined,
  wanted: WantedDatabaseCluster,
  namespace: string,
): string | undefined {
  if (!live || !wanted.imageName || wanted.imageName === live.imageName) return undefined;
  const where = `Cluster ${live.name} in namespace ${namespace}`;
  const back = live.imageName ? ` Put it back: ${setImage(live.imageName)}` : "";
  const major = postgresMajorOf(wanted.imageName);
  if (major !== undefined && live.dataMajor !== undefined) {
    if (major < live.dataMajor) {
      return (
        `${IMAGE_KEY} runs PostgreSQL ${major}, but the data of ${where} is PostgreSQL ${live.dataMajor}'s: ` +
        `PostgreSQL cannot go back a major version, and CloudNativePG refuses it; nothing was changed.${back}`
      );
    }
    if (major > live.dataMajor && major < 16) {
      return (
        `${IMAGE_KEY} would upgrade ${where} from PostgreSQL ${live.dataMajor} to ${major}, and CloudNativePG ` +
        `upgrades in place only to PostgreSQL 16 or newer; nothing was changed. Upgrade to 16 or newer: ` +
        setImage("ghcr.io/cloudnative-pg/postgresql:17")
      );
    }
  }
  // It moves the primary by switchover (database.ts), and then takes a new image or new settings, not both.
  const changed = Object.entries(wanted.parameters ?? {})
    .filter(([name, value]) => live.parameters[name] !== value)
    .map(([name]) => name);
  if (changed.length > 0) {
    return (
      `${IMAGE_KEY} and pulp:database.cloudnativepg.parameters (${changed.join(", ")}) both change ${where}, ` +
      "and CloudNativePG takes a new image or new settings in one update, not both; nothing was changed. " +
      `Apply the settings first, with the image it runs: ${setImage(live.imageName ?? "<its image>")}, ` +
      "pulumi up; then set the new image and run pulumi up again."
    );
  }
  return undefined;
}

/** The warning for an update that upgrades PostgreSQL's major version in place, or undefined. */
export function majorUpgradeNotice(
  live: LiveDatabaseCluster | null | undefined,
  wanted: WantedDatabaseCluster,
  namespace: string,
): string | undefined {
  const major = wanted.imageName ? postgresMajorOf(wanted.imageName) : undefined;
  if (!live || live.dataMajor === undefined || major === undefined || major <= live.dataMajor)
    return undefined;
  return (
    `PostgreSQL ${live.dataMajor} -> ${major} (${IMAGE_KEY}): CloudNativePG upgrades the database in place, ` +
    "stopping every instance while pg_upgrade runs. Pulp cannot reach its database meanwhile: requests and " +
    "tasks fail for minutes (longer for a large database), and its processes restart once it is back. " +
    `Take a backup first (npx pulp-backup now -n ${namespace}), and run this update in a maintenance window.`
  );
}
