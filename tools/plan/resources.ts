// Naming the resources of a preview and the reasons the engine or the API server gives for refusing them.
import { changedPaths, parseUrn, PreviewDiagnostic, PreviewStep, valueAt } from "./previewJson";

/** Ops that change nothing: `refresh` only reads the live object (preview --refresh). */
export const NO_CHANGE_OPS = new Set(["same", "read", "refresh"]);

export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"; // how the engine spells a value known only at apply

export interface Resource {
  /** Kubernetes kind (or Pulumi type for non-Kubernetes resources) and object name. */
  kind: string;
  name: string;
  urn: string;
}

export function resourceOf(step: {
  urn: string;
  newState?: PreviewStep["newState"];
  oldState?: PreviewStep["oldState"];
}): Resource {
  const { type, name } = parseUrn(step.urn);
  const st = step.newState ?? step.oldState;
  const metaName = valueAt(st?.inputs, "metadata.name");
  const kind = type.split(":").pop() ?? type;
  return {
    kind,
    name: typeof metaName === "string" && metaName !== UNKNOWN ? metaName : name,
    urn: step.urn,
  };
}

/** The step's changed property paths: the provider's detailedDiff, else a diff of the inputs. */
export function changedProperties(step: PreviewStep): string[] {
  if (step.detailedDiff && Object.keys(step.detailedDiff).length > 0)
    return Object.keys(step.detailedDiff).sort();
  if (step.diffReasons && step.diffReasons.length > 0) return [...step.diffReasons].sort();
  return changedPaths(step.oldState?.inputs, step.newState?.inputs);
}

/** One line from an engine or provider error: the reason, without the boilerplate around it. */
export function refusalReason(message: string): string {
  if (/protected|marked for protection/.test(message)) {
    return "refused: the resource is protected (`protect: true`); the engine never deletes or replaces it";
  }
  const conflict = /conflict with (.+)/.exec(message);
  if (conflict) {
    return `refused by the Kubernetes API server: a field was changed outside Pulumi (server-side apply conflict with ${conflict[1].trim()})`;
  }
  const invalid = /is invalid: ([^\n]+)/.exec(message);
  if (invalid) return `refused by the Kubernetes API server: ${invalid[1].trim()}`;
  const first = message
    .replace(/^error: /, "")
    .replace(/^Preview failed: /, "")
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return `refused: ${first ?? message}`;
}

export function errorsByUrn(diagnostics: PreviewDiagnostic[]): Map<string, string[]> {
  const byUrn = new Map<string, string[]>();
  for (const d of diagnostics.filter((d) => d.severity === "error" && d.urn)) {
    const reasons = byUrn.get(d.urn!) ?? [];
    const reason = refusalReason(d.message);
    if (!reasons.includes(reason)) reasons.push(reason);
    byUrn.set(d.urn!, reasons);
  }
  return byUrn;
}

export const state = (s: PreviewStep) => s.newState ?? s.oldState;
