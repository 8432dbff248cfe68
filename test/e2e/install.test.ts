// A whole install on the embedded cluster with the real engine: fresh up, no-op, settings change,
// replicas change, preview JSON, destroy. Ordered: each test builds on the state the previous one left.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { STATE } from "../../testbed/local/environment";
import {
  dropStack,
  failingMigration,
  freshStack,
  revisions,
  getJson,
  unfinishedRollouts,
  isReady,
  items,
  KWOK_STACK_FILE,
  kubectl,
  kubectlTry,
  mustPulumi,
  pulumi,
  readiness,
  schedulable,
  schedulingFailures,
  waitUntil,
  writeStackConfig,
} from "../../testbed/harness";
import { startSampler, stopSamplers } from "../../testbed/bench/sampler";

// Each test runs the real CLI against the cluster; an update can take minutes on a busy machine.
jest.setTimeout(20 * 60 * 1000);

const STACK = "e2e";
const NS = "pulp-e2e";
const ARTIFACTS = path.join(STATE, "e2e");
const timings: Record<string, number> = {};
const BASE = {
  namespace: NS,
  dataVolumes: [{ name: "seed-dump", url: "http://127.0.0.1:1/pulp-db-dump.tar", size: "1Gi" }],
};

beforeAll(
  () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    freshStack(STACK, BASE);
  },
  10 * 60 * 1000,
);

afterAll(() => {
  stopSamplers();
  fs.writeFileSync(path.join(ARTIFACTS, "timings.json"), JSON.stringify(timings, null, 2));
  process.stdout.write(`e2e timings (s): ${JSON.stringify(timings)}\n`);
  dropStack(STACK, NS);
});

const PULP = ["pulp-api", "pulp-content", "pulp-worker", "pulp-web"];
/** The migration Jobs, one per release, settings and admin password. */
const migrationJobs = () => items("jobs", NS).filter((j) => j.metadata.name.startsWith("pulp-migrate-"));

test("a fresh `pulumi up` installs Pulp, migrating before any Pulp pod exists", () => {
  const run = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  timings.freshUp = run.seconds;

  for (const d of items("deployments", NS)) {
    expect({ name: d.metadata.name, available: d.status.availableReplicas }).toEqual({
      name: d.metadata.name,
      available: d.spec.replicas,
    });
  }
  expect(
    items("deployments", NS)
      .map((d) => d.metadata.name)
      .sort(),
  ).toEqual([...PULP, "pulp-redis"].sort());

  const jobs = migrationJobs();
  expect(jobs).toHaveLength(1);
  const completed = Date.parse(jobs[0].status.completionTime);
  expect(jobs[0].status.succeeded).toBe(1);
  const pulpPods = items("pods", NS).filter((p) => PULP.some((d) => p.metadata.name.startsWith(`${d}-`)));
  expect(pulpPods.length).toBeGreaterThanOrEqual(8);
  for (const pod of pulpPods) {
    // API server timestamps: the Job had completed before the pod object was created.
    expect({
      pod: pod.metadata.name,
      after: Date.parse(pod.metadata.creationTimestamp) >= completed,
    }).toEqual({
      pod: pod.metadata.name,
      after: true,
    });
  }

  for (const pvc of items("pvc", NS))
    expect({ pvc: pvc.metadata.name, phase: pvc.status.phase }).toEqual({
      pvc: pvc.metadata.name,
      phase: "Bound",
    });
  const cluster = getJson(["clusters.postgresql.cnpg.io", "pulp-db", "-n", NS]);
  expect(cluster.status.conditions.find((c: any) => c.type === "Ready").status).toBe("True");
  expect(getJson(["datavolumes.cdi.kubevirt.io", "seed-dump", "-n", NS]).status.phase).toBe("Succeeded");
});

test("Pod Security `restricted` is enforced in the namespace, and admitted every Pulp pod", () => {
  const ns = getJson(["namespace", NS]);
  expect(ns.metadata.labels["pod-security.kubernetes.io/enforce"]).toBe("restricted");
  const rejected = kubectlTry(
    ["apply", "-n", NS, "-f", "-"],
    JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "privileged-probe" },
      spec: { containers: [{ name: "c", image: "busybox:1.36", securityContext: { privileged: true } }] },
    }),
  );
  expect(rejected.ok).toBe(false);
  expect(rejected.output).toMatch(/violates PodSecurity "restricted/);
  for (const d of items("deployments", NS)) {
    const events = items("events", NS).filter(
      (e) => e.reason === "FailedCreate" && e.involvedObject.name.startsWith(d.metadata.name),
    );
    expect({ deployment: d.metadata.name, failedCreates: events.map((e) => e.message) }).toEqual({
      deployment: d.metadata.name,
      failedCreates: [],
    });
  }
});

test("an unsupported upgrade path is refused before anything changes", () => {
  const before = revisions(NS);
  writeStackConfig(STACK, { ...BASE, image: "quay.io/pulp/pulp-minimal:3.84.0" });
  const refused = pulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(refused.code).not.toBe(0);
  expect(refused.stdout + refused.stderr).toMatch(
    /3.85.0 is deployed and the config asks for 3.84.0: Pulp's database migrations do not run backwards/,
  );
  expect(revisions(NS)).toEqual(before);
  writeStackConfig(STACK, BASE);
});

test("a storage config that would leave every artifact behind is refused before anything changes", () => {
  const before = revisions(NS);
  writeStackConfig(STACK, { ...BASE, storage: { s3: { bucket: "pulp-elsewhere" } } });
  const refused = pulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(refused.code).not.toBe(0);
  // What the first `up` recorded in the history ConfigMap, read back from the cluster.
  expect(refused.stdout + refused.stderr).toMatch(
    "pulp:storage names s3://pulp-elsewhere for the artifacts, but instance pulp keeps them in claim pulp-artifacts",
  );
  expect(revisions(NS)).toEqual(before);
  expect(getJson(["configmap", "pulp-deployed", "-n", NS]).data.artifactStorage).toBe("claim pulp-artifacts");
  writeStackConfig(STACK, BASE);
});

test("a second `up` with no change is a no-op", () => {
  const preview = pulumi(STACK, ["preview", "--expect-no-changes"]);
  timings.noOpPreview = preview.seconds;
  expect(preview.code).toBe(0);
  const before = revisions(NS);
  const up = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(up.stdout).not.toMatch(/~ \d+ to update|updated|created|replaced/);
  expect(revisions(NS)).toEqual(before);
});

test("a settings change rolls exactly the Deployments that read settings, and the preview JSON says so", () => {
  const before = revisions(NS);
  writeStackConfig(STACK, { ...BASE, contentOrigin: "http://pulp-e2e.localhost:8080" });

  const preview = mustPulumi(STACK, ["preview", "--json"]);
  fs.writeFileSync(path.join(ARTIFACTS, "preview-settings-change.json"), preview.stdout);
  const steps = JSON.parse(preview.stdout).steps as { op: string; urn: string }[];
  const changed = (type: string) =>
    steps
      .filter((s) => s.urn.includes(`::${type}::`) || s.urn.includes(`$${type}::`))
      .filter((s) => s.op !== "same");
  const deploymentOps = changed("kubernetes:apps/v1:Deployment").map(
    (s) => `${s.op} ${s.urn.split("::").pop()}`,
  );
  expect(deploymentOps.sort()).toEqual(["update pulp-api", "update pulp-content", "update pulp-worker"]);
  // One new Job for the new settings ("replace" in the JSON: created first, the old one deleted after), which
  // also sets the admin password: nothing else runs Pulp's manager.
  expect(
    changed("kubernetes:batch/v1:Job")
      .map((s) => `${s.op} ${s.urn.split("::").pop()}`)
      .sort(),
  ).toEqual(["replace pulp-migrate"]);

  const up = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  timings.settingsChangeUp = up.seconds;
  // `up` returned once every rollout was complete (the bed's pods become ready seconds after they start).
  expect(unfinishedRollouts(NS)).toEqual([]);
  const after = revisions(NS);
  const rolled = Object.keys(after)
    .filter((name) => after[name] !== before[name])
    .sort();
  expect(rolled).toEqual(["pulp-api", "pulp-content", "pulp-worker"]);
  expect(migrationJobs()).toHaveLength(1); // the old release's Job is gone, the new one completed
});

test("a replicas change rolls nothing", () => {
  const before = revisions(NS);
  writeStackConfig(STACK, { ...BASE, contentOrigin: "http://pulp-e2e.localhost:8080", api: { replicas: 3 } });
  const up = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  timings.replicasChangeUp = up.seconds;
  expect(revisions(NS)).toEqual(before);
  expect(getJson(["deployment", "pulp-api", "-n", NS]).status.availableReplicas).toBe(3);
});

test("a failed migration fails `up` and changes no Deployment; the next `up` after the fix uses a new Job", async () => {
  const current = { ...BASE, contentOrigin: "http://pulp-e2e.localhost:8080", api: { replicas: 3 } };
  const release = "quay.io/pulp/pulp-minimal:3.85.1";
  const before = revisions(NS);
  // The test bed's pod-fail stage (testbed/cluster/stages) makes this Job's pod exit 1.
  writeStackConfig(STACK, {
    ...current,
    image: release,
    migration: failingMigration("django.db.utils.ProgrammingError: relation core_domain does not exist"),
  });
  const failed = pulumi(STACK, ["up", "--yes", "--skip-preview"]);
  timings.failedMigrationUp = failed.seconds;
  expect(failed.code).not.toBe(0);
  expect(failed.stdout + failed.stderr).toMatch(/pulp-migrate-[0-9a-f]{8}/);
  // The migration's own last words (the container's termination message) are in the error.
  expect(failed.stdout + failed.stderr).toMatch(/relation core_domain does not exist/);
  const [failedJob] = migrationJobs().filter((j) => j.status.failed);
  expect(failedJob).toBeDefined();
  expect(revisions(NS)).toEqual(before);
  for (const d of items("deployments", NS)) {
    // The running release keeps serving: nothing rolled, every replica still available.
    expect({ name: d.metadata.name, available: d.status.availableReplicas }).toEqual({
      name: d.metadata.name,
      available: d.spec.replicas,
    });
  }

  // The fix is a rolling upgrade 3.85.0 -> 3.85.1: sample the ready endpoints while it runs.
  writeStackConfig(STACK, { ...current, image: release });
  const sampler = startSampler(
    NS,
    ["pulp-api", "pulp-content", "pulp-web"],
    path.join(ARTIFACTS, "endpoints.jsonl"),
  );
  const fixed = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  const samples = await sampler.stop();
  timings.fixedMigrationUp = fixed.seconds;
  process.stdout.write(`rolling upgrade endpoints: ${JSON.stringify(samples)}\n`);
  expect(samples.count).toBeGreaterThan(10);
  expect(samples.minReady).toEqual({
    "pulp-api": expect.any(Number),
    "pulp-content": expect.any(Number),
    "pulp-web": expect.any(Number),
  });
  for (const [service, min] of Object.entries(samples.minReady) as [string, number][])
    expect({ service, min: min > 0 }).toEqual({ service, min: true });
  const jobs = migrationJobs();
  expect(jobs).toHaveLength(1);
  expect(jobs[0].metadata.name).not.toBe(failedJob.metadata.name);
  expect(jobs[0].status.succeeded).toBe(1);
  const migrated = Date.parse(jobs[0].status.completionTime);
  for (const pod of items("pods", NS).filter(
    (p) =>
      p.spec.containers[0].image === release &&
      !p.metadata.ownerReferences?.some((o: any) => o.kind === "Job"),
  )) {
    expect({
      pod: pod.metadata.name,
      afterMigration: Date.parse(pod.metadata.creationTimestamp) >= migrated,
    }).toEqual({
      pod: pod.metadata.name,
      afterMigration: true,
    });
  }
  const after = revisions(NS);
  expect(
    Object.keys(after)
      .filter((name) => after[name] !== before[name])
      .sort(),
  ).toEqual(["pulp-api", "pulp-content", "pulp-worker"]);
});

test("losing a node keeps at least one ready endpoint per Service (PDBs and zone/node spread)", async () => {
  // The node with the most Pulp pods: the worst one to lose.
  const pods = items("pods", NS).filter((p) => p.status.phase === "Running");
  const perNode = new Map<string, number>();
  for (const p of pods) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
  const [victim] = [...perNode.entries()].sort((a, b) => b[1] - a[1])[0];
  const node = getJson(["node", victim]);

  const sampler = startSampler(
    NS,
    ["pulp-api", "pulp-content", "pulp-web"],
    path.join(ARTIFACTS, "node-loss.jsonl"),
  );
  const started = Date.now();
  kubectl(["delete", "node", victim, "--wait=true"]);
  // The pod garbage collector removes pods of a deleted node; their replacements land on the others.
  const deadline = Date.now() + 3 * 60 * 1000;
  while (Date.now() < deadline && items("pods", NS).some((p) => p.spec.nodeName === victim)) {
    await new Promise((r) => setTimeout(r, 1000));
  }
  await new Promise((r) => setTimeout(r, 3000));
  const samples = await sampler.stop();
  timings.nodeLossRecovery = (Date.now() - started) / 1000;
  process.stdout.write(`node loss (${victim}, ${perNode.get(victim)} pods): ${JSON.stringify(samples)}\n`);

  // Put the node back for whatever runs next on this cluster, and wait until kwok has given it its status:
  // until then it has no capacity, and a pod the scheduler puts nowhere else waits.
  const { name, labels, annotations } = node.metadata;
  kubectl(
    ["apply", "-f", "-"],
    JSON.stringify({ apiVersion: "v1", kind: "Node", metadata: { name, labels, annotations } }),
  );
  await waitUntil(
    `node ${name} back, Ready with its capacity`,
    120,
    () => schedulable(getJson(["node", name])),
    {
      detail: () => JSON.stringify(getJson(["node", name]).status ?? {}),
    },
  );

  expect(items("pods", NS).filter((p) => p.spec.nodeName === victim)).toEqual([]);
  for (const [service, min] of Object.entries(samples.minReady) as [string, number][]) {
    expect({ service, min: min > 0 }).toEqual({ service, min: true });
  }
});

// A drain evicts through the eviction API, which a PodDisruptionBudget can hold back; a deleted node (the
// test above) is not asked. Every replica of api, content and web is gathered on one node first (spread alone
// would leave one elsewhere, and the budget would not be what is tested), and their pods become ready
// only some seconds after they run (the kwok stage `pulp-e2e/readiness: slow`), as real pods do: on kwok a
// replacement is otherwise ready at once, and no eviction is ever refused.
test("draining the node that holds every replica of api, content and web never leaves one without a ready endpoint: the eviction waits for the PodDisruptionBudget", async () => {
  const slow = readiness("slow", "6s");
  const web = (yaml.load(fs.readFileSync(KWOK_STACK_FILE, "utf8")) as { config: Record<string, object> })
    .config["pulp:web"];
  writeStackConfig(STACK, { ...BASE, api: slow, content: slow, web: { ...web, ...slow } });
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  const served = ["api", "content", "web"];
  const selector = `app.kubernetes.io/component in (${served.join(",")})`;
  const servedPods = () =>
    getJson<{ items: any[] }>(["pods", "-n", NS, "-l", selector]).items.filter(
      (p) => !p.metadata.deletionTimestamp,
    );
  const kwokNodes = getJson<{ items: any[] }>(["nodes", "-l", "type=kwok"]).items;
  const nodes = kwokNodes.map((n) => n.metadata.name as string);
  // The victim must be able to take every replica: a node kwok has not given its status yet (one the
  // node-loss test re-created, under load) has no capacity, and the gathered pods would wait for it. Of
  // those that can, the one holding the most served pods, so that the fewest move.
  const holding = (node: string) => servedPods().filter((p) => p.spec.nodeName === node).length;
  const able = kwokNodes.filter(schedulable).map((n) => n.metadata.name as string);
  expect({ schedulableNodes: able.length > 1 }).toEqual({ schedulableNodes: true });
  const victim = able.sort((a, b) => holding(b) - holding(a))[0];
  const others = nodes.filter((n) => n !== victim);
  try {
    for (const other of others) kubectl(["cordon", other]);
    const elsewhere = servedPods()
      .filter((p) => p.spec.nodeName !== victim)
      .map((p) => p.metadata.name);
    if (elsewhere.length > 0) kubectl(["delete", "pod", "-n", NS, "--wait=false", ...elsewhere]);
    // Every replica (the replicas test above left api at 3), all ready on the victim.
    const wanted = (c: string) => getJson(["deployment", `pulp-${c}`, "-n", NS]).spec.replicas as number;
    const onVictim = (c: string) =>
      servedPods().filter(
        (p) =>
          p.metadata.labels["app.kubernetes.io/component"] === c && p.spec.nodeName === victim && isReady(p),
      ).length;
    await waitUntil(
      `every replica of ${served.join(" and ")} ready on ${victim}`,
      180,
      () => served.every((c) => onVictim(c) === wanted(c)),
      {
        detail: () =>
          [
            ...servedPods().map(
              (p) => `${p.metadata.name} on ${p.spec.nodeName ?? "(none)"} ready ${isReady(p)}`,
            ),
            `${victim}: ${JSON.stringify(getJson(["node", victim]).status?.conditions ?? [])}`,
            ...schedulingFailures(NS),
          ].join("\n"),
      },
    );
    for (const other of others) kubectl(["uncordon", other]);

    const samplesFile = path.join(ARTIFACTS, "drain.jsonl");
    fs.rmSync(samplesFile, { force: true }); // a sample from an earlier run must not count as the first
    const sampler = startSampler(
      NS,
      served.map((c) => `pulp-${c}`),
      samplesFile,
    );
    await waitUntil(
      "the endpoint sampler's first sample",
      60,
      () => fs.existsSync(samplesFile) && fs.readFileSync(samplesFile, "utf8").includes("\n"),
    );
    const started = Date.now();
    const drain = kubectlTry([
      "drain",
      victim,
      "--ignore-daemonsets",
      "--delete-emptydir-data",
      `--pod-selector=${selector}`,
      "--timeout=240s",
    ]);
    const samples = await sampler.stop();
    timings.drainSeconds = (Date.now() - started) / 1000;
    process.stdout.write(`drain (${victim}): ${JSON.stringify(samples)}\n`);

    expect({ ok: drain.ok, output: drain.ok ? "" : drain.output.slice(-2000) }).toEqual({
      ok: true,
      output: "",
    });
    expect(servedPods().filter((p) => p.spec.nodeName === victim)).toEqual([]);
    // The eviction API refused the second pod of each until its replacement was ready elsewhere.
    expect(drain.output).toMatch(/Cannot evict pod as it would violate the pod's disruption budget/);
    for (const service of served.map((c) => `pulp-${c}`)) {
      expect({ service, ready: samples.minReady[service] > 0 }).toEqual({ service, ready: true });
    }
  } finally {
    for (const node of nodes) kubectlTry(["uncordon", node]);
  }
});

test("`pulumi destroy` removes everything but what holds data, and says what it kept", () => {
  const run = pulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
  timings.destroy = run.seconds;
  expect(run.code).toBe(0);
  const ours = (kind: string) =>
    items(kind, NS)
      .filter((o) => o.metadata.labels?.["app.kubernetes.io/managed-by"] === "pulumi")
      .map((o) => o.metadata.name);
  expect(ours("deployments")).toEqual([]);
  expect(ours("services")).toEqual([]); // the database's own Services belong to the (kept) Cluster
  expect(ours("jobs")).toEqual([]);

  const state = JSON.parse(mustPulumi(STACK, ["stack", "export"]).stdout);
  const kept = (state.deployment.resources ?? [])
    .filter((r: any) => r.custom && !r.type.startsWith("pulumi:providers:"))
    .map((r: any) => ({
      type: r.type,
      name: r.outputs?.metadata?.name ?? r.urn.split("::").pop(),
      protect: r.protect === true,
    }));
  process.stdout.write(`kept by destroy: ${JSON.stringify(kept)}\n`);
  // Kept: what is protected, and the namespace they live in (the engine keeps what protected resources depend on).
  expect(kept.filter((r: any) => !r.protect)).toEqual([
    { type: "kubernetes:core/v1:Namespace", name: NS, protect: false },
  ]);
  expect(kept.map((r: any) => r.name)).toEqual(
    expect.arrayContaining([
      "pulp-artifacts",
      "pulp-db",
      "pulp-secret-key",
      "pulp-db-fields-encryption",
      "seed-dump",
    ]),
  );
  // Not the admin password's Secret, which a rotation replaces (components/secrets/pulpSecrets.ts): its value
  // stays in the stack config or in the protected Stash kept above.
  expect(kept.map((r: any) => r.name)).not.toContain("pulp-admin-password");
  expect(kept.map((r: any) => r.name)).toContain("pulp-secrets-admin-password");
  // Still on the cluster: the data and the keys.
  expect(items("pvc", NS).map((p) => p.metadata.name)).toContain("pulp-artifacts");
  expect(items("secrets", NS).map((s) => s.metadata.name)).toEqual(
    expect.arrayContaining(["pulp-db-fields-encryption", "pulp-secret-key"]),
  );
});
