// The migration Job's script, rendered both ways: valid sh, and the AppStatus cleanup valid Python that
// deletes exactly what pulpcore 3.91's pre-migrate hook deletes. Real Pulp runs it in the e2e proofs.
import { execFileSync } from "child_process";
import { CLEAR_STALE_APPSTATUS, migrateScript } from "../../../../components/migration/migrationJob";

const python = (() => {
  try {
    execFileSync("python3", ["--version"]);
    return true;
  } catch {
    return false;
  }
})();

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

(python ? test : test.skip)("the shell -c argument is Python that compiles", () => {
  // What sh hands to `pulpcore-manager shell -c`: the single-quoted argument.
  const code = /shell -c '([\s\S]*)'$/.exec(CLEAR_STALE_APPSTATUS)![1];
  expect(code).toContain('c.execute("DELETE FROM core_appstatus WHERE last_heartbeat < now() - ttl")');
  expect(() =>
    execFileSync("python3", ["-c", "import sys; compile(sys.stdin.read(), 'shell', 'exec')"], {
      input: code,
    }),
  ).not.toThrow();
});
