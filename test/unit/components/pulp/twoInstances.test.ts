// Unit (Pulumi mocks): two Pulp instances in one program, each its own name and namespace. The mocks
// reject a duplicate URN as the engine does; each instance gets its own Kubernetes names, job guard and
// history ConfigMap, so an update of one plans from its own record only.
import { parseConfig } from "../../../../components/config/parse";
import { Pulp } from "../../../../components/pulp";
import { MINIMAL } from "../../helpers/configs";
import { MockRun, runWithMocks } from "../../helpers/pulumiMocks";

let run: MockRun;

beforeAll(async () => {
  run = await runWithMocks({ config: {} }, async () => {
    for (const [instance, namespace] of [
      ["pulp-a", "team-a"],
      ["pulp-b", "team-b"],
    ]) {
      const config = parseConfig({
        ...MINIMAL,
        instanceName: instance,
        namespace,
        contentOrigin: `https://${instance}.example.com`,
      });
      await Pulp.create(instance, { config, secrets: {}, cluster: {} });
    }
  });
});

test("two instances register without a URN or object name in common", () => {
  expect(run.errors).toEqual([]);
  const objects = run.resources
    .filter((r) => r.type.startsWith("kubernetes:"))
    .map((r) => `${r.type} ${r.inputs.metadata?.namespace ?? ""}/${r.inputs.metadata?.name}`);
  expect(new Set(objects).size).toBe(objects.length);
  for (const ns of ["team-a", "team-b"]) {
    expect(objects.filter((o) => o.includes(` ${ns}/`)).length).toBeGreaterThan(10); // a minimal install: 17 objects
  }
});

test("each instance keeps its own history and checks its own plan", () => {
  const histories = run
    .ofType("kubernetes:core/v1:ConfigMap")
    .filter((c) => c.inputs.metadata.name.endsWith("-deployed"))
    .map((c) => `${c.inputs.metadata.namespace}/${c.inputs.metadata.name}`);
  expect(histories.sort()).toEqual(["team-a/pulp-a-deployed", "team-b/pulp-b-deployed"]);
  const guards = run
    .ofType("pulumi-nodejs:dynamic/pulp:JobGuard")
    .map((g) => `${g.inputs.namespace}/${g.inputs.instance}`);
  expect(guards.sort()).toEqual(["team-a/pulp-a", "team-b/pulp-b"]);
});
