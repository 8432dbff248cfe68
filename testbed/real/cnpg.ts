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
  status: { containerStatuses?: { ready: boolean }[] };
}

const instanceSelector = (cluster: string) => `cnpg.io/cluster=${cluster},cnpg.io/podRole=instance`;

const instancePods = (namespace: string, cluster: string) =>
  getJson<{ items: InstancePod[] }>(["pods", "-n", namespace, "-l", instanceSelector(cluster)]).items;

/**
 * A database outage: hibernation keeps the operator from starting the instances again (the volumes
 * stay), and each instance pod is cut off as a crash would (1 s grace). A graceful stop would not be
 * an outage at first: CloudNativePG's smart shutdown waits up to 180 s for Pulp's open connections.
 * Resolves when no instance pod is left.
 */
export async function hibernate(namespace: string, cluster: string): Promise<void> {
  kubectl(["-n", namespace, "annotate", "cluster", cluster, "cnpg.io/hibernation=on", "--overwrite"]);
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
  await waitUntil(
    `${namespace}/${cluster}: every instance stopped`,
    120,
    () => instancePods(namespace, cluster).length === 0,
    { intervalMs: 2000 },
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
