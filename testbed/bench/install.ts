// npm run bench:install — what a first install on the real node costs, one figure a line:
//   - the cold build time of each image, as recorded when the cache entry was built (testbed/images);
//   - `cluster:up` with the real node, from a stopped cluster (this bench stops the running one);
//   - the first `pulumi up` of a fresh stack, and the time until `pulp status` is green through pulp-web;
//   - the whole bed's peak memory: the machine's used memory (MemTotal - MemAvailable) sampled every
//     second from before `cluster:up` to green status, minus what was used before.
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { dropStack, freshStack, getJson, mustPulumi, pulumi } from "../harness";
import { REPO, runMain } from "../local/environment";
import { portForward, pulpCli } from "../real/clients";
import { ensureCnpgOperator } from "../real/cnpg";
import { importImages } from "../real/stack";

const STACK = "bench-install";
const NS = "pulp-bench-install";
const PORT = 24881;
const CACHE = process.env.PULP_IMAGE_CACHE ?? path.join(os.homedir(), ".cache", "pulp-pulumi-images");

/** Bytes in use on the machine now. */
function usedBytes(): number {
  const info = fs.readFileSync("/proc/meminfo", "utf8");
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(info)![1]);
  return (kib("MemTotal") - kib("MemAvailable")) * 1024;
}

/** The recorded cold build seconds of the images in use (testbed/images: meta.json) and of their base. */
function imageBuildSeconds(): string[] {
  const read = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"));
  const index = read(path.join(CACHE, "index.json")) as Record<string, string>;
  const lines = Object.entries(index).map(([name, dir]) => {
    const meta = read(path.join(dir, "meta.json")) as { buildSeconds: number; archiveSeconds: number };
    return `image_build_seconds_${name.replace(/^localhost\//, "")} ${Math.round(meta.buildSeconds + meta.archiveSeconds)}`;
  });
  for (const key of fs.readdirSync(path.join(CACHE, "base"))) {
    const done = path.join(CACHE, "base", key, "done.json");
    if (fs.existsSync(done)) lines.push(`image_build_seconds_base_rootfs_${key} ${read(done).seconds}`);
  }
  return lines;
}

async function bench(): Promise<number> {
  const baseline = usedBytes();
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, usedBytes())), 1000);
  const seconds = (start: number) => ((Date.now() - start) / 1000).toFixed(1);
  const cluster = path.join(REPO, "testbed/cluster/cluster.sh");
  try {
    execFileSync("bash", [cluster, "down"], { stdio: "inherit" });
    let t = Date.now();
    execFileSync("bash", [cluster, "up"], {
      stdio: "inherit",
      env: { ...process.env, PULP_TESTBED_REAL_NODE: "1" },
    });
    const clusterUp = seconds(t);
    t = Date.now();
    importImages();
    ensureCnpgOperator();
    const bedReady = seconds(t);
    // The dev stack as it is, CloudNativePG included: its Cluster comes up inside the first `up`.
    freshStack(
      STACK,
      { namespace: NS, contentOrigin: `http://127.0.0.1:${PORT}` },
      path.join(REPO, "Pulumi.dev.yaml"),
    );
    t = Date.now();
    const up = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    const forward = await portForward(NS, "pulp-web", PORT, 8080);
    const secret = getJson(["secret", "pulp-admin-password", "-n", NS]);
    const password = Buffer.from(secret.data.password, "base64").toString("utf8");
    let green = false;
    while (!green && Date.now() - t < 15 * 60_000) {
      try {
        const status = pulpCli({ baseUrl: `http://127.0.0.1:${PORT}`, password }, ["status"]);
        green =
          status.database_connection.connected &&
          status.redis_connection.connected &&
          status.online_workers.length > 0 &&
          status.online_content_apps.length > 0;
      } catch {
        // not answering yet
      }
      if (!green) await new Promise((r) => setTimeout(r, 2000));
    }
    forward.stop();
    if (!green) throw new Error(`pulp status was not green within 15 min of the first up`);
    const lines = [
      ...imageBuildSeconds(),
      `cluster_up_with_real_node_seconds ${clusterUp}`,
      `images_import_and_cloudnativepg_operator_seconds ${bedReady}`,
      `first_pulumi_up_seconds ${up.seconds.toFixed(1)}`,
      `first_up_until_pulp_status_green_seconds ${seconds(t)}`,
      `bed_peak_memory_mib ${Math.round((peak - baseline) / 2 ** 20)}`,
      `machine_peak_used_memory_mib ${Math.round(peak / 2 ** 20)}`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    clearInterval(sampler);
    pulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
    dropStack(STACK, NS);
  }
}

runMain(bench);
