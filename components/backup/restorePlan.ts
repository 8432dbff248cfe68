// Whether this update restores a backup. Into a new install; the same backup id again changes nothing;
// over a live install only with pulp:restore.overwrite naming the backup. Decided from the stack's own
// outputs (upgrade/deployed.ts), never from an object in the cluster.
import { PulpConfig } from "../config/parse";
import { RESTORE_KEYS, SecretName } from "../config/rules";
import { Deployed } from "../upgrade/deployed";
import { backupSlug, isOperatorBackup } from "./backupIds";

export const RESTORE_REFUSED_MARKER = "[pulp:restore-refused]";

/** A RunError to Pulumi (see ConfigError): the refusal is printed without a stack trace. */
export class RestoreRefused extends Error {
  readonly __pulumiRunError = true;
  constructor(message: string) {
    super(`${RESTORE_REFUSED_MARKER} ${message}`);
    this.name = "RestoreRefused";
  }
}

/** A backup brought in over http: a CDI DataVolume whose PVC (the restore's claim) gets the archive unpacked. */
export type RestoreImport = PulpConfig["dataVolumes"][number];

/** A backup fetched from the bucket backups go to into a volume of its own (restoreFetch.ts). */
export type RestoreFetchSource = Omit<NonNullable<NonNullable<PulpConfig["restore"]>["s3"]>, "prefix"> & {
  /** The volume's name (the restore's claim). */
  name: string;
  /** The archive's object key: `<prefix><id>.tar`. */
  key: string;
};

export type RestorePlan =
  | { kind: "none" }
  /**
   * The restore Job (named by the id): created on a new install, unchanged on the next updates. With
   * `overwrite`, this update replaces a live install's data: every Pulp process stops first.
   */
  | {
      kind: "restore";
      backup: string;
      claim: string;
      overwrite: boolean;
      /**
       * An earlier update restored this backup already: its Job is history, kept as it was (never run
       * again, whatever this version of the program would make of it).
       */
      done: boolean;
      import?: RestoreImport;
      fetch?: RestoreFetchSource;
    };

/**
 * Throws RestoreRefused for a restore into a new install without the backup's keys (without its db-fields
 * key the restored data cannot be read), and for one that would overwrite a live install's data
 * unconfirmed. Over a live install its own keys serve, generated or set: the stack keeps an install's
 * keys (protected), and the restore Job checks them against the backup's before it changes anything.
 */
export function planRestore(
  config: PulpConfig,
  deployed: Deployed,
  suppliedSecrets: ReadonlySet<SecretName>,
): RestorePlan {
  const restore = config.restore;
  if (!restore) return { kind: "none" };
  const imported: RestoreImport | undefined = restore.http && {
    ...restore.http,
    name: `${config.instanceName}-restore-${backupSlug(restore.backup)}`,
  };
  const fetched: RestoreFetchSource | undefined = restore.s3 && {
    ...restore.s3,
    name: `${config.instanceName}-restore-${backupSlug(restore.backup)}`,
    // The prefix backup.s3 defaults to (backup.ts): the same install's namespace and name.
    key: `${restore.s3.prefix ?? `${config.namespace}/${config.instanceName}/`}${restore.backup}.tar`,
  };
  const claim = imported?.name ?? fetched?.name ?? restore.claim ?? `${config.instanceName}-backups`;
  const restoring = {
    kind: "restore" as const,
    backup: restore.backup,
    claim,
    ...(imported ? { import: imported } : {}),
    ...(fetched ? { fetch: fetched } : {}),
  };
  const live = deployed.pulpcoreVersion !== undefined;
  const missing = RESTORE_KEYS.filter((k) => !suppliedSecrets.has(k)).map((k) => `pulp:${k}`);
  if (!live && missing.length > 0) {
    throw new RestoreRefused(
      `pulp:restore.backup: a restore needs the backup's keys in the stack config, and ${missing.join(", ")} ` +
        "is not set: with new ones the restored encrypted fields and sessions could not be read. Fix: " +
        `npm run backup -- keys ${restore.backup} -n ${config.namespace}${restore.claim ? ` --claim ${restore.claim}` : ""}  (sets them from the backup)`,
    );
  }
  if (!live) return { ...restoring, overwrite: false, done: false };
  if (deployed.restoredBackup === restore.backup) return { ...restoring, overwrite: false, done: true };
  const what =
    `pulp:restore.backup is ${restore.backup}, but this stack is a live install (pulpcore ` +
    `${deployed.pulpcoreVersion}, ${deployed.restoredBackup ? `restored from backup ${deployed.restoredBackup}` : "not restored from a backup"})`;
  if (restore.overwrite === restore.backup) {
    if (isOperatorBackup(restore.backup)) throw new RestoreRefused(operatorOverwrite(restore.backup));
    if (deployed.pulpcoreVersion !== config.pulpcoreVersion) {
      throw new RestoreRefused(
        `${what}, and pulp:image moves it from ${deployed.pulpcoreVersion} to ${config.pulpcoreVersion} in the same ` +
          "update: overwrite with the running release, then upgrade. Put the image back for now: " +
          `pulumi config set pulp:image <the image of pulpcore ${deployed.pulpcoreVersion}>`,
      );
    }
    return { ...restoring, overwrite: true, done: false };
  }
  throw new RestoreRefused(
    `${what}: restoring would overwrite its database and artifacts. Restore into a new stack instead ` +
      "(pulumi stack init, the same config with pulp:restore), or put " +
      (deployed.restoredBackup
        ? `back the id it was restored from: pulumi config set --path pulp:restore.backup ${deployed.restoredBackup}`
        : "the config back: pulumi config rm pulp:restore") +
      ". To replace this install's data with the backup's (Pulp stops meanwhile; take a backup first: npm run " +
      `backup -- now), confirm it: pulumi config set --path pulp:restore.overwrite ${restore.backup}`,
  );
}

/**
 * A PulpBackup names no releases: the migration Job finds a newer schema only after the restore committed,
 * which a new install survives (set the image, `up` again) and a live one would not.
 */
const operatorOverwrite = (backup: string) =>
  `pulp:restore.overwrite: ${backup} is a pulp-operator PulpBackup, which restores into a new install only ` +
  "(it names no releases, so what it would do to a live database cannot be checked first). Restore it into a " +
  "new stack (pulumi stack init), then move the clients; for now: pulumi config rm --path pulp:restore.overwrite";
