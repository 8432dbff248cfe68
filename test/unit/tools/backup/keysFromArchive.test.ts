// Unit: `npm run backup -- keys <id> --archive <file>` reads a restore's keys from the backup's keys
// archive (`<id>.keys.tar` in the bucket, or the .keys.tar `export` wrote), or from an archive of before
// the keys went apart, or from a tar of a pulp-operator PulpBackup's directory (its Secrets as YAML), with
// the system's tar (no cluster needed before the first `up`).
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseArgs } from "../../../../tools/backup/args";
import { keysFileOf, keysFromArchive } from "../../../../tools/backup/volume";

const ID = "20261124T031500Z";

const KEYS = {
  [`${ID}/keys/secret_key`]: "s".repeat(50),
  [`${ID}/keys/database_fields.symmetric.key`]: "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
  [`${ID}/keys/admin_password`]: "-starts-with-a-dash\n",
};

function archive(files: Record<string, string>, name = "backup.tar", top = ID): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keys-archive-"));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  const tar = path.join(dir, name);
  execFileSync("tar", ["-cf", tar, "-C", dir, top]);
  return tar;
}

function text(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([f, b64]) => [f, Buffer.from(b64, "base64").toString()]),
  );
}

const EXPECTED = {
  secret_key: "s".repeat(50),
  "database_fields.symmetric.key": "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
  admin_password: "-starts-with-a-dash\n",
};

test("the three keys come out of the keys archive, byte for byte", () => {
  expect(text(keysFromArchive(archive(KEYS, `${ID}.keys.tar`), ID))).toEqual(EXPECTED);
});

test("an archive of before the keys went apart, with <id>/keys/ inside, still gives them", () => {
  const old = archive({ [`${ID}/manifest.json`]: "{}", ...KEYS, [`${ID}/database.dump`]: "PGDMP" });
  expect(text(keysFromArchive(old, ID))).toEqual(EXPECTED);
});

test("the archive without keys names the keys archive beside it and the command that reads it", () => {
  const tar = archive({ [`${ID}/manifest.json`]: "{}", [`${ID}/database.dump`]: "PGDMP" }, `${ID}.tar`);
  const keysFile = path.join(path.dirname(tar), `${ID}.keys.tar`);
  expect(keysFileOf(tar)).toBe(keysFile);
  expect(keysFileOf("pulp-backup-x")).toBe("pulp-backup-x.keys.tar");
  expect(() => keysFromArchive(tar, ID)).toThrow(
    `${tar} is backup ${ID}'s archive, which holds no keys: they are in its keys archive ` +
      `(<id>.keys.tar in the bucket, ${ID}.keys.tar from export): npm run backup -- keys ${ID} --archive ${keysFile}`,
  );
});

test("another backup's archive, or a missing file, is an error naming what is missing", () => {
  const tar = archive({ [`${ID}/keys/secret_key`]: "x" });
  expect(() => keysFromArchive(tar, ID)).toThrow(`${tar} has no ${ID}/keys/database_fields.symmetric.key`);
  expect(() => keysFromArchive(tar, "20261201T000000Z")).toThrow(
    /is it backup 20261201T000000Z's keys archive\?/,
  );
  expect(() => keysFromArchive("/nonexistent.tar", ID)).toThrow("no archive at /nonexistent.tar");
  expect(parseArgs(["keys", ID, "--archive", tar])).toMatchObject({ command: "keys", id: ID, archive: tar });
});

const OPERATOR_ID = "openshift-backup-2026-11-24-031500";

/** A PulpBackup's Secrets as pulp-operator 2.0.0 writes them (controllers/backup/secret.go). */
const PULPBACKUP = {
  [`${OPERATOR_ID}/pulp.db`]: "a tar archive",
  // The whole Secret, as kubectl's YAML printer writes it, echoed into the file.
  [`${OPERATOR_ID}/pulp_secret_key.yaml`]:
    `apiVersion: v1\ndata:\n  secret_key: ${Buffer.from("s".repeat(50)).toString("base64")}\nkind: Secret\n` +
    "metadata:\n  name: example-secret-key\ntype: Opaque\n\n",
  // Flat maps of the values (yaml.v3): a value starting with "-" is quoted.
  [`${OPERATOR_ID}/db_fields_encryption_secret.yaml`]:
    'database_fields.symmetric.key: "-q3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE="\n' +
    "db_fields_encryption_secret: example-db-fields-encryption\n\n",
  [`${OPERATOR_ID}/admin_secret.yaml`]:
    "admin_password_secret: example-admin-password\npassword: 'it''s: here'\n\n",
};

test("a tar of a PulpBackup's directory gives its keys, read from the Secrets' YAML as the operator wrote them", () => {
  const tar = archive(PULPBACKUP, "pulpbackup.tar", OPERATOR_ID);
  expect(text(keysFromArchive(tar, OPERATOR_ID))).toEqual({
    secret_key: "s".repeat(50),
    "database_fields.symmetric.key": "-q3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
    admin_password: "it's: here",
  });
  expect(parseArgs(["keys", OPERATOR_ID, "--archive", tar])).toMatchObject({ id: OPERATOR_ID });
  // Only `keys` reads a PulpBackup: export is of this program's backups.
  expect(() => parseArgs(["export", OPERATOR_ID])).toThrow(
    /^export needs one backup id such as 20261124T031500Z/,
  );
});

test("a PulpBackup without one of its Secrets' files, or a key in one, is an error naming the file, never a value", () => {
  const rest = Object.fromEntries(
    Object.entries(PULPBACKUP).filter(([file]) => !file.endsWith("/admin_secret.yaml")),
  );
  expect(() => keysFromArchive(archive(rest, "a.tar", OPERATOR_ID), OPERATOR_ID)).toThrow(
    `PulpBackup ${OPERATOR_ID} has no admin_secret.yaml: it is incomplete`,
  );
  const blank = { ...PULPBACKUP, [`${OPERATOR_ID}/admin_secret.yaml`]: "admin_password_secret: x\n" };
  expect(() => keysFromArchive(archive(blank, "b.tar", OPERATOR_ID), OPERATOR_ID)).toThrow(
    `PulpBackup ${OPERATOR_ID} has no password in admin_secret.yaml: it is incomplete`,
  );
});
