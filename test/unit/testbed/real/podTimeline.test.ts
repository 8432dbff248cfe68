// Unit: how a failed load request is reported beside the pod changes around it.
import { failuresInContext } from "../../../../testbed/real/podTimeline";

const T = Date.parse("2026-11-24T16:21:23.000Z");

test("a failure is listed with the pod events from 15 s before it to 5 s after it ended, and no others", () => {
  const failure = { t: T, kind: "task-poll" as const, ms: 10_000, ok: false, error: "no answer in 10000 ms" };
  const events = [
    { t: T - 20_000, line: "MODIFIED pulp-api-old Running ready=True deleting= ip=10.77.0.5" },
    {
      t: T - 3_000,
      line: "MODIFIED pulp-api-old Running ready=False deleting=2026-11-24T16:21:20Z ip=10.77.0.5",
    },
    {
      t: T + 14_000,
      line: "DELETED pulp-api-old Running ready=False deleting=2026-11-24T16:21:20Z ip=10.77.0.5",
    },
    { t: T + 16_000, line: "ADDED pulp-web-new Pending ready= deleting= ip=" },
  ];
  expect(failuresInContext([failure], events)).toEqual([
    "16:21:23.000 task-poll failed after 10000 ms: no answer in 10000 ms",
    "  16:21:20.000 MODIFIED pulp-api-old Running ready=False deleting=2026-11-24T16:21:20Z ip=10.77.0.5",
    "  16:21:37.000 DELETED pulp-api-old Running ready=False deleting=2026-11-24T16:21:20Z ip=10.77.0.5",
  ]);
  expect(failuresInContext([], events)).toEqual([]);
});
