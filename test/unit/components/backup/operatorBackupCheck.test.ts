// Unit: restoreCheck.py on a pulp-operator PulpBackup, run as the restore's check pod runs it, under python3
// with PyYAML (Pulp's own YAML library; missing, this fails): the backup laid out as pulp-operator 2.0.0's
// controllers/backup write it, the install's keys as the check pod mounts them. The restore itself on real
// PostgreSQL: test/e2e/restoreDatabase.test.ts; on real Pulp: test/e2e/real/restore.test.ts.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pulpBackupKeyFiles, restoreRules } from "../../../../components/backup/restore";

const CHECK = path.join(__dirname, "../../../../components/backup/restoreCheck.py");
const ID = "openshift-backup-2026-11-25-031500";
// A Fernet key may begin with "-": yaml.v3 (the operator's) quotes it, and the check must read it unquoted.
const KEYS = {
  secret_key: "django-secret-0123456789abcdef",
  "database_fields.symmetric.key": "-Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE=",
  admin_password: "admin:pass word",
};

let dir: string;
let backup: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "operator-backup-"));
  backup = path.join(dir, "backups", ID);
  fs.mkdirSync(path.join(backup, "pulp", "media", "artifact", "0a"), { recursive: true });
  fs.writeFileSync(path.join(backup, "pulp", "media", "artifact", "0a", "11"), "artifact");
  fs.writeFileSync(path.join(backup, "pulp.db"), "a tar archive");
  fs.writeFileSync(path.join(backup, "cr_object"), '{"deployment_type":"pulp"}\n');
  // createSecretBackupFile: the Secret as kubectl's YAML printer writes it, echoed (one newline more).
  const b64 = (v: string) => Buffer.from(v).toString("base64");
  fs.writeFileSync(
    path.join(backup, "pulp_secret_key.yaml"),
    `apiVersion: v1\ndata:\n  secret_key: ${b64(KEYS.secret_key)}\nkind: Secret\nmetadata:\n  name: example-secret-key\n  namespace: pulp\ntype: Opaque\n\n`,
  );
  // createBackupFile: a flat map of the Secret's values and its name, as yaml.v3 marshals it.
  fs.writeFileSync(
    path.join(backup, "db_fields_encryption_secret.yaml"),
    `database_fields.symmetric.key: "${KEYS["database_fields.symmetric.key"]}"\ndb_fields_encryption_secret: example-db-fields-encryption\n\n`,
  );
  fs.writeFileSync(
    path.join(backup, "admin_secret.yaml"),
    `admin_password_secret: example-admin-password\npassword: '${KEYS.admin_password}'\n\n`,
  );
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** restoreCheck.py with this install's keys (`keys`, as the pod mounts them) and its storage. */
function check(keys: Record<string, string> = KEYS, target = "pvc", uid?: number) {
  const keysDir = path.join(dir, "keys");
  fs.rmSync(keysDir, { recursive: true, force: true });
  fs.mkdirSync(keysDir);
  for (const [file, value] of Object.entries(keys)) fs.writeFileSync(path.join(keysDir, file), value);
  const log = path.join(dir, "termination-log");
  fs.rmSync(log, { force: true });
  // Another uid (root only) must reach the files and write the termination log.
  const asOther = uid !== undefined && process.getuid?.() === 0;
  if (asOther) {
    for (const d of [dir, keysDir]) fs.chmodSync(d, 0o777);
    for (const f of fs.readdirSync(keysDir)) fs.chmodSync(path.join(keysDir, f), 0o644);
  }
  const r = spawnSync("python3", [CHECK], {
    encoding: "utf8",
    ...(asOther ? { uid, gid: uid } : {}),
    env: {
      ...process.env,
      BACKUP_DIR: backup,
      RESTORE_RULES: JSON.stringify(restoreRules()),
      TARGET_STORAGE: target,
      KEYS_DIR: keysDir,
      PULP_BACKUP_KEYS: JSON.stringify(pulpBackupKeyFiles()),
      TERMINATION_LOG: log,
    },
  });
  if (r.error) throw r.error;
  if (/No module named 'yaml'/.test(r.stderr)) throw new Error("python3 has no PyYAML: pip install PyYAML");
  return {
    code: r.status,
    out: r.stdout + r.stderr,
    termination: fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "",
  };
}

test("with the PulpBackup's keys (read from its YAML files) and a volume: passes, saying what it holds", () => {
  const r = check();
  expect(r).toMatchObject({ code: 0, termination: "" });
  expect(r.out).toContain(
    `artifact check: PulpBackup ${ID} (pulp-operator): the keys are this install's; it holds 1 files under pulp/media`,
  );
});

test("a key of another install is refused, naming it and the command that sets the backup's, never a value", () => {
  const r = check({ ...KEYS, "database_fields.symmetric.key": "another-key" });
  expect(r.code).toBe(1);
  expect(r.termination).toBe(
    `restore refused: this install's database_fields.symmetric.key is not PulpBackup ${ID}'s ` +
      "(db_fields_encryption_secret.yaml): with another one the restored encrypted fields, sessions or the admin " +
      `login would not work. Nothing was changed. Set them from the backup: npm run backup -- keys ${ID} ` +
      "--archive <a tar of its directory> (or -n <namespace> --claim <its claim>)\n",
  );
  for (const value of [...Object.values(KEYS), "another-key"]) expect(r.out).not.toContain(value);
  // One trailing newline is not a difference: pulumi config set drops it from what it reads.
  expect(check({ ...KEYS, admin_password: `${KEYS.admin_password}\n` }).code).toBe(0);
});

test("a PulpBackup of object storage, an unfinished one, and one into object storage are refused", () => {
  fs.writeFileSync(path.join(backup, "objectstorage_secret.yaml"), "s3-bucket-name: pulp\n");
  expect(check().termination).toMatch(
    new RegExp(
      `^restore refused: PulpBackup ${ID} is of an install that keeps its artifacts in object storage: `,
    ),
  );
  fs.rmSync(path.join(backup, "objectstorage_secret.yaml"));
  expect(check(KEYS, "s3://pulp-new").termination).toMatch(
    /holds its artifacts in pulp\/media, and this install keeps its artifacts in s3:\/\/pulp-new: .* pulumi config rm pulp:storage\n$/,
  );
  // pulp-operator writes pulp.db with mode 0600 (as root, in its backup pod): the restore's uid cannot read
  // it. Run as another uid than the file's owner (nobody when this runs as root, which reads anything).
  fs.chmodSync(path.join(backup, "pulp.db"), 0o600);
  if (process.getuid?.() !== 0) fs.chmodSync(path.join(backup, "pulp.db"), 0o000);
  expect(check(KEYS, "pvc", 65534).termination).toMatch(
    /pulp\.db is not readable by the restore \(uid \d+\): pulp-operator writes it with mode 0600/,
  );
  fs.chmodSync(path.join(backup, "pulp.db"), 0o644);
  fs.rmSync(path.join(backup, "pulp"), { recursive: true });
  expect(check().termination).toMatch(
    new RegExp(`^restore refused: PulpBackup ${ID} has no pulp/ directory`),
  );
  fs.mkdirSync(path.join(backup, "pulp"));
  fs.rmSync(path.join(backup, "admin_secret.yaml"));
  expect(check().termination).toBe(
    `restore refused: PulpBackup ${ID} has no password in admin_secret.yaml: it is incomplete. Nothing was changed\n`,
  );
});
