// The real CloudNativePG operator on the real node (testbed/cnpg/install.sh: built from its Go module,
// idempotent), for the stacks that use the program's default database.
import { execFileSync } from "child_process";
import * as path from "path";
import { getJson, kubectl, waitUntil } from "../harness";
import { KUBECONFIG, NODE_CONTAINERD, REPO } from "../local/environment";

/** Installs the operator if it is not there and waits until its admission webhooks answer. */
export function ensureCnpgOperator(): void {
  execFileSync("bash", [path.join(REPO, "testbed/cnpg/install.sh")], {
    env: { ...process.env, KUBECONFIG, CONTAINERD_ADDRESS: NODE_CONTAINERD },
    stdio: ["ignore", "inherit", "inherit"],
  });
}

interface InstancePod {
  metadata: { name: string; deletionTimestamp?: string };
  status: { phase?: string; containerStatuses?: { ready: boolean }[] };
}

const instanceSelector = (cluster: string) => `cnpg.io/cluster=${cluster},cnpg.io/podRole=instance`;

const instancePods = (namespace: string, cluster: string) =>
  getJson<{ items: InstancePod[] }>(["pods", "-n", namespace, "-l", instanceSelector(cluster)]).items;

/**
 * A database outage: hibernation keeps the operator from starting the instances again (the volumes
 * stay), and each instance pod is cut off as a crash would (1 s grace). A graceful stop would not be
 * an outage at first: CloudNativePG's smart shutdown waits up to 180 s for Pulp's open connections.
 * The pods are cut off only once the operator reports the hibernation under way: before that (it is
 * slow to on a busy node) it starts a cut-off instance again, as for any crash. Resolves when no
 * instance pod is left.
 */
export async function hibernate(namespace: string, cluster: string): Promise<void> {
  kubectl(["-n", namespace, "annotate", "cluster", cluster, "cnpg.io/hibernation=on", "--overwrite"]);
  // pkg/reconciler/hibernation/status.go: these reasons mean it goes on whatever the cluster's health.
  const hibernating = () => {
    const conditions = getJson<{ status: { conditions?: { type: string; reason: string }[] } }>([
      "cluster",
      cluster,
      "-n",
      namespace,
    ]).status.conditions;
    const reason = conditions?.find((c) => c.type === "cnpg.io/hibernation")?.reason;
    return ["DeletingPods", "WaitingPodsDeletion", "Hibernated"].includes(reason ?? "");
  };
  await waitUntil(`${namespace}/${cluster}: the operator hibernating it`, 120, hibernating, {
    intervalMs: 1000,
  });
  kubectl([
    "-n",
    namespace,
    "delete",
    "pods",
    "-l",
    instanceSelector(cluster),
    "--grace-period=1",
    "--wait=false",
  ]);
  // 300 s: beside another suite on two cores, an instance took longer than 120 s to go.
  await waitUntil(
    `${namespace}/${cluster}: every instance stopped`,
    300,
    () => instancePods(namespace, cluster).length === 0,
    {
      intervalMs: 2000,
      detail: () =>
        instancePods(namespace, cluster)
          .map(
            (p) => `${p.metadata.name}: ${p.status.phase}${p.metadata.deletionTimestamp ? ", deleting" : ""}`,
          )
          .join("\n"),
    },
  );
}

/** Ends the hibernation and resolves when an instance is Ready again. */
export async function wake(namespace: string, cluster: string): Promise<void> {
  kubectl(["-n", namespace, "annotate", "cluster", cluster, "cnpg.io/hibernation=off", "--overwrite"]);
  const ready = (p: InstancePod) => {
    const containers = p.status.containerStatuses ?? [];
    return containers.length > 0 && containers.every((c) => c.ready);
  };
  await waitUntil(
    `${namespace}/${cluster}: an instance Ready after the hibernation`,
    300,
    () => instancePods(namespace, cluster).some(ready),
    { intervalMs: 2000 },
  );
}

interface ClusterStatus {
  status: {
    currentPrimary?: string;
    targetPrimary?: string;
    instancesStatus?: Record<string, string[]>;
    phase?: string;
  };
}

/** The phase CloudNativePG reports once every instance is up and replicating. */
const HEALTHY = "Cluster in healthy state";

/**
 * A switchover to another healthy instance, as `kubectl cnpg promote` makes it (internal/cmd/plugin/promote:
 * the new target primary written into the Cluster's status). Resolves once that instance is the primary and
 * the cluster is healthy again; returns both instances and the seconds until then.
 */
export async function switchover(
  namespace: string,
  cluster: string,
): Promise<{ from: string; to: string; seconds: number }> {
  const status = () => getJson<ClusterStatus>(["cluster", cluster, "-n", namespace]).status;
  const before = status();
  const from = before.currentPrimary;
  const to = (before.instancesStatus?.healthy ?? []).find((name) => name !== from);
  if (!from || !to || before.phase !== HEALTHY) {
    throw new Error(
      `${namespace}/${cluster}: no healthy replica to switch over to: ${JSON.stringify(before)}`,
    );
  }
  const started = Date.now();
  // RFC 3339 with microseconds, the operator's own format for this field.
  const timestamp = new Date(started).toISOString().replace(/Z$/, "000Z");
  kubectl([
    "patch",
    "cluster",
    cluster,
    "-n",
    namespace,
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({
      status: {
        targetPrimary: to,
        targetPrimaryTimestamp: timestamp,
        phase: "Switchover in progress",
        phaseReason: `Switching over to ${to}`,
      },
    }),
  ]);
  await waitUntil(
    `${namespace}/${cluster}: ${to} the primary and the cluster healthy after the switchover`,
    300,
    () => {
      const now = status();
      return now.currentPrimary === to && now.phase === HEALTHY;
    },
    { intervalMs: 500 },
  );
  return { from, to, seconds: (Date.now() - started) / 1000 };
}

/** One SQL statement on the Cluster's current primary as the postgres superuser (`psql -At`); its name and output. */
export function onPrimary(
  namespace: string,
  cluster: string,
  sql: string,
): { primary: string; output: string } {
  const primary: string = getJson(["cluster", cluster, "-n", namespace]).status.currentPrimary;
  const output = kubectl([
    "exec",
    "-n",
    namespace,
    primary,
    "-c",
    "postgres",
    "--",
    "psql",
    "-U",
    "postgres",
    "-At",
    "-c",
    sql,
  ]).trim();
  return { primary, output };
}
