// Real Pulp on the real node: a rolling upgrade between two real pulpcore releases (images built by
// testbed/images from PyPI) that ships a migration and no guard, under client traffic from the load generator
// (testbed/real/load.ts) through the pulp-web Service's ClusterIP (kube-proxy, as in-cluster clients):
// status GETs, downloads of a distributed file, uploads that each run a task. First the migration fails on
// a lock the database will not give, and the old release keeps serving; then it passes and the pods roll.
import * as fs from "fs";
import * as path from "path";
import { items, mustPulumi, pulumi, revisions, unfinishedRollouts } from "../../../testbed/harness";
import { STATE } from "../../../testbed/local/environment";
import { get, pulpCli } from "../../../testbed/real/clients";
import { holdLock, psql } from "../../../testbed/real/database";
import { dropKey, TestKey, verifies } from "../../../testbed/real/gpg";
import type { LoadTarget } from "../../../testbed/real/load";
import type { PhaseReport } from "../../../testbed/real/loadReport";
import { underLoad } from "../../../testbed/real/loadTarget";
import { releaseFixture, RELEASE_FIXTURES } from "../../../testbed/real/releaseFixtures";
import { configureRelease, coreVersion, dropRelease, previewPlans } from "../../../testbed/real/upgradeStack";

jest.setTimeout(40 * 60 * 1000);

// The install (testbed/real/releaseFixtures.ts, made ahead in CI) runs 3.121.3 with a signing service.
const { stack: RELEASE_STACK, release: FROM, signing } = RELEASE_FIXTURES.rolling;
const { stack: STACK, namespace: NS, database: DATABASE } = RELEASE_STACK;
// 3.122.0 ships core 0161 (a nullable column on core_upstreampulp) and no guard: pulpcore allows running it
// while 3.121 serves, so the planner must say rolling.
const TO = "3.123.1";
const ARTIFACTS = path.join(STATE, "real-rolling");
const timings: Record<string, number> = {};
let target: LoadTarget;
// A signing service registered at install, to show it is kept across the upgrade (pulp-operator #1608).
const SIGNING_SERVICE = signing.service;
let signingKey: TestKey;
let signingHref: string;

/** The api and content pods not on their way out, as "<process> <release> <ready or not>". */
function servingPods(): string[] {
  return items("pods", NS)
    .filter((p) => /^pulp-(api|content)-/.test(p.metadata.name) && !p.metadata.deletionTimestamp)
    .map((p) => {
      const ready = p.status.conditions?.some(
        (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
      );
      return `${p.metadata.name.split("-")[1]} ${p.spec.containers[0].image.split(":").pop()} ${ready ? "ready" : "not ready"}`;
    })
    .sort();
}

/** Traffic ran in every phase, and not one request or task failed. */
function expectNoFailure(report: Record<string, PhaseReport>) {
  for (const phase of Object.keys(report))
    expect({ phase, busy: report[phase].requests > 20 }).toEqual({ phase, busy: true });
  expect(Object.fromEntries(Object.entries(report).map(([phase, r]) => [phase, r.failures]))).toEqual({
    before: [],
    during: [],
    after: [],
  });
}

beforeAll(
  async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const installed = await releaseFixture("rolling");
    timings.installUp = installed.seconds;
    target = installed.target;
    signingKey = installed.signingKey!;
    const pulp = { baseUrl: target.baseUrl, password: target.password };
    signingHref = pulpCli(pulp, ["signing-service", "show", "--name", SIGNING_SERVICE]).pulp_href;
  },
  15 * 60 * 1000,
);

afterAll(() => {
  process.stdout.write(`real rolling-upgrade timings (s): ${JSON.stringify(timings)}\n`);
  if (!process.env.PULP_KEEP_STACK) dropRelease(RELEASE_STACK);
  if (signingKey) dropKey(signingKey);
});

test(`${FROM} -> ${TO} is planned rolling, naming no downtime`, () => {
  expect(coreVersion(target)).toBe(FROM);
  // As a user would: only the two image names change (the stack file keeps its encrypted admin password).
  configureRelease(RELEASE_STACK, TO);
  expect(previewPlans(RELEASE_STACK)).toEqual([
    {
      kind: "rolling",
      summary: expect.stringMatching(
        /^upgrade 3\.121\.3 -> 3\.123\.1: migrate while 3\.121\.3 serves, then roll \(no downtime\)/,
      ),
    },
  ]);
});

test("a migration the database refuses (a lock it will not give) fails `up`, and the old release serves on without a failed request", async () => {
  const before = revisions(NS);
  // Another session holds the table 0161 alters; the role's lock_timeout makes `migrate` give up after 10 s.
  psql(`ALTER ROLE pulp IN DATABASE ${DATABASE} SET lock_timeout = '10s'`);
  const lock = await holdLock(DATABASE, "core_upstreampulp");
  try {
    const { result: failed, report } = await underLoad(target, ARTIFACTS, "failed-migration", NS, () =>
      pulumi(STACK, ["up", "--yes", "--skip-preview"]),
    );
    timings.failedUp = failed.seconds;
    expect(failed.code).not.toBe(0);
    expect(failed.stdout + failed.stderr).toMatch(/lock timeout/);
    expect(revisions(NS)).toEqual(before);
    expect(coreVersion(target)).toBe(FROM);
    expectNoFailure(report);
  } finally {
    lock.release();
    psql(`ALTER ROLE pulp IN DATABASE ${DATABASE} RESET lock_timeout`);
  }
});

test(`the rolling upgrade ${FROM} -> ${TO} under client traffic: workers first, and not one request or task fails`, async () => {
  const before = revisions(NS);
  let servingAtReturn: string[] = [];
  let unfinishedAtReturn: string[] = [];
  const { result: up, report } = await underLoad(target, ARTIFACTS, "rolling", NS, () => {
    const run = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    servingAtReturn = servingPods();
    unfinishedAtReturn = unfinishedRollouts(NS);
    return run;
  });
  timings.rollingUp = up.seconds;
  // `up` returned once the rollout was done: the api and content pods that serve are all new and ready.
  expect(servingAtReturn).toEqual([
    `api ${TO} ready`,
    `api ${TO} ready`,
    `content ${TO} ready`,
    `content ${TO} ready`,
  ]);
  expect(unfinishedAtReturn).toEqual([]);
  // It really rolled, and Pulp reports the new release.
  const after = revisions(NS);
  for (const d of ["pulp-api", "pulp-content", "pulp-worker", "pulp-web"])
    expect(after[d]).not.toBe(before[d]);
  expect(coreVersion(target)).toBe(TO);
  // The new worker was ready before the first new api or content pod was created (whole seconds).
  const pods = items("pods", NS).filter((p) => p.spec.containers[0].image.endsWith(`:${TO}`));
  const readyAt = (p: { status: { conditions: { type: string; lastTransitionTime: string }[] } }) =>
    Date.parse(p.status.conditions.find((c) => c.type === "Ready")!.lastTransitionTime);
  const worker = pods.find((p) => p.metadata.name.startsWith("pulp-worker-"));
  const dispatchers = pods.filter((p) => /^pulp-(api|content)-/.test(p.metadata.name));
  expect(dispatchers).toHaveLength(4);
  for (const p of dispatchers)
    expect(Date.parse(p.metadata.creationTimestamp)).toBeGreaterThanOrEqual(readyAt(worker));
  // Tasks were dispatched and finished while the pods rolled.
  expect(report.during.tasks).toBeGreaterThan(0);
  expectNoFailure(report);
});

test(`the signing service registered under ${FROM} is the same one under ${TO}, and the new release's workers sign with its key`, async () => {
  const pulp = { baseUrl: target.baseUrl, password: target.password };
  const service = pulpCli(pulp, ["signing-service", "show", "--name", SIGNING_SERVICE]);
  expect({ href: service.pulp_href, fingerprint: service.pubkey_fingerprint }).toEqual({
    href: signingHref,
    fingerprint: signingKey.fingerprint,
  });
  pulpCli(pulp, [
    "rpm",
    "repository",
    "create",
    "--name",
    "signed",
    "--metadata-signing-service",
    SIGNING_SERVICE,
  ]);
  const publication = pulpCli(pulp, ["rpm", "publication", "create", "--repository", "signed"]).pulp_href;
  pulpCli(pulp, [
    "rpm",
    "distribution",
    "create",
    "--name",
    "signed",
    "--base-path",
    "signed",
    "--publication",
    publication,
  ]);
  const url = `${target.baseUrl}/pulp/content/signed/repodata/repomd.xml`;
  const [data, signature] = [await get(url), await get(`${url}.asc`)];
  expect({ data: data.status, signature: signature.status }).toEqual({ data: 200, signature: 200 });
  expect(verifies(signingKey, data.body, signature.body)).toMatchObject({ ok: true });
});
