// Unit (no Pulumi): what an update plans from, given what the cluster holds for the instance, and the job
// guard's check of a plan a program made up against the cluster's record.
import {
  deployedOf,
  findInstall,
  Found,
  historyData,
  historyMismatch,
  HistoryMissing,
  plannedFrom,
} from "../../../../components/upgrade/history";

const WHERE = { namespace: "pulp-dev", instance: "pulp" };
const ours = (component: string, version: string, replicas = 1) => ({
  name: `pulp-${component}`,
  labels: {
    "app.kubernetes.io/instance": "pulp",
    "app.kubernetes.io/component": component,
    "app.kubernetes.io/managed-by": "pulumi",
  },
  version,
  replicas,
});
const rolled = (version: string, replicas = 1): Found => ({
  deployments: ["api", "content", "worker", "web"].map((c) =>
    c === "web" ? { ...ours(c, "", replicas), version: undefined } : ours(c, version, replicas),
  ),
});

test("the history ConfigMap round-trips what was deployed", () => {
  const deployed = {
    pulpcoreVersion: "3.85.1",
    idle: true,
    pluginVersions: { rpm: "3.29.0" },
    restoredBackup: "20261125T100000Z",
  };
  expect(deployedOf(historyData(deployed))).toEqual(deployed);
  expect(historyData({ pulpcoreVersion: "3.85.1", idle: false, pluginVersions: {} })).toEqual({
    pulpcoreVersion: "3.85.1",
    idle: "false",
  });
  expect(deployedOf({ pulpcoreVersion: "3.85.1", pluginVersions: "not json" })).toEqual({
    pulpcoreVersion: "3.85.1",
    idle: false,
    pluginVersions: undefined,
    restoredBackup: undefined,
  });
  expect(deployedOf({ idle: "false" })).toBeUndefined();
});

test("the cluster's history wins over the stack outputs an older program kept", () => {
  const found = { ...rolled("3.85.1"), history: historyData({ pulpcoreVersion: "3.85.1", idle: false }) };
  expect(plannedFrom(found, WHERE, { pulpcoreVersion: "3.84.0", idle: false })).toEqual({
    deployed: {
      pulpcoreVersion: "3.85.1",
      idle: false,
      pluginVersions: undefined,
      restoredBackup: undefined,
    },
    source: "history",
  });
});

test("without a history ConfigMap: stack outputs, else the version this program rolled, else a new install", () => {
  const legacy = { pulpcoreVersion: "3.84.0", idle: false, pluginVersions: { rpm: "3.29.0" } };
  expect(plannedFrom(rolled("3.85.1"), WHERE, legacy)).toEqual({ deployed: legacy, source: "stack outputs" });
  expect(plannedFrom(rolled("3.85.1"), WHERE)).toEqual({
    deployed: { pulpcoreVersion: "3.85.1", idle: false },
    source: "deployments",
  });
  expect(plannedFrom(rolled("3.85.1", 0), WHERE).deployed.idle).toBe(true);
  expect(plannedFrom({ deployments: [] }, WHERE)).toEqual({ deployed: { idle: false }, source: "none" });
  // Redis and pulp-web come before the migration: an update refused or failed before it left them, and
  // the install is still a new one (the real restore test's refused cross-storage restore does this).
  const beforeMigration = {
    deployments: [ours("redis", ""), ours("web", "")].map((d) => ({ ...d, version: undefined })),
  };
  expect(plannedFrom(beforeMigration, WHERE)).toEqual({ deployed: { idle: false }, source: "none" });
});

test("Deployments this program did not roll are refused, with the command that records the version", () => {
  // pulp-operator's: its own labels, no version on the pod template this program writes.
  const operator: Found = {
    deployments: [
      {
        name: "pulp-api",
        labels: { "app.kubernetes.io/instance": "pulp", "app.kubernetes.io/component": "api" },
      },
    ],
  };
  expect(() => plannedFrom(operator, WHERE)).toThrow(HistoryMissing);
  expect(() => plannedFrom(operator, WHERE)).toThrow(
    "Pulp instance pulp in namespace pulp-dev is already installed (deployments pulp-api), but has no " +
      "upgrade history (configmap pulp-deployed)",
  );
  expect(() => plannedFrom(operator, WHERE)).toThrow(
    "kubectl create configmap pulp-deployed-by-hand -n pulp-dev --from-literal=pulpcoreVersion=<the pulpcore " +
      "version it runs> --from-literal=idle=false",
  );
  // Its image's tag is the likely version: the command is ready to paste once pulp status agrees.
  const tagged: Found = {
    deployments: [{ ...operator.deployments[0], image: "quay.io/pulp/pulp-minimal:3.85.1@sha256:0f" }],
  };
  expect(() => plannedFrom(tagged, WHERE)).toThrow("--from-literal=pulpcoreVersion=3.85.1 ");
  // Ours, but half rolled: two versions; the newer one's migrations ran (3.10 after 3.9, not before).
  const half: Found = {
    deployments: [ours("api", "3.10.1"), ours("content", "3.9.0"), ours("worker", "3.10.1")],
  };
  expect(() => plannedFrom(half, WHERE)).toThrow("its Deployments run different versions (3.10.1, 3.9.0)");
  expect(() => plannedFrom(half, WHERE)).toThrow("--from-literal=pulpcoreVersion=3.10.1 ");
});

test("the job guard refuses a plan the cluster does not record, and accepts the one it does", () => {
  const recorded = { ...rolled("3.85.1"), history: historyData({ pulpcoreVersion: "3.85.1", idle: false }) };
  // FIRST_INSTALL over a live install: the fail-open case of a program that kept no history.
  expect(historyMismatch(recorded, WHERE, {})).toContain(
    "Pulp instance pulp was planned as a new install, but the cluster records pulpcore 3.85.1 " +
      "(configmap pulp-deployed in namespace pulp-dev); nothing was changed.",
  );
  expect(historyMismatch(recorded, WHERE, { pulpcoreVersion: "3.84.0" })).toContain(
    "planned as an update from pulpcore 3.84.0, but the cluster records pulpcore 3.85.1",
  );
  expect(historyMismatch(recorded, WHERE, { pulpcoreVersion: "3.85.1" })).toBeUndefined();
  expect(historyMismatch(rolled("3.85.1"), WHERE, {})).toContain("cluster records pulpcore 3.85.1");
  expect(historyMismatch({ deployments: [] }, WHERE, {})).toBeUndefined();
  // An older stack's outputs, before its first update records the history.
  expect(historyMismatch(rolled("3.85.1"), WHERE, { pulpcoreVersion: "3.84.0" })).toBeUndefined();
});

test("pulp-operator's install in the namespace is refused under any instance name, with the version its image says", () => {
  // Labels and image as pulp-operator 2.0.0 sets them on a Pulp resource named `example`.
  const operator = (component: string) => ({
    name: `example-${component}`,
    labels: {
      "app.kubernetes.io/component": component,
      "app.kubernetes.io/instance": `pulp-${component}-example`,
      "app.kubernetes.io/managed-by": "pulp-operator",
      "app.kubernetes.io/part-of": "pulp",
      pulp_cr: "example",
    },
    image: "quay.io/pulp/pulp-minimal:3.121.3",
  });
  const found: Found = { deployments: ["api", "content", "worker"].map(operator) };
  const refusal = (() => {
    try {
      plannedFrom(found, WHERE);
    } catch (e) {
      return (e as Error).message;
    }
    return "not refused";
  })();
  expect(refusal).toContain(
    "pulp-operator runs a Pulp (its Pulp resource example) in namespace pulp-dev (deployments example-api, " +
      "example-content, example-worker), and instance pulp has no upgrade history (configmap pulp-deployed)",
  );
  expect(refusal).toContain(
    "kubectl create configmap pulp-deployed-by-hand -n pulp-dev --from-literal=pulpcoreVersion=3.121.3 --from-literal=idle=false",
  );
  expect(refusal).toContain(
    "To install a separate Pulp instead, give it a namespace of its own (pulp:namespace).",
  );
  // Recorded: the plan comes from the record, as for any other install.
  expect(
    plannedFrom({ ...found, history: { pulpcoreVersion: "3.121.3", idle: "false" } }, WHERE).source,
  ).toBe("history");
});

test("findInstall reads the component's history, else the one recorded by hand, and pulp-operator's Deployments too", async () => {
  const requests: string[] = [];
  const objects: Record<string, unknown> = {};
  const api = {
    server: "stand-in",
    request: async (_method: string, path: string) => {
      requests.push(path);
      return objects[path] as never;
    },
  };
  const cm = (name: string) => `/api/v1/namespaces/pulp-dev/configmaps/${name}`;
  const deployments = (selector: string) =>
    `/apis/apps/v1/namespaces/pulp-dev/deployments?labelSelector=${encodeURIComponent(selector)}`;
  expect(await findInstall(api, "pulp-dev", "pulp")).toEqual({ history: undefined, deployments: [] });

  objects[cm("pulp-deployed-by-hand")] = { data: { pulpcoreVersion: "3.84.0", idle: "false" } };
  objects[deployments("app.kubernetes.io/managed-by=pulp-operator")] = {
    items: [{ metadata: { name: "example-api", labels: { "app.kubernetes.io/component": "api" } } }],
  };
  const byHand = await findInstall(api, "pulp-dev", "pulp");
  expect(byHand.history).toEqual({ pulpcoreVersion: "3.84.0", idle: "false" });
  expect(byHand.deployments.map((d) => d.name)).toEqual(["example-api"]);

  objects[cm("pulp-deployed")] = { data: { pulpcoreVersion: "3.85.0", idle: "false" } };
  expect((await findInstall(api, "pulp-dev", "pulp")).history?.pulpcoreVersion).toBe("3.85.0");
  expect(requests).toContain(deployments("app.kubernetes.io/instance=pulp"));
});
