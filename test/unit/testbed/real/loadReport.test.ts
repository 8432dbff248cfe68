// Unit: the figures the real upgrade test and bench:upgrade report from the load generator's records.
import {
  LoadRecord,
  loadReport,
  longestWithoutSuccess,
  percentile,
  reportLines,
} from "../../../../testbed/real/loadReport";

const at = (t: number, ms: number, ok = true, kind: LoadRecord["kind"] = "status"): LoadRecord => ({
  t,
  kind,
  ms,
  ok,
  ...(ok ? {} : { error: "HTTP 502" }),
});

test("percentile is nearest-rank and 0 for no values", () => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  expect(percentile(values, 50)).toBe(50);
  expect(percentile(values, 99)).toBe(99);
  expect(percentile([7], 99)).toBe(7);
  expect(percentile([], 50)).toBe(0);
});

test("records fall into phases by start time, with failures and slow requests counted per phase", () => {
  const records = [at(0, 10), at(5, 20), at(10, 1500), at(12, 30, false), at(20, 40)];
  const report = loadReport(records, { before: [0, 10], during: [10, 20], after: [20, 30] });
  expect(report.before).toMatchObject({ requests: 2, failed: 0, overOneSecond: 0, p50Ms: 10, p99Ms: 20 });
  expect(report.during).toMatchObject({ requests: 2, failed: 1, overOneSecond: 1, p99Ms: 1500 });
  expect(report.during.failures).toEqual([at(12, 30, false)]);
  expect(report.after).toMatchObject({ requests: 1, failed: 0 });
});

test("a failed task counts as a failure but its duration is not a request latency", () => {
  const records = [at(1, 10), at(2, 90_000, false, "task")];
  const report = loadReport(records, { during: [0, 10] });
  expect(report.during).toMatchObject({
    requests: 1,
    failed: 1,
    overOneSecond: 0,
    p99Ms: 10,
    tasks: 1,
    taskMaxMs: 90_000,
  });
});

test("report lines carry the prefix and one figure each", () => {
  const lines = reportLines("rolling_", loadReport([at(1, 10)], { during: [0, 10] }));
  expect(lines).toEqual([
    "rolling_during_requests 1",
    "rolling_during_failed 0",
    "rolling_during_over_1s 0",
    "rolling_during_p50_ms 10",
    "rolling_during_p99_ms 10",
    "rolling_during_tasks 0",
    "rolling_during_task_max_ms 0",
    "rolling_during_cached 0",
  ]);
});

test("answers from pulp-web's content cache are counted per phase, and succeed like any other", () => {
  const records = [at(1, 10, true, "content"), { ...at(2, 3, true, "content"), cached: true }, at(12, 5)];
  const report = loadReport(records, { before: [0, 10], after: [10, 20] });
  expect(report.before).toMatchObject({ requests: 2, failed: 0, cached: 1 });
  expect(report.after).toMatchObject({ requests: 1, cached: 0 });
});

test("the longest time without a success runs from one success's end to the next, failures and tasks aside", () => {
  const records = [
    at(0, 5),
    at(10, 5, false),
    at(20, 5, false),
    at(40, 10),
    at(45, 100_000, true, "task"),
    at(60, 2),
  ];
  expect(longestWithoutSuccess(records, 0, 70)).toEqual({ ms: 45, from: 5, to: 50 });
  // Never recovers: the window ends at the phase's end.
  expect(longestWithoutSuccess([at(0, 5)], 0, 100)).toEqual({ ms: 95, from: 5, to: 100 });
});
