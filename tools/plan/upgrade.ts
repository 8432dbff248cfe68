// The upgrade a preview carries: the program's `Upgrade plan: ` diagnostic, a refusal, or a created
// pulp:upgrade:StopTheWorld with what it stops and for about how long.
import { parseUrn, PreviewJson, valueAt } from "./previewJson";
import { resourceOf } from "./resources";

/** The step's URN, to leave it out of the summary's other changes. */
export interface StopTheWorld {
  urn: string;
  from: string;
  to: string;
  floor: string;
  migrations: string;
  heartbeatTtlSeconds: number;
  namespace: string;
  deployments: string[];
  /** How long the step waits for the old pods to go (workers finish their tasks within their grace period). */
  podsGoneTimeoutSeconds?: number;
  /** The longest start-up the stopped Deployments' startup probes allow (initial delay + period x threshold). */
  startupBudgetSeconds?: number;
}

export interface Upgrade {
  kind: "install" | "none" | "rolling" | "offline" | "stop-the-world" | "refused";
  /** The program's own words: the `Upgrade plan: ` diagnostic or the refusal. */
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

/** The stop-the-world resource main adds: a `pulp:upgrade:StopTheWorld` component and its dynamic child. */
export function stopTheWorldOf(preview: PreviewJson): StopTheWorld | undefined {
  for (const step of preview.steps) {
    if (!["create", "replace", "create-replacement", "update"].includes(step.op)) continue;
    const inputs = step.newState?.inputs ?? {};
    // The dynamic child may be parented elsewhere; its inputs are the contract either way.
    const dynamic = parseUrn(step.urn).type.startsWith("pulumi-nodejs:dynamic") && "floor" in inputs;
    if (!step.urn.includes("pulp:upgrade:StopTheWorld") && !dynamic) continue;
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
      startupBudgetSeconds: startupBudgetSeconds(preview, deployments),
    };
  }
  return undefined;
}

export function upgradeOf(preview: PreviewJson, programErrors: string[]): Upgrade | undefined {
  const stw = stopTheWorldOf(preview);
  // A stop-the-world plan is a warning, the others info; warnings carry their severity in the message.
  const planText = (m: string) => m.replace(/^(warning|info): /, "");
  const plan = preview.diagnostics.find((d) => planText(d.message).startsWith("Upgrade plan: "));
  const text = plan
    ? planText(plan.message)
        .replace(/^Upgrade plan: /, "")
        .trim()
    : "";
  if (stw) return { kind: "stop-the-world", text, stopTheWorld: stw };
  const refusal = programErrors.find((e) =>
    /NEEDS DOWNTIME|do not run backwards|RequireVersion floors|pulpcore/.test(e),
  );
  if (refusal) return { kind: "refused", text: refusal };
  if (!plan) return undefined;
  const kind: Upgrade["kind"] = /NEEDS DOWNTIME/.test(text)
    ? "stop-the-world"
    : /^install/.test(text)
      ? "install"
      : /while idle/.test(text)
        ? "offline"
        : /stays; no upgrade/.test(text)
          ? "none"
          : "rolling";
  return { kind, text };
}
