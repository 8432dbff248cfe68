// What a load run (testbed/real/load.ts) saw, in phases: how many requests, how many failed, how many took
// over a second, and the p50/p99 latency. Pure: it reads the records and the phase bounds only.

/** One client request as load.ts writes it (one JSON line each). */
export interface LoadRecord {
  /** When the request started, ms since the epoch. */
  t: number;
  kind: "status" | "content" | "upload" | "task-poll" | "task";
  ms: number;
  ok: boolean;
  /** Why it failed: the HTTP status, the error, or the task's state. */
  error?: string;
  /** Answered by pulp-web from its content cache, not by Pulp. */
  cached?: boolean;
}

export interface PhaseReport {
  requests: number;
  failed: number;
  overOneSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Upload tasks that started in the phase, and the longest from upload to the task's end. */
  tasks: number;
  taskMaxMs: number;
  /** Answers pulp-web gave from its content cache. */
  cached: number;
  /** The first few failures, enough to say what went wrong. */
  failures: LoadRecord[];
}

/** The nearest-rank percentile of `values` (0 when there are none). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Splits the records at the phase bounds (`{before: [start, end), during: ...}`, by request start) and
 * reports each phase. Task records time a whole task, not a request: they count as failed when the task
 * failed, but stay out of the latency figures.
 */
export function loadReport(
  records: LoadRecord[],
  phases: Record<string, [number, number]>,
): Record<string, PhaseReport> {
  const report: Record<string, PhaseReport> = {};
  for (const [phase, [start, end]] of Object.entries(phases)) {
    const inPhase = records.filter((r) => r.t >= start && r.t < end);
    const requests = inPhase.filter((r) => r.kind !== "task");
    const latencies = requests.map((r) => r.ms);
    const failures = inPhase.filter((r) => !r.ok);
    const tasks = inPhase.filter((r) => r.kind === "task");
    report[phase] = {
      requests: requests.length,
      failed: failures.length,
      overOneSecond: requests.filter((r) => r.ms > 1000).length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      tasks: tasks.length,
      taskMaxMs: Math.max(0, ...tasks.map((r) => r.ms)),
      cached: requests.filter((r) => r.cached).length,
      failures: failures.slice(0, 5),
    };
  }
  return report;
}

/**
 * The longest time in [start, end) with no successful request: from the end of one success to the end
 * of the next (the clients' view of an outage). The bounds count as successes, so a window that never
 * recovers reaches `end`.
 */
export function longestWithoutSuccess(
  records: LoadRecord[],
  start: number,
  end: number,
): { ms: number; from: number; to: number } {
  const done = records
    .filter((r) => r.ok && r.kind !== "task")
    .map((r) => r.t + r.ms)
    .filter((t) => t > start && t < end)
    .sort((a, b) => a - b);
  let longest = { ms: 0, from: start, to: start };
  let previous = start;
  for (const t of [...done, end]) {
    if (t - previous > longest.ms) longest = { ms: t - previous, from: previous, to: t };
    previous = t;
  }
  return longest;
}

/** Reads load.ts's output file. */
export function parseRecords(text: string): LoadRecord[] {
  return text
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as LoadRecord);
}

/** One figure a line, e.g. `during_failed 0`, for bench output and test logs. */
export function reportLines(prefix: string, report: Record<string, PhaseReport>): string[] {
  return Object.entries(report).flatMap(([phase, r]) => [
    `${prefix}${phase}_requests ${r.requests}`,
    `${prefix}${phase}_failed ${r.failed}`,
    `${prefix}${phase}_over_1s ${r.overOneSecond}`,
    `${prefix}${phase}_p50_ms ${r.p50Ms}`,
    `${prefix}${phase}_p99_ms ${r.p99Ms}`,
    `${prefix}${phase}_tasks ${r.tasks}`,
    `${prefix}${phase}_task_max_ms ${r.taskMaxMs}`,
    `${prefix}${phase}_cached ${r.cached}`,
  ]);
}
