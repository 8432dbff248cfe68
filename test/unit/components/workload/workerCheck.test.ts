// Unit: the worker's startup and readiness check (components/workload/workerCheck.py) as the probe runs
// it, against a stand-in for Django's database connection that records the SQL (python3 is part of the
// toolchain the tests need: missing, this fails). Its SQL runs on a real PostgreSQL in
// test/e2e/workerCheckDatabase.test.ts; real Pulp runs it in test/e2e/real/pulp.test.ts: a task
// dispatched while no worker runs completes once one starts.
import { execFileSync } from "child_process";
import { pulpProbes, PulpRuntime } from "../../../../components/workload/pulpProcess";
import { NO_PROBE_TUNING, pulpRuntime } from "../../helpers/runtime";
import { probeCommand, runCheck as runWith } from "../../helpers/workerCheck";

const runCheck = (workerType: PulpRuntime["workerType"], env: Record<string, string>, pulpcore?: string) =>
  runWith(workerType, { ABANDONED: "", ...env }, FAKE_DJANGO_DB, pulpcore);

// django.db as the script uses it: env UP=1 says the database answers, STRANDED what the count of stranded
// tasks returns, ABANDONED the missing worker whose task the release frees ("" none); "error" makes that
// statement raise instead. Every statement is printed as "SQL: ...".
const FAKE_DJANGO_DB = `
import os
class DatabaseError(Exception): pass
class OperationalError(DatabaseError): pass
class Cursor:
    def __enter__(self): return self
    def __exit__(self, *a): return False
    def execute(self, sql, params=None):
        print("SQL:", " ".join(sql.split()), params)
        self.release = "core_appstatus" in sql
        if os.environ["ABANDONED" if self.release else "STRANDED"] == "error":
            raise DatabaseError('relation "core_task" does not exist')
    def fetchone(self):
        if self.release:
            worker = os.environ["ABANDONED"]
            return (worker, 1, True) if worker else (None, 0, None)
        n = int(os.environ["STRANDED"])
        return (True, n, True if n else None)
class Connection:
    def ensure_connection(self):
        if os.environ["UP"] != "1": raise OperationalError("connection refused")
    def cursor(self): return Cursor()
connection = Connection()
`;

test("the command line parses as sh and the script compiles as Python", () => {
  const [sh, dashC, script] = probeCommand("pulpcore");
  expect([sh, dashC]).toEqual(["/bin/sh", "-c"]);
  expect(() => execFileSync("sh", ["-n", "-c", script])).not.toThrow();
  const python = probeCommand("pulpcore")[4];
  expect(() =>
    execFileSync("python3", ["-c", "import sys; compile(sys.stdin.read(), 'check', 'exec')"], {
      input: python,
    }),
  ).not.toThrow();
  // The same check starts and readies the worker.
  const probes = pulpProbes("worker", pulpRuntime({ workerType: "pulpcore" }), NO_PROBE_TUNING);
  expect(probes.startupProbe).toMatchObject({ exec: { command: probeCommand("pulpcore") } });
  expect(probes.livenessProbe).toBeUndefined();
});

test("not ready while the database does not answer, and nothing else is tried", () => {
  const r = runCheck("pulpcore", { UP: "0", STRANDED: "1" });
  expect([r.code, r.sql]).toEqual([1, []]);
  expect(r.out).toContain("the database does not answer: connection refused");
});

test("a stranded task wakes the workers once; none, no wakeup", () => {
  const stranded = runCheck("pulpcore", { UP: "1", STRANDED: "2" });
  expect(stranded.code).toBe(0);
  // One statement: the look and the wakeup in one transaction, under the lock (then the release's).
  expect(stranded.sql).toHaveLength(2);
  expect(stranded.sql[0]).toMatch(
    /^SQL: WITH turn AS .* pg_notify\('pulp_worker_wakeup', 'unblock'\).* \[10\]$/,
  );
  expect(stranded.out).toContain("woke the workers for 2 stranded task(s)");
  const none = runCheck("pulpcore", { UP: "1", STRANDED: "0" });
  expect([none.code, none.sql.length]).toEqual([0, 2]);
  expect(none.out).not.toContain("woke");
});

test("a failed look for stranded tasks leaves the worker ready, and says why", () => {
  const r = runCheck("pulpcore", { UP: "1", STRANDED: "error" });
  expect([r.code, r.sql.length]).toEqual([0, 2]);
  expect(r.out).toContain('cannot look for stranded tasks: relation "core_task" does not exist');
});

test("a dead worker's task is released in one statement, the workers woken to fail it; the worker stays ready", () => {
  const r = runCheck("pulpcore", { UP: "1", STRANDED: "0", ABANDONED: "1@pulp-worker-6d9f-x2x" });
  expect(r.code).toBe(0);
  expect(r.sql[1]).toMatch(
    /^SQL: WITH turn AS .* UPDATE core_task SET app_lock_id = NULL .* DELETE FROM core_appstatus .* pg_notify\('pulp_worker_wakeup', 'handle'\).* None$/,
  );
  expect(r.out).toContain("released 1 task(s) of missing worker(s) 1@pulp-worker-6d9f-x2x");
  const none = runCheck("pulpcore", { UP: "1", STRANDED: "0" });
  expect(none.out).not.toContain("released");
  const failed = runCheck("pulpcore", { UP: "1", STRANDED: "0", ABANDONED: "error" });
  expect([failed.code, failed.sql.length]).toEqual([0, 2]);
  expect(failed.out).toContain("cannot look for abandoned tasks");
});

test("before pulpcore 3.89 (tasks held by advisory locks, given back by a dead connection) nothing is released", () => {
  for (const pulpcore of ["3.85.34", "3.88.0"]) {
    const r = runCheck("pulpcore", { UP: "1", STRANDED: "0", ABANDONED: "1@pulp-worker-x" }, pulpcore);
    expect([r.code, r.sql.length]).toEqual([0, 1]);
  }
  expect(runCheck("pulpcore", { UP: "1", STRANDED: "0" }, "3.89.2").sql).toHaveLength(2);
});

test("the redis worker type (no unblocking in the database) only checks the database", () => {
  expect(probeCommand("redis")).not.toContain("--wake");
  const r = runCheck("redis", { UP: "1", STRANDED: "3" });
  expect([r.code, r.sql]).toEqual([0, []]);
});
