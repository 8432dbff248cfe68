// npm run bench:upgrade — Pulp upgrades on the embedded cluster, measured while `pulumi up` runs, with the
// ready endpoints of api, content and web sampled every 100 ms (and the pods, for the rollout order):
//   1. install 3.84.0;
//   2. 3.84.0 -> 3.87.0 ships core 0140, guarded for 3.85: stop-the-world (stop, TTL, migrate, start);
//   3. 3.87.0 -> 3.87.1: rolling, with pods that take 4 s to become ready.
// One figure a line.
import * as fs from "fs";
import * as path from "path";
import { runMain, STATE } from "../local/environment";
import { dropStack, freshStack, mustPulumi, pulumi, readiness, writeStackConfig } from "../harness";
import { rolloutOrder, Samples, startSampler } from "./sampler";

const STACK = "bench";
const NS = "pulp-bench";
const SERVICES = ["pulp-api", "pulp-content", "pulp-web"];
const short = (service: string) => service.replace("pulp-", "");

async function measured(name: string, out: string, config: Record<string, unknown>) {
  writeStackConfig(STACK, config);
  const file = path.join(out, `${name}.jsonl`);
  const sampler = startSampler(NS, SERVICES, file);
  const up = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  const samples: Samples = await sampler.stop();
  return { up, samples, text: fs.readFileSync(file, "utf8") };
}

async function bench(): Promise<number> {
  const out = path.join(STATE, "bench");
  fs.mkdirSync(out, { recursive: true });
  const release = (version: string, extra: Record<string, unknown> = {}) => ({
    namespace: NS,
    image: `quay.io/pulp/pulp-minimal:${version}`,
    ...extra,
  });
  freshStack(STACK, release("3.84.0"));
  try {
    const install = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    const stop = await measured("stop-the-world", out, release("3.87.0"));
    const slow = readiness("slow", "4s");
    const rolling = await measured("rolling", out, release("3.87.1", { api: slow, content: slow }));
    const lines = [
      `install_seconds ${install.seconds.toFixed(1)}`,
      `stop_the_world_upgrade_seconds ${stop.up.seconds.toFixed(1)}`,
      ...SERVICES.map((s) => `stop_the_world_zero_ready_ms_${short(s)} ${stop.samples.longestGapMs[s]}`),
      `rolling_upgrade_seconds ${rolling.up.seconds.toFixed(1)}`,
      `rolling_samples ${rolling.samples.count}`,
      `rolling_sample_interval_ms_median ${rolling.samples.medianIntervalMs}`,
      ...SERVICES.map((s) => `rolling_min_ready_endpoints_${short(s)} ${rolling.samples.minReady[s]}`),
      ...SERVICES.map((s) => `rolling_longest_zero_ready_ms_${short(s)} ${rolling.samples.longestGapMs[s]}`),
      ...["api", "content"].map(
        (c) =>
          `rolling_old_pods_removed_before_new_ready_${c} ${rolloutOrder(rolling.text, c).violations.length}`,
      ),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    pulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
    dropStack(STACK, NS);
  }
}

runMain(bench);
