// The upgrade a preview carries, read through the product's contract (components/contract.ts): the
// `Upgrade plan [<kind>]:` diagnostic, a refusal's marker, or a created stop-the-world step with what it
// stops and for about how long. No English is parsed.
import {
  readUpgradePlan,
  readUpgradeRefusal,
  StopTheWorldContract,
  TYPES,
  UpgradeKind,
} from "../../components/contract";
import { parseUrn, PreviewJson, valueAt } from "./previewJson";
import { resourceOf } from "./resources";

/** The step's inputs, and its URN to leave it out of the summary's other changes. */
export interface StopTheWorld extends Omit<StopTheWorldContract, "podsGoneTimeoutSeconds"> {
  urn: string;
  /** How long the step waits for the old pods to go (workers finish their tasks within their grace period). */
  podsGoneTimeoutSeconds?: number;
  /** The longest start-up the stopped Deployments' startup probes allow (initial delay + period x threshold). */
  startupBudgetSeconds?: number;
}

export interface Upgrade {
  kind: UpgradeKind | "refused";
  /** The program's own words: the plan's summary or the refusal. */
  text: string;
  stopTheWorld?: StopTheWorld;
}

/** The longest start-up a Deployment's startup probes allow, from the preview's new inputs. */
export function startupBudgetSeconds(preview: PreviewJson, names: string[]): number | undefined {
  const budgets = preview.steps
    .filter((s) => parseUrn(s.urn).type === "kubernetes:apps/v1:Deployment")
    .filter((s) => names.length === 0 || names.includes(resourceOf(s).name))
    .flatMap((s) => {
      const containers = valueAt(s.newState?.inputs, "spec.template.spec.containers");
      return Array.isArray(containers) ? containers : [];
    })
    .map((c) => (c as { startupProbe?: Record<string, number> }).startupProbe)
    .filter((p): p is Record<string, number> => p !== undefined)
    // Kubernetes' defaults: period 10 s, threshold 3.
    .map((p) => (p.initialDelaySeconds ?? 0) + (p.periodSeconds ?? 10) * (p.failureThreshold ?? 3));
  return budgets.length > 0 ? Math.max(...budgets) : undefined;
}

/** The stop-the-world step (TYPES.stopTheWorldStep), or its component when the step is not listed. */
export function stopTheWorldOf(preview: PreviewJson): StopTheWorld | undefined {
  for (const step of preview.steps) {
    if (!["create", "replace", "create-replacement", "update"].includes(step.op)) continue;
    const inputs = step.newState?.inputs ?? {};
    if (parseUrn(step.urn).type !== TYPES.stopTheWorldStep) continue;
    if (typeof inputs.to !== "string" || inputs.heartbeatTtlSeconds === undefined) continue;
    const deployments = Array.isArray(inputs.deployments) ? inputs.deployments.map(String) : [];
    return {
      urn: step.urn,
      from: String(inputs.from),
      to: inputs.to,
      floor: String(inputs.floor),
      migrations: String(inputs.migrations),
      heartbeatTtlSeconds: Number(inputs.heartbeatTtlSeconds),
      namespace: String(inputs.namespace),
      deployments,
      podsGoneTimeoutSeconds:
        typeof inputs.podsGoneTimeoutSeconds === "number" ? inputs.podsGoneTimeoutSeconds : undefined,
      restoring: typeof inputs.restoring === "string" ? inputs.restoring : undefined,
      startupBudgetSeconds: startupBudgetSeconds(preview, deployments),
    };
  }
  return undefined;
}

export function upgradeOf(preview: PreviewJson, programErrors: string[]): Upgrade | undefined {
  const stw = stopTheWorldOf(preview);
  const plan = preview.diagnostics.map((d) => readUpgradePlan(d.message)).find((p) => p !== undefined);
  if (stw) return { kind: "stop-the-world", text: plan?.summary ?? "", stopTheWorld: stw };
  const refusal = programErrors.map(readUpgradeRefusal).find((r) => r !== undefined);
  if (refusal !== undefined) return { kind: "refused", text: refusal };
  return plan && { kind: plan.kind, text: plan.summary };
}
