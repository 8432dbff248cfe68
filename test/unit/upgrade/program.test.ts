// The program reads what its last update deployed and refuses an unsupported upgrade before creating anything.
import { stackConfig } from "../helpers/configs";
import { runWithMocks } from "../helpers/pulumiMocks";

async function runDev(deployedOutputs: Record<string, unknown>, changes: Record<string, unknown> = {}) {
  const config = { ...stackConfig("dev"), ...changes };
  let outputs: Record<string, unknown> = {};
  const run = await runWithMocks({ config, stack: "dev", deployedOutputs }, async () => {
    const mod = (await import("../../../index")) as any;
    outputs = await (mod.default ?? mod)();
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

test("an upgrade across a floor is refused with the three safe steps, and nothing is created", async () => {
  const error = await runDev({ pulpcoreVersion: "3.84.0", idle: false }).catch((e: Error) => e);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toMatch(/NEEDS DOWNTIME/);
  expect((error as Error).message).toMatch(/1\. pulumi config set pulp:idle true/);
});

test("the same upgrade runs once the install is idle", async () => {
  const { run, outputs } = await runDev({ pulpcoreVersion: "3.84.0", idle: true }, { "pulp:idle": "true" });
  expect(outputs).toMatchObject({ pulpcoreVersion: "3.85.0", idle: true });
  const deployments = run.ofType("kubernetes:apps/v1:Deployment");
  expect(deployments.map((d) => d.inputs.spec.replicas)).toEqual(deployments.map(() => 0));
  expect(run.ofType("kubernetes:batch/v1:Job")).toHaveLength(1);
});
