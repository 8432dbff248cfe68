// KEDA and metrics-server on the real node (testbed/autoscaling/install.sh: built from their Go modules,
// idempotent), for the stacks that autoscale.
import { execFileSync } from "child_process";
import * as path from "path";
import { KUBECONFIG, NODE_CONTAINERD, REPO } from "../local/environment";

/** Installs both if they are not there and waits until their metrics APIs answer through the API server. */
export function ensureAutoscalers(): void {
  execFileSync("bash", [path.join(REPO, "testbed/autoscaling/install.sh")], {
    env: { ...process.env, KUBECONFIG, CONTAINERD_ADDRESS: NODE_CONTAINERD },
    stdio: ["ignore", "inherit", "inherit"],
  });
}
