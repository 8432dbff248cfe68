// The scheduled drift check's command (.github/workflows/drift.yml: preview, refresh, expect no changes)
// on the real engine: quiet right after an install, failing once the cluster is changed by hand, which a
// plain `pulumi up` does not notice.
import { dropStack, freshStack, getJson, kubectl, mustPulumi, pulumi } from "../../testbed/harness";

jest.setTimeout(20 * 60 * 1000);

const STACK = "drift";
const NS = "pulp-drift";
const DRIFT_CHECK = ["preview", "--refresh", "--expect-no-changes"];

beforeAll(
  () => {
    freshStack(STACK, { namespace: NS });
    mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  },
  10 * 60 * 1000,
);

afterAll(() => {
  pulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
  dropStack(STACK, NS);
});

test("right after an install the refreshed preview finds nothing: the daily check does not cry wolf", () => {
  const run = pulumi(STACK, DRIFT_CHECK);
  expect({ code: run.code, out: run.code === 0 ? "" : run.stdout + run.stderr }).toEqual({
    code: 0,
    out: "",
  });
});

test("a Deployment scaled by hand is drift: the check fails and names it", () => {
  kubectl(["scale", "deployment", "pulp-api", "-n", NS, "--replicas=5"]);
  const run = pulumi(STACK, DRIFT_CHECK);
  expect(run.code).not.toBe(0);
  expect(run.stdout + run.stderr).toMatch(/pulp-api/);
  // pulumi.com/patchForce on the Pulp Deployments: a plain diff, not a server-side apply conflict.
  expect(run.stdout + run.stderr).toMatch(/kubernetes:apps\/v1:Deployment pulp-api update \[diff: ~spec\]/);
  expect(run.stdout + run.stderr).toMatch(/no changes were expected for preview but changes were proposed/);
});

test("a plain `pulumi up` does not see it: nothing changes and the hand-made 5 replicas stay", () => {
  // Without a refresh the engine compares the program with its state, both at 2: no step, no conflict.
  const run = pulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(run.code).toBe(0);
  expect(getJson(["deployment", "pulp-api", "-n", NS]).spec.replicas).toBe(5);
});
