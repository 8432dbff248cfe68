// The real CDI on the real node (testbed/cdi/install.sh: built from its Go module, idempotent).
import { execFileSync } from "child_process";
import * as path from "path";
import { KUBECONFIG, NODE_CONTAINERD, REPO } from "../local/environment";

/** Installs CDI if it is not there and waits until its DataVolume webhooks answer. */
export function ensureCdi(): void {
  execFileSync("bash", [path.join(REPO, "testbed/cdi/install.sh")], {
    env: { ...process.env, KUBECONFIG, CONTAINERD_ADDRESS: NODE_CONTAINERD },
    stdio: ["ignore", "inherit", "inherit"],
  });
}
