// Real Pulp on the real node: an upgrade across a real guard. 3.89.0 ships core 0143_require_app_lock_zdu,
// RequireVersion("core", "3.87"): `migrate` refuses while a process older than 3.87 heartbeats. From
// pulpcore's 3.85 line (3.85.34) to 3.89.2, first by hand (the new release's migration while the old one
// runs: refused), then as planned: stop-the-world, under client traffic from the load generator through the
// pulp-web Service's ClusterIP, whose content cache keeps downloads of what clients fetched before going
// through the stop. 3.89.2 also lacks pulpcore's own stale-AppStatus cleanup, so the
// migration Job runs the program's (components/migration/migrationJob.ts) for the first time on real Pulp.
import * as fs from "fs";
import * as path from "path";
import { items, kubectl, kubectlTry, mustPulumi } from "../../../testbed/harness";
import { STATE } from "../../../testbed/local/environment";
import { psql } from "../../../testbed/real/database";
import type { LoadTarget } from "../../../testbed/real/load";
import { longestWithoutSuccess } from "../../../testbed/real/loadReport";
import { underLoad } from "../../../testbed/real/loadTarget";
import { requireLocalImage } from "../../../testbed/real/stack";
import { releaseFixture, RELEASE_FIXTURES } from "../../../testbed/real/releaseFixtures";
import { configureRelease, coreVersion, dropRelease, previewPlans } from "../../../testbed/real/upgradeStack";

jest.setTimeout(40 * 60 * 1000);

// The install: testbed/real/releaseFixtures.ts (made ahead in CI).
const { stack: RELEASE_STACK, release: FROM } = RELEASE_FIXTURES.guarded;
const { stack: STACK, namespace: NS, database: DATABASE } = RELEASE_STACK;
const TO = "3.89.2";
const ARTIFACTS = path.join(STATE, "real-guard");
const timings: Record<string, number> = {};
let target: LoadTarget;

/** The program's migration Job (the newest, when an upgrade made a second). */
const migrationJobs = () =>
  items("jobs", NS)
    .filter((j) => j.metadata.name.startsWith("pulp-migrate-"))
    .sort((a, b) => Date.parse(a.metadata.creationTimestamp) - Date.parse(b.metadata.creationTimestamp));

beforeAll(
  async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const installed = await releaseFixture("guarded");
    timings.installUp = installed.seconds;
    target = installed.target;
  },
  15 * 60 * 1000,
);

afterAll(() => {
  process.stdout.write(`real guarded-upgrade timings (s): ${JSON.stringify(timings)}\n`);
  if (!process.env.PULP_KEEP_STACK) dropRelease(RELEASE_STACK);
});

test(`by hand, ${TO}'s migration refuses to run while ${FROM} heartbeats (core 0143 needs 3.87)`, () => {
  expect(coreVersion(target)).toBe(FROM);
  // What a user who runs the new release's migration by hand gets: the program's own Job, new image.
  const [installed] = migrationJobs();
  const template = installed.spec.template;
  const image = requireLocalImage(`localhost/pulp-minimal:${TO}`);
  const containers = (list: { image: string }[] = []) => list.map((c) => ({ ...c, image }));
  const manual = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "migrate-by-hand", namespace: NS },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: { "app.kubernetes.io/name": "pulp-by-hand" } },
        spec: {
          ...template.spec,
          initContainers: containers(template.spec.initContainers),
          containers: containers(template.spec.containers),
        },
      },
    },
  };
  kubectl(["apply", "-f", "-"], JSON.stringify(manual));
  try {
    const waited = kubectlTry([
      "-n",
      NS,
      "wait",
      "--for=condition=Failed",
      "job/migrate-by-hand",
      "--timeout=300s",
    ]);
    const log = kubectl(["-n", NS, "logs", "job/migrate-by-hand", "--all-containers"]);
    fs.writeFileSync(path.join(ARTIFACTS, "migrate-by-hand.log"), log);
    expect(waited.ok).toBe(true);
    expect(log).toMatch(/Incompatible versions detected \(core >= 3\.87 needed\)/);
    expect(log).toMatch(new RegExp(`'core'='${FROM.replace(/\./g, "\\.")}'`));
  } finally {
    kubectlTry(["-n", NS, "delete", "job", "migrate-by-hand", "--wait=true"]);
  }
  // The refusal came before anything of 3.89 that old code cannot take: the old release still serves.
  expect(coreVersion(target)).toBe(FROM);
});

test(`the planned stop-the-world ${FROM} -> ${TO}: the preview names the guard, and the outage stays within its parts`, async () => {
  configureRelease(RELEASE_STACK, TO);
  expect(previewPlans(RELEASE_STACK)).toEqual([
    {
      kind: "stop-the-world",
      summary: expect.stringMatching(
        /^upgrade 3\.85\.34 -> 3\.89\.2 NEEDS DOWNTIME: core 0143_require_app_lock_zdu \(in 3\.89\.0\) refuses to run while a process older than core 3\.87\.0 heartbeats\..* about 120 s plus/,
      ),
    },
  ]);

  // What a 3.85.34 worker killed without a goodbye leaves: its AppStatus row, an hour old. 3.89.2's guard
  // counts every AppStatus row however old (pulpcore/migrations.py), so this row alone would refuse
  // `migrate` forever; the Job's cleanup must delete it first.
  psql(
    "CREATE TEMP TABLE stale AS SELECT * FROM core_appstatus WHERE app_type = 'worker' LIMIT 1; " +
      "UPDATE stale SET pulp_id = gen_random_uuid(), name = 'killed@gone', last_heartbeat = now() - interval '1 hour'; " +
      "INSERT INTO core_appstatus SELECT * FROM stale",
    DATABASE,
  );
  expect(psql("SELECT count(*) FROM core_appstatus WHERE name = 'killed@gone'", DATABASE)).toBe("1");

  const {
    result: up,
    records,
    report,
    during,
  } = await underLoad(target, ARTIFACTS, "stop-the-world", NS, () =>
    mustPulumi(STACK, ["up", "--yes", "--skip-preview"]),
  );
  timings.stopTheWorldUp = up.seconds;
  expect(coreVersion(target)).toBe(TO);

  // The parts of the window, from the step's outputs and the API server's timestamps (whole seconds).
  const state = JSON.parse(mustPulumi(STACK, ["stack", "export"]).stdout).deployment.resources;
  const step = state.find(
    (r: { urn: string; custom: boolean }) => r.urn.includes("pulp:upgrade:StopTheWorld$") && r.custom,
  );
  const { lastPodGoneAt, heartbeatsExpiredAt } = step.outputs;
  const job = migrationJobs().pop();
  const jobLog = kubectl(["-n", NS, "logs", `job/${job.metadata.name}`, "--all-containers"]);
  fs.writeFileSync(path.join(ARTIFACTS, "migration-job.log"), jobLog);
  // The outage is the API's (downloads go on from pulp-web's copy), so it ends with the first new api pod.
  const firstNewReady = Math.min(
    ...items("pods", NS)
      .filter((p) => /^pulp-api-/.test(p.metadata.name))
      .map((p) =>
        Date.parse(p.status.conditions.find((c: { type: string }) => c.type === "Ready").lastTransitionTime),
      ),
  );
  // The API's outage: downloads go on from pulp-web's content cache, so it is measured on the API's requests.
  const outage = longestWithoutSuccess(
    records.filter((r) => r.kind !== "content"),
    during[0],
    during[1] + 30_000,
  );
  const parts = {
    stoppingMs: Date.parse(lastPodGoneAt) - outage.from,
    ttlMs: Date.parse(heartbeatsExpiredAt) - Date.parse(lastPodGoneAt),
    migrationMs: Date.parse(job.status.completionTime) - Date.parse(job.status.startTime),
    startUpMs: firstNewReady - Date.parse(job.status.completionTime),
  };
  const bound = Object.values(parts).reduce((a, b) => a + b, 0);
  timings.outageSeconds = outage.ms / 1000;
  process.stdout.write(
    `stop-the-world outage ${outage.ms} ms; parts ${JSON.stringify(parts)} = ${bound} ms\n`,
  );
  fs.writeFileSync(path.join(ARTIFACTS, "outage.json"), JSON.stringify({ outage, parts, bound }, null, 2));

  // The stale-AppStatus cleanup ran before `migrate` and took the killed worker's row (the old processes
  // that stopped gracefully removed their own).
  expect(jobLog).toMatch(/AppStatus rows past their TTL deleted: [1-9]/);
  expect(psql("SELECT count(*) FROM core_appstatus WHERE name = 'killed@gone'", DATABASE)).toBe("0");
  // Downtime happened, for at least the heartbeat TTL; and nothing idled between the parts: clients were
  // served again within a few seconds of the first new api pod being ready, and a request that pulp-web
  // held (it tries the API for 30 s) at that moment, within the client's 10 s timeout after it.
  expect(outage.ms).toBeGreaterThanOrEqual(parts.ttlMs);
  expect(outage.ms).toBeLessThanOrEqual(bound + 20_000);
  // Content through the stop: every download of the file the clients fetched before was answered, from
  // pulp-web's copy only while the API was out (never before the step or after it, when a content app
  // answers). pulp-web tries the API for 30 s to ride out short gaps (components/web/nginx.ts), so an API
  // request in the outage ends as its 503 with when to retry, or as this client's 10 s timeout; never a 502.
  const content = records.filter((r) => r.kind === "content");
  const inOutage = (r: { t: number }) => r.t >= outage.from - 15_000 && r.t < outage.to;
  const apiFailures = records.filter((r) => !r.ok && r.kind !== "content" && r.kind !== "task");
  const contentDuring = content.filter(inOutage);
  process.stdout.write(
    `stop-the-world content: ${contentDuring.filter((r) => r.ok).length} of ${contentDuring.length} downloads ` +
      `served in the outage, ${contentDuring.filter((r) => r.cached).length} from pulp-web's copy; ` +
      `API failures ${apiFailures.length}: ${JSON.stringify([...new Set(apiFailures.map((r) => r.error?.slice(0, 40)))])}\n`,
  );
  expect({
    contentFailed: content.filter((r) => !r.ok).map((r) => r.error),
    cachedOutsideOutage: content.filter((r) => r.cached && !inOutage(r)).length,
    cachedInOutage: contentDuring.some((r) => r.cached),
    cachedBefore: report.before.cached,
    cachedAfter: report.after.cached,
    apiFailuresNot503: apiFailures
      .filter((r) => !/^(HTTP 503 \(Retry-After 30\)|no answer in 10000 ms)/.test(r.error ?? ""))
      .slice(0, 5),
  }).toEqual({
    contentFailed: [],
    cachedOutsideOutage: 0,
    cachedInOutage: true,
    cachedBefore: 0,
    cachedAfter: 0,
    apiFailuresNot503: [],
  });
  // Before the stop and after the start, no request failed. What the tasks and workers were doing is kept
  // beside the load records, for a task that did not finish.
  fs.writeFileSync(
    path.join(ARTIFACTS, "tasks-after.txt"),
    psql(
      "SELECT pulp_id, name, state, pulp_created, unblocked_at, started_at, finished_at, app_lock_id, " +
        "reserved_resources_record, versions FROM core_task WHERE pulp_created > now() - interval '15 minutes' " +
        "ORDER BY pulp_created",
      DATABASE,
    ),
  );
  fs.writeFileSync(
    path.join(ARTIFACTS, "workers-after.log"),
    kubectlTry(["-n", NS, "logs", "deployment/pulp-worker", "--all-containers", "--tail", "400"]).output,
  );
  // pulpcore 3.89's worker acts on an "unblock" wakeup only when it arrives during its select (worker.py
  // sleep(); 3.123 checks the flag after every wake), so an upload queued behind the task the old release
  // left waiting stayed blocked (unblocked_at NULL) until the next dispatch: seen in each of three runs.
  // The worker check now wakes the workers for such a task (components/workload/workerCheck.py), so
  // every upload completes.
  expect({
    before: report.before.failures,
    after: report.after.failures,
    afterFailed: report.after.failed,
  }).toEqual({
    before: [],
    after: [],
    afterFailed: 0,
  });
});
