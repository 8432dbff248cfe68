// Unit. The doctor's judgement (tools/doctor/checks.ts) on snapshots as the collector writes them: a healthy
// install has no finding; each fault it knows is named with where it is and what to run. The snapshots'
// shapes are those read from the real node (the real outage test runs the doctor on a live install).
import { diagnose, Finding } from "../../../../tools/doctor/checks";
import { parseArgs } from "../../../../tools/doctor/main";
import { render } from "../../../../tools/doctor/render";
import { Snapshot } from "../../../../tools/doctor/snapshot";

const AT = "2026-11-26T06:00:00.000Z";
const ago = (seconds: number) => new Date(Date.parse(AT) - seconds * 1000).toISOString();
const NS = "pulp-prod";

function healthy(): Snapshot {
  const beat = { last_heartbeat: ago(5) };
  return {
    namespace: NS,
    instance: "pulp",
    at: AT,
    status: {
      ok: true,
      body: {
        versions: [{ component: "core", version: "3.123.1" }],
        database_connection: { connected: true },
        redis_connection: { connected: true },
        online_workers: [{ name: "1@pulp-worker-a", ...beat }],
        online_api_apps: [{ name: "15@pulp-api-a", ...beat }],
        online_content_apps: [{ name: "31@pulp-content-a", ...beat }],
      },
    },
    tasks: { ok: true, queue: { waiting: 0, oldestWaitingSeconds: null, running: 1, failedLastHour: 0 } },
    pods: ["api", "content", "worker"].map((component) => ({
      name: `pulp-${component}-a`,
      component,
      phase: "Running",
      node: "node-1",
      created: ago(86400),
      ready: "True",
      containers: [{ name: component, ready: true, restarts: 0 }],
    })),
    deployments: ["api", "content", "worker"].map((component) => ({
      name: `pulp-${component}`,
      component,
      desired: 1,
      available: 1,
      updated: 1,
    })),
    jobs: [
      {
        name: "pulp-migrate-1a2b",
        component: "migration",
        created: ago(86400),
        active: 0,
        succeeded: 1,
        failed: 0,
      },
    ],
    events: [],
    pvcs: [{ name: "pulp-artifacts", phase: "Bound", storageClass: "nfs", accessModes: ["ReadWriteMany"] }],
    database: { name: "pulp-db", phase: "Cluster in healthy state", instances: 3, readyInstances: 3 },
    dataVolumes: [],
    backup: { cronJob: "pulp-backup", suspended: false, schedule: "0 3 * * *", lastSuccess: ago(3 * 3600) },
  };
}

/** The findings in a form a reader can check at a glance: severity, subject, and the fix's first words. */
const brief = (findings: Finding[]) => findings.map((f) => `${f.severity} ${f.subject}`);

test("a healthy install: no finding, and the report says so", () => {
  const s = healthy();
  expect(diagnose(s)).toEqual([]);
  expect(render(s, [])).toContain("No problems found.");
});

test("workers scaled to zero (KEDA, idle queue) are no finding; a task left waiting for them is, naming KEDA", () => {
  const s = healthy();
  if (s.status.ok) s.status.body.online_workers = [];
  s.deployments.find((d) => d.component === "worker")!.desired = 0;
  s.pods = s.pods.filter((p) => p.component !== "worker");
  expect(diagnose(s)).toEqual([]);
  s.tasks = { ok: true, queue: { waiting: 3, oldestWaitingSeconds: 30, running: 0, failedLastHour: 0 } };
  expect(diagnose(s)).toEqual([]);
  s.tasks = { ok: true, queue: { waiting: 3, oldestWaitingSeconds: 900, running: 0, failedLastHour: 0 } };
  const [f] = diagnose(s);
  expect(f).toMatchObject({ severity: "problem", subject: "deployment/pulp-worker" });
  expect(f.what).toContain("scaled to zero and 3 tasks wait, the oldest for 900 s");
  expect(f.fix).toContain(`kubectl get scaledobject pulp-worker -n ${NS}`);
});

test("the database is away: Pulp's status says so, and the fix names the CloudNativePG cluster", () => {
  const s = healthy();
  if (s.status.ok) s.status.body.database_connection.connected = false;
  const [f] = diagnose(s);
  expect(f).toMatchObject({ severity: "problem", subject: "database" });
  expect(f.fix).toContain(`kubectl get cluster pulp-db -n ${NS}`);
});

test("the API does not answer: named with the command that shows the api pods", () => {
  const s = healthy();
  s.status = {
    ok: false,
    error: 'Error from server (ServiceUnavailable): no endpoints available for service "http:pulp-api:http"',
  };
  const [f] = diagnose(s);
  expect(f.subject).toBe("service/pulp-api");
  expect(f.what).toContain("no endpoints available");
  expect(f.fix).toContain("app.kubernetes.io/component=api");
});

test("no worker and no content app online: two problems (tasks wait, downloads fail)", () => {
  const s = healthy();
  if (s.status.ok) {
    s.status.body.online_workers = [];
    s.status.body.online_content_apps = [];
  }
  expect(brief(diagnose(s))).toEqual(["problem deployment/pulp-worker", "problem deployment/pulp-content"]);
});

test("tasks: one still held by a worker silent for over 3 min is a problem, with the cleanup to paste; sooner, the workers' check's", () => {
  const s = healthy();
  const queue = { waiting: 1, oldestWaitingSeconds: 60, running: 1, failedLastHour: 0 };
  s.tasks = {
    ok: true,
    queue: { ...queue, abandoned: { tasks: 1, workers: ["1@pulp-worker-x"], silentSeconds: 90 } },
  };
  expect(diagnose(s)).toEqual([]); // the workers' readiness check releases it about now
  s.tasks = {
    ok: true,
    queue: {
      ...queue,
      abandoned: { tasks: 2, workers: ["1@pulp-worker-x", "1@pulp-worker-y"], silentSeconds: 600 },
    },
  };
  const [f] = diagnose(s);
  expect(f).toMatchObject({ severity: "problem", subject: "tasks" });
  expect(f.what).toBe(
    '2 tasks are still "running" on workers gone 10 min (1@pulp-worker-x, 1@pulp-worker-y: killed, OOM, a lost node); the repositories they hold wait',
  );
  expect(f.fix).toContain(
    `kubectl exec -n ${NS} deployment/pulp-api -- pulpcore-manager shell -c "from pulpcore.app.models import AppStatus; ` +
      `from pulpcore.tasking.tasks import wakeup_worker; AppStatus.objects.missing().delete(); wakeup_worker('handle')"`,
  );
  // Before pulpcore 3.89 (no app_lock) the look says none.
  s.tasks = { ok: true, queue: { ...queue, abandoned: { tasks: 0, workers: [], silentSeconds: 0 } } };
  expect(diagnose(s)).toEqual([]);
});

test("tasks: one waiting over 10 min while workers are online is a warning, as are failures of the last hour", () => {
  const s = healthy();
  s.tasks = { ok: true, queue: { waiting: 3, oldestWaitingSeconds: 9 * 60, running: 1, failedLastHour: 0 } };
  expect(diagnose(s)).toEqual([]); // busy, not stuck
  s.tasks.queue.oldestWaitingSeconds = 25 * 60;
  s.tasks.queue.failedLastHour = 2;
  const found = diagnose(s);
  expect(found.map((f) => f.what)).toEqual([
    "3 tasks wait, the oldest for 25 min, with 1 workers online and 1 tasks running",
    "2 tasks failed in the last hour",
  ]);
  expect(found[0].fix).toContain("pulp:worker.replicas");
  // Not read (the database away, no exec): no finding of its own, and the report says why.
  s.tasks = { ok: false, error: "no ready api pod to ask" };
  expect(diagnose(s)).toEqual([]);
  expect(render(s, [])).toContain("tasks: not read (no ready api pod to ask)");
});

test("a crash loop out of memory: the fix is the component's memory limit key", () => {
  const s = healthy();
  s.pods[1].containers[0] = {
    name: "content",
    ready: false,
    restarts: 7,
    waiting: "CrashLoopBackOff",
    lastEnded: { reason: "OOMKilled", exitCode: 137, finishedAt: ago(30) },
  };
  const [f] = diagnose(s);
  expect(f).toMatchObject({ severity: "problem", subject: "pod/pulp-content-a" });
  expect(f.what).toContain("OOMKilled (exit 137)");
  expect(f.fix).toContain("pulumi config set --path pulp:content.resources.limits.memory");
});

test("a crash loop for another reason: the previous container's log", () => {
  const s = healthy();
  s.pods[0].containers[0] = {
    name: "api",
    ready: false,
    restarts: 4,
    waiting: "CrashLoopBackOff",
    lastEnded: { reason: "Error", exitCode: 1, finishedAt: ago(20) },
  };
  expect(diagnose(s)[0].fix).toBe(`kubectl logs pulp-api-a -c api --previous -n ${NS}`);
});

test("an image that cannot be pulled names the image keys and the pull secrets", () => {
  const s = healthy();
  s.pods[2].containers[0] = {
    name: "worker",
    ready: false,
    restarts: 0,
    waiting: "ImagePullBackOff",
    waitingMessage: 'Back-off pulling image "quay.io/pulp/pulp-minimal:3.999.0"',
  };
  const [f] = diagnose(s);
  expect(f.what).toContain("3.999.0");
  expect(f.fix).toContain("pulp:imagePullSecrets");
});

test("a recent restart is a warning that points at the database; an old one is history", () => {
  const s = healthy();
  s.pods[2].containers[0] = {
    name: "worker",
    ready: true,
    restarts: 1,
    lastEnded: { reason: "Error", exitCode: 1, finishedAt: ago(600) },
  };
  const [f] = diagnose(s);
  expect(f).toMatchObject({ severity: "warning", subject: "pod/pulp-worker-a" });
  expect(f.what).toContain("cannot reach its database");
  s.pods[2].containers[0].lastEnded!.finishedAt = ago(2 * 86400);
  expect(diagnose(s)).toEqual([]);
});

test("a pod no node takes, for want of CPU: the requests key; for an unbound claim: the PVC", () => {
  const s = healthy();
  s.pods.push({
    name: "pulp-worker-b",
    component: "worker",
    phase: "Pending",
    created: ago(600),
    ready: "False",
    containers: [],
  });
  s.events.push({
    type: "Warning",
    reason: "FailedScheduling",
    message: "0/3 nodes are available: 3 Insufficient cpu.",
    object: "Pod/pulp-worker-b",
    count: 12,
    last: ago(30),
  });
  let [f] = diagnose(s);
  expect(f.what).toContain("Insufficient cpu");
  expect(f.fix).toContain("resources.requests");
  s.events[0].message =
    "pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available";
  [f] = diagnose(s);
  expect(f.fix).toContain("kubectl get pvc");
  // A pod that has waited only a little is starting, not stuck.
  s.pods[3].created = ago(30);
  expect(diagnose(s)).toEqual([]);
});

test("a pending pod of a Job that has succeeded is nobody's wait; one its node does not let go of is a warning", () => {
  const s = healthy();
  const spare = {
    name: "pulp-migrate-1a2b-x7k2p",
    component: "migration",
    phase: "Pending",
    created: ago(600),
    ready: "False",
    containers: [],
    job: "pulp-migrate-1a2b",
  };
  s.pods.push(spare);
  expect(diagnose(s)).toEqual([]);
  // The same pod of a Job still running is waiting, and that is a problem.
  s.jobs[0].succeeded = 0;
  s.jobs[0].active = 1;
  expect(brief(diagnose(s))).toEqual([
    "problem pod/pulp-migrate-1a2b-x7k2p",
    "warning job/pulp-migrate-1a2b",
  ]);
  // Asked to go five minutes ago and still there: the node's kubelet, not the scheduler.
  s.jobs[0].succeeded = 1;
  s.jobs[0].active = 0;
  s.pods[3] = { ...spare, deleting: ago(300) };
  const [f] = diagnose(s);
  expect([f.severity, f.subject, f.what]).toEqual([
    "warning",
    "pod/pulp-migrate-1a2b-x7k2p",
    "was asked to go 300 s ago and its node has not let it go",
  ]);
});

test("a volume that failed to mount is a problem while its pod waits; once the pod has run, or its Job succeeded, it is history", () => {
  const s = healthy();
  const failedMount = (pod: string) => ({
    type: "Warning",
    reason: "FailedMount",
    message:
      'MountVolume.SetUp failed for volume "settings" : failed to sync secret cache: timed out waiting for the condition',
    object: `Pod/${pod}`,
    count: 1,
    last: ago(60),
  });
  const waiting = {
    name: "pulp-api-b",
    component: "api",
    phase: "Pending",
    created: ago(90),
    ready: "False",
    containers: [],
  };
  s.pods.push(waiting);
  s.events.push(failedMount("pulp-api-b"));
  expect(brief(diagnose(s))).toEqual(["problem pod/pulp-api-b"]);
  // The same pod, started since: the kubelet's retry mounted it.
  s.pods[3] = { ...waiting, phase: "Running", ready: "True" };
  expect(diagnose(s)).toEqual([]);
  // The migration Job's pod, done (as after every fresh install in CI, 2026-11-26), and a spare pod of it.
  s.pods.push(
    {
      ...waiting,
      name: "pulp-migrate-1a2b-f9n24",
      component: "migration",
      phase: "Succeeded",
      job: "pulp-migrate-1a2b",
    },
    { ...waiting, name: "pulp-migrate-1a2b-x7k2p", component: "migration", job: "pulp-migrate-1a2b" },
  );
  s.events.push(failedMount("pulp-migrate-1a2b-f9n24"), failedMount("pulp-migrate-1a2b-x7k2p"));
  expect(diagnose(s)).toEqual([]);
});

test("Multi-Attach: a problem that names ReadWriteMany and object storage", () => {
  const s = healthy();
  s.events.push({
    type: "Warning",
    reason: "FailedAttachVolume",
    message: 'Multi-Attach error for volume "pvc-1" Volume is already used by pod(s) pulp-api-a',
    object: "Pod/pulp-api-b",
    count: 3,
    last: ago(60),
  });
  const [f] = diagnose(s);
  expect(f).toMatchObject({ severity: "problem", subject: "pod/pulp-api-b" });
  expect(f.fix).toMatch(/ReadWriteMany.*pulp:storage\.s3/);
});

test("a stalled rollout and a Deployment with nothing available", () => {
  const s = healthy();
  s.deployments[0] = {
    ...s.deployments[0],
    stalled: "ProgressDeadlineExceeded",
    stalledMessage: 'ReplicaSet "pulp-api-7d9c" has timed out progressing.',
  };
  s.deployments[1] = { ...s.deployments[1], available: 0 };
  expect(brief(diagnose(s))).toEqual(["problem deployment/pulp-api", "problem deployment/pulp-content"]);
});

test("a failed migration says the script's last words; a long one is a warning", () => {
  const s = healthy();
  s.jobs.push({
    name: "pulp-migrate-3c4d",
    component: "migration",
    created: ago(300),
    active: 0,
    succeeded: 0,
    failed: 1,
    failure: { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" },
    said: "django.db.utils.OperationalError: could not obtain lock",
  });
  let [f] = diagnose(s);
  expect(f.subject).toBe("job/pulp-migrate-3c4d");
  expect(f.what).toContain("could not obtain lock");
  expect(f.fix).toContain("pulumi up");
  // Only the newest migration counts: a later one that succeeded mends it.
  s.jobs.push({ ...s.jobs[0], name: "pulp-migrate-5e6f", created: ago(60) });
  expect(diagnose(s)).toEqual([]);
  // A migration still running after 45 min (the newest Job): worth a look, not yet a failure.
  const running = healthy();
  running.jobs.push({
    name: "pulp-migrate-7a8b",
    component: "migration",
    created: ago(45 * 60),
    active: 1,
    succeeded: 0,
    failed: 0,
  });
  [f] = diagnose(running);
  expect(f).toMatchObject({ severity: "warning", subject: "job/pulp-migrate-7a8b" });
  expect(f.what).toContain("45 min");
});

test("a failed signing services' registration is named as such, not as a migration, and does not hide the migration's state", () => {
  const s = healthy();
  s.jobs.push(
    {
      name: "pulp-migrate-3c4d",
      component: "migration",
      created: ago(600),
      active: 0,
      succeeded: 1,
      failed: 0,
    },
    {
      name: "pulp-signing-services",
      component: "migration",
      created: ago(300),
      active: 0,
      succeeded: 0,
      failed: 1,
      failure: { reason: "BackoffLimitExceeded", message: "" },
      said: "rpm-metadata: the script did not pass core:AsciiArmoredDetachedSigningService's check",
    },
  );
  const found = diagnose(s);
  expect(found.map((f) => [f.subject, f.what.split(" (")[0]])).toEqual([
    ["job/pulp-signing-services", "the signing services' registration failed"],
  ]);
  expect(found[0].what).toContain("did not pass");
});

test("backups: a failed last one is a problem; none for eight days is a warning; a suspended CronJob is not judged", () => {
  const s = healthy();
  s.jobs.push({
    name: "pulp-backup-manual-1",
    component: "backup",
    created: ago(600),
    active: 0,
    succeeded: 0,
    failed: 1,
    failure: { reason: "BackoffLimitExceeded", message: "" },
    said: "artifact artifact/ab/cdef missing from the volume",
  });
  expect(brief(diagnose(s))).toEqual(["problem job/pulp-backup-manual-1"]);
  // A restore's Job is a restore, not a backup, even when it is newer.
  s.jobs.push({
    ...s.jobs[1],
    name: "pulp-restore-check-20261126t0100z",
    created: ago(60),
    said: "a backup of an S3 install cannot restore into a volume install",
  });
  expect(diagnose(s).map((f) => f.what)).toEqual([
    "the restore failed: a backup of an S3 install cannot restore into a volume install",
    "the last backup failed: artifact artifact/ab/cdef missing from the volume",
  ]);
  s.jobs.splice(1, 2);
  s.backup!.lastSuccess = ago(9 * 86400);
  expect(diagnose(s)[0].what).toContain("9 days old");
  s.backup!.lastSuccess = undefined;
  expect(diagnose(s)[0].what).toContain("no scheduled backup has succeeded yet");
  s.backup!.suspended = true;
  expect(diagnose(s)).toEqual([]);
});

test("the database cluster: not healthy is a problem, fewer ready instances a warning", () => {
  const s = healthy();
  s.database = { ...s.database!, readyInstances: 2 };
  expect(brief(diagnose(s))).toEqual(["warning cluster/pulp-db"]);
  s.database = {
    ...s.database!,
    phase: "Failing over",
    phaseReason: "Failing over from pulp-db-1 to pulp-db-2",
  };
  expect(diagnose(s)[0]).toMatchObject({
    severity: "problem",
    what: expect.stringContaining("Failing over"),
  });
});

test("the database pooler: no ready pod is a problem (Pulp goes through it), fewer than asked a warning", () => {
  const s = healthy();
  s.pooler = { name: "pulp-db-pooler", instances: 2, readyInstances: 2 };
  expect(diagnose(s)).toEqual([]);
  s.pooler = { ...s.pooler, readyInstances: 1 };
  expect(brief(diagnose(s))).toEqual(["warning pooler/pulp-db-pooler"]);
  s.pooler = { ...s.pooler, readyInstances: 0 };
  expect(diagnose(s)[0]).toMatchObject({
    severity: "problem",
    subject: "pooler/pulp-db-pooler",
    what: expect.stringContaining("cannot reach the database"),
    fix: expect.stringContaining("kubectl get pods -l cnpg.io/poolerName=pulp-db-pooler"),
  });
});

test("volumes and CDI imports: an unbound claim, a failed import, an importer that restarts", () => {
  const s = healthy();
  s.pvcs.push({
    name: "pulp-backups",
    phase: "Pending",
    storageClass: "fast-rwo",
    accessModes: ["ReadWriteOnce"],
  });
  s.dataVolumes.push(
    {
      name: "pulp-image-fedora",
      phase: "Failed",
      restarts: 3,
      conditions: [
        {
          type: "Running",
          status: "False",
          reason: "Error",
          message: "Unable to connect to http data source: expected status code 200, got 404",
        },
      ],
    },
    {
      name: "pulp-image-debian",
      phase: "ImportInProgress",
      progress: "12.5%",
      restarts: 2,
      conditions: [
        {
          type: "Running",
          status: "False",
          reason: "Error",
          message: "Unable to process data: unexpected EOF",
        },
      ],
    },
  );
  const found = diagnose(s);
  expect(brief(found)).toEqual([
    "problem pvc/pulp-backups",
    "problem datavolume/pulp-image-fedora",
    "warning datavolume/pulp-image-debian",
  ]);
  expect(found[0].fix).toContain("kubectl get storageclass");
  expect(found[1].what).toContain("got 404");
  expect(found[2].what).toContain("12.5%");
});

test("the report puts problems first, each with its command", () => {
  const s = healthy();
  s.backup!.lastSuccess = undefined;
  if (s.status.ok) s.status.body.online_workers = [];
  const text = render(s, diagnose(s));
  const problem = text.indexOf("PROBLEM deployment/pulp-worker");
  const warning = text.indexOf("warning cronjob/pulp-backup");
  expect(problem).toBeGreaterThan(0);
  expect(warning).toBeGreaterThan(problem);
  expect(text).toContain("1 problem(s), 1 warning(s).");
});

test("arguments: the program's defaults, and a clear error for what it does not know", () => {
  expect(parseArgs([])).toEqual({ namespace: "pulp", instance: "pulp", json: false, kubeconfig: undefined });
  expect(parseArgs(["-n", "pulp-prod", "--instance", "team-a", "-o", "json"])).toMatchObject({
    namespace: "pulp-prod",
    instance: "team-a",
    json: true,
  });
  expect(() => parseArgs(["-o", "yaml"])).toThrow(/only json/);
  expect(() => parseArgs(["-n"])).toThrow(/-n needs a value/);
  expect(() => parseArgs(["--stack", "x"])).toThrow(/unexpected --stack/);
});

test("a volume that failed to mount on another pod of the namespace (the database's) is history once that pod has run or is gone", () => {
  const s = healthy();
  // The node authorizer did not yet know the new pod's PVC (seen on the real node, 2026-11-26); the
  // kubelet retried and CloudNativePG's initdb pod ran to completion.
  s.events.push({
    type: "Warning",
    reason: "FailedMount",
    message:
      "Unable to attach or mount volumes: failed to process volumes=[pgdata]: error processing PVC pulp-real/pulp-db-1: persistentvolumeclaims \"pulp-db-1\" is forbidden: no relationship found between node 'real-0' and this object",
    object: "Pod/pulp-db-1-initdb-6r68n",
    count: 1,
    last: ago(60),
  });
  s.otherPods = [{ name: "pulp-db-1-initdb-6r68n", phase: "Succeeded" }];
  expect(diagnose(s)).toEqual([]);
  s.otherPods = [];
  expect(diagnose(s)).toEqual([]);
  // Still waiting: a problem, as for Pulp's own pods.
  s.otherPods = [{ name: "pulp-db-1-initdb-6r68n", phase: "Pending" }];
  expect(brief(diagnose(s))).toEqual(["problem pod/pulp-db-1-initdb-6r68n"]);
  // A snapshot read before other pods were collected judges as it did.
  delete s.otherPods;
  expect(brief(diagnose(s))).toEqual(["problem pod/pulp-db-1-initdb-6r68n"]);
});
