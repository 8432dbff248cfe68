// Real Pulp on the real node through an in-place PostgreSQL major upgrade of the program's CloudNativePG
// cluster, as docs/operations.md ("Upgrading PostgreSQL") tells a user to run it: the test bed's 15
// (bookworm) to 17 (trixie, with the old release's libraries: testbed/images/recipes/postgresql-17.sh,
// built on request), by `database.cloudnativepg.imageName` alone. The real operator stops the instance and
// runs pg_upgrade in its major-upgrade Job. The preview warns and plans nothing but the Cluster's update;
// after `up` the data directory is 17's on the same volume, and what Pulp held before (a distributed
// file, the admin login) is there; `up` returns only then; Pulp serves and runs tasks again without a hand
// on it; the next preview changes nothing. The clients' figures across the upgrade are printed.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { getJson, items, mustPulumi, waitUntil } from "../../../testbed/harness";
import { distributeFile, get, podReport, sha256 } from "../../../testbed/real/clients";
import { onPrimary } from "../../../testbed/real/cnpg";
import type { LoadTarget } from "../../../testbed/real/load";
import { underLoad } from "../../../testbed/real/loadTarget";
import { restartedPulpContainers } from "../../../testbed/real/operate";
import { ONE_POD_EACH, onRequestImage, TEST_BED_POSTGRES_MAJOR } from "../../../testbed/real/stack";
import { dropRelease, installRelease, ReleaseStack } from "../../../testbed/real/upgradeStack";

jest.setTimeout(30 * 60 * 1000);

const RELEASE = "3.123.1";
const STACK: ReleaseStack = {
  cloudnativepg: { instances: 1 },
  stack: "real-pg-major",
  namespace: "pulp-pg-major",
  database: "pulp_pg_major",
  password: "pg-major-admin-Zq8",
};
const NS = STACK.namespace;
const CLUSTER = "pulp-db";
const OUT = fs.mkdtempSync(path.join(os.tmpdir(), "pg-major-"));
const FILE = path.join(OUT, "before-upgrade.bin");
let target: LoadTarget;
let newImage: string;
let before: { contentPath: string; claims: Record<string, string> };

const pulp = () => ({ baseUrl: target.baseUrl, password: STACK.password, namespace: NS });

/** The Cluster's data volumes, by name, with their uids: the same uids after the upgrade mean the same data. */
const claims = () =>
  Object.fromEntries(
    items("persistentvolumeclaims", NS)
      .filter((c) => c.metadata.labels?.["cnpg.io/cluster"] === CLUSTER)
      .map((c) => [c.metadata.name, c.metadata.uid]),
  );

/** The primary's server_version_num (170004 for 17.4). */
const serverVersion = () => Number(onPrimary(NS, CLUSTER, "SHOW server_version_num").output);

beforeAll(
  async () => {
    // Built once (about 6 min cold), then cached by testbed/images.
    newImage = onRequestImage("postgresql-17");
    ({ target } = await installRelease(STACK, RELEASE, { config: ONE_POD_EACH }));
    fs.writeFileSync(FILE, Buffer.alloc(256 * 1024, 7));
    const { contentPath } = distributeFile(pulp(), "before-upgrade", FILE, "before-upgrade.bin");
    before = { contentPath, claims: claims() };
  },
  25 * 60 * 1000,
);

afterAll(() => {
  if (!process.env.PULP_KEEP_STACK) dropRelease(STACK);
});

test("the preview of a new major warns to back up first and plans only the Cluster's update: nothing that holds data is replaced or deleted", () => {
  expect(Object.keys(before.claims)).toHaveLength(1);
  expect(serverVersion()).toBeLessThan((TEST_BED_POSTGRES_MAJOR + 1) * 10000);
  mustPulumi(STACK.stack, ["config", "set", "--path", "pulp:database.cloudnativepg.imageName", newImage]);
  const preview = JSON.parse(mustPulumi(STACK.stack, ["preview", "--json"]).stdout);
  const warnings = (preview.diagnostics as { severity: string; message: string }[])
    .filter((d) => d.severity === "warning")
    .map((d) => d.message);
  expect(warnings).toEqual(
    expect.arrayContaining([
      expect.stringContaining(`PostgreSQL ${TEST_BED_POSTGRES_MAJOR} -> 17`),
      expect.stringContaining(`npx pulp-backup now -n ${NS}`),
    ]),
  );
  // Every step but reads (the program's StackReference to its own outputs): the Cluster's update alone.
  const changed = (preview.steps as { op: string; urn: string }[])
    .filter((s) => !["same", "read", "discard"].includes(s.op))
    .map((s) => `${s.op} ${s.urn.split("$").pop()}`);
  expect(changed).toEqual(["update kubernetes:postgresql.cnpg.io/v1:Cluster::pulp-database"]);
});

test("`pulumi up` returns once the data is 17's on the same volume and the instance serves; Pulp serves what it held and runs tasks again by itself", async () => {
  const cluster = () => getJson(["cluster", CLUSTER, "-n", NS]);
  const status = () =>
    get(`${target.baseUrl}/pulp/api/v3/status/`).then(
      (r) => r.status,
      () => 0,
    );
  // The load's window covers the whole outage: `up`, then until Pulp answers again.
  const run = await underLoad(target, OUT, "pg-major", NS, async () => {
    const up = mustPulumi(STACK.stack, ["up", "--yes", "--skip-preview"]);
    const returned = Date.now();
    const atReturn = { phase: cluster().status.phase, data: cluster().status.pgDataImageInfo };
    await waitUntil(
      `${NS}: status/ answers 200 after the upgrade`,
      600,
      async () => (await status()) === 200,
      {
        detail: () => podReport(NS),
      },
    );
    return { up, atReturn, servedAfterMs: Date.now() - returned };
  });
  const { up, atReturn, servedAfterMs } = run.result;
  process.stdout.write(
    `pg-major: up took ${up.seconds.toFixed(1)} s; when it returned the Cluster was ${JSON.stringify(atReturn)}; ` +
      `status/ answered ${(servedAfterMs / 1000).toFixed(1)} s after that; Pulp containers restarted: ` +
      `${JSON.stringify(restartedPulpContainers(NS))}\n`,
  );
  // `up` waited for the upgrade (database.ts clusterAwait): the data is 17's when it returns.
  expect(atReturn).toEqual({
    phase: "Cluster in healthy state",
    data: { image: newImage, majorVersion: 17 },
  });
  expect(serverVersion()).toBeGreaterThanOrEqual(170000);
  expect(claims()).toEqual(before.claims);

  const download = await get(`${target.baseUrl}${before.contentPath}`);
  expect({ status: download.status, sha256: sha256(download.body) }).toEqual({
    status: 200,
    sha256: sha256(fs.readFileSync(FILE)),
  });
  // A task on the new server: upload, publish, distribute (as the admin, whose password is the old one).
  const after = path.join(OUT, "after-upgrade.bin");
  fs.writeFileSync(after, Buffer.alloc(64 * 1024, 3));
  const { contentPath } = distributeFile(pulp(), "after-upgrade", after, "after-upgrade.bin");
  expect((await get(`${target.baseUrl}${contentPath}`)).status).toBe(200);
});

test("the next preview changes nothing", () => {
  mustPulumi(STACK.stack, ["preview", "--expect-no-changes"]);
});
