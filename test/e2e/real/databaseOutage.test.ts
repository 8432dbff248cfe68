// Real Pulp on the real node: a database outage on the program's own install (local images, one
// CloudNativePG instance run by the real operator), seen through pulp-web with pulp-cli. Its own suite and
// install so that it can run alone on the node (CI runs it after the lanes): CloudNativePG hibernates only
// a healthy cluster, and on a busy node the operator started a cut-off instance again (two lane runs).
import * as path from "path";
import { dropStack, freshStack, items, mustPulumi, setSecrets } from "../../../testbed/harness";
import { REPO } from "../../../testbed/local/environment";
import { portForward, Pulp, pulpCli } from "../../../testbed/real/clients";
import { ensureCnpgOperator, hibernate, wake } from "../../../testbed/real/cnpg";
import { doctor } from "../../../testbed/real/operate";
import { importImages, ONE_POD_EACH } from "../../../testbed/real/stack";

jest.setTimeout(20 * 60 * 1000);

const STACK = "real-outage";
const NS = "pulp-outage";
const PORT = 24888;
const ORIGIN = `http://127.0.0.1:${PORT}`;
const DATABASE_CLUSTER = "pulp-db";
const DEV_STACK = path.join(REPO, "Pulumi.dev.yaml");
const BASE = { namespace: NS, contentOrigin: ORIGIN, ...ONE_POD_EACH };
const pulp: Pulp = { baseUrl: ORIGIN, password: "outage-admin-password-Wd3", namespace: NS };
const timings: Record<string, number> = {};
let forward: { stop: () => void } | undefined;

beforeAll(
  async () => {
    importImages();
    ensureCnpgOperator();
    freshStack(STACK, BASE, DEV_STACK);
    setSecrets(STACK, { "pulp:adminPassword": pulp.password });
    timings.freshUp = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]).seconds;
    forward = await portForward(NS, "pulp-web", PORT, 8080);
    expect(pulpCli(pulp, ["status"]).database_connection.connected).toBe(true);
  },
  15 * 60 * 1000,
);

afterAll(() => {
  forward?.stop();
  process.stdout.write(`database outage timings (s): ${JSON.stringify(timings)}\n`);
  if (!process.env.PULP_KEEP_STACK) dropStack(STACK, NS);
});

const problems = (findings: { severity: string; subject: string; what: string }[]) =>
  findings.filter((f) => f.severity === "problem").map((f) => `${f.subject}: ${f.what}`);

/** Restarts per Pulp process kind (api, content, worker) since the pods started, and how each ended. */
function pulpRestarts(): { count: Record<string, number>; endings: string[] } {
  const count: Record<string, number> = { api: 0, content: 0, worker: 0 };
  const endings: string[] = [];
  for (const pod of items("pods", NS)) {
    const kind = /^pulp-(api|content|worker)-/.exec(pod.metadata.name)?.[1];
    if (!kind) continue;
    for (const c of pod.status.containerStatuses ?? []) {
      count[kind] += c.restartCount;
      const ended = c.lastState?.terminated;
      if (ended) endings.push(`${kind}: exit ${ended.exitCode} (${ended.reason})`);
    }
  }
  return { count, endings };
}

// pulpcore's processes exit when they cannot write their heartbeat (the api: app/entrypoint.py, "Exit
// process if heartbeat fails"), so an outage longer than a heartbeat interval restarts them whatever the
// probes say. Measured here: every Pulp container restarted once in a 130 s outage. What the program owns:
// nothing is left crash-looping or needs a hand, and Pulp serves again soon after the database is back.
test("a database outage (CloudNativePG hibernates every instance): Pulp's processes restart by themselves and Pulp serves again once the database is back, and no process ends after that", async () => {
  const before = pulpRestarts();
  const outage = Date.now();
  try {
    await hibernate(NS, DATABASE_CLUSTER);
    // Longer than a database-bound liveness probe would take to restart a pod: 20 s period x 5 failures.
    await new Promise((r) => setTimeout(r, 60_000));
    // Meanwhile the doctor names it: the api has no ready pod (its readiness asks the database) or, if it
    // still answers, Pulp's status says the database is away.
    const asked = Date.now();
    const checkup = doctor(NS);
    timings.doctorSeconds = (Date.now() - asked) / 1000;
    expect(checkup.code).toBe(2);
    expect(problems(checkup.findings)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(service\/pulp-api|database): /)]),
    );
    await new Promise((r) => setTimeout(r, Math.max(0, outage + 130_000 - Date.now())));
  } finally {
    await wake(NS, DATABASE_CLUSTER);
  }
  const back = Date.now();
  let status: { database_connection: { connected: boolean }; online_workers: unknown[] } | undefined;
  while (Date.now() - back < 300_000) {
    try {
      status = pulpCli(pulp, ["status"]);
      if (status?.database_connection.connected && status.online_workers.length > 0) break;
    } catch {
      // pulp-cli fails while the api has no database: keep asking
    }
    await new Promise((r) => setTimeout(r, 5000));
  }
  timings.recoveryAfterDatabaseSeconds = (Date.now() - back) / 1000;
  expect(status?.database_connection.connected).toBe(true);
  expect(status?.online_workers.length).toBeGreaterThan(0);

  const after = pulpRestarts();
  for (const kind of ["api", "content", "worker"]) {
    timings[`${kind}RestartsDuringOutage`] = after.count[kind] - before.count[kind];
  }
  process.stdout.write(`database outage: container endings ${JSON.stringify(after.endings)}\n`);
  timings.livenessKillsDuringOutage = items("events", NS).filter(
    (e) =>
      new Date(e.lastTimestamp ?? e.eventTime).getTime() >= outage - 1000 &&
      e.reason === "Killing" &&
      /liveness probe/i.test(e.message ?? ""),
  ).length;
  // Nothing was killed for memory, and every Pulp pod is ready again: no crash loop is left behind.
  for (const ending of after.endings) expect(ending).not.toMatch(/OOMKilled/);
  const notReady = () =>
    items("pods", NS)
      .filter((p) => /^pulp-(api|content|worker)-/.test(p.metadata.name))
      .filter(
        (p) => p.status.conditions?.find((c: { type: string }) => c.type === "Ready")?.status !== "True",
      )
      .map((p) => p.metadata.name);
  const deadline = Date.now() + 180_000;
  while (notReady().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5000));
  expect(notReady()).toEqual([]);

  // And none ends later: a heartbeat stuck on a connection to the vanished server once ended the api
  // minutes after the database was back, mid-request (502). The settings' connection limits end such a
  // wait within about 30 s; a minute of requests with no restart shows none is left.
  const settled = pulpRestarts();
  const failed: string[] = [];
  for (const until = Date.now() + 60_000; Date.now() < until;) {
    try {
      pulpCli(pulp, ["status"]);
    } catch (e) {
      failed.push(String(e).slice(0, 300));
    }
    await new Promise((r) => setTimeout(r, 3000));
  }
  expect({ restarts: pulpRestarts().count, failed }).toEqual({ restarts: settled.count, failed: [] });
  // The doctor sees no problem left; the restarts are warnings that point at the database.
  const recovered = doctor(NS);
  expect(problems(recovered.findings)).toEqual([]);
  expect(recovered.findings.map((f) => f.what).join("\n")).toMatch(/cannot reach its database/);
});
