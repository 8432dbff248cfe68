// Upgrades on the embedded cluster with the real engine: 3.84.0 -> 3.87.0, whose core 0140 needs 3.85 (stop-the-world,
// a failed one reverted), rolling with slow readiness, a rollout that never becomes ready, and the
// maintenance switch. Ordered: each test starts from the state the previous one left.
import * as fs from "fs";
import * as path from "path";
import { STATE } from "../../testbed/local/environment";
import {
  dropStack,
  failingMigration,
  freshStack,
  getJson,
  items,
  kubectl,
  mustPulumi,
  pulumi,
  readiness,
  revisions,
  writeStackConfig,
} from "../../testbed/harness";
import { rolloutOrder, startSampler, stopSamplers } from "../../testbed/bench/sampler";
import { HEARTBEAT_TTL_SECONDS } from "../../components/upgrade/plan";
import { UPGRADE_REFUSED_MARKER } from "../../components/contract";

jest.setTimeout(20 * 60 * 1000);

const STACK = "e2e-upgrade";
const NS = "pulp-e2e-upgrade";
const ARTIFACTS = path.join(STATE, "e2e-upgrade");
const SERVICES = ["pulp-api", "pulp-content"];
const TTL_MS = Math.max(...Object.values(HEARTBEAT_TTL_SECONDS)) * 1000;
const timings: Record<string, number> = {};
const image = (version: string) => `quay.io/pulp/pulp-minimal:${version}`;
const BASE = { namespace: NS, web: { enabled: false } };

const stopTheWorldSteps = () =>
  (JSON.parse(mustPulumi(STACK, ["stack", "export"]).stdout).deployment.resources ?? []).filter((r: any) =>
    r.urn.includes("pulp:upgrade:StopTheWorld$"),
  );
const replicas = () =>
  Object.fromEntries(items("deployments", NS).map((d) => [d.metadata.name, d.spec.replicas]));
const available = () =>
  Object.fromEntries(items("deployments", NS).map((d) => [d.metadata.name, d.status.availableReplicas ?? 0]));

beforeAll(
  () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    freshStack(STACK, { ...BASE, image: image("3.84.0") });
    mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  },
  10 * 60 * 1000,
);

afterAll(() => {
  stopSamplers();
  fs.writeFileSync(path.join(ARTIFACTS, "timings.json"), JSON.stringify(timings, null, 2));
  process.stdout.write(`e2e upgrade timings (s): ${JSON.stringify(timings)}\n`);
  pulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
  dropStack(STACK, NS);
});

test("a failed stop-the-world migration fails `up` with the Job's log tail; reverting the image restarts the old release", () => {
  const before = replicas();
  writeStackConfig(STACK, {
    ...BASE,
    image: image("3.87.0"),
    migration: failingMigration(
      "django.db.utils.OperationalError: could not obtain lock on relation core_task",
    ),
  });
  const failed = pulumi(STACK, ["up", "--yes", "--skip-preview"]);
  timings.failedStopTheWorldUp = failed.seconds;
  expect(failed.code).not.toBe(0);
  // The migration's own error, from the container's termination message, is in what `up` printed.
  expect(failed.stdout + failed.stderr).toMatch(/could not obtain lock on relation core_task/);
  // By design the old release is stopped: nothing old may run while 3.87.0's migrations do.
  expect(replicas()).toMatchObject({ "pulp-api": 0, "pulp-content": 0, "pulp-worker": 0 });
  expect(revisions(NS)["pulp-api"]).toBe("rev-1");

  // Going back: the config names 3.84.0 again. The Deployments have no change of their own; the
  // stop-the-world step, now gone from the program, scales back what it stopped.
  writeStackConfig(STACK, { ...BASE, image: image("3.84.0") });
  const reverted = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  timings.revertUp = reverted.seconds;
  expect(replicas()).toEqual(before);
  expect(available()).toEqual(before);
  expect(stopTheWorldSteps()).toEqual([]);
  expect(pulumi(STACK, ["preview", "--expect-no-changes"]).code).toBe(0);
});

test("an upgrade across a floor: the preview says downtime; the zero-ready window is the TTL plus migration plus start-up", async () => {
  writeStackConfig(STACK, { ...BASE, image: image("3.87.0") });
  const preview = mustPulumi(STACK, ["preview", "--json"]);
  fs.writeFileSync(path.join(ARTIFACTS, "preview-stop-the-world.json"), preview.stdout);
  const { diagnostics, steps } = JSON.parse(preview.stdout) as {
    diagnostics: { message: string; severity: string }[];
    steps: { op: string; urn: string }[];
  };
  expect(diagnostics.filter((d) => d.severity === "warning").map((d) => d.message)).toEqual([
    // The image is a tag without a digest (runtime review B14).
    expect.stringMatching(
      /^(warning: )?pulp:image quay\.io\/pulp\/pulp-minimal:3\.87\.0 is pinned by tag only/,
    ),
    expect.stringMatching(
      /^(warning: )?Upgrade plan \[stop-the-world\]: upgrade 3\.84\.0 -> 3\.87\.0 NEEDS DOWNTIME: core 0140_require_appstatus_zdu \(in 3\.87\.0\) refuses to run .* about 120 s plus/,
    ),
  ]);
  expect(steps.filter((s) => s.urn.includes("StopTheWorld")).map((s) => s.op)).toEqual(["create", "create"]);

  const out = path.join(ARTIFACTS, "stop-the-world.jsonl");
  const sampler = startSampler(NS, SERVICES, out);
  const up = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  const samples = await sampler.stop();
  timings.stopTheWorldUp = up.seconds;

  const [step] = stopTheWorldSteps().filter((r: any) => r.custom);
  const { lastPodGoneAt, heartbeatsExpiredAt, stopped } = step.outputs;
  const [job] = items("jobs", NS);
  const jobStarted = Date.parse(job.status.startTime);
  const migrated = Date.parse(job.status.completionTime);
  // The migration started only once every old pod was gone and the TTL had passed since.
  expect(Date.parse(heartbeatsExpiredAt) - Date.parse(lastPodGoneAt)).toBeGreaterThanOrEqual(TTL_MS);
  expect(Date.parse(job.metadata.creationTimestamp)).toBeGreaterThanOrEqual(
    Date.parse(heartbeatsExpiredAt) - 1000,
  );
  expect(stopped.map((s: any) => s.name).sort()).toEqual(["pulp-api", "pulp-content", "pulp-worker"]);

  const firstNewReady = Math.min(
    ...items("pods", NS)
      .filter((p) => p.spec.containers[0].image === image("3.87.0") && p.metadata.labels["pod-template-hash"])
      .map((p) => Date.parse(p.status.conditions.find((c: any) => c.type === "Ready").lastTransitionTime)),
  );
  // The window's parts, from the API server's own timestamps (whole seconds) and the step's outputs.
  const parts = {
    ttlMs: Date.parse(heartbeatsExpiredAt) - Date.parse(lastPodGoneAt),
    migrationMs: migrated - jobStarted,
    startUpMs: firstNewReady - migrated,
  };
  timings.stopTheWorldZeroReadySeconds = Math.max(...Object.values(samples.longestGapMs)) / 1000;
  for (const service of SERVICES) {
    // Endpoints drop when the old pods start terminating; the step waits until they are gone.
    const stoppingMs = Date.parse(lastPodGoneAt) - samples.longestGapStart[service]!;
    const bound = stoppingMs + parts.ttlMs + parts.migrationMs + parts.startUpMs;
    process.stdout.write(
      `stop-the-world ${service}: zero ready for ${samples.longestGapMs[service]} ms; stopping ${stoppingMs} + ` +
        `${JSON.stringify(parts)} = ${bound} ms; ${samples.count} samples\n`,
    );
    // Downtime really happened (every old process stopped), and nothing idles between the phases: the
    // Job starts as the TTL ends, the new pods as it completes (3 s for whole-second timestamps).
    expect(samples.longestGapMs[service]).toBeGreaterThanOrEqual(TTL_MS);
    expect(samples.longestGapMs[service]).toBeLessThanOrEqual(bound + 3000);
  }
  expect(available()).toEqual(replicas());
  expect(replicas()).toMatchObject({ "pulp-api": 2, "pulp-content": 2, "pulp-worker": 2 });

  // The next update removes the finished step and touches nothing else.
  const before = revisions(NS);
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(stopTheWorldSteps()).toEqual([]);
  expect(revisions(NS)).toEqual(before);
  expect(replicas()).toMatchObject({ "pulp-api": 2, "pulp-content": 2, "pulp-worker": 2 });
});

test("a rolling upgrade with slow readiness: old pods go only after new ones are ready, and endpoints never drop", async () => {
  writeStackConfig(STACK, {
    ...BASE,
    image: image("3.87.1"),
    api: readiness("slow"),
    content: readiness("slow"),
  });
  const out = path.join(ARTIFACTS, "rolling-slow.jsonl");
  const sampler = startSampler(NS, SERVICES, out);
  const up = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  const upReturned = Date.now();
  // pulumi-kubernetes (4.25.0, and its master) can return from a Deployment update before the controller
  // has observed it: its await takes a cached event of the old generation as "reconciled", then accepts
  // the new generation with the old status (seen in CI: checkpoint generation 6, observedGeneration 5).
  // The order checked here is the rollout's, so it is sampled until the rollout is done, not until `up`
  // returns; whether `up` returned early is printed.
  for (const d of ["pulp-api", "pulp-content"]) {
    kubectl(["-n", NS, "rollout", "status", `deployment/${d}`, "--timeout=120s"]);
  }
  const samples = await sampler.stop();
  timings.slowRollingUp = up.seconds;
  process.stdout.write(`slow rolling upgrade: ${JSON.stringify(samples)}\n`);

  for (const service of SERVICES)
    expect({ service, min: samples.minReady[service] > 0 }).toEqual({ service, min: true });
  const text = fs.readFileSync(out, "utf8");
  const started = (JSON.parse(text.split("\n")[0]) as { t: number }).t;
  let lastReady = 0;
  for (const component of ["api", "content"]) {
    const order = rolloutOrder(text, component);
    expect(order.oldRemoved).toHaveLength(2);
    expect(order.newReady).toHaveLength(2);
    expect(order.violations).toEqual([]);
    lastReady = Math.max(lastReady, ...order.newReady);
  }
  process.stdout.write(
    `slow rolling upgrade: the last new pod was Ready ${(lastReady - upReturned) / 1000} s after up returned (> 0: up returned early)\n`,
  );
  // Slow means slow: the rollout took at least one readiness delay per new pod.
  expect(lastReady - started).toBeGreaterThan(8000);
});

test("a rollout whose pods never become ready fails `up` naming the pods and why; the old pods keep serving", async () => {
  const before = revisions(NS);
  writeStackConfig(STACK, {
    ...BASE,
    image: image("3.87.1"),
    api: readiness("slow"),
    content: { ...readiness("never"), progressDeadlineSeconds: 20 },
  });
  const sampler = startSampler(NS, SERVICES, path.join(ARTIFACTS, "never-ready.jsonl"));
  const failed = pulumi(STACK, ["up", "--yes", "--skip-preview"]);
  const samples = await sampler.stop();
  timings.neverReadyUp = failed.seconds;
  const printed = failed.stdout + failed.stderr;
  fs.writeFileSync(path.join(ARTIFACTS, "never-ready-up.txt"), printed);

  expect(failed.code).not.toBe(0);
  const stuck = items("pods", NS).filter(
    (p) => p.metadata.annotations?.["pulp-e2e/readiness"] === "never" && !p.metadata.deletionTimestamp,
  );
  expect(stuck.length).toBeGreaterThan(0);
  for (const pod of stuck) expect(printed).toContain(pod.metadata.name);
  expect(printed).toMatch(/containers with unready status: \[content\]/);
  expect(printed).toMatch(/ProgressDeadlineExceeded|progress deadline/i);
  for (const service of SERVICES)
    expect({ service, min: samples.minReady[service] > 0 }).toEqual({ service, min: true });
  const content = getJson(["deployment", "pulp-content", "-n", NS]);
  expect(content.status.availableReplicas).toBe(2); // the old ReplicaSet

  // The fix is another update; the stuck ReplicaSet is replaced.
  writeStackConfig(STACK, {
    ...BASE,
    image: image("3.87.1"),
    api: readiness("slow"),
    content: readiness("slow"),
  });
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(available()).toEqual(replicas());
  expect(revisions(NS)["pulp-content"]).not.toBe(before["pulp-content"]);
});

test("maintenance stops the workers only: api and content keep serving and do not roll", async () => {
  const current = { ...BASE, image: image("3.87.1"), api: readiness("slow"), content: readiness("slow") };
  const before = revisions(NS);
  writeStackConfig(STACK, { ...current, maintenance: true });
  const sampler = startSampler(NS, SERVICES, path.join(ARTIFACTS, "maintenance.jsonl"));
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  const samples = await sampler.stop();
  expect(replicas()).toMatchObject({ "pulp-api": 2, "pulp-content": 2, "pulp-worker": 0 });
  const workers = () =>
    items("pods", NS).filter((p) => p.metadata.labels["app.kubernetes.io/component"] === "worker");
  for (let i = 0; i < 30 && workers().length > 0; i++) await new Promise((r) => setTimeout(r, 1000));
  expect(workers()).toEqual([]);
  for (const service of SERVICES)
    expect({ service, min: samples.minReady[service] > 0 }).toEqual({ service, min: true });
  expect(revisions(NS)).toEqual(before);

  writeStackConfig(STACK, current);
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(replicas()).toMatchObject({ "pulp-worker": 2 });
  expect(revisions(NS)).toEqual(before);
});

test("an upgrade over core's squash purge is refused in preview, naming the release to stop at; nothing changes", () => {
  const stack = "e2e-waypoint";
  const namespace = "pulp-e2e-waypoint";
  freshStack(stack, { ...BASE, namespace, image: image("3.60.0") });
  try {
    mustPulumi(stack, ["up", "--yes", "--skip-preview"]);
    const before = revisions(namespace);
    writeStackConfig(stack, { ...BASE, namespace, image: image("3.85.0") });
    const preview = pulumi(stack, ["preview", "--diff"]);
    expect(preview.code).not.toBe(0);
    const output = `${preview.stdout}${preview.stderr}`;
    expect(output).toContain(UPGRADE_REFUSED_MARKER);
    expect(output).toMatch(/Stop at core 3\.84\.\d+ first/);
    const up = pulumi(stack, ["up", "--yes", "--skip-preview"]);
    expect(up.code).not.toBe(0);
    expect(revisions(namespace)).toEqual(before);
  } finally {
    pulumi(stack, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
    dropStack(stack, namespace);
  }
});
