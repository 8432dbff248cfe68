// Real Pulp on the real node, sized by autoscalers: KEDA (the workers, on the depth of Pulp's task queue)
// and metrics-server (the api's HorizontalPodAutoscaler, on CPU), both built from their Go modules
// (testbed/autoscaling). The workers start at zero; a burst of uploads wakes them, their count rises while
// the queue is deep, the queue drains, and they go back to zero. The api's CPU raises its count. Then
// what the autoscalers set survives: a preview shows no change, an update that rolls the pods keeps their
// count, and an idle install comes back at its minimum (a HorizontalPodAutoscaler never leaves zero alone).
// The install also exports pulpcore's own metrics (pulp:metrics) to an OTLP receiver on the host.
import * as path from "path";
import {
  dropStack,
  freshStack,
  getJson,
  items,
  kubectl,
  mustPulumi,
  setSecrets,
  waitUntil,
} from "../../../testbed/harness";
import { REPO } from "../../../testbed/local/environment";
import { ensureAutoscalers } from "../../../testbed/real/autoscaling";
import { dispatchUpload, get, Pulp, pulpCli, pulpThroughWeb } from "../../../testbed/real/clients";
import { DATABASE_PASSWORD, dropDatabase, emptyDatabase } from "../../../testbed/real/database";
import { MetricsReceiver, startMetricsReceiver } from "../../../testbed/real/otlp";
import { importImages, localImages, releaseConfig, SMALL_PODS } from "../../../testbed/real/stack";

jest.setTimeout(20 * 60 * 1000);

const STACK = "real-autoscaling";
const NS = "pulp-autoscaling";
const DATABASE = "pulp_autoscaling";
const ADMIN_PASSWORD = "autoscaling-admin-password-Kq7";
const WORKERS = { minReplicas: 0, maxReplicas: 2, pollingIntervalSeconds: 5, cooldownSeconds: 30 };
const API = { minReplicas: 1, maxReplicas: 2, cpuUtilization: 50 };
const UPLOADS = 24;
const WORKER_GRACE_SECONDS = 60;
let pulp: Pulp;
let receiver: MetricsReceiver;

const replicasOf = (name: string): number => getJson(["deployment", name, "-n", NS]).spec.replicas ?? 1;
const pods = (deployment: string): string[] =>
  items("pods", NS)
    .filter((p) => p.metadata.labels?.["app.kubernetes.io/component"] === deployment.replace(/^pulp-/, ""))
    .map((p) => p.metadata.name as string);

/** The Deployment's spec.replicas every second until `done` says stop; the highest count seen. */
function watchReplicas(name: string): { stop(): number[] } {
  const seen: number[] = [replicasOf(name)];
  const timer = setInterval(() => seen.push(replicasOf(name)), 1000);
  return {
    stop() {
      clearInterval(timer);
      return seen;
    },
  };
}

/**
 * A JSON answer of Pulp's API. This suite measures the workers' count, not the api's availability (the
 * upgrade suites do): an answer pulp-web gives for a busy or restarting api (502-504), or none in 30 s (one
 * api pod behind a burst of uploads, on a node CI shares with other suites: 10 s was not enough there), is
 * said on the console and asked again, three times at most; anything else not 200 fails with its status.
 */
const apiJson = async (href: string): Promise<Record<string, unknown>> => {
  const auth = Buffer.from(`admin:${ADMIN_PASSWORD}`).toString("base64");
  for (let attempt = 1; ; attempt++) {
    const r = await get(`${pulp.baseUrl}${href}`, { Authorization: `Basic ${auth}` }, 30_000).catch(
      (e: Error) => {
        if (attempt === 3 || !/no answer in/.test(e.message)) throw e;
        return { status: 0, body: Buffer.from(e.message) };
      },
    );
    if (r.status === 200) return JSON.parse(r.body.toString());
    const said = `GET ${href}: ${r.status ? `HTTP ${r.status}` : "no answer"}: ${r.body.toString().slice(0, 200)}`;
    if ((r.status !== 0 && (r.status < 502 || r.status > 504)) || attempt === 3) throw new Error(said);
    console.log(`${said} (asked again in 2 s)`);
    await new Promise((done) => setTimeout(done, 2000));
  }
};

const taskState = async (href: string): Promise<string> => (await apiJson(href)).state as string;

const tasksLeft = async (): Promise<number> =>
  (await apiJson("/pulp/api/v3/tasks/?state__in=waiting,running&limit=1")).count as number;

beforeAll(
  async () => {
    importImages();
    receiver = await startMetricsReceiver();
    ensureAutoscalers();
    const postgresql = localImages().postgresql;
    emptyDatabase(postgresql, DATABASE);
    const release = releaseConfig(NS, DATABASE, "3.123.1");
    freshStack(
      STACK,
      {
        ...release,
        // The counts are the autoscalers' (a `replicas` beside `autoscaling` is refused).
        api: { resources: SMALL_PODS, autoscaling: API },
        worker: {
          terminationGracePeriodSeconds: WORKER_GRACE_SECONDS,
          resources: SMALL_PODS,
          autoscaling: WORKERS,
        },
        // One pod each where the test needs no more: the node's 2 cores are shared with the rest of CI.
        content: { replicas: 1, resources: SMALL_PODS },
        web: { ...(release.web as object), replicas: 1 },
        // pulpcore's own metrics to the receiver on the host, every 5 s.
        metrics: { otlpEndpoint: receiver.endpoint, exportIntervalSeconds: 5 },
      },
      path.join(REPO, "Pulumi.dev.yaml"),
    );
    setSecrets(STACK, { "pulp:adminPassword": ADMIN_PASSWORD, "pulp:databasePassword": DATABASE_PASSWORD });
  },
  10 * 60 * 1000,
);

afterAll(() => {
  receiver?.stop();
  if (!process.env.PULP_KEEP_STACK) {
    dropStack(STACK, NS);
    dropDatabase(DATABASE);
  }
});

test("installed with no worker: KEDA's ScaledObject is ready and reads the task queue from Pulp's database", async () => {
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  pulp = pulpThroughWeb(NS, ADMIN_PASSWORD);
  expect(pulpCli(pulp, ["status"]).database_connection.connected).toBe(true);
  expect(replicasOf("pulp-worker")).toBe(0);
  // Ready: KEDA built the HPA and its PostgreSQL scaler connected and ran the query.
  await waitUntil("the workers' ScaledObject Ready", 120, () => {
    const so = getJson(["scaledobject", "pulp-worker", "-n", NS]);
    return so.status?.conditions?.some(
      (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
    );
  });
  const so = getJson(["scaledobject", "pulp-worker", "-n", NS]);
  expect(so.status.hpaName).toBe("pulp-worker");
  expect(so.status.conditions.find((c: { type: string }) => c.type === "Active").status).toBe("False");
});

test("a burst of uploads wakes the workers, their count rises with the queue, the queue drains, and they go back to zero", async () => {
  const watch = watchReplicas("pulp-worker");
  const started = Date.now();
  // Uploads at once, each one task (no repository: no lock shared between them), dispatched without
  // waiting for it: the queue is deep before the first worker has started. One api pod answers them all,
  // a few at a time: on a node busy with other suites (as in CI) the last answer took over 60 s, so each
  // has 5 min (how fast the api answers is the upgrade suites' measure, not this one's).
  const tasks = await Promise.all(
    Array.from({ length: UPLOADS }, (_, i) =>
      dispatchUpload(
        pulp,
        `burst-${i}.bin`,
        Buffer.concat([Buffer.from(`burst ${i}\n`), Buffer.alloc(64 * 1024, i)]),
        300,
      ),
    ),
  );
  expect(tasks.length).toBe(UPLOADS);
  const queued = await tasksLeft();
  await waitUntil("every task done", 600, async () => (await tasksLeft()) === 0, { intervalMs: 2000 });
  const drainedAfter = (Date.now() - started) / 1000;
  await waitUntil("the workers back to zero", 300, () => replicasOf("pulp-worker") === 0, {
    intervalMs: 2000,
  });
  const seen = watch.stop();
  const peak = Math.max(...seen);
  console.log(
    `autoscaling: ${UPLOADS} uploads, ${queued} tasks waiting or running after the last was dispatched; ` +
      `drained ${drainedAfter.toFixed(0)} s after the first; workers ${seen[0]} -> peak ${peak} -> 0 ` +
      `${((Date.now() - started) / 1000).toFixed(0)} s after the first upload`,
  );
  expect(seen[0]).toBe(0);
  // Past one worker (the activation), up to the maximum the queue asked for, and never beyond it.
  expect(peak).toBe(WORKERS.maxReplicas);
  const failed = pulpCli(pulp, ["task", "list", "--state", "failed", "--limit", "50"]);
  // A task's process that died leaves only its exit code in the task: the workers' own lines say why
  // (CI saw "Task process died unexpectedly with exitcode 1" once, beside two other suites).
  if (failed.length > 0) {
    console.log(
      kubectl(["logs", "-n", NS, "-l", "app.kubernetes.io/component=worker", "--tail=80", "--prefix"]),
    );
  }
  expect(failed).toEqual([]);
  const uploaded = pulpCli(pulp, ["file", "content", "list", "--limit", "100"]) as {
    relative_path: string;
  }[];
  expect(uploaded.filter((c) => c.relative_path.startsWith("burst-")).length).toBe(UPLOADS);
});

test("pulp:metrics: the api, the content app and the workers export pulpcore's metrics to the collector", async () => {
  // A request to the content app, and a task: a worker records the queue gauges on its heartbeat.
  await get(`${pulp.baseUrl}/pulp/content/`);
  await dispatchUpload(pulp, "metrics.bin", Buffer.from("metrics\n"));
  await waitUntil(
    "api.request_duration, content.request_duration and the workers' queue gauges received",
    180,
    () => {
      const seen = new Set(receiver.points().map((p) => `${p.service} ${p.metric}`));
      return [
        "pulp-api api.request_duration",
        "pulp-content content.request_duration",
        "pulp-worker tasks_unblocked_queue",
        "pulp-worker tasks_longest_unblocked_time",
      ].every((m) => seen.has(m));
    },
    { intervalMs: 3000, detail: () => JSON.stringify([...new Set(receiver.points().map((p) => p.metric))]) },
  );
  const api = receiver.points().filter((p) => p.metric === "api.request_duration");
  // Histograms of real requests: the uploads above among them.
  expect(api.some((p) => (p.value as { count: number }).count > 0)).toBe(true);
  console.log(`metrics: ${receiver.points().length} points, e.g. ${JSON.stringify(api[api.length - 1])}`);
});

test("the api's HPA sizes it from metrics-server's CPU readings: a rescale for CPU above target, held above the minimum under load", async () => {
  // Starting pods use more CPU than serving ones: the HPA may have raised the count already (it lowers it
  // only after 5 min of less use), so the load holds it above the minimum rather than starting from it.
  const auth = { Authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString("base64")}` };
  let load = true;
  const clients = Array.from({ length: 4 }, async () => {
    while (load) await get(`${pulp.baseUrl}/pulp/api/v3/status/`, auth, 30_000).catch(() => undefined);
  });
  // The count alone is not enough: the burst's starting pods may have raised it already, and while a new
  // pod has no reading yet the HPA's status holds a blank metric (CI saw `[{"type":""}]`). Wait for both.
  const cpuReading = (): number | undefined =>
    getJson(["hpa", "pulp-api", "-n", NS]).status?.currentMetrics?.[0]?.resource?.current?.averageUtilization;
  try {
    await waitUntil(
      "the api scaled up, with a CPU reading in its HPA's status",
      300,
      () => replicasOf("pulp-api") > API.minReplicas && (cpuReading() ?? 0) > 0,
      { intervalMs: 3000, detail: () => JSON.stringify(getJson(["hpa", "pulp-api", "-n", NS]).status) },
    );
  } finally {
    load = false;
    await Promise.all(clients);
  }
  const hpa = getJson(["hpa", "pulp-api", "-n", NS]);
  console.log(
    `autoscaling: api HPA at ${hpa.status.desiredReplicas}, CPU ${JSON.stringify(hpa.status.currentMetrics)}`,
  );
  expect(hpa.status.currentMetrics[0].resource.current.averageUtilization).toBeGreaterThan(0);
  // The rescale was the CPU reading's doing, as the HPA controller records it.
  const rescales = items("events", NS)
    .filter(
      (e) => e.involvedObject.kind === "HorizontalPodAutoscaler" && e.involvedObject.name === "pulp-api",
    )
    .filter((e) => e.reason === "SuccessfulRescale")
    .map((e) => e.message as string);
  expect(rescales).toEqual(
    expect.arrayContaining([expect.stringMatching(/reason: cpu resource utilization .* above target/)]),
  );
});

test("what the autoscalers set survives: no drift in a preview, an update that rolls the pods keeps the count", async () => {
  const before = replicasOf("pulp-api");
  expect(before).toBeGreaterThan(API.minReplicas);
  mustPulumi(STACK, ["preview", "--expect-no-changes", "--diff"]);
  // A new pod annotation rolls the api; the HPA's count stays (a dropped field would fall back to 1).
  mustPulumi(STACK, ["config", "set", "--path", "pulp:api.podAnnotations.rolled", "once"]);
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  const deployment = getJson(["deployment", "pulp-api", "-n", NS]);
  expect(deployment.spec.template.metadata.annotations.rolled).toBe("once");
  expect(deployment.spec.replicas).toBeGreaterThanOrEqual(Math.min(before, API.maxReplicas) - 1);
  expect(deployment.spec.replicas).toBeGreaterThan(API.minReplicas);
});

test("idle with a task waiting holds everything at zero with KEDA paused at zero; waking sets the api back to its minimum, and KEDA takes the workers again", async () => {
  // A task waits as the install goes idle, so KEDA is waking a worker for it while the workers go to zero:
  // a pause that kept KEDA's last count would leave that worker running.
  const queued = await dispatchUpload(pulp, "before-idle.bin", Buffer.from("queued before idle\n"));
  mustPulumi(STACK, ["config", "set", "pulp:idle", "true"]);
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  const names = ["pulp-api", "pulp-content", "pulp-worker", "pulp-web"];
  const counts = () => Object.fromEntries(names.map((n) => [n, replicasOf(n)]));
  const zero = Object.fromEntries(names.map((n) => [n, 0]));
  expect(counts()).toEqual(zero);
  const scaledObject = getJson(["scaledobject", "pulp-worker", "-n", NS]);
  expect(scaledObject.metadata.annotations).toMatchObject({
    "autoscaling.keda.sh/paused": "true",
    "autoscaling.keda.sh/paused-replicas": "0",
  });
  // Confirmed by KEDA before `up` went on to the workers (pulumi.com/waitFor), and held: once the workers'
  // pods are gone (one finishing its task may take its grace period, 60 s), three polling intervals later
  // the task still waits and no worker runs.
  expect(scaledObject.status.conditions).toEqual(
    expect.arrayContaining([expect.objectContaining({ type: "Paused", status: "True" })]),
  );
  expect(scaledObject.status.pausedReplicaCount).toBe(0);
  await waitUntil(
    "the workers' pods gone",
    WORKER_GRACE_SECONDS + 60,
    () => pods("pulp-worker").length === 0,
    {
      intervalMs: 2000,
      detail: () => pods("pulp-worker").join(", "),
    },
  );
  await new Promise((r) => setTimeout(r, 3 * WORKERS.pollingIntervalSeconds * 1000));
  expect(counts()).toEqual(zero);
  expect(pods("pulp-worker")).toEqual([]);

  mustPulumi(STACK, ["config", "set", "pulp:idle", "false"]);
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  // Set by the update: an HPA leaves a Deployment at zero alone (it may raise it further for the new pods' CPU).
  expect(replicasOf("pulp-api")).toBeGreaterThanOrEqual(API.minReplicas);
  const woken = getJson(["scaledobject", "pulp-worker", "-n", NS]).metadata.annotations;
  expect(woken["autoscaling.keda.sh/paused"]).toBe("false");
  expect(woken).not.toHaveProperty(["autoscaling.keda.sh/paused-replicas"]);
  expect(pulpCli(pulp, ["status"]).database_connection.connected).toBe(true);
  // KEDA wakes a worker for the task that waited through the idle time.
  await waitUntil(
    "the task queued before idle done by a woken worker",
    300,
    async () => (await taskState(queued)) === "completed",
    {
      intervalMs: 2000,
    },
  );
});
