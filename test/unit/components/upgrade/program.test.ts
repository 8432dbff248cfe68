// The program reads what its last update deployed and plans the upgrade from it: stop-the-world when a
// migration the target ships needs every older process gone, rolling otherwise.
import { kwokStackConfig } from "../../helpers/configs";
import { TYPES } from "../../../../components/contract";
import * as pulumi from "@pulumi/pulumi";
import { promiseOf, runWithMocks } from "../../helpers/pulumiMocks";
import { ConfigError } from "../../../../components/config/problems";
import { UpgradeRefused } from "../../../../components/upgrade/plan";
import { Found, historyData, HistoryMissing } from "../../../../components/upgrade/history";
import { JobsRunning } from "../../../../components/migration/jobGuard";

async function runDev(
  deployedOutputs: Record<string, unknown>,
  changes: Record<string, unknown> = {},
  cluster?: Found,
) {
  // The kwok scenarios' install (pulpcore 3.85.0 tags): upgrade plans depend only on versions.
  const config = { ...kwokStackConfig(), ...changes };
  const outputs: Record<string, unknown> = {};
  const run = await runWithMocks({ config, stack: "dev", deployedOutputs, cluster }, async () => {
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

// 3.87.0 ships core 0140, whose RequireVersion needs 3.85: 3.84.0's processes must be gone.
const GUARDED = { "pulp:image": "quay.io/pulp/pulp-minimal:3.87.0" };

test("an upgrade across a guard stops the old release, then migrates, then starts the new one", async () => {
  const { run } = await runDev({ pulpcoreVersion: "3.84.0", idle: false }, GUARDED);
  const [step] = run.ofType(TYPES.stopTheWorldStep);
  expect(step.name).toBe("pulp-stop-the-world-3.84.0-to-3.87.0");
  expect(step.inputs).toMatchObject({
    namespace: "pulp-dev",
    deployments: ["pulp-api", "pulp-content", "pulp-worker"],
    from: "3.84.0",
    to: "3.87.0",
    floor: "core 3.85.0",
    migrations: "core 0140_require_appstatus_zdu (3.87.0)",
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

// A worker runs only tasks from processes no newer than itself (pulpcore tasking/worker.py is_compatible):
// an upgrade rolls the workers before the api and content, a patch downgrade after them. No version change
// (a settings change) and the start after a stop-the-world roll everything at once.
test.each([
  [
    "an upgrade",
    "3.85.0",
    "3.85.1",
    { apiAfterWorker: true, contentAfterWorker: true, workerAfterBoth: false },
  ],
  [
    "a patch downgrade",
    "3.85.1",
    "3.85.0",
    { apiAfterWorker: false, contentAfterWorker: false, workerAfterBoth: true },
  ],
  [
    "no version change",
    "3.85.0",
    "3.85.0",
    { apiAfterWorker: false, contentAfterWorker: false, workerAfterBoth: false },
  ],
  [
    "a stop-the-world",
    "3.84.0",
    "3.87.0",
    { apiAfterWorker: false, contentAfterWorker: false, workerAfterBoth: false },
  ],
])("roll order for %s (%s -> %s)", async (_what, from, to, expected) => {
  const { run } = await runDev(
    { pulpcoreVersion: from, idle: false },
    { "pulp:image": `quay.io/pulp/pulp-minimal:${to}` },
  );
  const urn = (name: string) => run.k8s("Deployment", name).urn;
  const on = (name: string) => [...run.dependenciesOf(run.k8s("Deployment", name))];
  expect({
    apiAfterWorker: on("pulp-api").includes(urn("pulp-worker")),
    contentAfterWorker: on("pulp-content").includes(urn("pulp-worker")),
    workerAfterBoth: [urn("pulp-api"), urn("pulp-content")].every((u) => on("pulp-worker").includes(u)),
  }).toEqual(expected);
});

test("the stop waits for the TTLs the migration Job's own settings give", async () => {
  const { run } = await runDev(
    { pulpcoreVersion: "3.84.0", idle: false },
    { ...GUARDED, "pulp:extraSettings": { WORKER_TTL: 300, API_APP_TTL: 90 } },
  );
  const [step] = run.ofType(TYPES.stopTheWorldStep);
  expect(step.inputs.heartbeatTtlSeconds).toBe(300);
});

test("plugin versions: read back next time, and a new set re-runs the migration Job under the same tag", async () => {
  const plugins = { ansible: "0.28.0", rpm: "3.29.1" };
  const first = await runDev({ pulpcoreVersion: "3.85.0", idle: false }, { "pulp:plugins": plugins });
  expect(first.outputs).toMatchObject({ pluginVersions: plugins });
  const jobName = (r: typeof first) => r.run.ofType("kubernetes:batch/v1:Job")[0].inputs.metadata.name;
  const same = await runDev(
    { pulpcoreVersion: "3.85.0", idle: false, pluginVersions: plugins },
    { "pulp:plugins": plugins },
  );
  const newer = { ...plugins, rpm: "3.29.2" };
  const changed = await runDev(
    { pulpcoreVersion: "3.85.0", idle: false, pluginVersions: plugins },
    { "pulp:plugins": newer },
  );
  expect(jobName(same)).toBe(jobName(first));
  expect(jobName(changed)).not.toBe(jobName(first));
});

test("a plugin guard alone stops the world under an unchanged pulpcore tag (digest-pinned image)", async () => {
  const image = `quay.io/pulp/pulp-minimal@sha256:${"c".repeat(64)}`;
  const { run } = await runDev(
    { pulpcoreVersion: "3.84.0", idle: false, pluginVersions: { ansible: "0.25.0" } },
    { "pulp:image": image, "pulp:pulpcoreVersion": "3.84.0", "pulp:plugins": { ansible: "0.27.0" } },
  );
  const [step] = run.ofType(TYPES.stopTheWorldStep);
  expect(step.inputs).toMatchObject({ floor: "ansible 0.26.0", from: "3.84.0", to: "3.84.0" });
});

test("targets without pulpcore's pre-migrate AppStatus cleanup get it in the Job, before migrate", async () => {
  const script = async (image: string) => {
    const { run } = await runDev({ pulpcoreVersion: "3.87.1", idle: false }, { "pulp:image": image });
    return run.ofType("kubernetes:batch/v1:Job")[0].inputs.spec.template.spec.containers[0]
      .command[2] as string;
  };
  // preMigrate.py (components/migration) deletes the rows when given the flag, before migrate.
  const old = await script("quay.io/pulp/pulp-minimal:3.89.2");
  expect(old).toContain("DELETE FROM core_appstatus WHERE last_heartbeat < now() - ttl");
  expect(old).toMatch(
    / --clear-stale-appstatus <<'PRE_MIGRATE'\n[\s\S]*\nPRE_MIGRATE\n"\$py" - <<'MIGRATE'\n/,
  );
  expect(await script("quay.io/pulp/pulp-minimal:3.91.0")).not.toContain("--clear-stale-appstatus <<");
});

test("the same upgrade runs once the install is idle", async () => {
  const { run, outputs } = await runDev(
    { pulpcoreVersion: "3.84.0", idle: true },
    { ...GUARDED, "pulp:idle": "true" },
  );
  expect(outputs).toMatchObject({ pulpcoreVersion: "3.87.0", idle: true });
  const deployments = run.ofType("kubernetes:apps/v1:Deployment");
  expect(deployments.map((d) => d.inputs.spec.replicas)).toEqual(deployments.map(() => 0));
  // One migration Job, which also sets the admin password (components/migration/migrate.py).
  expect(run.ofType("kubernetes:batch/v1:Job").map((j) => j.inputs.metadata.name)).toEqual([
    expect.stringMatching(/^pulp-migrate-[0-9a-f]{8}$/),
  ]);
});

test("the program's refusals are RunErrors to Pulumi's runtime (printed without a stack trace)", () => {
  expect(pulumi.RunError.isInstance(new UpgradeRefused("x"))).toBe(true);
  expect(pulumi.RunError.isInstance(new ConfigError([]))).toBe(true);
  expect(pulumi.RunError.isInstance(new HistoryMissing("x"))).toBe(true);
});

// What the cluster holds (upgrade/history.ts), as the stand-in of runWithMocks reads it.
const LIVE_API = {
  name: "pulp-api",
  labels: {
    "app.kubernetes.io/instance": "pulp",
    "app.kubernetes.io/component": "api",
    "app.kubernetes.io/managed-by": "pulumi",
  },
  version: "3.84.0",
  replicas: 1,
};

test("the plan comes from the history in the cluster: a program that exports nothing still stops the world", async () => {
  const cluster: Found = {
    history: historyData({ pulpcoreVersion: "3.84.0", idle: false }),
    deployments: [LIVE_API],
  };
  const { run } = await runDev({}, GUARDED, cluster);
  expect(run.ofType(TYPES.stopTheWorldStep).map((s) => s.name)).toEqual([
    "pulp-stop-the-world-3.84.0-to-3.87.0",
  ]);
  // Pulp.history checked the plan and the Jobs before anything was registered, through the cluster the
  // default provider resolves: no job guard (a dynamic resource, a process of its own) is needed.
  expect(run.ofType("pulumi-nodejs:dynamic/pulp:JobGuard")).toEqual([]);
  // The history is written once the Deployments have rolled out, and kept on destroy.
  const history = run.k8s("ConfigMap", "pulp-deployed");
  expect(history.inputs.data).toEqual({
    pulpcoreVersion: "3.87.0",
    idle: "false",
    artifactStorage: "claim pulp-artifacts",
  });
  expect(history.retainOnDelete).toBe(true);
  for (const name of ["pulp-api", "pulp-content", "pulp-worker"]) {
    expect(run.dependenciesOf(history)).toContain(run.k8s("Deployment", name).urn);
  }
});

test("an install this program did not roll and nothing records is refused before anything is created", async () => {
  const foreign = {
    ...LIVE_API,
    labels: { "app.kubernetes.io/instance": "pulp", "app.kubernetes.io/component": "api" },
    version: undefined,
  };
  let error: unknown;
  const { run } = await runDev({}, {}, { deployments: [foreign] }).catch((e) => {
    error = e;
    return { run: undefined };
  });
  expect(run).toBeUndefined();
  expect(error).toBeInstanceOf(HistoryMissing);
  expect(String(error)).toContain(
    "kubectl create configmap pulp-deployed-by-hand -n pulp-dev --from-literal=pulpcoreVersion=",
  );
});

test("a migration Job of an earlier `up` still running is refused before anything is registered, naming the wait", async () => {
  const cluster: Found = {
    history: historyData({ pulpcoreVersion: "3.85.0", idle: false }),
    deployments: [{ ...LIVE_API, version: "3.85.0" }],
    jobs: [
      {
        metadata: { name: "pulp-migrate-0a1b2c3d", labels: { "app.kubernetes.io/component": "migration" } },
        status: { startTime: "2026-11-27T08:00:00Z", active: 1 },
      },
    ],
  };
  let error: unknown;
  const { run } = await runDev({}, { "pulp:image": "quay.io/pulp/pulp-minimal:3.85.1" }, cluster).catch(
    (e) => {
      error = e;
      return { run: undefined };
    },
  );
  expect(run).toBeUndefined();
  expect(error).toBeInstanceOf(JobsRunning);
  expect(String(error)).toContain(
    "kubectl wait --for=condition=complete job/pulp-migrate-0a1b2c3d -n pulp-dev --timeout=",
  );
  // Finished, it is no longer in the way.
  cluster.jobs![0].status = { conditions: [{ type: "Complete", status: "True" }] };
  expect((await runDev({}, { "pulp:image": "quay.io/pulp/pulp-minimal:3.85.1" }, cluster)).run).toBeDefined();
});
