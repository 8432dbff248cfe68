// Unit: the migration Job's script, rendered every way: valid sh, and its Python snippets valid Python (the
// AppStatus cleanup deletes exactly what pulpcore 3.91's pre-migrate hook deletes). Real Pulp runs them in
// the e2e proofs (restore.test.ts clears the cache of an install restored over).
import { execFileSync } from "child_process";
import {
  CLEAR_RESPONSE_CACHE,
  CLEAR_STALE_APPSTATUS,
  migrateScript,
} from "../../../../components/migration/migrationJob";

test.each([true, false])("clearStaleAppStatus %s: sh parses the script", (clear) => {
  const script = migrateScript({ clearStaleAppStatus: clear });
  expect(() => execFileSync("sh", ["-n", "-c", script])).not.toThrow();
  expect(script.includes("core_appstatus")).toBe(clear);
});

test("the cleanup runs between waiting for the database and migrate", () => {
  const lines = migrateScript({ clearStaleAppStatus: true }).split("\n");
  const at = (text: string) => lines.findIndex((l) => l.includes(text));
  expect(at("wait_on_postgres")).toBeLessThan(at("pulpcore-manager shell"));
  expect(at("DELETE FROM core_appstatus")).toBeLessThan(at("migrate --noinput"));
});

test.each([true, false])(
  "clearCache %s: the cache is cleared after migrate, before the password",
  (clear) => {
    const lines = migrateScript({ clearStaleAppStatus: false, clearCache: clear }).split("\n");
    const at = (text: string) => lines.findIndex((l) => l.includes(text));
    expect(at("scan_iter") >= 0).toBe(clear);
    if (clear) {
      expect(at("migrate --noinput")).toBeLessThan(at("get_redis_connection"));
      expect(at("scan_iter")).toBeLessThan(at("reset-admin-password"));
    }
  },
);

// python3 is part of the toolchain the tests need (testbed/toolchain.sh): missing, this fails.
test.each([
  [
    "the AppStatus cleanup",
    CLEAR_STALE_APPSTATUS,
    "DELETE FROM core_appstatus WHERE last_heartbeat < now() - ttl",
  ],
  ["the cache clearing", CLEAR_RESPONSE_CACHE, 'scan_iter(_type="hash")'],
])("%s: the shell -c argument is Python that compiles", (_, snippet, expected) => {
  // What sh hands to `pulpcore-manager shell -c`: the single-quoted argument.
  const code = /shell -c '([\s\S]*)'$/.exec(snippet)![1];
  expect(code).toContain(expected);
  expect(() =>
    execFileSync("python3", ["-c", "import sys; compile(sys.stdin.read(), 'shell', 'exec')"], {
      input: code,
    }),
  ).not.toThrow();
});
