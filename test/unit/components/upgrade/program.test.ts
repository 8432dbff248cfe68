// The program reads what its last update deployed and plans the upgrade from it: stop-the-world across a
// RequireVersion floor, rolling otherwise.
import { kwokStackConfig } from "../../helpers/configs";
import { TYPES } from "../../../../components/contract";
import * as pulumi from "@pulumi/pulumi";
import { promiseOf, runWithMocks } from "../../helpers/pulumiMocks";

async function runDev(deployedOutputs: Record<string, unknown>, changes: Record<string, unknown> = {}) {
  // The kwok scenarios' install (pulpcore 3.85.0 tags): upgrade plans depend only on versions.
  const config = { ...kwokStackConfig(), ...changes };
  const outputs: Record<string, unknown> = {};
  const run = await runWithMocks({ config, stack: "dev", deployedOutputs }, async () => {
    const mod = (await import("../../../../index")) as any;
    const raw: Record<string, unknown> = await (mod.default ?? mod)();
    // The read-back outputs resolve once the Deployments have rolled out: under mocks, at once.
    for (const [key, value] of Object.entries(raw)) {
      outputs[key] = pulumi.Output.isInstance(value) ? await promiseOf(value) : value;
    }
  });
  return { run, outputs };
}

test("the outputs the next update reads back", async () => {
  expect((await runDev({})).outputs).toMatchObject({ pulpcoreVersion: "3.85.0", idle: false });
  expect((await runDev({ pulpcoreVersion: "3.85.0", idle: false })).outputs).toMatchObject({
    pulpcoreVersion: "3.85.0",
    idle: false,
  });
});

test("an upgrade across a floor stops the old release, then migrates, then starts the new one", async () => {
  const { run } = await runDev({ pulpcoreVersion: "3.84.0", idle: false });
  const [step] = run.ofType(TYPES.stopTheWorldStep);
  expect(step.name).toBe("pulp-stop-the-world-3.84.0-to-3.85.0");
  expect(step.inputs).toMatchObject({
    namespace: "pulp-dev",
    deployments: ["pulp-api", "pulp-content", "pulp-worker"],
    from: "3.84.0",
    to: "3.85.0",
    floor: "3.85.0",
    heartbeatTtlSeconds: 120,
    // the longest grace period (the dev stack gives workers 600 s to finish a task) plus a margin
    podsGoneTimeoutSeconds: 660,
  });
  const job = run.ofType("kubernetes:batch/v1:Job")[0];
  expect(run.dependenciesOf(job)).toContain(step.urn);
  for (const name of step.inputs.deployments) {
    expect(run.dependenciesOf(run.k8s("Deployment", name))).toContain(job.urn);
  }
  // Only Pulp's own processes are stopped: pulp-web and Redis do not heartbeat.
  const stopped = run.ofType("kubernetes:apps/v1:Deployment").filter((d) => d.inputs.metadata.annotations);
  expect(stopped.map((d) => d.inputs.metadata.name).sort()).toEqual(step.inputs.deployments);
});

test("a rolling upgrade has no stop-the-world step", async () => {
  const { run } = await runDev(
    { pulpcoreVersion: "3.85.0", idle: false },
    { "pulp:image": "quay.io/pulp/pulp-minimal:3.85.1" },
  );
  expect(run.ofType(TYPES.stopTheWorldStep)).toHaveLength(0);
  expect(run.ofType(TYPES.stopTheWorld)).toHaveLength(0);
});

test("the same upgrade runs once the install is idle", async () => {
  const { run, outputs } = await runDev({ pulpcoreVersion: "3.84.0", idle: true }, { "pulp:idle": "true" });
  expect(outputs).toMatchObject({ pulpcoreVersion: "3.85.0", idle: true });
  const deployments = run.ofType("kubernetes:apps/v1:Deployment");
  expect(deployments.map((d) => d.inputs.spec.replicas)).toEqual(deployments.map(() => 0));
  expect(run.ofType("kubernetes:batch/v1:Job")).toHaveLength(1);
});
