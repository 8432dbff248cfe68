// Unit: the backup pod's upload container (components/backup/upload.py) run with python3 against a
// stand-in for boto3's client and s3transfer's manager that keeps objects as files (python3 is part of
// the toolchain the tests need). What goes where: the archive without keys, the keys apart and private,
// the manifest, retention, and the transfer's memory bound. Real S3 (moto) and the real CDI import run it
// in test/e2e/real/restore.test.ts; its memory on a multi-GiB upload is measured with real boto3 and moto
// (testbed/bench/upload-memory.sh).
import { spawnSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { keysFromArchive } from "../../../../tools/backup/volume";

const ID = "20261125T031500Z";
const SCRIPT = path.join(__dirname, "../../../../components/backup/upload.py");

// boto3.client("s3") and s3transfer.manager as upload.py uses them; objects are files in $FAKE_S3 named
// by their key ("/" as "%"), the manager's config goes to $FAKE_S3/../transfer.json.
const FAKE_BOTO3 = `
import io, os
ROOT = os.environ["FAKE_S3"]
def path(key): return os.path.join(ROOT, key.replace("/", "%"))
class Paginator:
    def paginate(self, Bucket, Prefix):
        keys = sorted(k.replace("%", "/") for k in os.listdir(ROOT))
        return [{"Contents": [{"Key": k} for k in keys if k.startswith(Prefix)]}]
class Client:
    def put_object(self, Bucket, Key, Body, ContentType=None):
        with open(path(Key), "wb") as f: f.write(Body)
    def get_object(self, Bucket, Key):
        with open(path(Key), "rb") as f: return {"Body": io.BytesIO(f.read())}
    def delete_object(self, Bucket, Key):
        if os.path.exists(path(Key)): os.remove(path(Key))
    def delete_objects(self, Bucket, Delete):
        for o in Delete["Objects"]: self.delete_object(Bucket, o["Key"])
    def get_paginator(self, name): return Paginator()
def client(service, endpoint_url=None, region_name=None): return Client()
`;
const FAKE_MANAGER = `
import json, os
from boto3 import path
class TransferConfig:
    def __init__(self, **kwargs): self.kwargs = kwargs
class Future:
    def result(self): return None
class TransferManager:
    def __init__(self, client, config): self.config = config
    def __enter__(self): return self
    def __exit__(self, *exc): return False
    def upload(self, fileobj, bucket, key):
        with open(os.path.join(os.environ["FAKE_S3"], "..", "transfer.json"), "w") as f:
            json.dump(self.config.kwargs, f)
        with open(path(key), "wb") as out:
            while chunk := fileobj.read(self.config.kwargs["multipart_chunksize"]): out.write(chunk)
        return Future()
`;

interface Run {
  dir: string;
  bucket: string;
  code: number | null;
  out: string;
  /** Object keys under the prefix, sorted. */
  objects: string[];
  object: (key: string) => string;
}

/** One backup in a backups volume as backup.sh leaves it, then upload.py as the container runs it. */
function upload(existing: string[] = [], result: object = {}, memoryLimit = "max"): Run {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "upload-py-"));
  const backup = path.join(dir, "backups", ID);
  fs.mkdirSync(path.join(backup, "keys"), { recursive: true });
  fs.mkdirSync(path.join(backup, "media", "artifact", "ab"), { recursive: true });
  const write = (name: string, text: string, mode = 0o640) =>
    fs.writeFileSync(path.join(backup, name), text, { mode });
  write("keys/secret_key", "s".repeat(50), 0o440);
  write("keys/database_fields.symmetric.key", "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=", 0o440);
  write("keys/admin_password", "-starts-with-a-dash\n", 0o440);
  write("manifest.json", JSON.stringify({ id: ID, keys: { secret_key: "0".repeat(64) } }));
  write("config.json", "{}");
  write("database.dump", "PGDMP".padEnd(4096, "x"));
  write("artifacts.list", "artifact/ab/cdef\n");
  write("media.list", "artifact/ab/cdef\t5\n");
  write("media/artifact/ab/cdef", "hello");
  fs.mkdirSync(path.join(dir, "fake", "s3transfer"), { recursive: true });
  fs.mkdirSync(path.join(dir, "fake", "boto3"));
  fs.writeFileSync(path.join(dir, "fake", "boto3", "__init__.py"), FAKE_BOTO3);
  fs.writeFileSync(path.join(dir, "fake", "s3transfer", "__init__.py"), "");
  fs.writeFileSync(path.join(dir, "fake", "s3transfer", "manager.py"), FAKE_MANAGER);
  const bucket = path.join(dir, "bucket");
  fs.mkdirSync(bucket);
  for (const key of existing) fs.writeFileSync(path.join(bucket, key.replace(/\//g, "%")), "old");
  fs.writeFileSync(
    path.join(dir, "result.json"),
    JSON.stringify({ id: ID, databaseBytes: 4096, artifactBytes: 5, ...result }),
  );
  const script = path.join(dir, "upload.py");
  const log = path.join(dir, "termination-log");
  // The kubelet's termination log and the container's cgroup memory limit (v2; no v1 file), here files of the test's.
  const limit = path.join(dir, "memory.max");
  fs.writeFileSync(limit, `${memoryLimit}\n`);
  fs.writeFileSync(
    script,
    fs
      .readFileSync(SCRIPT, "utf8")
      .replace(/\/dev\/termination-log/g, log)
      .replace("/sys/fs/cgroup/memory.max", limit)
      .replace("/sys/fs/cgroup/memory/memory.limit_in_bytes", path.join(dir, "no-such-file")),
  );
  const r = spawnSync("python3", [script], {
    encoding: "utf8",
    env: {
      ...process.env,
      PYTHONPATH: path.join(dir, "fake"),
      FAKE_S3: bucket,
      BACKUP_ROOT: path.join(dir, "backups"),
      RESULT_FILE: path.join(dir, "result.json"),
      KEEP: "2",
      S3_BUCKET: "pulp-backups",
      S3_PREFIX: "pulp/pulp/",
    },
  });
  if (r.error) throw r.error;
  const object = (key: string) => path.join(bucket, key.replace(/\//g, "%"));
  const objects = fs
    .readdirSync(bucket)
    .map((f) => f.replace(/%/g, "/"))
    .sort();
  return { dir, bucket, code: r.status, out: `${r.stdout}${r.stderr}`, objects, object };
}

/** `tar -tvf` as [mode, name] pairs. */
function members(file: string): [string, string][] {
  const r = spawnSync("tar", ["-tvf", file], { encoding: "utf8" });
  expect(r.status).toBe(0);
  return r.stdout
    .trim()
    .split("\n")
    .map((line) => {
      const fields = line.split(/\s+/);
      return [fields[0], fields[fields.length - 1]];
    });
}

const runs: Run[] = [];
afterAll(() => runs.forEach((r) => fs.rmSync(r.dir, { recursive: true, force: true })));

test("the archive a restore imports holds no key; the keys go apart, readable by their owner only, and keys --archive reads them", () => {
  const run = upload();
  runs.push(run);
  expect({ code: run.code, out: run.out }).toEqual({ code: 0, out: expect.any(String) });
  expect(run.objects).toEqual([`pulp/pulp/${ID}.json`, `pulp/pulp/${ID}.keys.tar`, `pulp/pulp/${ID}.tar`]);

  const archive = members(run.object(`pulp/pulp/${ID}.tar`));
  expect(archive.map(([, name]) => name)).toEqual([
    `${ID}/manifest.json`,
    `${ID}/config.json`,
    `${ID}/database.dump`,
    `${ID}/artifacts.list`,
    `${ID}/media.list`,
    `${ID}/media/`,
    `${ID}/media/artifact/`,
    `${ID}/media/artifact/ab/`,
    `${ID}/media/artifact/ab/cdef`,
  ]);
  // Readable by all (CDI unpacks as its own uid, keeping the modes).
  for (const [mode] of archive) expect(mode).toMatch(/^[-d]r..r..r..$/);

  const keysObject = run.object(`pulp/pulp/${ID}.keys.tar`);
  expect(members(keysObject)).toEqual([
    ["drwx------", `${ID}/keys/`],
    ["-rw-------", `${ID}/keys/admin_password`],
    ["-rw-------", `${ID}/keys/database_fields.symmetric.key`],
    ["-rw-------", `${ID}/keys/secret_key`],
  ]);
  const keys = Object.fromEntries(
    Object.entries(keysFromArchive(keysObject, ID)).map(([f, b64]) => [
      f,
      Buffer.from(b64, "base64").toString(),
    ]),
  );
  expect(keys).toEqual({
    secret_key: "s".repeat(50),
    "database_fields.symmetric.key": "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
    admin_password: "-starts-with-a-dash\n",
  });

  // The manifest beside them says what each object is; the result line names both.
  const sha256 = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
  const manifest = JSON.parse(fs.readFileSync(run.object(`pulp/pulp/${ID}.json`), "utf8"));
  expect(manifest).toMatchObject({
    id: ID,
    keys: { secret_key: "0".repeat(64) },
    archive: { key: `pulp/pulp/${ID}.tar`, sha256: sha256(run.object(`pulp/pulp/${ID}.tar`)) },
    keysArchive: { key: `pulp/pulp/${ID}.keys.tar`, sha256: sha256(keysObject) },
  });
  const line = JSON.parse(fs.readFileSync(path.join(run.dir, "termination-log"), "utf8"));
  expect(line.s3).toMatchObject({
    url: `s3://pulp-backups/pulp/pulp/${ID}.tar`,
    keys: `s3://pulp-backups/pulp/pulp/${ID}.keys.tar`,
  });
});

test("retention keeps the newest two backups and removes the older ones' keys with their archives", () => {
  const older = ["20261122T031500Z", "20261123T031500Z", "20261124T031500Z"];
  const run = upload([
    // From before the keys went apart: an archive and a manifest only.
    `pulp/pulp/${older[0]}.tar`,
    `pulp/pulp/${older[0]}.json`,
    ...older
      .slice(1)
      .flatMap((id) => [`pulp/pulp/${id}.tar`, `pulp/pulp/${id}.keys.tar`, `pulp/pulp/${id}.json`]),
    // Not a backup's: left alone.
    "pulp/pulp/notes.txt",
    `pulp/other/${older[0]}.keys.tar`,
  ]);
  runs.push(run);
  expect(run.code).toBe(0);
  expect(run.objects).toEqual([
    `pulp/other/${older[0]}.keys.tar`,
    `pulp/pulp/${older[2]}.json`,
    `pulp/pulp/${older[2]}.keys.tar`,
    `pulp/pulp/${older[2]}.tar`,
    `pulp/pulp/${ID}.json`,
    `pulp/pulp/${ID}.keys.tar`,
    `pulp/pulp/${ID}.tar`,
    "pulp/pulp/notes.txt",
  ]);
});

test("the multipart upload holds two parts in memory besides the one it reads, whatever the part size", () => {
  // 1 TiB: parts of about 111 MiB; s3transfer's default of 10 in memory was over the container's 1 GiB.
  const run = upload([], { databaseBytes: 2 ** 30, artifactBytes: 2 ** 40 - 2 ** 30 });
  runs.push(run);
  expect(run.code).toBe(0);
  const config = JSON.parse(fs.readFileSync(path.join(run.dir, "transfer.json"), "utf8"));
  expect(config).toEqual({
    multipart_chunksize: Math.ceil((2 ** 40 * 1.05) / 9900),
    max_request_concurrency: 2,
    max_in_memory_upload_chunks: 2,
  });
});

test("under a 1 GiB limit, parts too big for two in memory go up with one; bigger ones are refused before anything is uploaded", () => {
  const GiB = 2 ** 30;
  const limit = String(GiB);
  // 3.5 TiB: parts of ~389 MiB; 96 MiB for the interpreter, one part read and one uploading fit, not a third.
  const big = upload([], { databaseBytes: GiB, artifactBytes: 3.5 * 2 ** 40 - GiB }, limit);
  runs.push(big);
  expect(big.code).toBe(0);
  const config = JSON.parse(fs.readFileSync(path.join(big.dir, "transfer.json"), "utf8"));
  expect([config.max_in_memory_upload_chunks, config.max_request_concurrency]).toEqual([1, 1]);

  // 4.5 TiB: parts of 500 MiB, two of them over 1 GiB with the rest.
  const bigger = upload([], { databaseBytes: GiB, artifactBytes: 4.5 * 2 ** 40 - GiB }, limit);
  runs.push(bigger);
  expect(bigger.code).toBe(1);
  expect(bigger.objects).toEqual([]);
  expect(fs.readFileSync(path.join(bigger.dir, "termination-log"), "utf8")).toBe(
    "backup upload failed: a backup of 4.50 TiB goes up in parts of 500 MiB (S3 allows 10000 parts), and the " +
      "upload holds two of them in memory besides its own 96 MiB: 1096 MiB, over its container's memory limit " +
      "of 1024 MiB. Nothing was uploaded; the backup itself is in the volume\n",
  );

  // cgroup v1 says "unlimited" with a huge number: two in memory.
  const unlimited = upload(
    [],
    { databaseBytes: GiB, artifactBytes: 4.5 * 2 ** 40 - GiB },
    "9223372036854771712",
  );
  runs.push(unlimited);
  expect(
    JSON.parse(fs.readFileSync(path.join(unlimited.dir, "transfer.json"), "utf8"))
      .max_in_memory_upload_chunks,
  ).toBe(2);
});
