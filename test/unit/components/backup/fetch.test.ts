// Unit: fetch.py (pulp:restore.s3) run as the fetch Job runs it, under python3 with a stand-in boto3 that
// keeps a bucket's objects as files (python3 and tar are part of what the test needs: missing, this fails).
// The real fetch from moto into the real node's volume is in test/e2e/real/restore.test.ts.
import { spawnSync } from "child_process";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const FETCH = path.join(__dirname, "../../../../components/backup/fetch.py");
const ID = "20261124T031500Z";
const PREFIX = "pulp/pulp/";

// boto3.client("s3") and botocore's ClientError as fetch.py uses them: objects are files under
// $FAKE_S3/<bucket>/<key>; a missing one raises NoSuchKey as S3 does.
const FAKE_BOTO3 = `
import os
from botocore.exceptions import ClientError
ROOT = os.environ["FAKE_S3"]
class Paginator:
    def paginate(self, Bucket, Prefix):
        base = os.path.join(ROOT, Bucket)
        keys = sorted(os.path.relpath(os.path.join(d, f), base) for d, _, fs in os.walk(base) for f in fs)
        yield {"Contents": [{"Key": k} for k in keys if k.startswith(Prefix)]}
class Client:
    def get_object(self, Bucket, Key):
        p = os.path.join(ROOT, Bucket, Key)
        if not os.path.isfile(p):
            raise ClientError({"Error": {"Code": "NoSuchKey", "Message": "The specified key does not exist."}}, "GetObject")
        return {"Body": open(p, "rb")}
    def get_paginator(self, name):
        return Paginator()
def client(service, endpoint_url=None, region_name=None):
    return Client()
`;
const FAKE_BOTOCORE = `
class ClientError(Exception):
    def __init__(self, response, operation_name):
        self.response = response
        super().__init__(f"An error occurred ({response['Error']['Code']}) when calling the {operation_name} operation: {response['Error']['Message']}")
`;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "restore-fetch-"));
  fs.mkdirSync(path.join(dir, "stub", "boto3"), { recursive: true });
  fs.mkdirSync(path.join(dir, "stub", "botocore"), { recursive: true });
  fs.writeFileSync(path.join(dir, "stub", "boto3", "__init__.py"), FAKE_BOTO3);
  fs.writeFileSync(path.join(dir, "stub", "botocore", "__init__.py"), "");
  fs.writeFileSync(path.join(dir, "stub", "botocore", "exceptions.py"), FAKE_BOTOCORE);
  fs.mkdirSync(path.join(dir, "dest"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const object = (key: string) => path.join(dir, "s3", "backups", key);

/** An archive as upload.py writes it (<id>/ and its members), with its manifest beside it. */
function upload(
  id = ID,
  files: Record<string, string> = { "manifest.json": "{}", "database.dump": "dump" },
  manifest: (archive: { bytes: number; sha256: string }) => object = (archive) => ({ id, archive }),
): void {
  const src = path.join(dir, "src");
  fs.rmSync(src, { recursive: true, force: true });
  for (const [name, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(src, name)), { recursive: true });
    fs.writeFileSync(path.join(src, name), body);
  }
  fs.mkdirSync(path.dirname(object(`${PREFIX}${id}.tar`)), { recursive: true });
  const tar = spawnSync("tar", [
    "-C",
    src,
    "-cf",
    object(`${PREFIX}${id}.tar`),
    "--transform",
    `s,^\\.,${id},`,
    ".",
  ]);
  if (tar.status !== 0) throw new Error(`tar: ${tar.stderr}`);
  const archive = fs.readFileSync(object(`${PREFIX}${id}.tar`));
  fs.writeFileSync(
    object(`${PREFIX}${id}.json`),
    JSON.stringify(manifest({ bytes: archive.length, sha256: sha256(archive) })),
  );
}

function fetch(id = ID): { code: number; out: string; termination: string } {
  const termination = path.join(dir, "termination-log");
  fs.rmSync(termination, { force: true });
  const run = spawnSync("python3", [FETCH], {
    env: {
      PATH: process.env.PATH,
      PYTHONPATH: path.join(dir, "stub"),
      FAKE_S3: path.join(dir, "s3"),
      BACKUP_ID: id,
      DEST: path.join(dir, "dest"),
      CLAIM: "pulp-restore-x",
      S3_BUCKET: "backups",
      S3_KEY: `${PREFIX}${id}.tar`,
      TERMINATION_LOG: termination,
    },
    encoding: "utf8",
  });
  if (run.error) throw new Error(`python3 is needed to run fetch.py: ${run.error.message}`);
  return {
    code: run.status ?? -1,
    out: `${run.stdout}${run.stderr}`,
    termination: fs.existsSync(termination) ? fs.readFileSync(termination, "utf8") : "",
  };
}

test("fetches the archive into <id>/, checks its sha256 against the manifest, and says what it fetched", () => {
  upload(ID, { "manifest.json": '{"id": 1}', "database.dump": "dump", "media/artifact/0a/11": "a" });
  const run = fetch();
  expect(run.code).toBe(0);
  expect(fs.readFileSync(path.join(dir, "dest", ID, "media/artifact/0a/11"), "utf8")).toBe("a");
  expect(fs.readFileSync(path.join(dir, "dest", ID, "database.dump"), "utf8")).toBe("dump");
  expect(fs.readdirSync(path.join(dir, "dest"))).toEqual([ID]);
  const archive = fs.readFileSync(object(`${PREFIX}${ID}.tar`));
  expect(JSON.parse(run.termination)).toMatchObject({
    fetched: `s3://backups/${PREFIX}${ID}.tar`,
    bytes: archive.length,
    sha256: sha256(archive),
    verified: true,
    files: 3,
  });
  // Run again (the Job replaced after a later failure): what is there stays.
  fs.rmSync(object(`${PREFIX}${ID}.tar`));
  expect(fetch().code).toBe(0);
});

test("an archive that is not the manifest's is refused, and nothing lands where the restore reads", () => {
  upload(ID, undefined, (archive) => ({ archive: { ...archive, sha256: "0".repeat(64) } }));
  const run = fetch();
  expect(run.code).toBe(1);
  expect(run.termination).toContain(
    `but its manifest says ${"0".repeat(64)}: the archive is damaged or was replaced`,
  );
  expect(fs.existsSync(path.join(dir, "dest", ID))).toBe(false);
});

test("a backup that is not there names those that are, and a command that picks one", () => {
  upload("20261120T000000Z");
  upload("20261122T000000Z");
  const run = fetch();
  expect(run.code).toBe(1);
  expect(run.termination).toContain(
    `s3://backups/${PREFIX}${ID}.json does not exist: no backup ${ID} under that prefix. The backups there: ` +
      "20261120T000000Z, 20261122T000000Z. Pick one: pulumi config set --path pulp:restore.backup 20261122T000000Z",
  );
  fs.rmSync(path.join(dir, "s3"), { recursive: true });
  fs.mkdirSync(path.join(dir, "s3", "backups"), { recursive: true });
  expect(fetch().termination).toContain(
    "There is none under it: pulp:restore.s3.prefix names where the backups are",
  );
});

test("a member outside <id>/ is refused: the archive cannot write elsewhere in the volume", () => {
  upload(ID);
  // tar writes no "../" into names: the bad member by hand.
  const bad = path.join(dir, "bad.tar");
  const py = spawnSync(
    "python3",
    [
      "-c",
      `import tarfile, io
with tarfile.open("${bad}", "w") as t:
    for name in ("${ID}/manifest.json", "${ID}/../escaped"):
        i = tarfile.TarInfo(name); i.size = 2; t.addfile(i, io.BytesIO(b"{}"))`,
    ],
    { encoding: "utf8" },
  );
  expect(py.status).toBe(0);
  fs.copyFileSync(bad, object(`${PREFIX}${ID}.tar`));
  const archive = fs.readFileSync(bad);
  fs.writeFileSync(
    object(`${PREFIX}${ID}.json`),
    JSON.stringify({ archive: { bytes: archive.length, sha256: sha256(archive) } }),
  );
  const run = fetch();
  expect(run.code).toBe(1);
  expect(run.termination).toContain(`the archive holds '${ID}/../escaped', outside ${ID}/`);
  expect(fs.existsSync(path.join(dir, "dest", "escaped"))).toBe(false);
});

test("a backup larger than its volume is refused before a byte is fetched, with the size that fits", () => {
  upload(ID, undefined, (archive) => ({ archive: { ...archive, bytes: 5 * 2 ** 50 } }));
  const run = fetch();
  expect(run.code).toBe(1);
  expect(run.termination).toMatch(
    /the backup is 5629499534213120 bytes and its volume has \d+ free: make it larger, such as pulumi config set --path pulp:restore.s3.size 5767168Gi/,
  );
  expect(fs.readdirSync(path.join(dir, "dest"))).toEqual([]);
});
