// Unit, with a stand-in kubectl (a shell script that answers `get cronjob` with the CronJob the program
// renders under Pulumi mocks, and runs each `exec` script with sh and the system's tar on a backups
// directory of the test's): what `npm run backup -- export` writes. The real command against real Pulp is
// in test/e2e/real/backup.test.ts.
import { spawnSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseArgs } from "../../../../tools/backup/args";
import { exportBackup, keysFromArchive } from "../../../../tools/backup/volume";
import { MINIMAL } from "../../helpers/configs";
import { render } from "../../helpers/render";

const ID = "20261124T031500Z";
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "backup-export-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A backups volume holding one backup as backup.sh leaves it (keys 0440, as from their Secrets). */
function volume(): string {
  const root = path.join(dir, "backups");
  const backup = path.join(root, ID);
  fs.mkdirSync(path.join(backup, "keys"), { recursive: true });
  fs.mkdirSync(path.join(backup, "media", "artifact", "ab"), { recursive: true });
  const write = (name: string, text: string, mode = 0o640) =>
    fs.writeFileSync(path.join(backup, name), text, { mode });
  write("keys/secret_key", "s".repeat(50), 0o440);
  write("keys/database_fields.symmetric.key", "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=", 0o440);
  write("keys/admin_password", "-starts-with-a-dash\n", 0o440);
  write("manifest.json", "{}");
  write("config.json", "{}");
  write("database.dump", "PGDMP");
  write("artifacts.list", "artifact/ab/cdef\n");
  write("media.list", "artifact/ab/cdef\t5\n");
  write("media/artifact/ab/cdef", "hello");
  return root;
}

async function standIn(root: string): Promise<string> {
  const run = await render({
    ...MINIMAL,
    backup: { enabled: true, image: "ghcr.io/cloudnative-pg/postgresql:16.4" },
  });
  fs.writeFileSync(path.join(dir, "cronjob.json"), JSON.stringify(run.k8s("CronJob", "pulp-backup").inputs));
  const script = path.join(dir, "kubectl");
  fs.writeFileSync(
    script,
    `#!/bin/bash
case "$1 $2" in
  "get cronjob") cat ${dir}/cronjob.json ;;
  "apply -f") cat >/dev/null ;;
  "wait -n"|"delete pod") ;;
  "exec -n") s=\${@: -1}; exec sh -ec "\${s//\\/backups/${root}}" ;;
  *) echo "unexpected: $*" >&2; exit 3 ;;
esac
`,
    { mode: 0o755 },
  );
  return script;
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

test("export writes the archive without keys, readable by all, and the keys apart, readable by their owner only", async () => {
  const kubectl = await standIn(volume());
  const output = path.join(dir, "out", `pulp-backup-${ID}.tar`);
  fs.mkdirSync(path.dirname(output));
  const result = await exportBackup({ kubectl }, parseArgs(["export", ID, "-o", output]));

  const keysFile = path.join(dir, "out", `pulp-backup-${ID}.keys.tar`);
  const sha256 = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
  expect(result).toEqual({
    id: ID,
    file: output,
    bytes: fs.statSync(output).size,
    sha256: sha256(output),
    keys: { file: keysFile, bytes: fs.statSync(keysFile).size, sha256: sha256(keysFile) },
  });
  const archive = members(output);
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
  for (const [mode] of archive) expect(mode).toMatch(/^[-d]r..r..r..$/);

  expect(fs.statSync(keysFile).mode & 0o777).toBe(0o600);
  // tar's order is the directory's.
  expect(members(keysFile).sort((a, b) => a[1].localeCompare(b[1]))).toEqual([
    ["drwx------", `${ID}/keys/`],
    ["-rw-------", `${ID}/keys/admin_password`],
    ["-rw-------", `${ID}/keys/database_fields.symmetric.key`],
    ["-rw-------", `${ID}/keys/secret_key`],
  ]);
  expect(Buffer.from(keysFromArchive(keysFile, ID).admin_password, "base64").toString()).toBe(
    "-starts-with-a-dash\n",
  );
});

test("a keys file left by an earlier export with wider modes is written anew, 0600", async () => {
  const kubectl = await standIn(volume());
  const output = path.join(dir, "again.tar");
  fs.writeFileSync(path.join(dir, "again.keys.tar"), "old", { mode: 0o644 });
  await exportBackup({ kubectl }, parseArgs(["export", ID, "-o", output]));
  expect(fs.statSync(path.join(dir, "again.keys.tar")).mode & 0o777).toBe(0o600);
});
