// Unit: what a backup of a volume install keeps besides the database and the artifacts, and the domains it
// refuses, run as the pods run them: backup.sh and restore.sh under bash with stand-ins for psql, pg_dump
// and pg_restore (pg_restore prints the tables the test gives as pg_dump's COPY blocks); bash, GNU tar and
// find are part of what the test needs: missing, this fails. Real Pulp backups in test/e2e/real/backup.test.ts.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const BACKUP = path.join(__dirname, "../../../../components/backup");
const FS_CLASS = "pulpcore.app.models.storage.FileSystem";
const S3_CLASS = "storages.backends.s3.S3Storage";
const DEFAULT = "0190a1b2-0000-7000-8000-000000000001";
const EU = "0190a1b2-0000-7000-8000-0000000000e0";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "backup-data-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A file and its directory with exact modes (not the test's umask). */
function write(file: string, text: string, mode = 0o644) {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
  fs.chmodSync(path.dirname(file), 0o755);
  fs.writeFileSync(file, text);
  fs.chmodSync(file, mode);
}

/** pg_dump's COPY block of a table, as pg_restore --data-only --table prints it. */
function copy(table: string, columns: string[], rows: string[][]): string {
  const lines = rows.map((r) => `${r.join("\t")}\n`).join("");
  return `--\n-- Data for Name: ${table}\n--\n\nCOPY public.${table} (${columns.join(", ")}) FROM stdin;\n${lines}\\.\n\n`;
}

/**
 * An install's volume (/var/lib/pulp): artifacts, Pulp's scratch space, a signing service's script and a
 * GnuPG home (0700), and the filesystem's lost+found. The dump's tables: the artifacts with their domain
 * and the domains (default on the filesystem, and `domains` more).
 */
function install(artifacts: [string, string][], domains: [string, string, string][] = []) {
  const data = path.join(dir, "pulp");
  for (const [file] of artifacts) write(path.join(data, "media", file), file);
  write(path.join(data, "tmp", "upload-1"), "partial upload");
  write(path.join(data, "scripts", "sign.sh"), '#!/bin/sh\ngpg --detach-sign "$1"\n', 0o755);
  write(path.join(data, ".gnupg", "pubring.kbx"), "keyring");
  write(path.join(data, ".gnupg", "private-keys-v1.d", "A1.key"), "private key", 0o600);
  fs.chmodSync(path.join(data, ".gnupg"), 0o700);
  fs.mkdirSync(path.join(data, "lost+found"));
  const tables = path.join(dir, "tables");
  write(
    path.join(tables, "core_artifact"),
    copy(
      "core_artifact",
      ["pulp_id", "file", "size", "sha256", "pulp_domain_id"],
      artifacts.map(([file, domain], i) => [`a${i}`, file, "3", `${i}`.repeat(64).slice(0, 64), domain]),
    ),
  );
  write(
    path.join(tables, "core_domain"),
    copy(
      "core_domain",
      ["pulp_id", "pulp_created", "name", "description", "storage_class", "storage_settings"],
      [
        [DEFAULT, "2026-01-01", "default", "\\N", FS_CLASS, "enc"],
        ...domains.map(([id, name, cls]) => [id, "2026-02-01", name, "\\N", cls, "enc"]),
      ],
    ),
  );
  const bin = path.join(dir, "bin");
  write(path.join(bin, "psql"), "#!/bin/sh\necho 15.8\n", 0o755);
  write(
    path.join(bin, "pg_dump"),
    '#!/bin/sh\nfor a; do case $a in --file=*) echo dump >"${a#--file=}" ;; esac; done\n',
    0o755,
  );
  write(
    path.join(bin, "pg_restore"),
    `#!/bin/sh\nfor a; do case $a in --table=*) cat "${tables}/\${a#--table=}" 2>/dev/null ;; esac; done\n`,
    0o755,
  );
  for (const f of ["secret_key", "database_fields.symmetric.key", "admin_password"])
    write(path.join(dir, "keys", f), `${f}-value`);
  write(path.join(dir, "config.json"), "{}");
  write(path.join(dir, "versions.json"), '{"pulpcore": "3.116.0"}');
  return data;
}

function backup(mediaRoot: string) {
  const log = path.join(dir, "backup-termination-log");
  const r = spawnSync("bash", [path.join(BACKUP, "backup.sh")], {
    encoding: "utf8",
    env: {
      ...process.env,
      PATH: `${path.join(dir, "bin")}:${process.env.PATH}`,
      BACKUP_ROOT: path.join(dir, "backups"),
      KEEP: "3",
      MEDIA_ROOT: mediaRoot,
      KEYS_DIR: path.join(dir, "keys"),
      CONFIG_FILE: path.join(dir, "config.json"),
      VERSIONS_FILE: path.join(dir, "versions.json"),
      INSTANCE: "pulp",
      NAMESPACE: "pulp",
      STORAGE: mediaRoot ? "pvc" : "s3://pulp",
      TERMINATION_LOG: log,
    },
  });
  return {
    code: r.status,
    out: r.stdout + r.stderr,
    termination: fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "",
  };
}

const listing = (tar: string) =>
  spawnSync("tar", ["-tvf", tar], { encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean)
    .map((l) => `${l.split(/\s+/)[0]} ${l.split(/\s+/).slice(-1)[0]}`)
    .sort();

test("a volume install's backup keeps /var/lib/pulp but media and tmp, with the keys, and a restore puts it back (B12)", () => {
  fs.mkdirSync(path.join(dir, "backups"));
  const data = install([["artifact/0a/11", DEFAULT]]);
  const r = backup(path.join(data, "media"));
  expect(r).toMatchObject({ code: 0 });
  const [id] = fs.readdirSync(path.join(dir, "backups")).filter((f) => /^\d{8}T\d{6}Z$/.test(f));
  const b = path.join(dir, "backups", id);
  // Keyrings hold private keys: the tar goes with keys/ (apart from the archive, as upload.py and export keep it).
  expect(listing(path.join(b, "keys", "pulp-data.tar"))).toEqual(
    [
      "-rwxr-xr-x scripts/sign.sh",
      "-rw------- .gnupg/private-keys-v1.d/A1.key",
      "-rw-r--r-- .gnupg/pubring.kbx",
      "drwx------ .gnupg/",
      "drwxr-xr-x .gnupg/private-keys-v1.d/",
      "drwxr-xr-x scripts/",
    ].sort(),
  );
  const manifest = JSON.parse(fs.readFileSync(path.join(b, "manifest.json"), "utf8"));
  expect(manifest.data).toEqual({ file: "keys/pulp-data.tar", files: 3, bytes: expect.any(Number) });
  expect(manifest.keys["pulp-data.tar"]).toMatch(/^[0-9a-f]{64}$/);
  expect(fs.readdirSync(b).sort()).toEqual([
    "artifacts.list",
    "config.json",
    "database.dump",
    "keys",
    "manifest.json",
    "media",
    "media.list",
  ]);

  // Restored into a new install's volume: modes kept (GnuPG refuses a home others can read).
  const target = path.join(dir, "target");
  const bin = path.join(dir, "restore-bin");
  write(
    path.join(bin, "psql"),
    '#!/bin/sh\ncase "$*" in *-XAtc*) echo f ;; *) cat >/dev/null ;; esac\n',
    0o755,
  );
  write(path.join(bin, "pg_restore"), "#!/bin/sh\n", 0o755);
  const log = path.join(dir, "restore-termination-log");
  const restored = spawnSync("bash", [path.join(BACKUP, "restore.sh")], {
    encoding: "utf8",
    env: {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      BACKUP_DIR: b,
      MEDIA_ROOT: path.join(target, "media"),
      KEYS_DIR: path.join(b, "keys"),
      TARGET_PULPCORE: "3.116.0",
      OVERWRITE_FILE: "/nonexistent",
      ...{ PGDATABASE: "pulp", PGHOST: "db", PGUSER: "pulp" },
      TERMINATION_LOG: log,
    },
  });
  expect(restored.status).toBe(0);
  expect(fs.readFileSync(log, "utf8")).toMatch(/^\{"restored": "\d{8}T\d{6}Z", "seconds": \d+\}\n$/);
  expect(fs.readFileSync(path.join(target, "scripts", "sign.sh"), "utf8")).toMatch(/gpg --detach-sign/);
  expect(fs.statSync(path.join(target, ".gnupg")).mode & 0o777).toBe(0o700);
  expect(fs.statSync(path.join(target, "scripts", "sign.sh")).mode & 0o777).toBe(0o755);
  expect(fs.readdirSync(target).sort()).toEqual([".gnupg", "media", "scripts"]);

  // Brought in without its keys/ (an archive from http or the bucket): restored, the files named.
  fs.rmSync(path.join(b, "keys", "pulp-data.tar"));
  fs.rmSync(target, { recursive: true });
  const without = spawnSync("bash", [path.join(BACKUP, "restore.sh")], {
    encoding: "utf8",
    env: {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      BACKUP_DIR: b,
      MEDIA_ROOT: path.join(target, "media"),
      KEYS_DIR: path.join(b, "keys"),
      OVERWRITE_FILE: "/nonexistent",
      PGDATABASE: "pulp",
      PGHOST: "db",
      TERMINATION_LOG: log,
    },
  });
  expect(without.status).toBe(0);
  expect(fs.readFileSync(log, "utf8")).toMatch(
    new RegExp(
      `"warning": "the backup's 3 other file\\(s\\) of /var/lib/pulp .* were not restored: they are ${id}/keys/pulp-data.tar in its keys archive`,
    ),
  );
});

test("with object storage nothing of /var/lib/pulp is kept: it is each pod's scratch space (B12)", () => {
  fs.mkdirSync(path.join(dir, "backups"));
  install([["artifact/0a/11", DEFAULT]]);
  expect(backup("")).toMatchObject({ code: 0 });
  const [id] = fs.readdirSync(path.join(dir, "backups")).filter((f) => /^\d{8}T\d{6}Z$/.test(f));
  expect(fs.readdirSync(path.join(dir, "backups", id, "keys"))).not.toContain("pulp-data.tar");
  expect(JSON.parse(fs.readFileSync(path.join(dir, "backups", id, "manifest.json"), "utf8")).data).toBeNull();
});

test("a domain keeping artifacts in a storage of its own refuses the backup, naming it; an empty one does not (B12)", () => {
  fs.mkdirSync(path.join(dir, "backups"));
  const data = install(
    [
      ["artifact/0a/11", DEFAULT],
      [`artifact/${EU}/3f/22`, EU],
    ],
    [
      [EU, "eu", S3_CLASS],
      ["0190a1b2-0000-7000-8000-0000000000e1", "empty", S3_CLASS],
    ],
  );
  fs.rmSync(path.join(data, "media", "artifact", EU), { recursive: true }); // in the domain's bucket
  const r = backup(path.join(data, "media"));
  expect(r.code).toBe(1);
  expect(r.termination).toMatch(
    new RegExp(
      `^backup \\d{8}T\\d{6}Z failed: domains keep artifacts in storages of their own, which a backup does not copy \\(it holds the default domain's storage, ${data}/media\\): eu \\(${S3_CLASS}, 1 artifact\\(s\\)\\)\\. A restore would reference`,
    ),
  );
  expect(fs.readdirSync(path.join(dir, "backups"))).toEqual([".lock"]);
});

test("a domain with the default's storage class but its files elsewhere is named, not taken for an orphan cleanup (B12)", () => {
  fs.mkdirSync(path.join(dir, "backups"));
  const data = install(
    [
      ["artifact/0a/11", DEFAULT],
      [`artifact/${EU}/3f/22`, EU],
    ],
    [[EU, "eu", FS_CLASS]],
  );
  // Same class at the same location: its files are under MEDIA_ROOT and kept.
  expect(backup(path.join(data, "media"))).toMatchObject({ code: 0 });
  // Another location (storage_settings): not under MEDIA_ROOT. (A second later: backup ids are seconds.)
  spawnSync("sleep", ["1.1"]);
  fs.rmSync(path.join(data, "media", "artifact", EU), { recursive: true });
  const r = backup(path.join(data, "media"));
  expect(r.code).toBe(1);
  expect(r.termination).toMatch(
    /failed: 1 artifact file\(s\) the database references are not in .*, of domains eu \(1\): their storage_settings keep them in a storage of their own/,
  );
});
