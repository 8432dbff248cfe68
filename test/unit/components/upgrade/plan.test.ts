// The planner: rolling, one stop-the-world for any number of guards, or a refusal naming the release to
// stop at. Versions are real pulpcore and plugin releases (components/upgrade/migrations.ts).
import {
  heartbeatTtlSeconds,
  needsAppStatusCleanup,
  planUpgrade,
  UpgradeRefused,
} from "../../../../components/upgrade/plan";

const running = { deployed: false, target: false };
const plan = (
  from: string | undefined,
  to: string,
  plugins?: NonNullable<Parameters<typeof planUpgrade>[3]>["plugins"],
) => planUpgrade(from, to, running, { plugins });

test("first install, no change, and a rolling upgrade", () => {
  expect(plan(undefined, "3.85.0").kind).toBe("install");
  expect(plan("3.85.0", "3.85.0").kind).toBe("none");
  expect(plan("3.85.0", "3.86.1")).toMatchObject({ kind: "rolling", from: "3.85.0", to: "3.86.1" });
  expect(plan("3.82.1", "3.84.0").summary).toMatch(/migrate while 3.82.1 serves, then roll \(no downtime\)/);
});

test("the stop comes with the release that ships the guarded migration, not with its floor", () => {
  // 3.87.0 ships only 0140 (needs 3.85), which 3.85.0 meets: 0143 and 0144 arrive in 3.89.0 and 3.90.0.
  expect(plan("3.85.0", "3.87.0").kind).toBe("rolling");
  // 3.84.0 -> 3.85.0 ships no guard at all (the old table stopped here, on the 3.85.0 floor).
  expect(plan("3.84.0", "3.85.0").kind).toBe("rolling");
  const p = plan("3.84.0", "3.87.0");
  expect(p).toMatchObject({
    kind: "stop-the-world",
    floor: "core 3.85.0",
    migrations: "core 0140_require_appstatus_zdu (3.87.0)",
    minimumDowntimeSeconds: 120,
  });
  expect(p.summary).toMatch(
    /^upgrade 3\.84\.0 -> 3\.87\.0 NEEDS DOWNTIME: core 0140_require_appstatus_zdu \(in 3\.87\.0\) refuses to run while a process older than core 3\.85\.0 heartbeats\. One stop for all/,
  );
});

test("one stop for any number of guards: every old process is gone, so every guard is met", () => {
  const p = plan("3.80.0", "3.90.1");
  expect(p.kind).toBe("stop-the-world");
  if (p.kind !== "stop-the-world") return;
  expect(p.crossings.map((c) => c.migration.name.slice(0, 4))).toEqual([
    "0134",
    "0140",
    "0143",
    "0144",
    "0145",
  ]);
  expect(p.floor).toBe("core 3.90.0");
  expect(p.summary.match(/NEEDS DOWNTIME/g)).toHaveLength(1);
});

test("0144 and 0145 (3.90.0) break every older release, 3.89.2 too: its dispatch still inserts task.worker", () => {
  const p = plan("3.89.2", "3.105.16");
  expect(p).toMatchObject({
    kind: "stop-the-world",
    floor: "core 3.90.0",
    migrations: "core 0144_delete_old_appstatus (3.90.0), core 0145_domainize_import_export (3.90.0)",
  });
  expect(p.summary).toMatch(
    /0144_delete_old_appstatus \(in 3\.90\.0\) breaks core 3\.89\.2: drops task\.worker/,
  );
  expect(p.summary).toMatch(
    /0145_domainize_import_export \(in 3\.90\.0\) breaks core 3\.89\.2: .*pulp_domain/,
  );
  expect(plan("3.87.0", "3.90.1")).toMatchObject({ kind: "stop-the-world", floor: "core 3.90.0" });
  expect(plan("3.90.0", "3.90.1").kind).toBe("rolling");
});

test("0152 (3.115.0) breaks every older release; within 3.115 it rolls", () => {
  expect(plan("3.114.2", "3.115.0")).toMatchObject({ kind: "stop-the-world", floor: "core 3.115.0" });
  expect(plan("3.105.16", "3.123.1").summary).toMatch(/0152_alter_repositoryversion_content_ids/);
  expect(plan("3.115.0", "3.123.1").kind).toBe("rolling");
});

test("the 3.85 squash purge: a database never migrated by 3.69-3.84 is refused, naming the release to stop at", () => {
  expect(() => plan("3.68.0", "3.85.0")).toThrow(UpgradeRefused);
  expect(() => plan("3.60.0", "3.90.1")).toThrow(/Stop at core 3\.84\.0 first/);
  // Idle makes no difference: the database history is the problem, not running processes.
  expect(() => planUpgrade("3.60.0", "3.90.1", { deployed: true, target: true })).toThrow(/squash purge/);
  expect(plan("3.69.0", "3.85.0").kind).toBe("stop-the-world"); // 0127 (3.70) and 0134 (3.84) arrive
  expect(plan("3.84.0", "3.123.1").kind).toBe("stop-the-world");
  expect(plan("3.60.0", "3.84.0").kind).toBe("stop-the-world"); // the way to the waypoint itself
});

test("a refusal names a command that sets a release it accepts, in the configured image's repository", () => {
  const refusal = (deployed: string, target: string, image?: string) => {
    try {
      planUpgrade(deployed, target, undefined, { image });
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error("not refused");
  };
  expect(
    refusal("3.90.1", "3.85.0", "registry.example.com/pulp/pulp-minimal:3.85.0@sha256:" + "a".repeat(64)),
  ).toContain("Stay on 3.90.1 (pulumi config set pulp:image registry.example.com/pulp/pulp-minimal:3.90.1)");
  expect(refusal("3.60.0", "3.90.1", "quay.io/pulp/pulp-minimal:3.90.1")).toContain(
    "Stop at core 3.84.0 first: a `pulumi up` with the image of that release, then this one " +
      "(pulumi config set pulp:image quay.io/pulp/pulp-minimal:3.84.0; pulumi up).",
  );
  // Without a configured image (a direct call), upstream's.
  expect(refusal("3.90.1", "3.85.0")).toContain(
    "pulumi config set pulp:image quay.io/pulp/pulp-minimal:3.90.1",
  );
});

test("plugin guards count when both plugin versions are known", () => {
  const ansible = (deployed: string, target: string) =>
    plan("3.84.0", "3.84.0", { deployed: { ansible: deployed }, target: { ansible: target } });
  expect(ansible("0.25.0", "0.27.0")).toMatchObject({
    kind: "stop-the-world",
    floor: "ansible 0.26.0",
    migrations: "ansible 0062_pivot_collectionversion_tags (0.27.0)",
  });
  expect(ansible("0.26.0", "0.27.0").kind).toBe("rolling");
  expect(ansible("0.26.0", "0.27.0").summary).toMatch(/\(ansible 0\.26\.0 -> 0\.27\.0\)/);
  expect(ansible("0.27.0", "0.27.0").kind).toBe("none");
  const rpm = plan("3.105.16", "3.105.16", { deployed: { rpm: "3.32.1" }, target: { rpm: "3.39.4" } });
  expect(rpm).toMatchObject({ kind: "stop-the-world", floor: "rpm 3.37.0" });
});

test("a plugin's squash purge is a waypoint too", () => {
  expect(() =>
    plan("3.105.16", "3.105.16", { deployed: { ansible: "0.23.0" }, target: { ansible: "0.30.0" } }),
  ).toThrow(/Stop at ansible 0\.29\.12 first/);
});

test("an unknown deployed plugin version: proven by the deployed pulpcore, or named as not checked", () => {
  // No pulp_ansible older than 0.26 runs on pulpcore 3.85 or later.
  expect(plan("3.85.0", "3.86.0", { target: { ansible: "0.28.0" } }).kind).toBe("rolling");
  const p = plan("3.80.0", "3.82.0", { target: { ansible: "0.27.0" } });
  expect(p.kind).toBe("rolling");
  expect(p.summary).toMatch(/Not checked: the migrations of ansible \(deployed version unknown\)\./);
  // A plugin the deployed release did not have arrives fresh: no older process of it exists.
  expect(
    plan("3.84.0", "3.84.0", { deployed: { rpm: "3.27.0" }, target: { rpm: "3.27.0", ansible: "0.27.0" } })
      .kind,
  ).toBe("rolling");
});

test("downgrades to an older minor release are refused, for plugins too; patch downgrades roll", () => {
  expect(() => plan("3.86.0", "3.85.0")).toThrow(/migrations do not run backwards/);
  expect(plan("3.85.2", "3.85.1").kind).toBe("rolling");
  expect(() => plan("3.85.1", "3.85.1", { deployed: { rpm: "3.29.0" }, target: { rpm: "3.28.3" } })).toThrow(
    /rpm 3\.29\.0 is deployed and the config asks for 3\.28\.3/,
  );
});

test("while idle, migrations meet no old process: any forward jump past no squash purge runs offline", () => {
  expect(planUpgrade("3.80.0", "3.90.1", { deployed: true, target: true }).kind).toBe("offline");
  expect(() => planUpgrade("3.86.0", "3.85.0", { deployed: true, target: true })).toThrow(/backwards/);
});

test("versions that are not versions are refused", () => {
  expect(() => plan("3.85", "3.86.0")).toThrow(/not a version/);
});

test("the wait is the longest TTL of the Job's settings", () => {
  expect(heartbeatTtlSeconds()).toBe(120);
  expect(heartbeatTtlSeconds({ API_APP_TTL: 60, WORKER_TTL: 300 })).toBe(300);
  expect(heartbeatTtlSeconds({ CONTENT_APP_TTL: "x" })).toBe(120);
  const p = planUpgrade("3.84.0", "3.87.0", running, { ttlSeconds: 300 });
  expect(p).toMatchObject({ kind: "stop-the-world", minimumDowntimeSeconds: 300 });
  expect(p.summary).toMatch(/300 s of heartbeat TTL pass/);
});

test("the AppStatus cleanup is for the releases with the table and without pulpcore's own hook", () => {
  const needs = ["3.85.0", "3.85.2", "3.86.0", "3.89.0", "3.90.1"];
  const not = ["3.84.0", "3.85.3", "3.85.34", "3.91.0", "3.123.1"];
  expect(needs.filter(needsAppStatusCleanup)).toEqual(needs);
  expect(not.filter(needsAppStatusCleanup)).toEqual([]);
});

test("pulpcore 3.117.0 was yanked (its 0156 changes core_contentartifact): refused as a target, 3.117.1 on plans", () => {
  expect(() => plan("3.116.3", "3.117.0")).toThrow(UpgradeRefused);
  expect(() => plan("3.116.3", "3.117.0")).toThrow(/core 3\.117\.0 was yanked .*3\.117\.1 or later/);
  expect(() => plan(undefined, "3.117.0")).toThrow(/yanked/);
  // A stack already on it can change anything else, and move on.
  expect(plan("3.117.0", "3.117.0").kind).toBe("none");
  expect(plan("3.117.0", "3.117.1").kind).toBe("rolling");
});

test("0156 (3.117) fails migrate on base paths older releases accepted: every plan crossing it names the query", () => {
  const query =
    /SELECT name, base_path FROM core_distribution WHERE .*\[\\n\\r\\s\\t\\\?#\]\|\(\/\\\.\{0,2\}\/\)/;
  const p = plan("3.116.3", "3.117.1");
  expect(p.kind).toBe("rolling"); // old code fails only on paths the new release rejects too
  expect(p.summary).toMatch(
    /Before the upgrade: core 0156_alter_contentartifact_relative_path_and_more \(3\.117\.0\)/,
  );
  expect(p.summary).toMatch(query);
  expect(plan("3.105.16", "3.123.1").summary).toMatch(query);
  expect(planUpgrade("3.116.3", "3.123.1", { deployed: true, target: true }).summary).toMatch(query);
  expect(plan("3.117.1", "3.123.1").summary).not.toMatch(/base_path/);
  expect(plan("3.116.3", "3.116.3").summary).not.toMatch(/base_path/);
});
