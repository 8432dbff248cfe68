// npm run bench:preview — what a no-op `pulumi preview` of the Pulp program costs, next to a trivial program
// with as many Kubernetes objects (testbed/bench/preview-baseline: a Namespace and ConfigMaps), on the kwok
// cluster. Wall seconds and CPU seconds of the whole run (the CLI, the engine, the providers and the
// program: every process /usr/bin/time waits for), the median of RUNS runs each, taken in turn; then the
// ratios. Both programs run as the test bed runs every program (testbed/local/pulumi.ts, transpiled only).
// PULP_BENCH_KEEP=1 keeps both stacks for profiling.
import { spawnSync } from "child_process";
import { dropStack, freshStack, mustPulumi, pulumi, pulumiCommand } from "../harness";
import { REPO, runMain } from "../local/environment";

const STACK = "bench-preview";
const NS = "pulp-bench-preview";
const BASELINE = "bench-preview-baseline";
const BASELINE_DIR = "testbed/bench/preview-baseline";
const RUNS = Number(process.env.PULP_BENCH_RUNS ?? 5);

interface Cost {
  wall: number;
  cpu: number;
  /** The largest resident set of any one process, MB. */
  peakMb: number;
}

/** One no-op preview, measured; fails when it is not one. */
function preview(stack: string, programDir?: string): Cost {
  const [command, args] = pulumiCommand(stack, ["preview", "--expect-no-changes"], programDir);
  const r = spawnSync("/usr/bin/time", ["-f", "BENCH %e %U %S %M", command, ...args], {
    cwd: REPO,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, FORCE_COLOR: "0" },
  });
  if (r.status !== 0) throw new Error(`preview of ${stack} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  const [wall, user, sys, rssKb] = /^BENCH (\S+) (\S+) (\S+) (\S+)$/m.exec(r.stderr)!.slice(1).map(Number);
  return { wall, cpu: user + sys, peakMb: Math.round(rssKb / 1024) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Kubernetes objects (custom resources of the kubernetes provider) in a stack's state. */
function kubernetesObjects(stack: string, programDir?: string): number {
  const state = JSON.parse(pulumi(stack, ["stack", "export"], undefined, programDir).stdout);
  return (state.deployment.resources as { type: string; custom: boolean }[]).filter(
    (r) => r.custom && r.type.startsWith("kubernetes:") && !r.type.startsWith("pulumi:providers:"),
  ).length;
}

runMain(async () => {
  freshStack(STACK, { namespace: NS });
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  const objects = kubernetesObjects(STACK);

  pulumi(BASELINE, ["stack", "rm", "--force", "--yes"], undefined, BASELINE_DIR);
  mustPulumi(BASELINE, ["stack", "init"], BASELINE_DIR);
  mustPulumi(BASELINE, ["config", "set", "baseline:namespace", `${NS}-baseline`], BASELINE_DIR);
  mustPulumi(BASELINE, ["config", "set", "baseline:count", String(objects - 1)], BASELINE_DIR);
  mustPulumi(BASELINE, ["up", "--yes", "--skip-preview"], BASELINE_DIR);

  const pulp: Cost[] = [];
  const baseline: Cost[] = [];
  for (let i = 0; i < RUNS; i++) {
    pulp.push(preview(STACK));
    baseline.push(preview(BASELINE, BASELINE_DIR));
  }
  const lines = [
    `preview_kubernetes_objects ${objects}`,
    ...(["wall", "cpu", "peakMb"] as const).flatMap((k) => [
      `preview_pulp_${k}_median ${median(pulp.map((c) => c[k]))}`,
      `preview_baseline_${k}_median ${median(baseline.map((c) => c[k]))}`,
    ]),
    `preview_ratio_wall ${(median(pulp.map((c) => c.wall)) / median(baseline.map((c) => c.wall))).toFixed(2)}`,
    `preview_ratio_cpu ${(median(pulp.map((c) => c.cpu)) / median(baseline.map((c) => c.cpu))).toFixed(2)}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);

  if (!process.env.PULP_BENCH_KEEP) {
    mustPulumi(BASELINE, ["destroy", "--yes", "--skip-preview"], BASELINE_DIR);
    pulumi(BASELINE, ["stack", "rm", "--force", "--yes"], undefined, BASELINE_DIR);
    mustPulumi(STACK, ["destroy", "--yes", "--skip-preview"]);
    dropStack(STACK, NS);
  }
  return 0;
});
