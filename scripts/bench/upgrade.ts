// npm run bench:upgrade — a rolling Pulp upgrade (3.85.0 -> 3.85.1) on the embedded cluster, measured:
// ready endpoints of api, content and web sampled every 100 ms while `pulumi up` runs. One figure a line.
import * as fs from "fs";
import * as path from "path";
import { runMain, STATE } from "../local/environment";
import { dropStack, freshStack, mustPulumi, pulumi, writeStackConfig } from "../local/harness";
import { startSampler } from "./sampler";

const STACK = "bench";
const NS = "pulp-bench";
const SERVICES = ["pulp-api", "pulp-content", "pulp-web"];

async function bench(): Promise<number> {
  const out = path.join(STATE, "bench");
  fs.mkdirSync(out, { recursive: true });
  const release = (image: string) => ({ namespace: NS, image });
  freshStack(STACK, release("quay.io/pulp/pulp-minimal:3.85.0"));
  try {
    const install = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    writeStackConfig(STACK, release("quay.io/pulp/pulp-minimal:3.85.1"));
    const sampler = startSampler(NS, SERVICES, path.join(out, "endpoints.jsonl"));
    const upgrade = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    const samples = await sampler.stop();
    const lines = [
      `install_seconds ${install.seconds.toFixed(1)}`,
      `rolling_upgrade_seconds ${upgrade.seconds.toFixed(1)}`,
      `samples ${samples.count}`,
      `sample_interval_ms_median ${samples.medianIntervalMs}`,
      ...SERVICES.map((s) => `min_ready_endpoints_${s.replace("pulp-", "")} ${samples.minReady[s]}`),
      ...SERVICES.map((s) => `longest_zero_ready_ms_${s.replace("pulp-", "")} ${samples.longestGapMs[s]}`),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    pulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
    dropStack(STACK, NS);
  }
}

runMain(bench);
