// E2E without a cluster: the worker check's SQL (components/workload/workerCheck.py) on a real PostgreSQL 15
// (Debian's postgresql-15 server binaries, which test/e2e/images/real-pulp.sh needs too; missing, this
// fails): a throwaway server on a Unix socket only, a core_task shaped as pulpcore's, the probe's command
// run as the kubelet runs it with a django.db that sends each statement through psql.
import { ChildProcess, execFileSync, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { runCheck } from "../unit/helpers/workerCheck";

const PGBIN = "/usr/lib/postgresql/15/bin";
let pg: { dir: string; socket: string; asUser: string[] } | undefined;

/** psql on the throwaway server: one -c is one transaction, as Django's autocommit runs a statement. */
const psqlArgs = () => ["-X", "-q", "-At", "-F", "\t", "-h", pg!.socket, "-U", "postgres", "-d", "postgres"];
function psql(sql: string): string {
  return execFileSync("psql", [...psqlArgs(), "-v", "ON_ERROR_STOP=1", "-c", sql], { encoding: "utf8" });
}

// django.db over psql: %s takes the (integer) parameters as psycopg would; a row's t/f/''/digits read
// back as Python values.
const PSQL_DJANGO_DB = `
import os, subprocess
class DatabaseError(Exception): pass
class OperationalError(DatabaseError): pass
def value(v):
    return {"t": True, "f": False, "": None}.get(v, int(v) if v.lstrip("-").isdigit() else v)
class Cursor:
    row = None
    def __enter__(self): return self
    def __exit__(self, *a): return False
    def execute(self, sql, params=None):
        sql = sql % tuple(int(p) for p in params or ())
        print("SQL:", " ".join(sql.split()))
        r = subprocess.run(os.environ["PSQL"].split("\\x1f") + ["-v", "ON_ERROR_STOP=1", "-c", sql],
                           capture_output=True, text=True)
        if r.returncode: raise DatabaseError(r.stderr)
        lines = r.stdout.splitlines()
        self.row = tuple(value(v) for v in lines[0].split("\\t")) if lines else None
    def fetchone(self): return self.row
class Connection:
    def ensure_connection(self): pass
    def cursor(self): return Cursor()
connection = Connection()
`;

// core_appstatus and core_task as pulpcore 3.123 has them: the columns the check reads and writes, the
// model's indexes, and the lock's foreign key as Django makes it (deferred; SET_NULL is Django's, not SQL's).
const CORE_TASK = `
CREATE TABLE core_appstatus (
  pulp_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  app_type varchar(10) NOT NULL,
  name text NOT NULL,
  ttl interval NOT NULL,
  last_heartbeat timestamptz NOT NULL
);
CREATE TABLE core_task (
  pulp_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  pulp_created timestamptz NOT NULL,
  pulp_last_updated timestamptz,
  state text NOT NULL,
  name text NOT NULL DEFAULT 'pulpcore.app.tasks.test',
  unblocked_at timestamptz,
  reserved_resources_record text[],
  app_lock_id uuid REFERENCES core_appstatus DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX ON core_task (pulp_created);
CREATE INDEX ON core_task (unblocked_at);
CREATE INDEX ON core_task (state);
CREATE INDEX ON core_task (state, pulp_created);
CREATE INDEX ON core_task USING gin (reserved_resources_record);`;

beforeAll(() => {
  for (const bin of [`${PGBIN}/initdb`, `${PGBIN}/pg_ctl`]) {
    if (!fs.existsSync(bin)) throw new Error(`missing ${bin}: apt-get install postgresql-15`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "worker-check-pg-"));
  // initdb refuses root: the server runs as postgres then.
  const asUser = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];
  if (asUser.length) execFileSync("chown", ["postgres", dir]);
  pg = { dir, socket: dir, asUser };
  const run = (args: string[]) =>
    execFileSync(asUser[0] ?? args[0], [...asUser.slice(1), ...(asUser.length ? args : args.slice(1))]);
  run([`${PGBIN}/initdb`, "-D", `${dir}/data`, "-A", "trust", "-U", "postgres", "--no-sync"]);
  // No TCP: only a socket in the directory, so nothing else on the machine can collide or connect.
  run([
    `${PGBIN}/pg_ctl`,
    "-D",
    `${dir}/data`,
    "-w",
    "-l",
    `${dir}/log`,
    "-o",
    `-c listen_addresses='' -k ${dir}`,
    "start",
  ]);
  psql(CORE_TASK);
}, 60000);

afterAll(() => {
  if (!pg) return;
  const { dir, asUser } = pg;
  const stop = [`${PGBIN}/pg_ctl`, "-D", `${dir}/data`, "-m", "immediate", "stop"];
  spawnSync(asUser[0] ?? stop[0], [...asUser.slice(1), ...(asUser.length ? stop : stop.slice(1))]);
  fs.rmSync(dir, { recursive: true, force: true });
});

type Task = { state: string; minutesAgo: number; resources: string[]; unblocked?: boolean };

/** Replaces core_task's rows with these tasks, then runs the pulpcore worker's probe against them. */
function checkWith(tasks: Task[]) {
  const rows = tasks.map(
    (t) =>
      `(now() - interval '${t.minutesAgo} minutes', '${t.state}', ` +
      `${t.unblocked ? "now() - interval '1 second'" : "NULL"}, ` +
      `ARRAY[${t.resources.map((r) => `'${r}'`).join(", ")}]::text[])`,
  );
  psql(
    "TRUNCATE core_task, core_appstatus;" +
      (rows.length
        ? `INSERT INTO core_task (pulp_created, state, unblocked_at, reserved_resources_record) VALUES ${rows.join(", ")}`
        : ""),
  );
  const r = runCheck("pulpcore", { PSQL: ["psql", ...psqlArgs()].join("\x1f") }, PSQL_DJANGO_DB);
  expect(r.out).not.toContain("cannot look");
  expect(r.code).toBe(0);
  const woke = /woke the workers for (\d+) stranded task/.exec(r.out);
  return woke ? Number(woke[1]) : 0;
}

const REPO = "/pulp/api/v3/repositories/rpm/rpm/0199a1b2/";
const REMOTE = "/pulp/api/v3/remotes/rpm/rpm/0199a1b3/";
const sync = { state: "running", minutesAgo: 120, resources: [REPO, `shared:${REMOTE}`] };

test("real PostgreSQL: a task behind an exclusive holder waits, shared or not; no wakeup", () => {
  // A second sync of the repository behind the first.
  expect(checkWith([sync, { state: "waiting", minutesAgo: 60, resources: [REPO, `shared:${REMOTE}`] }])).toBe(
    0,
  );
  // A task reading the repository (shared:) behind the sync writing it: "X" and "shared:X" conflict.
  expect(checkWith([sync, { state: "waiting", minutesAgo: 60, resources: [`shared:${REPO}`] }])).toBe(0);
  // Writing behind a reader.
  const reader = { state: "running", minutesAgo: 120, resources: [`shared:${REPO}`] };
  expect(checkWith([reader, { state: "waiting", minutesAgo: 60, resources: [REPO] }])).toBe(0);
});

test("real PostgreSQL: shared behind shared is not blocked, so it is stranded and woken", () => {
  // The remote is taken shared by the running sync and by the waiting one of another repository.
  const other = {
    state: "waiting",
    minutesAgo: 60,
    resources: ["/pulp/api/v3/repositories/rpm/rpm/2/", `shared:${REMOTE}`],
  };
  expect(checkWith([sync, other])).toBe(1);
});

test("real PostgreSQL: behind an earlier waiting task the queue keeps its order", () => {
  // The first sync is already unblocked (waiting for a free worker); the second waits behind it.
  const first = { state: "waiting", minutesAgo: 61, resources: [REPO], unblocked: true };
  expect(checkWith([first, { state: "waiting", minutesAgo: 60, resources: [REPO] }])).toBe(0);
  // Neither unblocked: only the first is stranded.
  expect(
    checkWith([
      { ...first, unblocked: false },
      { state: "waiting", minutesAgo: 60, resources: [REPO] },
    ]),
  ).toBe(1);
  // A later task holding the resource does not block an earlier one (the workers go in pulp_created order).
  expect(
    checkWith([
      { state: "waiting", minutesAgo: 60, resources: [REPO] },
      { state: "canceling", minutesAgo: 1, resources: [REPO] },
    ]),
  ).toBe(1);
});

test("real PostgreSQL: truly stranded tasks are woken once they waited over 10 s; finished tasks hold nothing", () => {
  const done = { state: "completed", minutesAgo: 120, resources: [REPO] };
  expect(
    checkWith([
      done,
      { state: "waiting", minutesAgo: 5, resources: [REPO] },
      { state: "waiting", minutesAgo: 4, resources: [] },
    ]),
  ).toBe(2);
  // Dispatched just now: the workers are still on it.
  expect(checkWith([{ state: "waiting", minutesAgo: 0, resources: [REPO] }])).toBe(0);
  expect(checkWith([])).toBe(0);
});

/** An interactive psql session: send statements, wait for what it prints. */
function session() {
  const p: ChildProcess = spawn("psql", psqlArgs(), { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  p.stdout!.on("data", (d) => (out += d));
  p.stderr!.on("data", (d) => (out += d));
  const printed = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const t0 = Date.now();
      const poll = () =>
        out.includes(text)
          ? resolve()
          : Date.now() - t0 > 10000
            ? reject(new Error(`psql did not print ${text}: ${out}`))
            : setTimeout(poll, 20);
      poll();
    });
  return {
    send: (sql: string) => p.stdin!.write(`${sql}\n`),
    printed,
    end: () => new Promise<string>((resolve) => (p.on("close", () => resolve(out)), p.stdin!.end())),
  };
}

test("real PostgreSQL: the wakeup reaches the workers' channel; while another pod looks, this one skips", async () => {
  const stranded = { state: "waiting", minutesAgo: 5, resources: [REPO] };
  const listener = session();
  listener.send("LISTEN pulp_worker_wakeup; SELECT 'listening';");
  await listener.printed("listening");
  expect(checkWith([stranded])).toBe(1);
  listener.send("SELECT 'after';");
  await listener.printed("after");
  expect(await listener.end()).toMatch(
    /Asynchronous notification "pulp_worker_wakeup" with payload "unblock"/,
  );

  const otherPod = session();
  otherPod.send("BEGIN; SELECT pg_advisory_xact_lock(1886743664, 1); SELECT 'holding';");
  await otherPod.printed("holding");
  expect(checkWith([stranded])).toBe(0);
  otherPod.send("COMMIT;");
  await otherPod.end();
  expect(checkWith([stranded])).toBe(1);
});

type App = { name: string; type: string; heartbeatSecondsAgo: number; task?: string };

/**
 * Replaces the apps (each may hold a task in a state) with these, runs the probe, and returns what is left:
 * the apps' names and each task's state and holder.
 */
function releaseWith(apps: App[]) {
  psql("TRUNCATE core_task, core_appstatus;");
  for (const app of apps) {
    psql(
      `WITH a AS (INSERT INTO core_appstatus (app_type, name, ttl, last_heartbeat) VALUES ` +
        `('${app.type}', '${app.name}', interval '30 seconds', now() - interval '${app.heartbeatSecondsAgo} seconds') ` +
        `RETURNING pulp_id) ` +
        (app.task
          ? `INSERT INTO core_task (pulp_created, state, unblocked_at, reserved_resources_record, app_lock_id) ` +
            `SELECT now() - interval '1 hour', '${app.task}', now() - interval '1 hour', ARRAY['${REPO}'], pulp_id FROM a`
          : "SELECT 1 FROM a"),
    );
  }
  const r = runCheck("pulpcore", { PSQL: ["psql", ...psqlArgs()].join("\x1f") }, PSQL_DJANGO_DB);
  expect(r.out).not.toContain("cannot look");
  expect(r.code).toBe(0);
  return {
    out: r.out,
    apps: psql("SELECT name FROM core_appstatus ORDER BY name").split("\n").filter(Boolean),
    tasks: psql(
      "SELECT t.state || ' ' || coalesce(a.name, 'unheld') FROM core_task t LEFT JOIN core_appstatus a " +
        "ON a.pulp_id = t.app_lock_id ORDER BY 1",
    )
      .split("\n")
      .filter(Boolean),
  };
}

test("real PostgreSQL: a worker silent for over twice its TTL loses its record and its task's lock; others are left", () => {
  const r = releaseWith([
    { name: "1@pulp-worker-dead", type: "worker", heartbeatSecondsAgo: 70, task: "running" },
    { name: "1@pulp-worker-canceling", type: "worker", heartbeatSecondsAgo: 70, task: "canceling" },
    // Missing for pulpcore (over one TTL) but under two: maybe only slow.
    { name: "1@pulp-worker-slow", type: "worker", heartbeatSecondsAgo: 45, task: "running" },
    { name: "1@pulp-worker-live", type: "worker", heartbeatSecondsAgo: 5, task: "running" },
    // Dead but holding nothing, and an api process: pulpcore's own cleanup's to delete.
    { name: "1@pulp-worker-idle", type: "worker", heartbeatSecondsAgo: 600 },
    { name: "1@pulp-api-gone", type: "api", heartbeatSecondsAgo: 600 },
  ]);
  expect(r.out).toMatch(
    /released 2 task\(s\) of missing worker\(s\) 1@pulp-worker-(dead|canceling), 1@pulp-worker-/,
  );
  expect(r.apps).toEqual([
    "1@pulp-api-gone",
    "1@pulp-worker-idle",
    "1@pulp-worker-live",
    "1@pulp-worker-slow",
  ]);
  expect(r.tasks).toEqual([
    "canceling unheld",
    "running 1@pulp-worker-live",
    "running 1@pulp-worker-slow",
    "running unheld",
  ]);
  // Nothing more to release: no second wakeup.
  expect(
    releaseWith([{ name: "1@pulp-worker-live", type: "worker", heartbeatSecondsAgo: 5, task: "running" }])
      .out,
  ).not.toContain("released");
});

test("real PostgreSQL: the release wakes the workers to handle the unheld task", async () => {
  const listener = session();
  listener.send("LISTEN pulp_worker_wakeup; SELECT 'listening';");
  await listener.printed("listening");
  releaseWith([{ name: "1@pulp-worker-dead", type: "worker", heartbeatSecondsAgo: 70, task: "running" }]);
  listener.send("SELECT 'after';");
  await listener.printed("after");
  expect(await listener.end()).toMatch(
    /Asynchronous notification "pulp_worker_wakeup" with payload "handle"/,
  );
});
