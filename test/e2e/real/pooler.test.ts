// Real Pulp on the real node behind the program's CloudNativePG Pooler (database.cloudnativepg.pooler): the
// real operator runs PgBouncer (the test bed's Debian image) in front of a Cluster of two instances. Pulp's
// api, content apps, worker and migration Job reach PostgreSQL only through the pooler, over TLS verified
// by name (verify-full), in session mode; tasks run; PgBouncer has the settings the program gives it; and
// after a switchover the pooler follows the new primary and Pulp serves and runs tasks again. The client
// traffic's figures around the switchover are printed (issue 27 measures them in bench:faults).
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { items, kubectl, waitUntil } from "../../../testbed/harness";
import { distributeFile, get, podReport } from "../../../testbed/real/clients";
import { onPrimary, switchover } from "../../../testbed/real/cnpg";
import type { LoadTarget } from "../../../testbed/real/load";
import { underLoad } from "../../../testbed/real/loadTarget";
import { PULP_LIBPQ, pulpShell, restartedPulpContainers } from "../../../testbed/real/operate";
import { ONE_POD_EACH } from "../../../testbed/real/stack";
import { dropRelease, installRelease, ReleaseStack } from "../../../testbed/real/upgradeStack";

jest.setTimeout(30 * 60 * 1000);

const RELEASE = "3.123.1";
const STACK: ReleaseStack = {
  cloudnativepg: { instances: 2, pooler: { instances: 1 } },
  stack: "real-pooler",
  namespace: "pulp-pooler",
  database: "pulp_pooler",
  password: "pooler-admin-Zq8",
};
const NS = STACK.namespace;
const CLUSTER = "pulp-db";
const POOLER = "pulp-db-pooler";
const OUT = fs.mkdtempSync(path.join(os.tmpdir(), "pooler-"));
let target: LoadTarget;

beforeAll(
  async () => {
    // One api, content and worker pod (two pulp-web): CI runs this beside the restore suite.
    ({ target } = await installRelease(STACK, RELEASE, { config: ONE_POD_EACH }));
  },
  25 * 60 * 1000,
);

afterAll(() => {
  if (!process.env.PULP_KEEP_STACK) dropRelease(STACK);
});

/** The Pooler's running pods. */
const poolerPods = () =>
  items("pods", NS).filter(
    (p) => p.metadata.labels?.["cnpg.io/poolerName"] === POOLER && p.status.phase === "Running",
  );

/** A PgBouncer admin console command (SHOW ...) in a pooler pod, as CSV rows with a header. */
function pgbouncerShow(what: string): Record<string, string>[] {
  const pod = poolerPods()[0];
  if (!pod) throw new Error(`no running pooler pod in ${NS}:\n${podReport(NS)}`);
  // The console's `peer` rule: uid 998 is the pgbouncer user (the image's /etc/passwd).
  const out = kubectl([
    "exec",
    "-n",
    NS,
    pod.metadata.name,
    "-c",
    "pgbouncer",
    "--",
    "psql",
    "-h",
    "/controller/run",
    "-p",
    "5432",
    "-U",
    "pgbouncer",
    "-d",
    "pgbouncer",
    "--csv",
    "-c",
    `SHOW ${what}`,
  ]).trim();
  const [header, ...rows] = out.split("\n").map((line) => line.split(","));
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i]])));
}

/** The primary, and the client addresses of Pulp's sessions there (database pulp, user pulp). */
function pulpSessionsOnPrimary(): { primary: string; clients: string[] } {
  const { primary, output } = onPrimary(
    NS,
    CLUSTER,
    "SELECT DISTINCT host(client_addr) FROM pg_stat_activity WHERE datname = 'pulp' AND usename = 'pulp'",
  );
  return { primary, clients: output ? output.split("\n").sort() : [] };
}

// What the api pod runs: Pulp's own connection (host, TLS), then libpq with Pulp's settings but the
// pooler by its address, which is not in the certificate: refused if the name is really verified.
const POOLED_TLS_CHECK = `${PULP_LIBPQ}
with connection.cursor() as cursor:
    cursor.execute("SELECT host(inet_client_addr())")
    seen_from = cursor.fetchone()[0]
print(json.dumps({
    "host": s["HOST"],
    "sslmode": base["sslmode"],
    "seenFrom": seen_from,
    "asPulp": attempt(),
    "byAddress": attempt(host=socket.gethostbyname(s["HOST"])),
}))
`;

test("real Pulp reaches PostgreSQL only through the pooler, by a name the certificate carries (verify-full), in session mode with the program's PgBouncer settings", () => {
  const pods = poolerPods();
  expect(
    pods.map((p) => p.spec.containers.find((c: { name: string }) => c.name === "pgbouncer").image),
  ).toEqual([expect.stringMatching(/^localhost\/pgbouncer:/)]);
  const seen = JSON.parse(pulpShell(NS, "pulp", POOLED_TLS_CHECK).split("\n").at(-1)!);
  expect(seen).toMatchObject({ host: POOLER, sslmode: "verify-full", asPulp: "connected" });
  expect(seen.byAddress).toMatch(/does not match host name|server certificate for/);
  // The server sees Pulp's sessions coming from the pooler's pod, none from Pulp's own pods.
  const poolerIps = pods.map((p) => p.status.podIP);
  expect(poolerIps).toContain(seen.seenFrom);
  expect(pulpSessionsOnPrimary().clients.filter((ip) => !poolerIps.includes(ip))).toEqual([]);
  const config = Object.fromEntries(pgbouncerShow("CONFIG").map((row) => [row.key, row.value]));
  expect({
    pool_mode: config.pool_mode,
    server_login_retry: config.server_login_retry,
    default_pool_size: config.default_pool_size,
    max_client_conn: config.max_client_conn,
  }).toEqual({
    pool_mode: "session",
    server_login_retry: "1",
    default_pool_size: "1000",
    max_client_conn: "1000",
  });
  // Pulp's processes are the pooler's clients: the api's two gunicorn workers, the content app and the
  // worker hold sessions.
  const pulpClients = pgbouncerShow("CLIENTS").filter((c) => c.user === "pulp" && c.database === "pulp");
  expect(pulpClients.length).toBeGreaterThanOrEqual(3);
});

test("after a switchover the pooler follows the new primary: Pulp serves and runs tasks again, and the pooler never restarted", async () => {
  const before = pulpSessionsOnPrimary();
  const run = await underLoad(target, OUT, "pooled-switchover", NS, () => switchover(NS, CLUSTER), 20_000);
  process.stdout.write(
    `pooled switchover ${run.result.from} -> ${run.result.to} in ${run.result.seconds.toFixed(1)} s; ` +
      `Pulp containers restarted: ${JSON.stringify(restartedPulpContainers(NS))}\n`,
  );
  expect(run.result.from).toBe(before.primary);
  // Serves again, and a task (upload, publish, distribute) completes through the pooler.
  await waitUntil(`${NS}: status/ answers 200 after the switchover`, 180, async () => {
    const answer = await get(`${target.baseUrl}/pulp/api/v3/status/`).then(
      (r) => r.status,
      () => 0,
    );
    return answer === 200;
  });
  const file = path.join(OUT, "after-switchover.bin");
  fs.writeFileSync(file, Buffer.alloc(64 * 1024, 9));
  const pulp = { baseUrl: target.baseUrl, password: STACK.password, namespace: NS };
  const { contentPath } = distributeFile(pulp, "after-switchover", file, "after-switchover.bin");
  expect((await get(`${target.baseUrl}${contentPath}`)).status).toBe(200);
  // The pooler's server connections now go to the new primary, and Pulp's sessions there come from it.
  const after = pulpSessionsOnPrimary();
  expect(after.primary).toBe(run.result.to);
  const poolerIps = poolerPods().map((p) => p.status.podIP);
  expect(after.clients.length).toBeGreaterThan(0);
  expect(after.clients.filter((ip) => !poolerIps.includes(ip))).toEqual([]);
  const servers = pgbouncerShow("SERVERS").filter((s) => s.database === "pulp");
  expect(servers.length).toBeGreaterThan(0);
  expect(poolerPods().map((p) => p.status.containerStatuses[0].restartCount)).toEqual([0]);
});
