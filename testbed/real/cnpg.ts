// The real CloudNativePG operator on the real node (testbed/cnpg/install.sh: built from its Go module,
// idempotent), for the stacks that use the program's default database.
import { execFileSync } from "child_process";
import * as path from "path";
import { getJson, kubectl } from "../harness";
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

const instancePods = (namespace: string, cluster: string) =>
  getJson<{ items: InstancePod[] }>([
    "pods",
    "-n",
    namespace,
    "-l",
    `cnpg.io/cluster=${cluster},cnpg.io/podRole=instance`,
  ]).items;

async function waitFor(what: string, seconds: number, done: () => boolean): Promise<void> {
  for (const until = Date.now() + seconds * 1000; !done();) {
    if (Date.now() > until) throw new Error(`${what}: not within ${seconds} s`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/**
 * A database outage: hibernation keeps the operator from starting the instances again (the volumes
 * stay), and each instance pod is cut off as a crash would (1 s grace). A graceful stop would not be
 * an outage at first: CloudNativePG's smart shutdown waits up to 180 s for Pulp's open connections.
 * Resolves when no instance pod is left.
 */
export async function hibernate(namespace: string, cluster: string): Promise<void> {
  kubectl(["-n", namespace, "annotate", "cluster", cluster, "cnpg.io/hibernation=on", "--overwrite"]);
  const selector = `cnpg.io/cluster=${cluster},cnpg.io/podRole=instance`;
  kubectl(["-n", namespace, "delete", "pods", "-l", selector, "--grace-period=1", "--wait=false"]);
  await waitFor(
    `${namespace}/${cluster}: every instance stopped`,
    120,
    () => instancePods(namespace, cluster).length === 0,
  );
}

/** Ends the hibernation and resolves when an instance is Ready again. */
export async function wake(namespace: string, cluster: string): Promise<void> {
  kubectl(["-n", namespace, "annotate", "cluster", cluster, "cnpg.io/hibernation=off", "--overwrite"]);
  await waitFor(`${namespace}/${cluster}: an instance Ready after the hibernation`, 300, () =>
    instancePods(namespace, cluster).some((p) => {
      const containers = p.status.containerStatuses ?? [];
      return containers.length > 0 && containers.every((c) => c.ready);
    }),
  );
}
