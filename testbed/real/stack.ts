// What a stack on the real node needs from the test bed: the locally built images (testbed/images) and
// a small OCI archive to push through the registry (the node's busybox test image).
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO, STATE, toolchainBin } from "../local/environment";

const CACHE = process.env.PULP_IMAGE_CACHE ?? path.join(os.homedir(), ".cache", "pulp-pulumi-images");

/** The image names testbed/images built, by kind; fails naming the build command when one is missing. */
export function localImages(): { pulp: string; web: string; redis: string; postgresql: string } {
  const index = path.join(CACHE, "index.json");
  const names = fs.existsSync(index) ? Object.keys(JSON.parse(fs.readFileSync(index, "utf8"))) : [];
  const find = (repo: string) => {
    const name = names
      .filter((n) => n.startsWith(`localhost/${repo}:`))
      .sort()
      .pop();
    if (!name)
      throw new Error(
        `no local image localhost/${repo}:* in ${index}; build it: python3 testbed/images/build.py build`,
      );
    return name;
  };
  return {
    pulp: find("pulp-minimal"),
    web: find("pulp-web"),
    redis: find("redis"),
    postgresql: find("postgresql"),
  };
}

/** The busybox test image as an OCI archive (built by the real node from Debian's busybox-static). */
export function busyboxArchive(): string {
  execFileSync(
    "bash",
    [
      path.join(REPO, "testbed/node/node.sh"),
      path.join(STATE, "cluster"),
      toolchainBin(),
      "image",
      "busybox",
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return path.join(STATE, "cluster", "node", "images", "busybox.tar");
}

/** Imports every image testbed/images built into the real node's containerd (a no-op for ones it has). */
export function importImages(): void {
  execFileSync(
    "python3",
    [
      path.join(REPO, "testbed/images/build.py"),
      "import",
      "--address",
      path.join(STATE, "cluster", "node", "run", "containerd.sock"),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
}
