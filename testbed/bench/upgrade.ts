// npm run bench:upgrade — real Pulp upgrades on the real node, under client traffic from the load generator
// (testbed/real/load.ts: status GETs, downloads, uploads that run tasks, through pulp-web's ClusterIP):
//   1. rolling 3.121.3 -> 3.123.1 (core 0161, no guard);
//   2. stop-the-world 3.85.34 -> 3.89.2 (core 0143 needs every process at 3.87 or later).
// Requests, failed requests, requests over 1 s, p50 and p99 before, during and after each `up`, and the
// longest time with no successful request. One figure a line. Needs the images (`npm run images`) and
// the cluster with its real node.
import * as fs from "fs";
import * as path from "path";
import { mustPulumi } from "../harness";
import { runMain, STATE } from "../local/environment";
import { longestWithoutSuccess, reportLines } from "../real/loadReport";
import { underLoad } from "../real/loadTarget";
import { configureRelease, dropRelease, installRelease, ReleaseStack } from "../real/upgradeStack";

const RELEASE_STACK: ReleaseStack = {
  stack: "bench-upgrade",
  namespace: "pulp-bench-upgrade",
  database: "pulp_bench_upgrade",
  password: "bench-upgrade-Zq8",
};

async function measure(name: string, from: string, to: string, out: string): Promise<string[]> {
  try {
    const { target, seconds } = await installRelease(RELEASE_STACK, from);
    configureRelease(RELEASE_STACK, to);
    const run = await underLoad(target, out, name, RELEASE_STACK.namespace, () =>
      mustPulumi(RELEASE_STACK.stack, ["up", "--yes", "--skip-preview"]),
    );
    const outage = longestWithoutSuccess(run.records, run.during[0], run.during[1] + 30_000);
    return [
      `${name}_from ${from}`,
      `${name}_to ${to}`,
      `${name}_install_seconds ${seconds.toFixed(1)}`,
      `${name}_upgrade_seconds ${run.result.seconds.toFixed(1)}`,
      ...reportLines(`${name}_`, run.report),
      `${name}_longest_without_success_ms ${outage.ms}`,
    ];
  } finally {
    dropRelease(RELEASE_STACK);
  }
}

async function bench(): Promise<number> {
  const out = path.join(STATE, "bench-upgrade");
  fs.mkdirSync(out, { recursive: true });
  const lines = [
    ...(await measure("rolling", "3.121.3", "3.123.1", out)),
    ...(await measure("stop_the_world", "3.85.34", "3.89.2", out)),
  ];
  process.stdout.write(`\n${lines.join("\n")}\n`);
  return 0;
}

runMain(bench);
