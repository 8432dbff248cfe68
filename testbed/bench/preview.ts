// npm run bench:preview — what a no-op `pulumi preview` of the Pulp program costs, next to a trivial program
// with as many Kubernetes objects (testbed/bench/preview-baseline: a Namespace and ConfigMaps), on the kwok
// cluster. Wall seconds and CPU seconds of the whole run (the CLI, the engine, the providers and the
// program: every process /usr/bin/time waits for), the median of RUNS runs each, taken in turn; then the
// ratios, and the CPU of each kind of process (the CLI and engine, the program, the Kubernetes provider,
// the dynamic provider). Both programs run as the test bed runs every program (testbed/local/pulumi.ts,
// transpiled only).
// PULP_BENCH_KEEP=1 keeps both stacks for profiling.
import { spawn } from "child_process";
import * as fs from "fs";
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
  /** CPU seconds by process kind (sampled from /proc every 100 ms: a process shorter than that is missed). */
  byProcess: Record<string, number>;
}

/** What a process of the run is, from its command line. */
function kindOf(cmdline: string): string {
  if (cmdline.includes("pulumi-resource-kubernetes")) return "kubernetes_provider";
  if (cmdline.includes("pulumi-resource-pulumi-nodejs") || cmdline.includes("dynamic"))
    return "dynamic_provider";
  if (cmdline.includes("testbed/local/pulumi.ts")) return "program_and_language_host";
  if (/(^|\/)pulumi\0/.test(cmdline)) return "cli_and_engine";
  return "other";
}

/** CPU ticks and command line of every process below `root`, now. */
function descendants(root: number): Map<number, { ticks: number; cmdline: string }> {
  const procs = new Map<number, { ppid: number; ticks: number }>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields from the 3rd (state) on
      procs.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // gone since the listing
    }
  }
  const found = new Map<number, { ticks: number; cmdline: string }>();
  const under = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 20; p = procs.get(p)?.ppid ?? 0, hops++)
      if (p === root) return true;
    return false;
  };
  for (const [pid, { ticks }] of procs) {
    if (pid === root || !under(pid)) continue;
    let cmdline = "";
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    found.set(pid, { ticks, cmdline });
  }
  return found;
}

/** One no-op preview, measured; fails when it is not one. */
async function preview(stack: string, programDir?: string): Promise<Cost> {
  const [command, args] = pulumiCommand(stack, ["preview", "--expect-no-changes"], programDir);
  const child = spawn("/usr/bin/time", ["-f", "BENCH %e %U %S %M", command, ...args], {
    cwd: REPO,
    env: { ...process.env, FORCE_COLOR: "0" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const seen = new Map<number, { ticks: number; cmdline: string }>();
  const sampler = setInterval(() => {
    for (const [pid, p] of descendants(child.pid!)) seen.set(pid, p);
  }, 100);
  const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearInterval(sampler);
  if (status !== 0) throw new Error(`preview of ${stack} failed (${status}):\n${stdout}\n${stderr}`);
  const [wall, user, sys, rssKb] = /^BENCH (\S+) (\S+) (\S+) (\S+)$/m.exec(stderr)!.slice(1).map(Number);
  const byProcess: Record<string, number> = {};
  const hz = 100; // USER_HZ
  for (const { ticks, cmdline } of seen.values()) {
    const kind = kindOf(cmdline);
    byProcess[kind] = Math.round(((byProcess[kind] ?? 0) + ticks / hz) * 100) / 100;
  }
  return { wall, cpu: user + sys, peakMb: Math.round(rssKb / 1024), byProcess };
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
    pulp.push(await preview(STACK));
    baseline.push(await preview(BASELINE, BASELINE_DIR));
  }
  const lines = [
    `preview_kubernetes_objects ${objects}`,
    ...(["wall", "cpu", "peakMb"] as const).flatMap((k) => [
      `preview_pulp_${k}_median ${median(pulp.map((c) => c[k]))}`,
      `preview_baseline_${k}_median ${median(baseline.map((c) => c[k]))}`,
    ]),
    ...[...new Set([...pulp, ...baseline].flatMap((c) => Object.keys(c.byProcess)))]
      .sort()
      .flatMap((kind) => [
        `preview_pulp_cpu_${kind}_median ${median(pulp.map((c) => c.byProcess[kind] ?? 0))}`,
        `preview_baseline_cpu_${kind}_median ${median(baseline.map((c) => c.byProcess[kind] ?? 0))}`,
      ]),
    `preview_ratio_wall ${(median(pulp.map((c) => c.wall)) / median(baseline.map((c) => c.wall))).toFixed(2)}`,
    `preview_ratio_cpu ${(median(pulp.map((c) => c.cpu)) / median(baseline.map((c) => c.cpu))).toFixed(2)}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);

  if (!process.env.PULP_BENCH_KEEP) {
    mustPulumi(BASELINE, ["destroy", "--yes", "--skip-preview"], BASELINE_DIR);
    pulumi(BASELINE, ["stack", "rm", "--force", "--yes"], undefined, BASELINE_DIR);
    // What holds data is protected (kept on destroy): the namespace's deletion takes it.
    mustPulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
    dropStack(STACK, NS);
  }
  return 0;
});
