// What holds data, and which steps of a preview would replace or delete it (or were refused doing so).
import { parseUrn, PreviewJson } from "./previewJson";
import { changedProperties, errorsByUrn, Resource, resourceOf } from "./resources";

/** Ops that remove an object (and what it holds) from the cluster. */
const REMOVING_OPS = new Set(["delete", "replace", "delete-replaced", "create-replacement"]);

export interface DataRisk extends Resource {
  /** What the object holds, in words. */
  holds: string;
  /** The name before, when a replacement renames it. */
  oldName?: string;
  /** `retainOnDelete`: a deletion or replacement leaves the old object in the cluster, unmanaged. */
  retained: boolean;
  /** Changed properties, for in-place changes. */
  fields: string[];
  /** The step's op (replace, delete, update) */
  op: string;
  /** Properties that force the replacement, when it is one. */
  reasons: string[];
  /** Why the engine or the API server refused it; empty when nothing stopped it. */
  refusals: string[];
}

/** Which key a PulpSecrets resource holds (components/secrets/pulpSecrets.ts names them by suffix). */
function keyHeld(urn: string): string {
  const name = parseUrn(urn).name;
  if (/db-fields/.test(name))
    return "the key that encrypts database fields: with a new one they cannot be read";
  if (/secret-key/.test(name))
    return "Django's SECRET_KEY: a new one logs everyone out and voids signed data";
  if (/admin-password/.test(name)) return "the admin password";
  if (/token-keys|container-auth/.test(name)) return "the token-signing key pair: issued tokens stop working";
  return "a key Pulp was installed with";
}

/** What a resource holds that a replacement or deletion would lose; undefined for everything re-creatable. */
export function dataHeld(urn: string, protect: boolean | undefined): string | undefined {
  const { type } = parseUrn(urn);
  if (type === "kubernetes:core/v1:PersistentVolumeClaim") return "a volume: its files are lost with it";
  if (type.startsWith("kubernetes:postgresql.cnpg.io/") && type.endsWith(":Cluster"))
    return "the PostgreSQL database (CloudNativePG): every byte of Pulp's metadata";
  if (type.startsWith("kubernetes:cdi.kubevirt.io/") && type.endsWith(":DataVolume"))
    return "an imported volume (CDI)";
  if (type === "kubernetes:core/v1:Namespace") return "the namespace: deleting it deletes everything in it";
  if (urn.includes("$pulp:secrets:PulpSecrets$") || type.endsWith(":GeneratedSecret")) return keyHeld(urn);
  if (protect) return "something the program marks `protect`";
  return undefined;
}

/** A data-holding object changed in place (labels, a larger size): no data at risk. */
export type DataUpdate = Resource & { fields: string[] };

export function dataRisks(preview: PreviewJson): { risks: DataRisk[]; updates: DataUpdate[] } {
  const errors = errorsByUrn(preview.diagnostics);
  const risks: DataRisk[] = [];
  const updates: DataUpdate[] = [];
  const seen = new Set<string>();
  for (const step of preview.steps) {
    const holds = dataHeld(step.urn, step.oldState?.protect ?? step.newState?.protect);
    if (!holds || step.op === "same" || step.op === "read" || step.op === "create") continue;
    const refusals = errors.get(step.urn) ?? [];
    if (REMOVING_OPS.has(step.op) || refusals.length > 0) {
      if (seen.has(step.urn)) continue; // create-replacement and delete-replaced name one replacement
      seen.add(step.urn);
      const op = step.op === "create-replacement" || step.op === "delete-replaced" ? "replace" : step.op;
      const oldName = step.oldState ? resourceOf({ urn: step.urn, oldState: step.oldState }).name : undefined;
      const resource = resourceOf(step);
      risks.push({
        ...resource,
        oldName: oldName !== resource.name ? oldName : undefined,
        holds,
        op,
        retained: (step.oldState ?? step.newState)?.retainOnDelete === true,
        fields: op === "update" ? changedProperties(step) : [],
        reasons: step.replaceReasons ?? [],
        refusals,
      });
    } else if (step.op === "update") {
      updates.push({ ...resourceOf(step), fields: changedProperties(step) });
    }
  }
  // A refused step may be missing from `steps` (the engine stopped first): report it from the error alone.
  for (const [urn, refusals] of errors) {
    const holds = dataHeld(urn, undefined);
    if (!holds || seen.has(urn)) continue;
    const protectedDelete = refusals.some((r) => r.includes("protected"));
    risks.push({
      ...resourceOf({ urn }),
      holds,
      op: protectedDelete ? "delete or replace" : "change",
      retained: false,
      fields: [],
      reasons: [],
      refusals,
    });
  }
  return { risks, updates };
}
