import { spawn, ChildProcess } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { KUBECONFIG, REPO } from "../local/environment";

export interface Samples {
  count: number;
  /** The fewest ready endpoints seen, per Service. */
  minReady: Record<string, number>;
  /** The longest run of samples with zero ready endpoints, per Service, in ms. */
  longestGapMs: Record<string, number>;
  /** Median time between samples, ms. */
  medianIntervalMs: number;
}

/** Starts sampling the Services' ready endpoints every `intervalMs` in a child process. */
export function startSampler(namespace: string, services: string[], out: string, intervalMs = 100) {
  const child: ChildProcess = spawn(
    path.join(REPO, "node_modules/.bin/ts-node"),
    [
      "-T",
      path.join(REPO, "scripts/bench/endpointSampler.ts"),
      KUBECONFIG,
      namespace,
      out,
      String(intervalMs),
      ...services,
    ],
    { stdio: "ignore" },
  );
  return {
    /** Stops it and summarises what it saw. */
    stop: async (): Promise<Samples> => {
      const exited = new Promise((resolve) => child.on("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      return summarise(fs.readFileSync(out, "utf8"), services);
    },
  };
}

export function summarise(text: string, services: string[]): Samples {
  const samples = text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { t: number; ready: Record<string, number> });
  const minReady: Record<string, number> = {};
  const longestGapMs: Record<string, number> = {};
  for (const svc of services) {
    minReady[svc] = Math.min(...samples.map((s) => s.ready[svc]));
    let gapStart: number | undefined;
    longestGapMs[svc] = 0;
    for (const s of samples) {
      if (s.ready[svc] === 0) gapStart ??= s.t;
      else if (gapStart !== undefined) {
        longestGapMs[svc] = Math.max(longestGapMs[svc], s.t - gapStart);
        gapStart = undefined;
      }
    }
    if (gapStart !== undefined)
      longestGapMs[svc] = Math.max(longestGapMs[svc], samples[samples.length - 1].t - gapStart);
  }
  const intervals = samples
    .slice(1)
    .map((s, i) => s.t - samples[i].t)
    .sort((a, b) => a - b);
  return {
    count: samples.length,
    minReady,
    longestGapMs,
    medianIntervalMs: intervals[Math.floor(intervals.length / 2)] ?? 0,
  };
}
