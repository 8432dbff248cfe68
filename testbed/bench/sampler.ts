import { spawn, ChildProcess } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { KUBECONFIG, REPO } from "../local/environment";
import type { PodSample } from "./endpointSampler";

export interface Samples {
  count: number;
  /** The fewest ready endpoints seen, per Service. */
  minReady: Record<string, number>;
  /** The longest run of samples with zero ready endpoints, per Service, in ms. */
  longestGapMs: Record<string, number>;
  /** When that run began (ms since epoch), per Service; undefined when there was none. */
  longestGapStart: Record<string, number | undefined>;
  /** Median time between samples, ms. */
  medianIntervalMs: number;
}

/** Starts sampling the Services' ready endpoints every `intervalMs` in a child process. */
const running = new Set<ChildProcess>();

/** Stops every sampler still running: a test that failed before its own stop must not leave one behind. */
export function stopSamplers(): void {
  for (const child of running) child.kill("SIGTERM");
  running.clear();
}

export function startSampler(namespace: string, services: string[], out: string, intervalMs = 100) {
  const child: ChildProcess = spawn(
    path.join(REPO, "node_modules/.bin/ts-node"),
    [
      "-T",
      path.join(REPO, "testbed/bench/endpointSampler.ts"),
      KUBECONFIG,
      namespace,
      out,
      String(intervalMs),
      ...services,
    ],
    { stdio: "ignore" },
  );
  running.add(child);
  child.on("exit", () => running.delete(child));
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
  const longestGapStart: Record<string, number | undefined> = {};
  const noteGap = (svc: string, start: number, end: number) => {
    if (end - start > longestGapMs[svc] || longestGapStart[svc] === undefined) {
      longestGapMs[svc] = end - start;
      longestGapStart[svc] = start;
    }
  };
  for (const svc of services) {
    minReady[svc] = Math.min(...samples.map((s) => s.ready[svc]));
    let gapStart: number | undefined;
    longestGapMs[svc] = 0;
    for (const s of samples) {
      if (s.ready[svc] === 0) gapStart ??= s.t;
      else if (gapStart !== undefined) {
        noteGap(svc, gapStart, s.t);
        gapStart = undefined;
      }
    }
    if (gapStart !== undefined) noteGap(svc, gapStart, samples[samples.length - 1].t);
  }
  const intervals = samples
    .slice(1)
    .map((s, i) => s.t - samples[i].t)
    .sort((a, b) => a - b);
  return {
    count: samples.length,
    minReady,
    longestGapMs,
    longestGapStart,
    medianIntervalMs: intervals[Math.floor(intervals.length / 2)] ?? 0,
  };
}

/** When each old pod of a component was removed and each new pod became ready, from the pod samples. */
export interface RolloutOrder {
  component: string;
  /** ms since epoch at which each old pod (a ReplicaSet present before the update) started terminating or vanished. */
  oldRemoved: number[];
  /** ms since epoch at which each new pod was first seen ready. */
  newReady: number[];
  /** Removals that came before as many new pods were ready: "the k-th old pod went before k new ones were ready". */
  violations: string[];
}

/**
 * With maxUnavailable 0 and maxSurge 1, the k-th old pod may go only once k new pods are ready. Old pods
 * are those of the ReplicaSets seen in the first sample; a pod counts as removed from the first sample in
 * which it is terminating or gone.
 */
export function rolloutOrder(text: string, component: string): RolloutOrder {
  const samples = text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { t: number; pods: PodSample[] })
    .map((s) => ({ t: s.t, pods: (s.pods ?? []).filter((p) => p.component === component) }));
  const oldHashes = new Set(samples[0]?.pods.map((p) => p.hash));
  const oldPods = new Set(samples[0]?.pods.filter((p) => !p.terminating).map((p) => p.name));
  const removedAt = new Map<string, number>();
  const readyAt = new Map<string, number>();
  for (const s of samples) {
    const present = new Map(s.pods.map((p) => [p.name, p]));
    for (const name of oldPods) {
      const p = present.get(name);
      if (!removedAt.has(name) && (!p || p.terminating)) removedAt.set(name, s.t);
    }
    for (const p of s.pods) {
      if (!oldHashes.has(p.hash) && p.ready && !readyAt.has(p.name)) readyAt.set(p.name, s.t);
    }
  }
  const oldRemoved = [...removedAt.values()].sort((a, b) => a - b);
  const newReady = [...readyAt.values()].sort((a, b) => a - b);
  const violations = oldRemoved.flatMap((t, k) =>
    newReady.filter((r) => r <= t).length >= k + 1
      ? []
      : [
          `old pod #${k + 1} of ${component} went at ${new Date(t).toISOString()} with ${newReady.filter((r) => r <= t).length} new pods ready`,
        ],
  );
  return { component, oldRemoved, newReady, violations };
}
