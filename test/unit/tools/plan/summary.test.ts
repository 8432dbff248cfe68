// The plan summary on previews the real engine printed (test/fixtures/preview/, `npm run plan:fixtures`):
// what each pull-request change would do, as the report states it.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
  HOLDS_ANNOTATION,
  UPGRADE_REFUSED_MARKER,
  UpgradeKind,
  upgradePlanMessage,
} from "../../../../components/contract";
import { PreviewJson } from "../../../../tools/plan/previewJson";
import { migrationOf } from "../../../../tools/plan/rollout";
import { upgradeOf } from "../../../../tools/plan/upgrade";
import { analyze, dataHeld } from "../../../../tools/plan/analyze";
import { dataRisks } from "../../../../tools/plan/dataRisk";
import { BASE_SECRETS, CANARIES, CASES, DRIFT_CASE } from "../../../../testbed/fixtures/cases";
import { parsePreview, UnreadablePreview } from "../../../../tools/plan/previewJson";
import { downtimeText, MARKER, render } from "../../../../tools/plan/render";
import { main, summarize } from "../../../../tools/plan/summary";

const DIR = path.join(__dirname, "../../../fixtures/preview");
const text = (name: string) => fs.readFileSync(path.join(DIR, `${name}.json`), "utf8");
const facts = (name: string) => analyze(parsePreview(text(name)));
const report = (name: string) => render(facts(name));
const captured = JSON.parse(fs.readFileSync(path.join(DIR, "cases.json"), "utf8")) as {
  name: string;
  exitCode: number;
}[];
const PULP = ["pulp-api", "pulp-content", "pulp-worker"];

test("every case of the capture script has a fixture, and a failed preview is one the CLI exited non-zero for", () => {
  expect(captured.map((c) => c.name)).toEqual(["install", ...CASES.map((c) => c.name), DRIFT_CASE.name]);
  for (const c of captured) {
    expect({ case: c.name, failed: facts(c.name).failed }).toEqual({
      case: c.name,
      failed: c.exitCode !== 0,
    });
  }
});

test("the first line is one machine-readable comment, for every fixture", () => {
  for (const { name } of captured) {
    expect(report(name).split("\n")[0]).toMatch(
      new RegExp(
        `^<!-- ${MARKER} preview=(ok|failed) data-risk=\\d+ refused=\\d+ rolls=\\d+ migration=(yes|no) upgrade=[a-z-]+ downtime=(yes|no) -->$`,
      ),
    );
  }
});

test("no-op: nothing rolls, no migration, nothing at risk", () => {
  const a = facts("no-op");
  expect(a).toMatchObject({ failed: false, dataRisks: [], rolls: [], scales: [], migration: undefined });
  expect(report("no-op")).toContain("## Pulp preview: no changes");
});

test("first install: an install plan, creations only, no data at risk", () => {
  const a = facts("install");
  expect(a.upgrade).toMatchObject({ kind: "install", text: "install pulpcore 3.85.0" });
  expect(a.dataRisks).toEqual([]);
  expect(a.rolls.map((r) => r.op)).toEqual(a.rolls.map(() => "create"));
  expect(report("install").split("\n")[0]).toContain(" rolls=0 migration=yes upgrade=install ");
  // Components only group their children; the children are listed, the components are not.
  expect(a.otherChanges).not.toContain("create Pulp pulp");
  expect(a.otherChanges).toContain("create PersistentVolumeClaim pulp-artifacts");
});

test("settings change: api, content and worker roll for the config hash, and a migration Job runs", () => {
  const a = facts("settings-change");
  expect(a.rolls.map((r) => r.name).sort()).toEqual(PULP);
  for (const r of a.rolls) expect(r).toMatchObject({ op: "update", config: true, images: [], other: [] });
  expect(a.scales).toEqual([]);
  expect(a.migration?.job).toMatch(/^pulp-migrate-[0-9a-f]{8}$/);
  expect(a.migration?.replaces).toMatch(/^pulp-migrate-[0-9a-f]{8}$/);
  expect(a.dataRisks).toEqual([]);
  expect(report("settings-change")).toContain(
    "- `pulp-api`: configuration changed (config-hash: settings.py, secrets or nginx.conf)",
  );
});

test("nginx change: only pulp-web rolls (its ConfigMap is content-named), no migration", () => {
  const a = facts("web-nginx-change");
  expect(a.rolls).toEqual([{ name: "pulp-web", op: "update", images: [], config: true, other: [] }]);
  expect(a.migration).toBeUndefined();
  expect(a.otherChanges).toEqual([expect.stringMatching(/^replace ConfigMap pulp-web-[0-9a-f]+$/)]);
  expect(report("web-nginx-change")).toContain("No migration Job runs.");
});

test("replicas only: pulp-api scales 2 -> 3 without new pods, no migration", () => {
  const a = facts("replicas-only");
  expect(a.rolls).toEqual([]);
  expect(a.scales).toEqual([{ name: "pulp-api", changes: ["spec.replicas 2 -> 3"] }]);
  expect(a.migration).toBeUndefined();
  expect(report("replicas-only")).toContain(
    "Updated without new pods:\n\n- `pulp-api`: `spec.replicas 2 -> 3`",
  );
});

test("rolling upgrade 3.85.0 -> 3.85.1: the Pulp Deployments roll for the image, web and redis do not; labels on data are in place", () => {
  const a = facts("rolling-upgrade");
  expect(a.upgrade).toMatchObject({ kind: "rolling" });
  expect(a.upgrade?.text).toMatch(/^upgrade 3.85.0 -> 3.85.1: migrate while 3.85.0 serves/);
  expect(a.rolls.map((r) => r.name).sort()).toEqual(PULP);
  for (const r of a.rolls) {
    expect(r).toMatchObject({
      config: false,
      other: [],
      images: ["quay.io/pulp/pulp-minimal:3.85.0 -> quay.io/pulp/pulp-minimal:3.85.1"],
    });
  }
  expect(a.migration).toBeDefined();
  // The version label is only on what runs Pulp: an upgrade touches no object that holds data.
  expect(a.dataRisks).toEqual([]);
  expect(a.dataUpdates).toEqual([]);
  expect(report("rolling-upgrade")).toContain("Rolling, no downtime");
});

test("an upgrade that ships a guarded migration (3.85.0 -> 3.89.0): the StopTheWorld step, as downtime in plain words", () => {
  const a = facts("stop-the-world");
  expect(a.failed).toBe(false);
  expect(a.upgrade).toMatchObject({
    kind: "stop-the-world",
    stopTheWorld: {
      from: "3.85.0",
      to: "3.89.0",
      floor: "core 3.87.0",
      migrations: "core 0143_require_app_lock_zdu (3.89.0)",
      heartbeatTtlSeconds: 120,
      namespace: "pulp-fixtures",
      deployments: PULP,
      podsGoneTimeoutSeconds: 660,
      startupBudgetSeconds: 600,
    },
  });
  // The program's own warning, without its severity prefix.
  expect(a.upgrade?.text).toMatch(/^upgrade 3.85.0 -> 3.89.0 NEEDS DOWNTIME/);
  expect(a.rolls.map((r) => r.name).sort()).toEqual(PULP);
  expect(a.migration).toBeDefined();
  expect(a.otherChanges.filter((c) => /stop-the-world/.test(c))).toEqual([]);
  const md = report("stop-the-world");
  expect(md.split("\n")[0]).toContain(" upgrade=stop-the-world downtime=yes ");
  expect(md).toContain("## Pulp preview: upgrade with downtime");
  expect(md).toContain(
    "**Downtime.** Upgrading pulpcore 3.85.0 -> 3.89.0 needs every old process stopped first: migrations core 0143_require_app_lock_zdu (3.89.0) need every process at core 3.87.0 or later",
  );
  expect(md).toContain(
    "This update stops `pulp-api`, `pulp-content`, `pulp-worker` in `pulp-fixtures`, waits until their pods are gone and 120 s more",
  );
  expect(md).toContain(
    "Expected downtime: about the old pods' shutdown (running tasks finish first; up to 660 s) + 120 s (heartbeat TTL) + the migration Job's run time + the pods' start-up",
  );
  expect(md).toContain("The startup probes give the new pods up to 600 s to become ready.");
  expect(md).toContain("New pods, started after the stop (the old ones are already gone):");
  expect(md).not.toContain("a rolling update");
});

test("a restore over the live install: the same stop, said as a restore (no upgrade, no heartbeat wait)", () => {
  const text = downtimeText({
    urn: "urn",
    from: "3.123.1",
    to: "3.123.1",
    floor: "",
    migrations: "",
    heartbeatTtlSeconds: 0,
    namespace: "pulp",
    deployments: PULP,
    podsGoneTimeoutSeconds: 660,
    restoring: "20261124T031500Z",
  }).join("\n");
  expect(text).toContain(
    "**Downtime.** Restoring backup `20261124T031500Z` over the live install replaces its database",
  );
  expect(text).toContain(
    "This update stops `pulp-api`, `pulp-content`, `pulp-worker` in `pulp`, waits until their pods are gone, restores",
  );
  expect(text).not.toMatch(/Upgrading|heartbeat/);
});

test("a restore over the live install (captured): the stop as a restore, the restore Job, a migration that clears the cache", () => {
  const a = facts("restore-overwrite");
  expect(a.failed).toBe(false);
  expect(a.upgrade).toMatchObject({
    kind: "stop-the-world",
    stopTheWorld: { restoring: "20261124T031500Z", heartbeatTtlSeconds: 0, deployments: PULP },
  });
  expect(a.rolls.map((r) => r.name)).toEqual(PULP);
  expect(a.migration?.job).toMatch(/^pulp-migrate-[0-9a-f]{8}$/);
  // Nothing that holds data is replaced or deleted: the install's keys stay as they are.
  expect(a.dataRisks).toEqual([]);
  expect(a.otherChanges).toEqual([
    "create ConfigMap pulp-restore-20261124t031500z",
    "create Job pulp-restore-20261124t031500z",
  ]);
  const md = report("restore-overwrite");
  expect(md.split("\n")[0]).toContain(
    " data-risk=0 refused=0 rolls=3 migration=yes upgrade=stop-the-world downtime=yes ",
  );
  expect(md).toContain(
    "**Downtime.** Restoring backup `20261124T031500Z` over the live install replaces its database",
  );
});

test("a restore on a live install, unconfirmed (captured): the program's refusal, once and without a stack trace", () => {
  const a = facts("restore-refused");
  expect(a.failed).toBe(true);
  expect(a.programErrors).toEqual([
    expect.stringMatching(
      /^\[pulp:restore-refused\] pulp:restore.backup is 20261124T031500Z, but this stack is a live install/,
    ),
  ]);
  expect(a.programErrors[0]).toContain(
    "confirm it: pulumi config set --path pulp:restore.overwrite 20261124T031500Z",
  );
  expect(report("restore-refused")).not.toMatch(/Unhandled exception|\n {4}at /);
});

test("a downgrade to an older minor release: refused by the program, nothing changes, its message quoted once", () => {
  const a = facts("downgrade-refused");
  expect(a.failed).toBe(true);
  expect(a.upgrade?.kind).toBe("refused");
  expect(a.upgrade?.text).toMatch(
    /3.85.0 is deployed and the config asks for 3.84.0: Pulp's database migrations do not run backwards/,
  );
  expect(a.rolls).toEqual([]);
  const md = report("downgrade-refused");
  expect(md).toContain("**Refused by the program.** Nothing was changed:");
  expect(md.match(/do not run backwards/g)).toHaveLength(1); // the engine repeats the error; the report does not
});

const risks = (name: string) =>
  facts(name).dataRisks.map((r) => ({ kind: r.kind, name: r.name, op: r.op, refused: r.refusals }));
const PROTECTED = expect.stringMatching(/^refused: the resource is protected/);

test("a new storage class for the artifacts PVC: a replacement, refused (protected, and immutable for the API server)", () => {
  expect(risks("pvc-storage-class")).toEqual([
    {
      kind: "PersistentVolumeClaim",
      name: "pulp-artifacts",
      op: "replace",
      refused: [
        PROTECTED,
        expect.stringMatching(/^refused by the Kubernetes API server: spec: Forbidden: spec is immutable/),
      ],
    },
  ]);
  expect(facts("pvc-storage-class").dataRisks[0].reasons).toEqual(["spec.storageClassName"]);
});

test("shrinking the PVC: an in-place update the API server refuses", () => {
  expect(risks("pvc-shrink")).toEqual([
    {
      kind: "PersistentVolumeClaim",
      name: "pulp-artifacts",
      op: "update",
      refused: [
        "refused by the Kubernetes API server: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity",
      ],
    },
  ]);
});

test("CloudNativePG -> external database: the Cluster's deletion is refused; the settings change would roll", () => {
  expect(risks("database-external")).toEqual([
    { kind: "Cluster", name: "pulp-db", op: "delete", refused: [PROTECTED] },
  ]);
  expect(
    facts("database-external")
      .rolls.map((r) => r.name)
      .sort(),
  ).toEqual(PULP);
});

test("a supplied secretKey after install: replacing the key Secret and its generated value is refused", () => {
  expect(risks("secret-key-supplied")).toEqual([
    { kind: "Secret", name: "pulp-secret-key", op: "replace", refused: [PROTECTED] },
    { kind: "GeneratedSecret", name: "pulp-secrets-secret-key", op: "delete", refused: [PROTECTED] },
  ]);
});

test("a removed DataVolume: its deletion is refused", () => {
  expect(risks("datavolume-removed")).toEqual([
    { kind: "DataVolume", name: "seed-dump", op: "delete", refused: [PROTECTED] },
  ]);
});

test("a new namespace: every data holder would be replaced; the Namespace itself is not protected and says so", () => {
  const found = risks("namespace-change");
  expect(found.map((r) => `${r.kind} ${r.name}`).sort()).toEqual([
    "Cluster pulp-db",
    "DataVolume seed-dump",
    "Namespace pulp-fixtures-moved",
    "PersistentVolumeClaim pulp-artifacts",
    "Secret pulp-admin-password",
    "Secret pulp-db-fields-encryption",
    "Secret pulp-secret-key",
  ]);
  expect(found.find((r) => r.kind === "Namespace")?.refused).toEqual([]);
  for (const r of found.filter((r) => r.kind !== "Namespace")) expect(r.refused).toEqual([PROTECTED]);
  const md = report("namespace-change");
  expect(md).toContain("Namespace `pulp-fixtures` -> `pulp-fixtures-moved` would be **replaced**");
  expect(md).toContain("**not protected**: only the other refusals in this preview stop it");
  // Replaced Deployments are not a rolling update, and the report does not call them one.
  expect(md).not.toContain("New pods (a rolling update");
});

test("drift (pulp-api scaled by hand, preview --refresh): the scale back is shown, refreshes are no change", () => {
  const a = facts("drift-replicas");
  // pulumi.com/patchForce on the Pulp Deployments: the apply takes spec.replicas back, no conflict.
  expect(a).toMatchObject({ failed: false, resourceErrors: [], rolls: [], otherChanges: [] });
  expect(a.scales).toEqual([{ name: "pulp-api", changes: ["spec.replicas 5 -> 2"] }]);
});

test("an error on a resource that holds no data is named with its reason", () => {
  const preview = parsePreview(text("replicas-only"));
  const urn = preview.steps.find((s) => s.urn.endsWith("Deployment::pulp-api"))!.urn;
  preview.diagnostics.push({
    urn,
    severity: "error",
    message:
      'error: Preview failed: Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas\n',
  });
  const a = analyze(preview);
  expect(a.resourceErrors).toEqual([
    {
      kind: "Deployment",
      name: "pulp-api",
      urn,
      reasons: [
        'refused by the Kubernetes API server: a field was changed outside Pulumi (server-side apply conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas)',
      ],
    },
  ]);
  expect(render(a)).toContain(
    "**The preview failed on:**\n\n- Deployment `pulp-api`: refused by the Kubernetes API server",
  );
});

test("data at risk is flagged before anything else in the report", () => {
  for (const name of [
    "pvc-storage-class",
    "pvc-shrink",
    "database-external",
    "datavolume-removed",
    "namespace-change",
    "secret-key-supplied",
  ]) {
    const lines = report(name).split("\n");
    expect({ name, third: lines[3] }).toEqual({ name, third: "> [!CAUTION]" });
  }
});

test("no fixture holds a secret: no config canary, and every Secret's data shows as [secret]", () => {
  for (const { name } of captured) {
    const raw = text(name);
    for (const value of Object.values(CANARIES))
      expect({ name, leaked: raw.includes(value) }).toEqual({ name, leaked: false });
    const preview = parsePreview(raw);
    for (const step of preview.steps.filter((s) => s.urn.includes("kubernetes:core/v1:Secret::"))) {
      for (const st of [step.oldState, step.newState]) {
        for (const key of ["data", "stringData"]) {
          const value = st?.inputs?.[key];
          if (value !== undefined)
            expect({ name, urn: step.urn, key, value }).toEqual({
              name,
              urn: step.urn,
              key,
              value: "[secret]",
            });
        }
      }
    }
    for (const step of preview.steps.filter((s) => s.urn.includes("pulp:upgrade:StopTheWorld$"))) {
      expect({ name, kube: step.newState?.inputs?.kube }).toEqual({ name, kube: "[secret]" });
    }
    const config = (JSON.parse(raw) as { config: Record<string, string> }).config;
    for (const key of BASE_SECRETS) expect(config[`pulp:${key}`]).toBe("[secret]");
  }
});

describe("input and exit codes", () => {
  test("unreadable input is the only error", () => {
    expect(() => parsePreview("")).toThrow(UnreadablePreview);
    expect(() => parsePreview("[1]")).toThrow(/not a JSON object/);
    expect(() => parsePreview('{"config": {}}')).toThrow(/neither `steps` nor `diagnostics`/);
    expect(() => parsePreview('{"steps": [{"op": "create"}]}')).toThrow(/steps\[0\] has no op and urn/);
    expect(() => parsePreview('{"diagnostics": "x"}')).toThrow(/must be arrays/);
  });

  test("risk alone exits 0; --fail-on-data-loss makes it 2", () => {
    expect(summarize(text("pvc-storage-class"), false).code).toBe(0);
    expect(summarize(text("pvc-storage-class"), true).code).toBe(2);
    expect(summarize(text("settings-change"), true).code).toBe(0);
  });

  test("main: --out writes the report; a missing file or a bad argument exits 1", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "plan-summary-"));
    const out = path.join(dir, "summary.md");
    const stderr = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      expect(main([path.join(DIR, "database-external.json"), "--out", out])).toBe(0);
      expect(fs.readFileSync(out, "utf8")).toBe(report("database-external"));
      expect(main([path.join(dir, "missing.json")])).toBe(1);
      expect(main([path.join(DIR, "no-op.json"), "--bogus"])).toBe(1);
      expect(main([])).toBe(1);
      expect(stderr).toHaveBeenCalledWith(expect.stringMatching(/^plan:summary: cannot read .*missing.json/));
    } finally {
      stderr.mockRestore();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Wrong answer fixed: the summary guessed from names and kinds, so a Secret named like a PulpSecrets key
// counted as data and a data-holding object under another name did not. It reads the contract now.
test("what holds data is read from the holds annotation (components/contract.ts), not guessed from names", () => {
  const urn = (type: string, name: string) => `urn:pulumi:s::pulp::pulp:index:Pulp$${type}::${name}`;
  const annotated = (holding: string) => ({
    inputs: { metadata: { annotations: { [HOLDS_ANNOTATION]: holding } } },
  });
  const secret = urn(
    "pulp:secrets:PulpSecrets$kubernetes:core/v1:Secret",
    "pulp-secrets-db-fields-encryption",
  );
  expect(dataHeld(secret, annotated("db-fields-key"))).toMatch(/encrypts database fields/);
  // The same name without the annotation holds nothing the summary knows of.
  expect(dataHeld(secret, { inputs: {} })).toBeUndefined();
  // Any name, any kind: the annotation decides.
  expect(dataHeld(urn("kubernetes:core/v1:ConfigMap", "x"), annotated("database"))).toMatch(/PostgreSQL/);
  expect(dataHeld(urn("kubernetes:core/v1:PersistentVolumeClaim", "x"), { inputs: {} })).toBeUndefined();
  // An unknown value is not a holding.
  expect(dataHeld(urn("kubernetes:core/v1:Secret", "x"), annotated("everything"))).toBeUndefined();
  // GeneratedSecrets are no Kubernetes objects: their kind says what they hold.
  expect(
    dataHeld(urn("pulumi-nodejs:dynamic/pulp:GeneratedSecret", "k"), { inputs: { kind: "fernet-key" } }),
  ).toMatch(/encrypts database fields/);
  // A generated key's Stash takes no other input: its name says which key it keeps.
  expect(dataHeld(urn("pulumi:index:Stash", "pulp-secrets-db-fields-key"), { inputs: {} })).toMatch(
    /encrypts database fields/,
  );
  expect(dataHeld(urn("kubernetes:core/v1:ConfigMap", "x"), { protect: true })).toMatch(/protect/);
});

test("each fixture was captured with its case's config as cases.ts states it now (re-run npm run plan:fixtures after a change)", () => {
  const parse = (v: string) => {
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  };
  for (const c of CASES) {
    const config = (JSON.parse(text(c.name)) as { config: Record<string, string> }).config;
    for (const [key, value] of Object.entries(c.changes)) {
      expect({ case: c.name, key, value: parse(config[`pulp:${key}`]) }).toEqual({
        case: c.name,
        key,
        value,
      });
    }
    for (const key of c.secrets ?? [])
      expect({ case: c.name, key, value: config[`pulp:${key}`] }).toEqual({
        case: c.name,
        key,
        value: "[secret]",
      });
  }
});

test("the example reports in docs/previews.md are what the summary prints for their fixtures", () => {
  const readme = fs.readFileSync(path.join(__dirname, "../../../../docs/previews.md"), "utf8");
  for (const name of ["pvc-storage-class", "stop-the-world"]) {
    expect({
      name,
      inReadme: readme.includes(`\`\`\`\`markdown\n${report(name).trimEnd()}\n\`\`\`\``),
    }).toEqual({
      name,
      inReadme: true,
    });
  }
});

// Wrong answers the summary gave while it read English instead of the contract (components/contract.ts).
describe("read through the contract, not from English", () => {
  const preview = (
    steps: PreviewJson["steps"],
    diagnostics: PreviewJson["diagnostics"] = [],
  ): PreviewJson => ({
    steps,
    diagnostics,
    changeSummary: {},
  });

  test("a config error that mentions pulpcoreVersion is no upgrade refusal (it matched /pulpcore/)", () => {
    const error = "Invalid Pulp stack config (1 problem): pulp:pulpcoreVersion 3.85 is not x.y.z";
    expect(upgradeOf(preview([]), [error])).toBeUndefined();
    const refusal = `UpgradeRefused: ${UPGRADE_REFUSED_MARKER} pulpcore 3.84.0 is deployed and the config asks for 3.70.0`;
    expect(upgradeOf(preview([]), [refusal])).toEqual({
      kind: "refused",
      text: "pulpcore 3.84.0 is deployed and the config asks for 3.70.0",
    });
  });

  test("the plan's kind comes from its marker, whatever the summary's words say", () => {
    const d = (kind: UpgradeKind, words: string) => ({
      message: upgradePlanMessage(kind, words),
      severity: "info",
    });
    // "while idle" in a rolling plan's words made it "offline"; "stays" made it "none".
    expect(upgradeOf(preview([], [d("rolling", "upgrade while idle stays; no upgrade")]), [])?.kind).toBe(
      "rolling",
    );
    expect(upgradeOf(preview([], [d("offline", "anything")]), [])?.kind).toBe("offline");
  });

  test("a refusal that mentions downtime is rendered as the program's refusal, not as a missing feature", () => {
    const refusal = `${UPGRADE_REFUSED_MARKER} upgrading crosses 2 RequireVersion floors, each NEEDS DOWNTIME`;
    const md = render(analyze(preview([], [{ message: `error: ${refusal}`, severity: "error" }])));
    expect(md).toContain("**Refused by the program.**");
    expect(md).not.toContain("does not do it in one update");
  });

  test("the migration is the MigrationJob's Job, not any Job whose name contains -migrate-", () => {
    const job = (parent: string, name: string) => ({
      op: "create",
      urn: `urn:pulumi:s::pulp::pulp:index:Pulp$${parent}kubernetes:batch/v1:Job::${name}`,
      newState: { type: "kubernetes:batch/v1:Job", inputs: { metadata: { name } } },
    });
    expect(migrationOf(preview([job("", "backup-migrate-1")]))).toBeUndefined();
    expect(migrationOf(preview([job("pulp:migration:MigrationJob$", "pulp-schema-0a1b")]))?.job).toBe(
      "pulp-schema-0a1b",
    );
  });
});

test("a GeneratedSecret dropped after its key moved into a Stash is no risk; a protected one going is", () => {
  const urn =
    "urn:pulumi:s::pulp::pulp:index:Pulp$pulp:secrets:PulpSecrets$pulumi-nodejs:dynamic/pulp:GeneratedSecret::pulp-secrets-db-fields-key";
  const preview = (protect: boolean): PreviewJson => ({
    steps: [
      {
        op: "delete",
        urn,
        oldState: {
          urn,
          type: "pulumi-nodejs:dynamic/pulp:GeneratedSecret",
          inputs: { kind: "fernet-key" },
          protect,
        },
      } as PreviewJson["steps"][number],
    ],
    diagnostics: [],
    changeSummary: { delete: 1 },
  });
  // Unprotected only by the update that copied the key into its Stash (components/secrets/pulpSecrets.ts);
  // the preview JSON leaves a false flag out.
  expect(dataRisks(preview(false)).risks).toEqual([]);
  expect(dataRisks(preview(true)).risks.map((r) => [r.op, r.holds])).toEqual([
    ["delete", expect.stringMatching(/encrypts database fields/)],
  ]);
});
