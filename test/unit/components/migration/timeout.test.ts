// Unit (plain calls, and the whole install under Pulumi mocks): pulp:migration.timeout, how long `pulumi up`
// awaits the restore Job and the migration Job. A bad value is refused naming the key, the value and a
// pasteable fix; the value reaches both Jobs' customTimeouts (read from the registration the engine gets).
import * as pulumi from "@pulumi/pulumi";
import { loadConfig } from "../../../../components/config/load";
import { ConfigError } from "../../../../components/config/problems";
import { parseConfig } from "../../../../components/config/parse";
import { Pulp } from "../../../../components/pulp";
import { durationSeconds } from "../../../../components/migration/timeout";
import { FIRST_INSTALL } from "../../../../components/upgrade/deployed";
import { MINIMAL } from "../../helpers/configs";
import { runWithMocks } from "../../helpers/pulumiMocks";

const problems = (timeout: unknown) => {
  try {
    parseConfig({ ...MINIMAL, migration: { timeout } });
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems;
  }
};

test("the default is hours, and durations in h, m and s are taken", () => {
  expect(parseConfig(MINIMAL).migration.timeout).toBe("6h");
  for (const ok of ["90m", "1h30m", "12h", "1m", "3600s"]) expect(problems(ok)).toEqual([]);
  expect(durationSeconds("1h30m")).toBe(5400);
});

test.each([["6 hours"], ["6"], [6], ["1d"], ["30s"], [""], ["h"]])("%p is refused with a fix", (given) => {
  const found = problems(given);
  expect(found).toHaveLength(1);
  expect(found[0]).toMatchObject({
    key: "pulp:migration.timeout",
    given,
    fix: "pulumi config rm --path 'pulp:migration.timeout'",
  });
  expect(found[0].message).toMatch(/^must be (a duration in h, m and s, such as "6h"|at least "1m")/);
});

/** The customTimeouts each Job is registered with, by resource name, for a new install restored from a backup. */
async function jobTimeouts(timeout?: string): Promise<Record<string, [string, string]>> {
  const found: Record<string, [string, string]> = {};
  const raw: Record<string, unknown> = {
    ...MINIMAL,
    database: { cloudnativepg: { imageName: "localhost/postgresql:15" } },
    restore: { backup: "20261124T031500Z" },
    ...(timeout ? { migration: { timeout } } : {}),
  };
  const secrets = {
    adminPassword: "old-admin-Pw1",
    secretKey: "restore-test-secret-key-0123456789abcdefghijklmnop",
    dbFieldsEncryptionKey: "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
  };
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries({ ...raw, ...secrets })) config[`pulp:${k}`] = v;
  await runWithMocks({ config, secretKeys: Object.keys(secrets).map((k) => `pulp:${k}`) }, () => {
    const monitor = pulumi.runtime.getMonitor() as any;
    const register = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req: any, callback: unknown) => {
      const t = req.getCustomtimeouts();
      if (req.getType() === "kubernetes:batch/v1:Job")
        found[req.getName()] = [t?.getCreate(), t?.getUpdate()];
      return register(req, callback);
    };
    const loaded = loadConfig();
    new Pulp(loaded.config.instanceName, { ...loaded, deployed: FIRST_INSTALL, cluster: {} });
  });
  return found;
}

test.each([
  [undefined, "6h"],
  ["9h", "9h"],
])("timeout %p: the restore Job and the migration Job are awaited %s", async (timeout, expected) => {
  const found = await jobTimeouts(timeout);
  expect(found["pulp-migrate"]).toEqual([expected, expected]);
  expect(found["pulp-restore"]).toEqual([expected, expected]);
});
