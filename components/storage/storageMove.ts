// Where an install's artifacts are, as its history records it, and the refusal of a config change that
// would point Pulp somewhere else. Such a change deletes nothing (the program's claim is protected and
// kept on delete, buckets are never touched), but every artifact would be missing to the new pods: a
// download answers 404 and a sync or repair finds nothing, while the database still lists them all.
import type { PulpConfig } from "../config/parse";
import { fixedName, Identity } from "../common/labels";
import { historyName } from "../upgrade/history";

/** The object stores a config can name, by the fields that say which bucket or container. */
export interface ObjectStores {
  s3?: { bucket: string };
  azure?: { accountName: string; container: string; location?: string };
  gcs?: { bucket: string; location?: string };
}

/**
 * "s3://<bucket>", "azure://<account>/<container>[/<location>]" or "gs://<bucket>[/<location>]" (as gcloud
 * names it); undefined on a volume.
 */
export function objectStoreName(storage: ObjectStores): string | undefined {
  if (storage.s3) return `s3://${storage.s3.bucket}`;
  if (storage.azure) {
    const { accountName, container, location } = storage.azure;
    return `azure://${accountName}/${container}${location ? `/${location}` : ""}`;
  }
  if (storage.gcs)
    return `gs://${storage.gcs.bucket}${storage.gcs.location ? `/${storage.gcs.location}` : ""}`;
  return undefined;
}

/**
 * Where the artifacts live, as a name a person can read and compare: `claim <name>` (the program's own
 * `<instance>-artifacts` or storage.pvc.existingClaim), or the object store's name.
 */
export function artifactStorageName(storage: PulpConfig["storage"], identity: Identity): string {
  return (
    objectStoreName(storage) ?? `claim ${storage.pvc?.existingClaim ?? fixedName(identity, "artifacts")}`
  );
}

/** Refused: the config would leave every artifact behind. Printed without a stack trace. */
export class StorageMoveRefused extends Error {
  readonly __pulumiRunError = true;
}

/**
 * Why this update may not take its artifacts from `storage` when the install recorded `recorded`, or
 * undefined when it may: nothing recorded (a new install, or one an older version of the program made),
 * the same place, or storage.movedFrom naming the recorded place (the person says the artifacts were
 * copied over).
 */
export function storageMoveProblem(
  config: Pick<PulpConfig, "storage" | "instanceName" | "namespace">,
  identity: Identity,
  recorded: string | undefined,
): string | undefined {
  const wanted = artifactStorageName(config.storage, identity);
  if (recorded === undefined || recorded === wanted || config.storage.movedFrom === recorded)
    return undefined;
  return (
    `pulp:storage names ${wanted} for the artifacts, but instance ${config.instanceName} keeps them in ` +
    `${recorded} (its history, configmap ${historyName(config.instanceName)} in namespace ${config.namespace}); ` +
    `nothing was changed. Pulp would find none of them there: downloads would answer 404 while the ` +
    `database lists every one. Put the storage config back as it was, or copy every file or object from ` +
    `${recorded} to ${wanted} first and then say so: ` +
    `pulumi config set --path pulp:storage.movedFrom '${recorded}'` +
    (config.storage.movedFrom !== undefined
      ? ` (storage.movedFrom is ${JSON.stringify(config.storage.movedFrom)}, which is not where they are)`
      : "")
  );
}
