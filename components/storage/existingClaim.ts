// A claim of the user's (storage.pvc.existingClaim), checked against the cluster before anything is
// declared: the program never creates, changes or deletes it, so what would make it fail Pulp, or lose
// the artifacts, has to be found here.
import type { KubeApi } from "../upgrade/kubeApi";

/** A PersistentVolumeClaim as the cluster has it (the fields the check reads). */
export interface LiveClaim {
  name: string;
  accessModes: string[];
  /** Its ownerReferences, as `<Kind>/<name>`: deleting any of them deletes the claim. */
  owners: string[];
  deleting: boolean;
}

export async function readClaim(api: KubeApi, namespace: string, name: string): Promise<LiveClaim | null> {
  const claim = (await api.request(
    "GET",
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(name)}`,
  )) as
    | {
        metadata?: { deletionTimestamp?: string; ownerReferences?: { kind: string; name: string }[] };
        spec?: { accessModes?: string[] };
      }
    | undefined;
  if (!claim) return null;
  return {
    name,
    accessModes: claim.spec?.accessModes ?? [],
    owners: (claim.metadata?.ownerReferences ?? []).map((o) => `${o.kind}/${o.name}`),
    deleting: claim.metadata?.deletionTimestamp !== undefined,
  };
}

/** Refused: the claim would fail the pods or lose the artifacts. Printed without a stack trace. */
export class ExistingClaimRefused extends Error {
  readonly __pulumiRunError = true;
}

/** Why the named claim cannot hold the artifacts, with the fix; undefined when it can. */
export function existingClaimProblem(
  claim: LiveClaim | null,
  where: { namespace: string; name: string },
): string | undefined {
  const key = `pulp:storage.pvc.existingClaim (${where.name})`;
  if (!claim) {
    return (
      `${key}: no PersistentVolumeClaim ${where.name} in namespace ${where.namespace}; nothing was changed. ` +
      `List the claims there (kubectl get pvc -n ${where.namespace}) and name one, or let the program create ` +
      `its own: pulumi config rm --path pulp:storage.pvc.existingClaim`
    );
  }
  if (claim.deleting) {
    return (
      `${key}: the claim is being deleted (it waits only for the pods that mount it); nothing was changed. ` +
      `Its artifacts go with it unless its PersistentVolume's reclaim policy is Retain: ` +
      `kubectl get pv "$(kubectl get pvc ${where.name} -n ${where.namespace} -o jsonpath='{.spec.volumeName}')" -o jsonpath='{.spec.persistentVolumeReclaimPolicy}'`
    );
  }
  if (claim.owners.length > 0) {
    // pulp-operator's file-storage claim is owned by its Pulp resource: deleting that deletes the artifacts.
    return (
      `${key}: the claim is owned by ${claim.owners.join(", ")}, and deleting ${claim.owners.length > 1 ? "any of them" : "it"} ` +
      `deletes the claim with every artifact in it; nothing was changed. Take the claim out of ${claim.owners.length > 1 ? "their" : "its"} ` +
      `hands first: kubectl patch pvc ${where.name} -n ${where.namespace} --type json -p '[{"op": "remove", "path": "/metadata/ownerReferences"}]'`
    );
  }
  if (!claim.accessModes.includes("ReadWriteMany")) {
    return (
      `${key}: the claim's access modes are ${claim.accessModes.join(", ") || "none"}, but api, content and ` +
      `worker pods, on several nodes, more during a rolling update, all mount /var/lib/pulp: pods on another ` +
      `node fail with "Multi-Attach error"; nothing was changed. Copy the artifacts to a ReadWriteMany claim ` +
      `(NFS, CephFS, EFS, Azure Files...) and name it: pulumi config set --path pulp:storage.pvc.existingClaim <claim>`
    );
  }
  return undefined;
}
