// Whether this update restores a backup: only into an install that has never been deployed, and the same
// backup id again changes nothing. Decided from the stack's own outputs (upgrade/deployed.ts), never from
// an object in the cluster.
import { PulpConfig } from "../config/parse";
import { Deployed } from "../upgrade/deployed";

export const RESTORE_REFUSED_MARKER = "[pulp:restore-refused]";

export class RestoreRefused extends Error {
  constructor(message: string) {
    super(`${RESTORE_REFUSED_MARKER} ${message}`);
  }
}

export type RestorePlan =
  | { kind: "none" }
  /** The restore Job (named by the id): created on a new install, unchanged on the next updates. */
  | { kind: "restore"; backup: string; claim: string };

/** Throws RestoreRefused for a restore that would overwrite a live install's data. */
export function planRestore(config: PulpConfig, deployed: Deployed): RestorePlan {
  const restore = config.restore;
  if (!restore) return { kind: "none" };
  const claim = restore.claim ?? `${config.instanceName}-backups`;
  const live = deployed.pulpcoreVersion !== undefined;
  if (!live || deployed.restoredBackup === restore.backup) {
    return { kind: "restore", backup: restore.backup, claim };
  }
  const from = deployed.restoredBackup
    ? `restored from backup ${deployed.restoredBackup}`
    : "not restored from a backup";
  throw new RestoreRefused(
    `pulp:restore.backup is ${restore.backup}, but this stack is a live install (pulpcore ` +
      `${deployed.pulpcoreVersion}, ${from}): restoring would overwrite its database and artifacts. ` +
      "Restore into a new stack instead (pulumi stack init, the same config with pulp:restore), or put " +
      (deployed.restoredBackup
        ? `back the id it was restored from: pulumi config set --path pulp:restore.backup ${deployed.restoredBackup}`
        : "the config back: pulumi config rm pulp:restore"),
  );
}
