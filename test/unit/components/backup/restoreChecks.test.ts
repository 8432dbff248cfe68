// Unit: the checks a restore makes before it changes anything, and the backup's lock, run as the pods run
// them: restoreCheck.py under python3 with the image's releases as dist-info folders on its path and a
// stand-in boto3 that lists a fake bucket page by page,
// restore.sh and backup.sh under bash with stand-ins for psql and pg_dump (python3, bash and flock are part
// of what the tests need: missing, this fails). Real Pulp restores in test/e2e/real/restore.test.ts.
import { spawn, spawnSync } from "child_process";
import { createHash, createHmac } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { restoreRules } from "../../../../components/backup/restore";

const BACKUP = path.join(__dirname, "../../../../components/backup");
const ID = "20261124T031500Z";
const ARTIFACTS = ["artifact/0a/11", "artifact/3f/22", "artifact/3f/23", "artifact/c4/44"];

// boto3 as restoreCheck.py uses it: FAKE_BUCKET (JSON) maps a bucket to its keys; two keys a page, so the
// merge runs across pages. Every listing is printed as "LIST: <bucket> <prefix>".
const FAKE_BOTO3 = `
import json, os
class Paginator:
    def paginate(self, Bucket, Prefix):
        print("LIST:", Bucket, Prefix)
        keys = sorted(k for k in json.loads(os.environ["FAKE_BUCKET"]).get(Bucket, []) if k.startswith(Prefix))
        for i in range(0, max(len(keys), 1), 2):
            yield {"Contents": [{"Key": k} for k in keys[i:i + 2]]} if keys else {}
class Client:
    def get_paginator(self, name):
        assert name == "list_objects_v2"
        return Paginator()
def client(service, endpoint_url=None, region_name=None, config=None):
    assert service == "s3"
    return Client()
`;

// azure-storage-blob as restoreCheck.py uses it: FAKE_BUCKET maps a container to its blob names (with the
// location folder, as Pulp writes them), listed in order; each listing is printed as
// "LIST: <container> <prefix> <the connection string's account>".
const FAKE_AZURE_BLOB = `
import json, os
class Blob:
    def __init__(self, name):
        self.name = name
class ContainerClient:
    def __init__(self, account, container):
        self.account, self.container = account, container
    @classmethod
    def from_connection_string(cls, conn, container):
        fields = dict(f.split("=", 1) for f in conn.split(";"))
        return cls(fields["AccountName"], container)
    def list_blobs(self, name_starts_with):
        print("LIST:", self.container, name_starts_with, self.account)
        names = json.loads(os.environ["FAKE_BUCKET"]).get(self.container, [])
        return iter([Blob(n) for n in sorted(names) if n.startswith(name_starts_with)])
`;

// google-cloud-storage as restoreCheck.py uses it: the same FAKE_BUCKET, keyed by bucket; each listing is
// printed as "LIST: <bucket> <prefix> <the key file's client_email>" (the Client reads the key from
// GOOGLE_APPLICATION_CREDENTIALS, as google-auth's application default credentials do).
const FAKE_GCS = `
import json, os
class Blob:
    def __init__(self, name):
        self.name = name
class Client:
    def __init__(self):
        with open(os.environ["GOOGLE_APPLICATION_CREDENTIALS"]) as f:
            self.email = json.load(f)["client_email"]
    def list_blobs(self, bucket, prefix):
        print("LIST:", bucket, prefix, self.email)
        names = json.loads(os.environ["FAKE_BUCKET"]).get(bucket, [])
        return iter([Blob(n) for n in sorted(names) if n.startswith(prefix)])
`;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "restore-checks-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The releases the image carries (importlib.metadata reads them from dist-info folders on the path). */
const IMAGE = { pulpcore: "3.123.1", "pulp-ansible": "0.30.3", "pulp-glue": "0.36.0" };

/**
 * A backup as backup.sh lays it out: `storage` as its manifest names it, media/ for a volume's; the admin
 * password's entry as backup.sh writes it (an HMAC keyed by secret_key), or as it did before (`sha256`).
 */
function backup(
  storage: string,
  config: object = {},
  versions: Record<string, string> = { pulpcore: "3.123.1" },
  adminPassword: "hmac-sha256" | "sha256" = "hmac-sha256",
): string {
  const b = path.join(dir, "backups", ID);
  fs.mkdirSync(path.join(b, "keys"), { recursive: true });
  fs.writeFileSync(path.join(b, "artifacts.list"), ARTIFACTS.map((a) => `${a}\n`).join(""));
  fs.writeFileSync(path.join(b, "database.dump"), "dump");
  fs.writeFileSync(path.join(b, "config.json"), JSON.stringify(config));
  const keys: Record<string, string> = {};
  for (const f of ["secret_key", "database_fields.symmetric.key", "admin_password"]) {
    fs.writeFileSync(path.join(b, "keys", f), `${f}-value`);
    keys[f] = sha256(`${f}-value`);
  }
  if (adminPassword === "hmac-sha256")
    keys.admin_password = `hmac-sha256:${hmac("secret_key-value", "admin_password-value")}`;
  if (storage === "pvc") {
    for (const a of ARTIFACTS) {
      fs.mkdirSync(path.dirname(path.join(b, "media", a)), { recursive: true });
      fs.writeFileSync(path.join(b, "media", a), a);
    }
  }
  // As backup.sh writes it: a top-level key a line (restore.sh reads it with sed).
  const line = (value: object) => JSON.stringify(value).replace(/,"/g, ', "').replace(/":/g, '": ');
  const manifest = [
    "{",
    `  "format": 1,`,
    `  "id": "${ID}",`,
    `  "versions": ${line(versions)},`,
    `  "database": ${line({ file: "database.dump", sha256: sha256("dump") })},`,
    `  "artifacts": ${line({ storage, referenced: ARTIFACTS.length, files: storage === "pvc" ? ARTIFACTS.length : 0 })},`,
    `  "keys": ${line(keys)}`,
    "}",
  ].join("\n");
  expect(JSON.parse(manifest)).toMatchObject({ id: ID });
  fs.writeFileSync(path.join(b, "manifest.json"), manifest);
  return b;
}
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const hmac = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex");

function restoreCheck(
  target: string,
  bucket: Record<string, string[]> = {},
  image: Record<string, string> = IMAGE,
) {
  const stub = path.join(dir, "stub");
  fs.rmSync(stub, { recursive: true, force: true });
  fs.mkdirSync(path.join(stub, "botocore"), { recursive: true });
  for (const [name, version] of Object.entries(image)) {
    const info = path.join(stub, `${name.replace(/-/g, "_")}-${version}.dist-info`);
    fs.mkdirSync(info);
    fs.writeFileSync(
      path.join(info, "METADATA"),
      `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n`,
    );
  }
  fs.writeFileSync(path.join(stub, "boto3.py"), FAKE_BOTO3);
  fs.mkdirSync(path.join(stub, "azure", "storage", "blob"), { recursive: true });
  fs.writeFileSync(path.join(stub, "azure", "__init__.py"), "");
  fs.writeFileSync(path.join(stub, "azure", "storage", "__init__.py"), "");
  fs.writeFileSync(path.join(stub, "azure", "storage", "blob", "__init__.py"), FAKE_AZURE_BLOB);
  fs.mkdirSync(path.join(stub, "google", "cloud", "storage"), { recursive: true });
  fs.writeFileSync(path.join(stub, "google", "cloud", "storage", "__init__.py"), FAKE_GCS);
  const gcsKey = path.join(stub, "gcs-key.json");
  fs.writeFileSync(gcsKey, JSON.stringify({ client_email: "pulp@pulp-project.iam.gserviceaccount.com" }));
  fs.writeFileSync(path.join(stub, "botocore", "__init__.py"), "");
  fs.writeFileSync(
    path.join(stub, "botocore", "config.py"),
    "class Config:\n    def __init__(self, **kw): pass\n",
  );
  const log = path.join(dir, "termination-log");
  fs.rmSync(log, { force: true });
  const r = spawnSync("python3", [path.join(BACKUP, "restoreCheck.py")], {
    encoding: "utf8",
    env: {
      ...process.env,
      PYTHONPATH: stub,
      BACKUP_DIR: path.join(dir, "backups", ID),
      RESTORE_RULES: JSON.stringify(restoreRules()),
      TARGET_STORAGE: target,
      FAKE_BUCKET: JSON.stringify(bucket),
      AZURE_CONNECTION_STRING:
        "DefaultEndpointsProtocol=https;AccountName=pulpstore;AccountKey=a2V5;BlobEndpoint=https://pulpstore.blob.core.windows.net",
      GOOGLE_APPLICATION_CREDENTIALS: gcsKey,
      TERMINATION_LOG: log,
    },
  });
  if (r.error) throw r.error;
  const termination = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
  return { code: r.status, out: r.stdout + r.stderr, termination };
}

test("a volume's backup into an object-storage install is refused, naming both storages (B1)", () => {
  backup("pvc");
  const r = restoreCheck("s3://pulp-new", { "pulp-new": ARTIFACTS });
  expect(r.code).toBe(1);
  expect(r.termination).toBe(
    `restore refused: backup ${ID} was taken of an install whose artifacts are in pvc (the backup holds them, ` +
      "4 files), and this install keeps its artifacts in s3://pulp-new: a restore copies artifacts into a volume " +
      "only, so every one would be missing. Nothing was changed. Restore it into an install with a volume for " +
      "its artifacts: pulumi config rm pulp:storage\n",
  );
  expect(r.out).not.toMatch(/LIST:/);
});

test("an object-storage backup into a volume install is refused, with the bucket to set (B1)", () => {
  backup("s3://pulp-old");
  const r = restoreCheck("pvc");
  expect(r.code).toBe(1);
  expect(r.termination).toMatch(
    /whose artifacts are in s3:\/\/pulp-old \(the backup holds none of them\), and this install keeps its artifacts on a volume: every one would be missing\. Nothing was changed\..*pulumi config set --path pulp:storage\.s3\.bucket pulp-old /,
  );
  // Backups taken before the manifest named the bucket: it comes from the config they were taken with.
  backup("s3 (not in the backup: back the bucket up by its own means)", {
    storage: { s3: { bucket: "legacy" } },
  });
  expect(restoreCheck("pvc").termination).toMatch(/artifacts are in s3:\/\/legacy .*bucket legacy /);
  // A volume's backup into a volume install: restore.sh copies and checks the files.
  backup("pvc");
  expect(restoreCheck("pvc")).toMatchObject({ code: 0, termination: "" });
});

test("into a bucket, every referenced object must be there: one listing, the missing ones named (B4)", () => {
  backup("s3://pulp");
  const all = restoreCheck("s3://pulp", { pulp: [...ARTIFACTS, "artifact/ff/99", "other/x"] });
  expect(all).toMatchObject({ code: 0, termination: "" });
  expect(all.out).toMatch(/^LIST: pulp artifact\/$/m);
  expect(all.out).toMatch(
    /all 4 artifacts backup .* references are in s3:\/\/pulp; 1 objects there are not referenced by it and stay/,
  );
  // Orphan cleanup deleted two after the backup (the first and one between pages).
  const gone = restoreCheck("s3://pulp", { pulp: [ARTIFACTS[1], ARTIFACTS[3]] });
  expect(gone.code).toBe(1);
  expect(gone.termination).toBe(
    `restore refused: 2 of the 4 artifacts backup ${ID} references are not in s3://pulp (first: artifact/0a/11 ` +
      "artifact/3f/23): the restored Pulp would reference objects that are gone, for good where they were " +
      "uploaded. Nothing was changed. Objects deleted since the backup (orphan cleanup) come back from the " +
      "bucket's own versions or backup: restore them, then pulumi up again\n",
  );
  expect(restoreCheck("s3://pulp", {}).termination).toMatch(/^restore refused: 4 of the 4 artifacts/);
});

test("another bucket is accepted only when it holds every object, and named when it does not (B1, B4)", () => {
  backup("s3://pulp-old");
  expect(restoreCheck("s3://pulp-new", { "pulp-new": ARTIFACTS }).out).toMatch(
    /all 4 artifacts .* are in s3:\/\/pulp-new \(the backup was taken with s3:\/\/pulp-old\)/,
  );
  expect(restoreCheck("s3://pulp-new", { "pulp-old": ARTIFACTS }).termination).toMatch(
    /4 of the 4 artifacts .* are not in s3:\/\/pulp-new \(the backup was taken with s3:\/\/pulp-old\).*; or copy the objects over first \(aws s3 sync s3:\/\/pulp-old s3:\/\/pulp-new\)\n$/,
  );
});

test("into an Azure container, every referenced blob must be under its location, listed once (issue 24)", () => {
  backup("azure://pulpstore/artifacts/pulp/prod");
  const located = ARTIFACTS.map((a) => `pulp/prod/${a}`);
  const all = restoreCheck("azure://pulpstore/artifacts/pulp/prod", {
    artifacts: [...located, "pulp/prod/artifact/ff/99", "pulp/other/artifact/0a/11"],
  });
  expect(all).toMatchObject({ code: 0, termination: "" });
  expect(all.out).toMatch(/^LIST: artifacts pulp\/prod\/artifact\/ pulpstore$/m);
  expect(all.out).toMatch(
    /all 4 artifacts backup .* references are in azure:\/\/pulpstore\/artifacts\/pulp\/prod; 1 objects there are not referenced/,
  );
  // The same names at the container's root are not where this install looks.
  const elsewhere = restoreCheck("azure://pulpstore/artifacts/pulp/prod", { artifacts: ARTIFACTS });
  expect(elsewhere.termination).toMatch(
    /^restore refused: 4 of the 4 artifacts .* are not in azure:\/\/pulpstore\/artifacts\/pulp\/prod /,
  );
  // Without a location, the container's root.
  backup("azure://pulpstore/artifacts");
  expect(restoreCheck("azure://pulpstore/artifacts", { artifacts: ARTIFACTS }).out).toMatch(
    /^LIST: artifacts artifact\/ pulpstore$/m,
  );
  // From a bucket into a container: accepted once copied, else named with the tools that copy.
  backup("s3://pulp-old");
  expect(restoreCheck("azure://pulpstore/artifacts", { artifacts: [ARTIFACTS[0]] }).termination).toMatch(
    /3 of the 4 artifacts .* \(the backup was taken with s3:\/\/pulp-old\).*; or copy the objects over first \(azcopy, rclone or the stores' own tools, from s3:\/\/pulp-old to azure:\/\/pulpstore\/artifacts\)\n$/,
  );
});

test("an Azure backup into a volume install is refused, with the account and container to set (issue 24)", () => {
  backup("azure://pulpstore/artifacts/pulp");
  expect(restoreCheck("pvc").termination).toMatch(
    /artifacts are in azure:\/\/pulpstore\/artifacts\/pulp \(the backup holds none of them\).*pulumi config set --path pulp:storage\.azure\.accountName pulpstore && pulumi config set --path pulp:storage\.azure\.container artifacts /,
  );
});

test("into a GCS bucket, every referenced object must be under its location, listed with the key (issue 24)", () => {
  backup("gs://pulp-artifacts/pulp/prod");
  const located = ARTIFACTS.map((a) => `pulp/prod/${a}`);
  const all = restoreCheck("gs://pulp-artifacts/pulp/prod", {
    "pulp-artifacts": [...located, "pulp/prod/artifact/ff/99"],
  });
  expect(all).toMatchObject({ code: 0, termination: "" });
  expect(all.out).toMatch(
    /^LIST: pulp-artifacts pulp\/prod\/artifact\/ pulp@pulp-project\.iam\.gserviceaccount\.com$/m,
  );
  expect(all.out).toMatch(
    /all 4 artifacts backup .* references are in gs:\/\/pulp-artifacts\/pulp\/prod; 1 objects there are not referenced/,
  );
  // The bucket's root is not where this install looks.
  expect(restoreCheck("gs://pulp-artifacts/pulp/prod", { "pulp-artifacts": ARTIFACTS }).termination).toMatch(
    /^restore refused: 4 of the 4 artifacts .* are not in gs:\/\/pulp-artifacts\/pulp\/prod /,
  );
  // From another bucket: named with the command that copies.
  backup("gs://pulp-old");
  expect(restoreCheck("gs://pulp-artifacts", { "pulp-artifacts": [ARTIFACTS[0]] }).termination).toMatch(
    /3 of the 4 artifacts .* \(the backup was taken with gs:\/\/pulp-old\).*; or copy the objects over first \(gcloud storage rsync --recursive gs:\/\/pulp-old gs:\/\/pulp-artifacts\)\n$/,
  );
  // Into a volume install: refused, with the bucket and folder to set.
  backup("gs://pulp-artifacts/pulp/prod");
  expect(restoreCheck("pvc").termination).toMatch(
    /artifacts are in gs:\/\/pulp-artifacts\/pulp\/prod \(the backup holds none of them\).*pulumi config set --path pulp:storage\.gcs\.bucket pulp-artifacts && pulumi config set --path pulp:storage\.gcs\.location pulp\/prod /,
  );
});

/**
 * restore.sh with psql standing in for an empty database (it answers "f" to the emptiness check, nothing to
 * the preflight, and passes the restore's SQL on to stderr); pg_restore's dump has no extension.
 * test/e2e/restoreDatabase.test.ts runs the database part against a real PostgreSQL.
 */
function restoreScript(
  mediaRoot: string,
  backupDir = path.join(dir, "backups", ID),
  keysDir = path.join(backupDir, "keys"),
) {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin, { recursive: true });
  const psql = 'case "$*" in *-XAtc*) echo f ;; *"-X -q"*) cat >&2 ;; *) cat >/dev/null ;; esac';
  fs.writeFileSync(path.join(bin, "psql"), `#!/bin/sh\n${psql}\n`, { mode: 0o755 });
  const pgRestore = 'case "$*" in *-list*) ;; *) echo RESTORED ;; esac';
  fs.writeFileSync(path.join(bin, "pg_restore"), `#!/bin/sh\n${pgRestore}\n`, { mode: 0o755 });
  const log = path.join(dir, "restore-termination-log");
  const r = spawnSync("bash", [path.join(BACKUP, "restore.sh")], {
    encoding: "utf8",
    env: {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      BACKUP_DIR: backupDir,
      MEDIA_ROOT: mediaRoot,
      KEYS_DIR: keysDir,
      TARGET_PULPCORE: "3.123.1",
      OVERWRITE_FILE: "/nonexistent",
      PGDATABASE: "pulp",
      PGHOST: "db",
      TERMINATION_LOG: log,
    },
  });
  return { code: r.status, out: r.stdout + r.stderr, termination: fs.readFileSync(log, "utf8") };
}

test("restore.sh refuses a storage mismatch itself, before it copies or loads anything (B1)", () => {
  backup("s3://pulp");
  const intoVolume = restoreScript(path.join(dir, "media"));
  expect(intoVolume.code).toBe(1);
  expect(intoVolume.termination).toMatch(
    /the backup holds none of its 4 artifacts .* every one would be missing/,
  );
  expect(intoVolume.out).not.toMatch(/RESTORED/);
  backup("pvc");
  const intoBucket = restoreScript("");
  expect(intoBucket.termination).toMatch(
    /holds its 4 artifacts for a volume, and this install keeps them in object storage/,
  );
  expect(intoBucket.out).not.toMatch(/RESTORED/);
  // The matching case restores: the artifacts copied and checked, then the database.
  const fine = restoreScript(path.join(dir, "media"));
  expect(fine).toMatchObject({ code: 0 });
  expect(fine.out).toMatch(/artifacts copied[\s\S]*RESTORED/);
  expect(fs.readdirSync(path.join(dir, "media", "artifact"))).toEqual(["0a", "3f", "c4"]);
});

test("a second backup of the same volume while one runs fails at once, and removes nothing (B16)", async () => {
  const root = path.join(dir, "volume");
  fs.mkdirSync(path.join(root, ".partial-20261124T030000Z"), { recursive: true });
  const env = {
    ...process.env,
    BACKUP_ROOT: root,
    KEEP: "2",
    ...{ PGHOST: "db", PGPORT: "5432", PGUSER: "pulp" },
    TERMINATION_LOG: path.join(dir, "backup-termination-log"),
    PATH: `${path.join(dir, "bin")}:${process.env.PATH}`,
  };
  fs.mkdirSync(path.join(dir, "bin"));
  fs.writeFileSync(path.join(dir, "bin", "psql"), "#!/bin/sh\nexit 2\n", { mode: 0o755 });
  // The running one: holds the lock as backup.sh does, until told to stop.
  const held = path.join(dir, "held");
  const running = spawn("flock", [path.join(root, ".lock"), "-c", `touch ${held}; sleep 30`], {
    detached: true, // its own process group: the sleep holds the lock too
  });
  while (!fs.existsSync(held)) await new Promise((r) => setTimeout(r, 20));
  const second = spawnSync("bash", [path.join(BACKUP, "backup.sh")], { encoding: "utf8", env });
  expect(second.status).toBe(1);
  expect(fs.readFileSync(env.TERMINATION_LOG, "utf8")).toMatch(
    /failed: another backup of this volume is running; run this one again once it is done/,
  );
  expect(fs.readdirSync(root).sort()).toEqual([".lock", ".partial-20261124T030000Z"]);
  const exited = new Promise((r) => running.on("exit", r));
  process.kill(-running.pid!, "SIGTERM");
  await exited;
  while (spawnSync("flock", ["-n", path.join(root, ".lock"), "true"]).status !== 0) {
    await new Promise((r) => setTimeout(r, 20)); // until its sleep, which holds the lock too, is gone
  }
  // Once it is done, the next one goes on (to the database, which the stand-in refuses).
  const next = spawnSync("bash", [path.join(BACKUP, "backup.sh")], { encoding: "utf8", env });
  expect(fs.readFileSync(env.TERMINATION_LOG, "utf8")).toMatch(/failed: cannot reach PostgreSQL/);
  expect(next.status).toBe(1);
});

test("a backup the image cannot migrate is refused before anything changes, by the planner's tables (B13)", () => {
  const refusal = (versions: Record<string, string>, image: Record<string, string> = IMAGE) => {
    backup("pvc", {}, versions);
    return restoreCheck("pvc", {}, image).termination;
  };
  // A database from before pulpcore's squash (3.69) cannot migrate to 3.85 or later.
  expect(refusal({ pulpcore: "3.45.2" })).toBe(
    `restore refused: backup ${ID} is from pulpcore 3.45.2, and this install's 3.123.1 no longer carries the ` +
      "migrations core's squash replaced (pulpcore 3.85.0 deleted them): `migrate` would fail " +
      "(InconsistentMigrationHistory). Restore it with pulpcore 3.84.0 first (pulumi config set pulp:image " +
      "<the image of 3.84.0>), then upgrade\n",
  );
  // Plugins count as pulpcore does: newer in the backup, or missing from the image.
  expect(refusal({ pulpcore: "3.123.1", "pulp-ansible": "0.31.0" })).toMatch(
    /is from pulp-ansible 0\.31\.0, newer than this install's 0\.30\.3: its database may hold migrations/,
  );
  expect(refusal({ pulpcore: "3.123.1", "pulp-container": "2.29.0" })).toMatch(
    /holds pulp-container 2\.29\.0's data, and this install's image has no pulp-container/,
  );
  expect(refusal({ pulpcore: "3.123.1", "pulp-ansible": "0.23.0" })).toMatch(
    /from pulp-ansible 0\.23\.0, .* Restore it with pulp-ansible 0\.29\.12 first/,
  );
  // Older releases within reach migrate; packages the planner does not know are named, not refused.
  backup("pvc", {}, { pulpcore: "3.85.34", "pulp-ansible": "0.29.12", "pulp-glue": "0.40.0" });
  const fine = restoreCheck("pvc");
  expect(fine).toMatchObject({ code: 0, termination: "" });
  expect(fine.out).toMatch(
    /releases: pulp-ansible 0\.29\.12 -> 0\.30\.3, pulpcore 3\.85\.34 -> 3\.123\.1; not checked: pulp-glue/,
  );
});

/**
 * backup.sh of an object-storage install (no artifacts: MEDIA_ROOT empty) with stand-ins for psql, pg_dump and
 * pg_restore, the keys in `keys`; the backup's directory.
 */
function backupScript(keys: Record<string, string>): string {
  const bin = path.join(dir, "backup-bin");
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, "psql"), "#!/bin/sh\necho 17.6\n", { mode: 0o755 });
  const pgDump = 'for a; do case $a in --file=*) echo dump >"${a#--file=}" ;; esac; done';
  fs.writeFileSync(path.join(bin, "pg_dump"), `#!/bin/sh\n${pgDump}\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(bin, "pg_restore"), "#!/bin/sh\n", { mode: 0o755 });
  const keysDir = path.join(dir, "install-keys");
  fs.mkdirSync(keysDir, { recursive: true });
  for (const [f, value] of Object.entries(keys)) fs.writeFileSync(path.join(keysDir, f), value);
  fs.writeFileSync(path.join(dir, "config.json"), "{}");
  fs.writeFileSync(path.join(dir, "versions.json"), '{"pulpcore": "3.123.1"}');
  const root = path.join(dir, "volume");
  fs.mkdirSync(root, { recursive: true });
  const r = spawnSync("bash", [path.join(BACKUP, "backup.sh")], {
    encoding: "utf8",
    env: {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      ...{ BACKUP_ROOT: root, KEEP: "2", MEDIA_ROOT: "", KEYS_DIR: keysDir },
      ...{ CONFIG_FILE: path.join(dir, "config.json"), VERSIONS_FILE: path.join(dir, "versions.json") },
      ...{ INSTANCE: "pulp", NAMESPACE: "pulp", STORAGE: "s3://pulp" },
      TERMINATION_LOG: path.join(dir, "backup-termination-log"),
    },
  });
  expect(r.stdout + r.stderr).toMatch(/complete in/);
  expect(r.status).toBe(0);
  const [id] = fs.readdirSync(root).filter((f) => /^\d{8}T\d{6}Z$/.test(f));
  return path.join(root, id);
}

test("the manifest holds the admin password as an HMAC keyed by secret_key, not its sha256, and a restore checks it (issue 22)", () => {
  // A person's password; a secret_key of 50 characters (as generated) with bytes the pads turn into NUL
  // ("6" ^ 0x36, "\" ^ 0x5c) and a printf conversion.
  const secretKey = `${"6\\%s".repeat(12)}xy`;
  expect(secretKey).toHaveLength(50);
  const keys = {
    secret_key: secretKey,
    "database_fields.symmetric.key": "Mx2v0uGm1wQ1Ck7aAfLr8bq3Jm6Zc4Y0R5E1w9T2nLk=",
    admin_password: "hunter2\n",
  };
  const b = backupScript(keys);
  const text = fs.readFileSync(path.join(b, "manifest.json"), "utf8");
  expect(text).not.toContain(sha256("hunter2\n"));
  const manifest = JSON.parse(text);
  expect(manifest.keys).toEqual({
    secret_key: sha256(secretKey),
    "database_fields.symmetric.key": sha256(keys["database_fields.symmetric.key"]),
    admin_password: `hmac-sha256:${hmac(secretKey, "hunter2\n")}`,
  });

  // Into an install with the backup's keys: restored.
  const installKeys = path.join(dir, "install-keys");
  const fine = restoreScript("", b, installKeys);
  expect(fine.out).toMatch(/RESTORED/);
  expect(fine).toMatchObject({ code: 0, termination: expect.stringMatching(/^\{"restored": /) });
  // Another admin password: refused as before, nothing loaded.
  fs.writeFileSync(path.join(installKeys, "admin_password"), "hunter3\n");
  const wrong = restoreScript("", b, installKeys);
  expect(wrong.code).toBe(1);
  expect(wrong.termination).toBe(
    `restore refused: this install's admin_password is not the backup's: set it from the backup with npm run backup -- keys ${path.basename(b)}\n`,
  );
  expect(wrong.out).not.toMatch(/RESTORED/);
  // Another secret_key is named itself, before the HMAC it keys.
  fs.writeFileSync(path.join(installKeys, "admin_password"), "hunter2\n");
  fs.writeFileSync(path.join(installKeys, "secret_key"), `${secretKey}y`);
  expect(restoreScript("", b, installKeys).termination).toMatch(
    /^restore refused: this install's secret_key is not the backup's/,
  );
  // A secret_key longer than SHA-256's block (64 bytes) keys the HMAC by its hash (RFC 2104).
  const longKey = "k".repeat(64) + secretKey;
  fs.writeFileSync(path.join(installKeys, "secret_key"), longKey);
  fs.writeFileSync(
    path.join(b, "manifest.json"),
    text
      .replace(sha256(secretKey), sha256(longKey))
      .replace(hmac(secretKey, "hunter2\n"), hmac(longKey, "hunter2\n")),
  );
  expect(restoreScript("", b, installKeys)).toMatchObject({ code: 0 });
});

test("a backup from before the HMAC (a plain sha256 of the admin password) still restores, and is still checked (issue 22)", () => {
  backup("s3://pulp", {}, undefined, "sha256");
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "backups", ID, "manifest.json"), "utf8"));
  expect(manifest.keys.admin_password).toBe(sha256("admin_password-value"));
  const fine = restoreScript("");
  expect(fine).toMatchObject({ code: 0 });
  expect(fine.out).toMatch(/RESTORED/);
  fs.writeFileSync(path.join(dir, "backups", ID, "keys", "admin_password"), "another");
  expect(restoreScript("").termination).toBe(
    `restore refused: this install's admin_password is not the backup's: set it from the backup with npm run backup -- keys ${ID}\n`,
  );
  // A scheme this restore does not know is named, not taken for another password.
  const file = path.join(dir, "backups", ID, "manifest.json");
  fs.writeFileSync(
    file,
    fs.readFileSync(file, "utf8").replace(sha256("admin_password-value"), "hmac-sha3-512:00"),
  );
  expect(restoreScript("").termination).toMatch(
    /^restore refused: the backup's manifest has admin_password as hmac-sha3-512, which this restore does not know/,
  );
});
