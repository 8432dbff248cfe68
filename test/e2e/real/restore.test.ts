// Real Pulp on the real node: a backup restored into a new install. The source install (stack A) gets a
// file, a container image and a remote with a password, and is backed up with `npm run backup -- now`.
// A new stack (B, instance "restored", in the same namespace so it can mount A's backups volume) takes
// the backup's keys with `npm run backup -- keys` and `pulp:restore`; its first `up` restores, migrates
// and starts. Real clients (pulp-cli, skopeo, http) then read everything back through B. Then a second
// backup of A, taken while uploads run, is exported and served over http, comes in through the real CDI
// and replaces B's live data with pulp:restore.overwrite; Pulp's own repair check finds nothing missing.
// Then A restores that backup over itself with the keys it generated (none in its stack config). Last,
// both installs are destroyed with their namespace, and a new stack in a new namespace restores the
// backup from the bucket (the install gone, the bucket left). Beside that, the source's data laid out as a
// pulp-operator PulpBackup comes into a namespace of its own over http, as a user moving from the operator
// brings theirs.
// Ordered: each test builds on the last.
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
  deleteNamespace,
  dropStack,
  freshStack,
  getJson,
  items,
  kubectl,
  mustPulumi,
  pulumi,
  setSecrets,
  waitUntil,
  writeStackConfig,
} from "../../../testbed/harness";
import { REPO } from "../../../testbed/local/environment";
import {
  distributeFile,
  get,
  portForward,
  postJson,
  Pulp,
  pulpCli,
  pullImage,
  sha256,
  skopeoCopy,
  uploadContinuously,
} from "../../../testbed/real/clients";
import { ensureCdi } from "../../../testbed/real/cdi";
import { ensureCnpgOperator } from "../../../testbed/real/cnpg";
import { backupTool, lastJsonLine, pulpShell } from "../../../testbed/real/operate";
import { ObjectStorage, startObjectStorage } from "../../../testbed/real/s3";
import { pulpBackupOf } from "../../../testbed/real/pulpBackup";
import { busyboxArchive, importImages, ONE_POD_EACH } from "../../../testbed/real/stack";

jest.setTimeout(20 * 60 * 1000);

const SOURCE = "real-restore-source";
const TARGET = "real-restore-target";
const NS = "pulp-restore";
const SOURCE_PORT = 24883;
const TARGET_PORT = 24884;
const TARGET_PORT_AFTER = 24885;
const SOURCE_PORT_AFTER = 24886;
const FRESH = "real-restore-fresh";
const FRESH_NS = "pulp-restore-fresh";
const FRESH_PORT = 24887;
/** The source's data as a pulp-operator PulpBackup, restored into a namespace of its own. */
const MOVED = "real-restore-pulpbackup";
const MOVED_NS = "pulp-restore-pulpbackup";
const MOVED_PORT = 24888;
const PULPBACKUP = "openshift-backup-2026-11-25-031500";
const ADMIN_PASSWORD = "restore-admin-Kx7";
const REMOTE_PASSWORD = "remote-Secret-91q";
const DEV_STACK = path.join(REPO, "Pulumi.dev.yaml");
const source: Pulp = { baseUrl: `http://127.0.0.1:${SOURCE_PORT}`, password: ADMIN_PASSWORD };
const target: Pulp = { baseUrl: `http://127.0.0.1:${TARGET_PORT}`, password: ADMIN_PASSWORD };
const forwards: { stop: () => void }[] = [];
const BUCKET = "pulp-backups";
let storage: ObjectStorage | undefined;
const timings: Record<string, number> = {};
const data = Buffer.concat([Buffer.from("restored pulp\n"), Buffer.alloc(200 * 1024, 3)]);
let contentPath = "";
/** The busybox image pushed to the source: its layer digests as pulled back from there. */
const IMAGE = "test/busybox:1";
let imageLayers: string[] = [];
let backupId = "";
/** The second backup (of the source with one more file), and what it and the target alone hold. */
let otherId = "";
/** Where the backup Job put the second backup in object storage, as `backup now` printed it. */
let secondInBucket = { url: "", bytes: 0, sha256: "", seconds: 0, keys: "" };
/** The second backup's archive and, apart, its keys archive, downloaded from the bucket. */
let archive = "";
let keysArchive = "";
const later = { data: Buffer.from("in the second backup only\n"), contentPath: "" };
const extra = { data: Buffer.from("uploaded to the restored install only\n"), contentPath: "" };

function distribute(pulp: Pulp, name: string, data: Buffer): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-restore-")), `${name}.bin`);
  fs.writeFileSync(file, data);
  return distributeFile(pulp, name, file, `${name}.bin`).contentPath;
}

/** The password of the file remote "private", as the install's Pulp decrypts it with its db-fields key. */
const remotePassword = (namespace: string, instance: string) =>
  pulpShell(
    namespace,
    instance,
    "from pulp_file.app.models import FileRemote; print(FileRemote.objects.get(name='private').password)",
  );

/** The backup the stack's last update says it restored (its output). */
const restoredBackupOf = (stack: string) =>
  JSON.parse(mustPulumi(stack, ["stack", "output", "--json"]).stdout).restoredBackup;

/** A content path as `pulp` serves it: the status, and the sha256 of what came. */
async function served(pulp: Pulp, contentPath: string): Promise<{ status: number; sha256: string }> {
  const r = await get(`${pulp.baseUrl}${contentPath}`);
  return { status: r.status, sha256: r.status === 200 ? sha256(r.body) : "" };
}

const inTargetApi = (code: string) => pulpShell(NS, "restored", code);
/** The distributions Pulp's response cache holds answers for (one Redis hash each, pulpcore/cache). */
const CACHED_BASE_PATHS = [
  "from pulpcore.app.redis_connection import get_redis_connection",
  'print(sorted(k.decode() for k in get_redis_connection().scan_iter(_type="hash")))',
].join("; ");

/** Pulp's repair task with checksums verified: how many artifacts it found missing and corrupted. */
async function repair(pulp: Pulp): Promise<{ missing: number; corrupted: number }> {
  const posted = await postJson(pulp, "/pulp/api/v3/repair/", { verify_checksums: true });
  expect({ status: posted.status, body: posted.json }).toEqual({
    status: 202,
    body: { task: expect.any(String) },
  });
  const task = pulpCli(pulp, ["task", "show", "--href", posted.json.task, "--wait"]);
  expect(task.state).toBe("completed");
  const done = (code: string) => task.progress_reports.find((r: { code: string }) => r.code === code).done;
  return { missing: done("repair.missing"), corrupted: done("repair.corrupted") };
}

beforeAll(
  async () => {
    freshStack(
      SOURCE,
      { namespace: NS, contentOrigin: source.baseUrl, ...ONE_POD_EACH, backup: { enabled: true, keep: 2 } },
      DEV_STACK,
    );
    // Backups go to object storage too: an S3 API server on the host, where pods reach it.
    storage = await startObjectStorage();
    storage.createBucket(BUCKET);
    const s3 = { bucket: BUCKET, endpointUrl: storage.endpointUrl, accessKeyId: storage.accessKeyId };
    for (const [key, value] of Object.entries(s3)) {
      mustPulumi(SOURCE, ["config", "set", "--path", `pulp:backup.s3.${key}`, value]);
    }
    setSecrets(SOURCE, {
      "pulp:adminPassword": ADMIN_PASSWORD,
      "pulp:backupS3SecretAccessKey": storage.secretAccessKey,
    });
    // The target shares the namespace (made by the source) and reads the source's backups volume.
    writeStackConfig(TARGET, {}, DEV_STACK);
    pulumi(TARGET, ["stack", "rm", "--force", "--yes"]);
    importImages();
    ensureCnpgOperator();
    ensureCdi();
  },
  10 * 60 * 1000,
);

/** What a Job's pod reported: its termination message, JSON. */
function jobReport(namespace: string, job: string): Record<string, unknown> {
  const [pod] = getJson(["pods", "-n", namespace, "-l", `job-name=${job}`]).items;
  return JSON.parse(pod.status.containerStatuses[0].state.terminated.message);
}

afterAll(() => {
  for (const f of forwards) f.stop();
  storage?.stop();
  process.stdout.write(`restore timings (s): ${JSON.stringify(timings)}\n`);
  if (!process.env.PULP_KEEP_STACK) {
    pulumi(TARGET, ["stack", "rm", "--force", "--yes"]);
    fs.rmSync(path.join(REPO, `Pulumi.${TARGET}.yaml`), { force: true });
    dropStack(SOURCE, NS);
    dropStack(FRESH, FRESH_NS);
    dropStack(MOVED, MOVED_NS);
  }
});

test("the source install holds a file, a container image and a remote with a password, and is backed up", async () => {
  mustPulumi(SOURCE, ["up", "--yes", "--skip-preview"]);
  forwards.push(await portForward(NS, "pulp-web", SOURCE_PORT, 8080));
  contentPath = distribute(source, "kept", data);
  const pushed = skopeoCopy(
    `oci-archive:${busyboxArchive()}`,
    `docker://127.0.0.1:${SOURCE_PORT}/${IMAGE}`,
    source,
  );
  expect(pushed).toEqual({ ok: true, output: expect.any(String) });
  imageLayers = pullImage(`127.0.0.1:${SOURCE_PORT}/${IMAGE}`, source);
  expect(imageLayers.length).toBeGreaterThan(0);
  pulpCli(source, [
    "file",
    "remote",
    "create",
    "--name",
    "private",
    "--url",
    "https://files.example.com/PULP_MANIFEST",
    "--username",
    "reader",
    "--password",
    REMOTE_PASSWORD,
  ]);
  const run = backupTool(NS, "now");
  expect({ ok: run.ok, stderr: run.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  backupId = lastJsonLine(run).id;
});

test("a new stack restores the backup: keys from `npm run backup -- keys`, then one `pulumi up`", async () => {
  writeStackConfig(
    TARGET,
    {
      namespace: NS,
      createNamespace: false,
      instanceName: "restored",
      contentOrigin: target.baseUrl,
      ...ONE_POD_EACH,
      backup: { enabled: false },
      restore: { backup: backupId, claim: "pulp-backups" },
    },
    DEV_STACK,
  );
  mustPulumi(TARGET, ["stack", "init"]);
  // Without the keys the preview refuses, naming the command that sets them.
  const refused = pulumi(TARGET, ["preview"]);
  expect(refused.code).not.toBe(0);
  expect(`${refused.stdout}${refused.stderr}`).toContain(`npm run backup -- keys ${backupId} -n ${NS}`);

  const keys = backupTool(NS, "keys", backupId, "--stack", TARGET);
  expect({ ok: keys.ok, stderr: keys.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  expect(keys.stdout).toContain("pulp:dbFieldsEncryptionKey");
  expect(keys.stdout).not.toContain(ADMIN_PASSWORD);

  // Into object storage this volume's backup would lose every artifact: the check refuses before the
  // restore changes anything, naming both storages, and its fix, pasted, lets the restore go on.
  const bucket = "restored-artifacts";
  const objects = storage!; // started by beforeAll
  objects.createBucket(bucket);
  const volume = JSON.parse(mustPulumi(TARGET, ["config", "get", "pulp:storage"]).stdout).pvc;
  mustPulumi(TARGET, ["config", "rm", "pulp:storage"]); // the dev stack's volume: one storage at a time
  const s3 = { bucket, endpointUrl: objects.endpointUrl, accessKeyId: objects.accessKeyId };
  for (const [key, value] of Object.entries(s3)) {
    mustPulumi(TARGET, ["config", "set", "--path", `pulp:storage.s3.${key}`, value]);
  }
  mustPulumi(TARGET, ["config", "set", "--secret", "pulp:s3SecretAccessKey", objects.secretAccessKey]);
  const intoBucket = pulumi(TARGET, ["up", "--yes", "--skip-preview"]);
  const said = `${intoBucket.stdout}${intoBucket.stderr}`;
  expect(intoBucket.code).not.toBe(0);
  expect(said).toContain(
    `backup ${backupId} was taken of an install whose artifacts are in pvc (the backup holds them, `,
  );
  expect(said).toContain(
    `this install keeps its artifacts in s3://${bucket}: a restore copies artifacts into a volume only, so ` +
      "every one would be missing. Nothing was changed. Restore it into an install with a volume for its " +
      "artifacts: pulumi config rm pulp:storage",
  );
  expect(kubectl(["get", "job", "-n", NS, "-o", "name"])).not.toContain(
    `restored-restore-${backupId.toLowerCase()}`,
  );
  // No Pulp, Redis or pulp-web Deployment was made for the refused restore (its database was: the check
  // does not wait for it, and an empty database holds nothing).
  expect(kubectl(["get", "deployments", "-n", NS, "-o", "name"])).not.toMatch(/\/restored-/);
  mustPulumi(TARGET, ["config", "rm", "pulp:storage"]);
  // The default volume now; the dev stack's size again, as the rest of this test expects.
  mustPulumi(TARGET, ["config", "set", "--path", "pulp:storage.pvc.size", volume.size]);

  const up = mustPulumi(TARGET, ["up", "--yes", "--skip-preview"]);
  timings.restoreUp = up.seconds;
  const job = JSON.parse(
    kubectl(["get", "job", "-n", NS, `restored-restore-${backupId.toLowerCase()}`, "-o", "json"]),
  );
  expect(job.status.succeeded).toBe(1);
  expect(restoredBackupOf(TARGET)).toBe(backupId);
});

test("real clients read everything back from the restored install: login, file, image, encrypted remote", async () => {
  forwards.push(await portForward(NS, "restored-web", TARGET_PORT, 8080));
  // The old admin password logs in (the restored user, and the key the stack now holds).
  expect(pulpCli(target, ["user", "show", "--username", "admin"]).username).toBe("admin");
  const download = await get(`${target.baseUrl}${contentPath}`);
  expect(download.status).toBe(200);
  expect(sha256(download.body)).toBe(sha256(data));
  expect(pullImage(`127.0.0.1:${TARGET_PORT}/${IMAGE}`, target)).toEqual(imageLayers);

  // Decrypted with the backup's db-fields key.
  expect(remotePassword(NS, "restored")).toBe(REMOTE_PASSWORD);
});

test("a pulp-operator PulpBackup of the source (laid out as the operator lays it out) comes into a new namespace over http: keys from its files, one `pulumi up`, and real clients read everything back", async () => {
  // As the operator's backup pod makes it (testbed/real/pulpBackup.ts), then as a user moving it packs it: a
  // tar of the directory, put where the new install reads it over http (here the bucket, presigned).
  const { archive: tar } = await pulpBackupOf(NS, "pulp", PULPBACKUP);
  const key = `pulpbackups/${PULPBACKUP}.tar`;
  storage!.upload(BUCKET, key, tar);
  freshStack(
    MOVED,
    {
      namespace: MOVED_NS,
      contentOrigin: `http://127.0.0.1:${MOVED_PORT}`,
      ...ONE_POD_EACH,
      backup: { enabled: false },
      restore: { backup: PULPBACKUP, http: { size: "1Gi" } },
    },
    DEV_STACK,
  );
  mustPulumi(MOVED, [
    "config",
    "set",
    "--secret",
    "--path",
    "pulp:restore.http.url",
    storage!.presign(BUCKET, key, 3600),
  ]);
  const keys = backupTool(MOVED_NS, "keys", PULPBACKUP, "--archive", tar, "--stack", MOVED);
  expect({ ok: keys.ok, stderr: keys.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  expect(keys.stdout).toContain("pulp:dbFieldsEncryptionKey");
  expect(keys.stdout).not.toContain(ADMIN_PASSWORD);
  const up = mustPulumi(MOVED, ["up", "--yes", "--skip-preview"]);
  timings.pulpBackupUp = up.seconds;
  expect(restoredBackupOf(MOVED)).toBe(PULPBACKUP);
  expect(jobReport(MOVED_NS, "pulp-restore-op-20261125t031500")).toMatchObject({ restored: PULPBACKUP });

  forwards.push(await portForward(MOVED_NS, "pulp-web", MOVED_PORT, 8080));
  const moved: Pulp = { ...source, baseUrl: `http://127.0.0.1:${MOVED_PORT}` };
  expect(pulpCli(moved, ["user", "show", "--username", "admin"]).username).toBe("admin");
  expect(await served(moved, contentPath)).toEqual({ status: 200, sha256: sha256(data) });
  expect(pullImage(`127.0.0.1:${MOVED_PORT}/${IMAGE}`, moved)).toEqual(imageLayers);
  // Decrypted with the PulpBackup's db-fields key, which `keys` set from its YAML.
  expect(remotePassword(MOVED_NS, "pulp")).toBe(REMOTE_PASSWORD);
  expect(await repair(moved)).toEqual({ missing: 0, corrupted: 0 });
  mustPulumi(MOVED, ["preview", "--expect-no-changes"]);
  // Done with: its namespace goes now, so the rest of the suite has the node to itself.
  dropStack(MOVED, MOVED_NS);
});

test("the same backup id again changes nothing; a second backup taken during uploads is refused on the live install", async () => {
  const again = pulumi(TARGET, ["preview", "--expect-no-changes"]);
  expect({ code: again.code, out: again.code === 0 ? "" : again.stdout.slice(-3000) }).toEqual({
    code: 0,
    out: "",
  });

  // The source gets one more file before its second backup; the restored install gets one of its own.
  later.contentPath = distribute(source, "later", later.data);
  extra.contentPath = distribute(target, "extra", extra.data);
  // The second backup is taken while the source uploads: three pulp-cli loops, one upload after another,
  // started a second apart so their tasks do not run in step (CI once saw three backups miss two loops
  // that had started together: each cycle is mostly pulp-cli starting, its task a fraction of a second).
  const loops = ["busy-1", "busy-2", "busy-3"].map((name, i) => {
    pulpCli(source, ["file", "repository", "create", "--name", name]);
    return uploadContinuously(source, name, 4 * 1024 * 1024, i);
  });
  // Pulp must have written while backup.sh ran (the id is its start, to the second): artifacts stored or
  // upload tasks running between its start and end. Its few seconds can fall between two uploads: then
  // the next backup (at most five).
  const writtenDuring = (taken: { id: string; seconds: number }) => {
    const start = taken.id.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6+00:00");
    return JSON.parse(
      pulpShell(
        NS,
        "pulp",
        [
          "import json, datetime as d",
          "from pulpcore.app.models import Artifact, Task",
          `s = d.datetime.fromisoformat("${start}"); e = s + d.timedelta(seconds=${taken.seconds + 1})`,
          "print(json.dumps({'artifacts': Artifact.objects.filter(pulp_created__range=(s, e)).count(),",
          "  'tasks': Task.objects.filter(name__endswith='general_create', started_at__lte=e, finished_at__gte=s).count()}))",
        ].join("\n"),
      ),
    ) as { artifacts: number; tasks: number };
  };
  let taken: { id: string; seconds: number; s3: typeof secondInBucket } | undefined;
  let during = { artifacts: 0, tasks: 0 };
  try {
    for (let attempt = 1; attempt <= 5 && during.artifacts + during.tasks === 0; attempt++) {
      const run = backupTool(NS, "now");
      expect({ ok: run.ok, stderr: run.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
      taken = lastJsonLine(run);
      during = writtenDuring(taken!);
      process.stdout.write(
        `backup ${taken!.id} (attempt ${attempt}): written during it ${JSON.stringify(during)}\n`,
      );
    }
  } finally {
    const uploaded = await Promise.all(loops.map((l) => l.stop()));
    process.stdout.write(`uploads while the second backup ran: ${uploaded.join(" + ")}\n`);
  }
  expect(during.artifacts + during.tasks).toBeGreaterThan(0);
  otherId = taken!.id;
  secondInBucket = taken!.s3;
  mustPulumi(TARGET, ["config", "set", "--path", "pulp:restore.backup", otherId]);
  const refused = pulumi(TARGET, ["preview"]);
  expect(refused.code).not.toBe(0);
  expect(`${refused.stdout}${refused.stderr}`).toContain(
    `[pulp:restore-refused] pulp:restore.backup is ${otherId}, but this stack is a live install`,
  );
  expect(`${refused.stdout}${refused.stderr}`).toContain(
    `confirm it: pulumi config set --path pulp:restore.overwrite ${otherId}`,
  );
});

test("the second backup comes from object storage (a presigned URL, the real CDI), replaces the live data with pulp:restore.overwrite, and passes Pulp's repair check", async () => {
  // The backup Job put it into the bucket as an archive, with its manifest beside it.
  const key = `${NS}/pulp/${otherId}.tar`;
  expect(secondInBucket).toEqual({
    url: `s3://${BUCKET}/${key}`,
    bytes: expect.any(Number),
    sha256: expect.any(String),
    seconds: expect.any(Number),
    keys: `s3://${BUCKET}/${NS}/pulp/${otherId}.keys.tar`,
  });
  archive = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-restore-s3-")), `${otherId}.tar`);
  storage!.download(BUCKET, key, archive);
  expect(sha256(fs.readFileSync(archive))).toBe(secondInBucket.sha256);
  // The archive the restore imports holds no key: they are in their own object.
  expect(execFileSync("tar", ["-tf", archive], { encoding: "utf8" })).not.toContain(`${otherId}/keys`);
  keysArchive = path.join(path.dirname(archive), `${otherId}.keys.tar`);
  storage!.download(BUCKET, `${NS}/pulp/${otherId}.keys.tar`, keysArchive);
  const manifest = path.join(path.dirname(archive), `${otherId}.json`);
  storage!.download(BUCKET, `${NS}/pulp/${otherId}.json`, manifest);
  expect(JSON.parse(fs.readFileSync(manifest, "utf8"))).toMatchObject({
    id: otherId,
    archive: { key, bytes: secondInBucket.bytes, sha256: secondInBucket.sha256 },
  });
  // The newest two backups are there (keep: 2), each an archive, its keys and a manifest.
  const kept = storage!.list(BUCKET, `${NS}/pulp/`).map((o) => o.key);
  expect(kept).toHaveLength(6);
  expect(kept.slice(3)).toEqual([
    `${NS}/pulp/${otherId}.json`,
    `${NS}/pulp/${otherId}.keys.tar`,
    `${NS}/pulp/${otherId}.tar`,
  ]);
  // `npm run backup -- list` reads both places: each kept backup is in the volume and in the bucket.
  const listed = backupTool(NS, "list");
  expect({ ok: listed.ok, stderr: listed.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  const where = Object.fromEntries(
    listed.stdout
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => [line.split("\t")[0], line.split("\t")[5]]),
  );
  const bucketIds = kept.filter((k) => k.endsWith(".json")).map((k) => path.basename(k, ".json"));
  expect(where).toEqual(Object.fromEntries(bucketIds.map((id) => [id, "volume, s3"])));
  const url = storage!.presign(BUCKET, key, 3600);
  // The keys from the keys archive, as before anything exists (the same keys: one source install).
  const keys = backupTool(NS, "keys", otherId, "--archive", keysArchive, "--stack", TARGET);
  expect({ ok: keys.ok, stderr: keys.stderr }).toEqual({ ok: true, stderr: expect.any(String) });

  mustPulumi(TARGET, ["config", "rm", "--path", "pulp:restore.claim"]);
  mustPulumi(TARGET, ["config", "set", "--path", "pulp:restore.http.size", "1Gi"]);
  mustPulumi(TARGET, ["config", "set", "--path", "pulp:restore.overwrite", otherId]);

  // No room in the namespace's quota: the preview reads the real ResourceQuota and refuses before anything
  // changes, with a patch that makes room; pasted as printed, it does.
  mustPulumi(TARGET, ["config", "set", "--secret", "--path", "pulp:restore.http.url", url]);
  kubectl(
    ["apply", "-n", NS, "-f", "-"],
    JSON.stringify({
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "storage-room" },
      spec: { hard: { "requests.storage": "1Gi" } },
    }),
  );
  const hardNow = () =>
    getJson(["resourcequota", "-n", NS, "storage-room"]).status?.hard?.["requests.storage"];
  await waitUntil("the quota's status shows its limit", 60, () => hardNow() === "1Gi", {
    detail: () => `status.hard: ${hardNow()}`,
  });
  const noRoom = pulumi(TARGET, ["preview"]);
  const refusal = `${noRoom.stdout}${noRoom.stderr}`;
  expect({ code: noRoom.code === 0 ? 0 : 1, quota: refusal.includes("ResourceQuota storage-room") }).toEqual({
    code: 1,
    quota: true,
  });
  const patch = /kubectl -n (\S+) patch resourcequota (\S+) --type merge -p '([^']+)'/.exec(refusal);
  expect(patch).not.toBeNull();
  kubectl(["-n", patch![1], "patch", "resourcequota", patch![2], "--type", "merge", "-p", patch![3]]);
  // The preview reads the status, which the quota controller brings up to the new limit.
  await waitUntil("the quota's status shows the patched limit", 60, () => hardNow() !== "1Gi", {
    detail: () => `status.hard: ${hardNow()}`,
  });
  const roomy = pulumi(TARGET, ["preview"]);
  expect({
    code: roomy.code,
    out: roomy.code === 0 ? "" : `${roomy.stdout}${roomy.stderr}`.slice(-2000),
  }).toEqual({
    code: 0,
    out: "",
  });
  kubectl(["delete", "-n", NS, "resourcequota/storage-room"]);

  // A wrong URL first: the real importer gets a 404 and restarts; the update ends naming that, and the live
  // install was never stopped (the import comes before the stop).
  const replicas = () =>
    ["api", "content", "worker"].map((p) => getJson(["deployment", "-n", NS, `restored-${p}`]).spec.replicas);
  mustPulumi(TARGET, [
    "config",
    "set",
    "--secret", // a presigned URL is a credential: refused as plain config
    "--path",
    "pulp:restore.http.url",
    storage!.presign(BUCKET, `${NS}/pulp/no-such-backup.tar`, 3600),
  ]);
  const failed = pulumi(TARGET, ["up", "--yes", "--skip-preview"]);
  timings.failedImportUp = failed.seconds;
  const said = `${failed.stdout}${failed.stderr}`;
  const named = said.includes("keeps failing") && said.includes("404");
  expect({
    failed: failed.code !== 0,
    named,
    // What the update said instead, when it did not name the importer's 404.
    said: named ? "" : said.slice(-3000),
  }).toEqual({
    failed: true,
    named: true,
    said: "",
  });
  expect(said).toContain("was deleted: fix the cause, then `pulumi up --refresh` creates it again");
  expect(replicas()).toEqual([1, 1, 1]);
  // Still serving: the file only this install holds, which Pulp's content app now holds in its Redis cache.
  // The restore replaces the database that answer came from; the migration after it clears the cache.
  expect((await get(`${target.baseUrl}${extra.contentPath}`)).status).toBe(200);
  expect(inTargetApi(CACHED_BASE_PATHS)).toContain("'extra'");

  // The right URL: the same update as a person runs it after the fix.
  mustPulumi(TARGET, ["config", "set", "--secret", "--path", "pulp:restore.http.url", url]);
  const up = mustPulumi(TARGET, ["up", "--yes", "--skip-preview", "--refresh"]);
  timings.overwriteFromHttpUp = up.seconds;

  // Imported by the real CDI (its importer's phase is on the PVC), then restored over the stopped install.
  const imported = `restored-restore-${otherId.toLowerCase()}`;
  const pvc = JSON.parse(kubectl(["get", "pvc", "-n", NS, imported, "-o", "json"]));
  expect(pvc.metadata.annotations["cdi.kubevirt.io/storage.pod.phase"]).toBe("Succeeded");
  const job = JSON.parse(kubectl(["get", "job", "-n", NS, imported, "-o", "json"]));
  expect(job.status.succeeded).toBe(1);
  expect(restoredBackupOf(TARGET)).toBe(otherId);

  forwards.push(await portForward(NS, "restored-web", TARGET_PORT_AFTER, 8080));
  const after: Pulp = { ...target, baseUrl: `http://127.0.0.1:${TARGET_PORT_AFTER}` };
  const read = (p: string) => served(after, p);
  // The second backup's files are served; what only the live install held is gone with its database.
  expect(await read(contentPath)).toEqual({ status: 200, sha256: sha256(data) });
  expect(await read(later.contentPath)).toEqual({ status: 200, sha256: sha256(later.data) });
  expect((await read(extra.contentPath)).status).toBe(404);
  expect(inTargetApi(CACHED_BASE_PATHS)).not.toContain("'extra'");
  expect(pulpCli(after, ["user", "show", "--username", "admin"]).username).toBe("admin");
  expect(pullImage(`127.0.0.1:${TARGET_PORT_AFTER}/${IMAGE}`, after)).toEqual(imageLayers);
  // Taken while uploads ran, the backup is consistent: every artifact its database names is there, whole.
  expect(await repair(after)).toEqual({ missing: 0, corrupted: 0 });

  // The next update drops the confirmation from the restore's ConfigMap and rolls nothing; then no changes.
  const pods = () =>
    items("pods", NS)
      .filter((p) => /^restored-(api|content|worker)-/.test(p.metadata.name))
      .map((p) => p.metadata.name)
      .sort();
  const before = pods();
  mustPulumi(TARGET, ["up", "--yes", "--skip-preview"]);
  expect(pods()).toEqual(before);
  const again = pulumi(TARGET, ["preview", "--expect-no-changes"]);
  expect({ code: again.code, out: again.code === 0 ? "" : again.stdout.slice(-3000) }).toEqual({
    code: 0,
    out: "",
  });
});

test("an install restores its own backup over itself with the keys it generated: no keys in the stack config", async () => {
  // The source set only its admin password; its secret key and db-fields key were generated.
  const config = JSON.parse(mustPulumi(SOURCE, ["config", "--json"]).stdout) as Record<string, unknown>;
  expect(Object.keys(config).filter((k) => /secretKey|dbFieldsEncryptionKey/.test(k))).toEqual([]);
  // A file uploaded after the backup: gone with the database the backup replaces.
  const afterBackup = { data: Buffer.from("uploaded after the second backup\n"), contentPath: "" };
  afterBackup.contentPath = distribute(source, "after-backup", afterBackup.data);
  expect((await get(`${source.baseUrl}${afterBackup.contentPath}`)).status).toBe(200);

  mustPulumi(SOURCE, ["config", "set", "--path", "pulp:restore.backup", otherId]);
  mustPulumi(SOURCE, ["config", "set", "--path", "pulp:restore.overwrite", otherId]);
  const up = mustPulumi(SOURCE, ["up", "--yes", "--skip-preview"]);
  timings.overwriteOwnUp = up.seconds;
  expect(restoredBackupOf(SOURCE)).toBe(otherId);

  forwards.push(await portForward(NS, "pulp-web", SOURCE_PORT_AFTER, 8080));
  const after: Pulp = { ...source, baseUrl: `http://127.0.0.1:${SOURCE_PORT_AFTER}` };
  const read = (p: string) => served(after, p);
  expect(await read(later.contentPath)).toEqual({ status: 200, sha256: sha256(later.data) });
  expect((await read(afterBackup.contentPath)).status).toBe(404);
  expect(pulpCli(after, ["user", "show", "--username", "admin"]).username).toBe("admin");
  // The generated db-fields key still decrypts the remote's password.
  expect(remotePassword(NS, "pulp")).toBe(REMOTE_PASSWORD);
  expect(await repair(after)).toEqual({ missing: 0, corrupted: 0 });
  // As over the restored install: the next update drops the confirmation, then nothing changes.
  mustPulumi(SOURCE, ["up", "--yes", "--skip-preview"]);
  const again = pulumi(SOURCE, ["preview", "--expect-no-changes"]);
  expect({ code: again.code, out: again.code === 0 ? "" : again.stdout.slice(-3000) }).toEqual({
    code: 0,
    out: "",
  });
});

test("with the install gone, data and namespace included, the bucket brings it back into a new namespace", async () => {
  // Both installs of the namespace go: their database, volumes (the backups one too) and Secrets.
  dropStack(SOURCE, NS);
  deleteNamespace(NS, 300);

  freshStack(
    FRESH,
    {
      namespace: FRESH_NS,
      contentOrigin: `http://127.0.0.1:${FRESH_PORT}`,
      ...ONE_POD_EACH,
      backup: { enabled: false },
      // Fetched with the bucket's credentials (a Secret): no URL that grants access in any spec.
      restore: {
        backup: otherId,
        s3: {
          bucket: BUCKET,
          prefix: `${NS}/pulp/`,
          endpointUrl: storage!.endpointUrl,
          accessKeyId: storage!.accessKeyId,
          size: "1Gi",
        },
      },
    },
    DEV_STACK,
  );
  mustPulumi(FRESH, ["config", "set", "--secret", "pulp:restoreS3SecretAccessKey", storage!.secretAccessKey]);
  const keys = backupTool(FRESH_NS, "keys", otherId, "--archive", keysArchive, "--stack", FRESH);
  expect({ ok: keys.ok, stderr: keys.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  const up = mustPulumi(FRESH, ["up", "--yes", "--skip-preview"]);
  timings.freshFromBucketUp = up.seconds;
  expect(restoredBackupOf(FRESH)).toBe(otherId);
  // The fetch Job's pod says what it fetched: the whole archive, its sha256 the manifest's.
  expect(jobReport(FRESH_NS, `pulp-restore-fetch-${otherId.toLowerCase()}`)).toMatchObject({
    fetched: `s3://${BUCKET}/${NS}/pulp/${otherId}.tar`,
    verified: true,
  });
  expect(JSON.stringify(getJson(["datavolumes", "-n", FRESH_NS]).items)).not.toContain("X-Amz-Signature");

  forwards.push(await portForward(FRESH_NS, "pulp-web", FRESH_PORT, 8080));
  const fresh: Pulp = { ...source, baseUrl: `http://127.0.0.1:${FRESH_PORT}` };
  expect(await served(fresh, contentPath)).toEqual({ status: 200, sha256: sha256(data) });
  expect(await served(fresh, later.contentPath)).toEqual({ status: 200, sha256: sha256(later.data) });
  expect(pulpCli(fresh, ["user", "show", "--username", "admin"]).username).toBe("admin");
  expect(pullImage(`127.0.0.1:${FRESH_PORT}/${IMAGE}`, fresh)).toEqual(imageLayers);
  expect(remotePassword(FRESH_NS, "pulp")).toBe(REMOTE_PASSWORD);
  expect(await repair(fresh)).toEqual({ missing: 0, corrupted: 0 });
});
