// What holds data, and which steps of a preview would replace or delete it (or were refused doing so).
import { GENERATED_SECRET_HOLDS, HOLDINGS, holdingOf, stashHolding } from "../../components/contract";
import { parseUrn, PreviewJson, PreviewStep, valueAt } from "./previewJson";
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

type State = Partial<NonNullable<PreviewStep["newState"]>> | undefined;

/**
 * What a resource holds that a replacement or deletion would lose; undefined for everything re-creatable.
 * Read from the object's `pulp.pulpproject.org/holds` annotation (components/contract.ts), for a generated
 * key's Stash from its name, or for a GeneratedSecret from its kind; otherwise only the state's `protect`
 * flag says something is kept.
 */
export function dataHeld(urn: string, ...states: State[]): string | undefined {
  const { type, name } = parseUrn(urn);
  for (const st of states) {
    const holding =
      holdingOf(valueAt(st?.inputs, "metadata.annotations")) ??
      (type === "pulumi:index:Stash" ? stashHolding(name) : undefined) ??
      (type.endsWith(":GeneratedSecret")
        ? GENERATED_SECRET_HOLDS[String(st?.inputs?.kind ?? st?.outputs?.kind)]
        : undefined);
    if (holding) return HOLDINGS[holding];
  }
  if (states.some((st) => st?.protect)) return "something the program marks `protect`";
  return undefined;
}

/** A data-holding object changed in place (labels, a larger size): no data at risk. */
export type DataUpdate = Resource & { fields: string[] };

export function dataRisks(preview: PreviewJson): { risks: DataRisk[]; updates: DataUpdate[] } {
  const errors = errorsByUrn(preview.diagnostics);
  const risks: DataRisk[] = [];
  const updates: DataUpdate[] = [];
  const seen = new Set<string>();
  // An older version's GeneratedSecret, dropped once its key is in a Stash of the same name: versions before
  // 0.2.0 kept them protected, and only the update that copies a key into its Stash unprotects them
  // (secrets/pulpSecrets.ts). Dropping one loses nothing.
  const moved = (step: PreviewStep) =>
    step.op === "delete" &&
    parseUrn(step.urn).type.endsWith(":GeneratedSecret") &&
    step.oldState?.protect !== true; // the JSON leaves out a false flag
  for (const step of preview.steps) {
    const holds = dataHeld(step.urn, step.newState, step.oldState);
    if (!holds || step.op === "same" || step.op === "read" || step.op === "create" || moved(step)) continue;
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
    if (seen.has(urn)) continue;
    const states = preview.steps.filter((st) => st.urn === urn).flatMap((st) => [st.newState, st.oldState]);
    const protectedDelete = refusals.some((r) => r.includes("protected"));
    // The engine refuses to delete a protected resource before any step shows its annotations.
    const holds =
      dataHeld(urn, ...states) ?? (protectedDelete ? dataHeld(urn, { protect: true }) : undefined);
    if (!holds) continue;
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
