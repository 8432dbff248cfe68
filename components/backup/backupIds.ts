// The backups a restore reads: this program's (backup.sh, named by the time in UTC) and pulp-operator's
// PulpBackup directories, whose layout differs (restore.sh and restoreCheck.py tell them apart by it).
import type { RESTORE_KEYS } from "../config/rules";

/** This program's backup id: the UTC time it was taken. */
export const OWN_BACKUP_ID = /^\d{8}T\d{6}Z$/;

/**
 * A PulpBackup's directory in its claim: `openshift-backup-<time>`, the time as Go's "2006-01-02-150405"
 * (pulp-operator 2.0.0, controllers/backup/utils.go getBackupDir), as its status.backupDirectory names it.
 */
export const OPERATOR_BACKUP_ID = /^openshift-backup-(\d{4})-(\d{2})-(\d{2})-(\d{6})$/;

export const isOperatorBackup = (id: string): boolean => OPERATOR_BACKUP_ID.test(id);

/**
 * The backup as object names carry it (`<instance>-restore-<slug>`, `-restore-check-`, `-restore-fetch-`):
 * ours lower-cased (16 characters); a PulpBackup's as `op-<date>t<time>` (18), so that the longest name, with
 * a 30-character instance, stays within the 63 a Job's name may have.
 */
export function backupSlug(id: string): string {
  const operator = OPERATOR_BACKUP_ID.exec(id);
  return operator ? `op-${operator[1]}${operator[2]}${operator[3]}t${operator[4]}` : id.toLowerCase();
}

/**
 * The keys a restore needs, as a PulpBackup holds them (pulp-operator 2.0.0, controllers/backup/secret.go):
 * by stack config key, the file it copies the Secret into and the key there. pulp_secret_key.yaml is the
 * whole Secret as kubectl prints it (values base64 under `data`), the others flat maps of its values.
 * `npm run backup -- keys` reads them for the stack config; the restore's check (restoreCheck.py) compares
 * them with this install's.
 */
export const PULP_BACKUP_KEYS: Record<(typeof RESTORE_KEYS)[number], { file: string; key: string }> = {
  secretKey: { file: "pulp_secret_key.yaml", key: "secret_key" },
  dbFieldsEncryptionKey: { file: "db_fields_encryption_secret.yaml", key: "database_fields.symmetric.key" },
  adminPassword: { file: "admin_secret.yaml", key: "password" },
};
