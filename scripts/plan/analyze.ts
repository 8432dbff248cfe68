// What a preview means for a Pulp install, as plain facts: data at risk, what rolls and why, whether a
// migration runs, and the upgrade plan. Pure: the Markdown is in render.ts.
import { changedPaths, parseUrn, PreviewDiagnostic, PreviewJson, PreviewStep, valueAt } from "./previewJson";

/** The pod-template annotation components/workload/workload.ts sets from the settings and secrets. */
export const CONFIG_HASH_ANNOTATION = "pulp.pulpproject.org/config-hash";
/** Ops that remove an object (and what it holds) from the cluster. */
const REMOVING_OPS = new Set(["delete", "replace", "delete-replaced", "create-replacement"]);
/** Ops that change nothing: `refresh` only reads the live object (preview --refresh). */
export const NO_CHANGE_OPS = new Set(["same", "read", "refresh"]);
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"; // how the engine spells a value known only at apply

export interface Resource {
  /** Kubernetes kind (or Pulumi type for non-Kubernetes resources) and object name. */
  kind: string;
  name: string;
  urn: string;
}

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

export interface Roll {
  name: string;
  /** update: a rolling update of the pod template; replace, create, delete: the object itself. */
  op: string;
  /** Image changes as `old -> new`. */
  images: string[];
  /** The config-hash annotation (or a content-named Secret/ConfigMap reference) changed. */
  config: boolean;
  /** Other pod-template fields, relative to `spec.template`. */
  other: string[];
}

export interface Scale {
  name: string;
  /** Fields outside the pod template, e.g. `spec.replicas 2 -> 3`. */
  changes: string[];
}

export interface Migration {
  urn: string;
  job: string;
  replaces?: string;
  reasons: string[];
}

export interface StopTheWorld {
  from: string;
  to: string;
  floor: string;
  migrations: string;
  heartbeatTtlSeconds: number;
  namespace: string;
  deployments: string[];
  /** The longest start-up the stopped Deployments' startup probes allow (initial delay + period x threshold). */
  startupBudgetSeconds?: number;
}

export interface Upgrade {
  kind: "install" | "none" | "rolling" | "offline" | "stop-the-world" | "refused";
  /** The program's own words: the `Upgrade plan: ` diagnostic or the refusal. */
  text: string;
  stopTheWorld?: StopTheWorld;
}

const state = (s: PreviewStep) => s.newState ?? s.oldState;

export interface Analysis {
  failed: boolean;
  dataRisks: DataRisk[];
  /** Data-holding objects changed in place (labels, sizes) without removal. */
  dataUpdates: (Resource & { fields: string[] })[];
  rolls: Roll[];
  scales: Scale[];
  migration?: Migration;
  upgrade?: Upgrade;
  /** Errors not tied to a resource (the program refused, config invalid). */
  programErrors: string[];
  /** Errors on resources that hold no data (a server-side apply conflict after a hand edit, ...). */
  resourceErrors: (Resource & { reasons: string[] })[];
  /** Every other changed resource: `op kind/name`. */
  otherChanges: string[];
  changeSummary: Record<string, number>;
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

function errorsByUrn(diagnostics: PreviewDiagnostic[]): Map<string, string[]> {
  const byUrn = new Map<string, string[]>();
  for (const d of diagnostics.filter((d) => d.severity === "error" && d.urn)) {
    const reasons = byUrn.get(d.urn!) ?? [];
    const reason = refusalReason(d.message);
    if (!reasons.includes(reason)) reasons.push(reason);
    byUrn.set(d.urn!, reasons);
  }
  return byUrn;
}

export function dataRisks(preview: PreviewJson): { risks: DataRisk[]; updates: Analysis["dataUpdates"] } {
  const errors = errorsByUrn(preview.diagnostics);
  const risks: DataRisk[] = [];
  const updates: Analysis["dataUpdates"] = [];
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

const images = (inputs: unknown): string[] =>
  ["initContainers", "containers"].flatMap((list) => {
    const cs = valueAt(inputs, `spec.template.spec.${list}`);
    return Array.isArray(cs) ? cs.map((c) => `${(c as { image?: string }).image}`) : [];
  });

/** The value before: the live object after a refresh (its outputs), else what was last applied. */
const liveValue = (step: PreviewStep, p: string): unknown =>
  valueAt(step.oldState?.outputs, p) ?? valueAt(step.oldState?.inputs, p);

/** Why a Deployment's pod template changes, or which fields change without a roll. */
export function deploymentChange(step: PreviewStep): { roll?: Roll; scale?: Scale } {
  const name = resourceOf(step).name;
  if (step.op !== "update") {
    const other = step.op === "replace" ? (step.replaceReasons ?? []).map((r) => `\`${r}\``) : [];
    return { roll: { name, op: step.op, images: [], config: false, other } };
  }
  const paths = changedProperties(step);
  const template = paths.filter((p) => p.startsWith("spec.template."));
  const rest = paths.filter((p) => !p.startsWith("spec.template.") && !p.startsWith("metadata."));
  const scale: Scale | undefined =
    rest.length > 0
      ? {
          name,
          changes: rest.map(
            (p) =>
              `${p} ${JSON.stringify(liveValue(step, p))} -> ${JSON.stringify(valueAt(step.newState?.inputs, p))}`,
          ),
        }
      : undefined;
  if (template.length === 0) return { scale };

  const before = images(step.oldState?.inputs);
  const after = images(step.newState?.inputs);
  const imageChanges = [
    ...new Set(after.map((img, i) => (img !== before[i] ? `${before[i]} -> ${img}` : "")).filter(Boolean)),
  ];
  const isImage = (p: string) =>
    /\.image$/.test(p) || (imageChanges.length > 0 && p.includes('"app.kubernetes.io/version"'));
  const isConfig = (p: string) =>
    p.includes(CONFIG_HASH_ANNOTATION) || /(secret\.secretName|secretKeyRef\.name|configMap\.name)$/.test(p);
  return {
    scale,
    roll: {
      name,
      op: step.op,
      images: imageChanges,
      config: template.some(isConfig),
      other: template
        .filter((p) => !isImage(p) && !isConfig(p))
        .map((p) => p.replace(/^spec\.template\./, "")),
    },
  };
}

export function migrationOf(preview: PreviewJson): Migration | undefined {
  const step = preview.steps.find(
    (s) =>
      ["create", "replace", "create-replacement"].includes(s.op) &&
      parseUrn(s.urn).type === "kubernetes:batch/v1:Job" &&
      /-migrate-/.test(String(valueAt(s.newState?.inputs, "metadata.name"))),
  );
  if (!step) return undefined;
  const old = valueAt(step.oldState?.inputs, "metadata.name");
  return {
    urn: step.urn,
    job: String(valueAt(step.newState?.inputs, "metadata.name")),
    replaces:
      typeof old === "string" && old !== valueAt(step.newState?.inputs, "metadata.name") ? old : undefined,
    reasons: (step.replaceReasons ?? []).filter((r) => r !== "metadata.name"),
  };
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
      from: String(inputs.from),
      to: inputs.to,
      floor: String(inputs.floor),
      migrations: String(inputs.migrations),
      heartbeatTtlSeconds: Number(inputs.heartbeatTtlSeconds),
      namespace: String(inputs.namespace),
      deployments,
      startupBudgetSeconds: startupBudgetSeconds(preview, deployments),
    };
  }
  return undefined;
}

export function upgradeOf(preview: PreviewJson, programErrors: string[]): Upgrade | undefined {
  const stw = stopTheWorldOf(preview);
  const plan = preview.diagnostics.find((d) => d.message.startsWith("Upgrade plan: "));
  const text = plan?.message.replace(/^Upgrade plan: /, "").trim() ?? "";
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

export function analyze(preview: PreviewJson): Analysis {
  const errors = preview.diagnostics.filter((d) => d.severity === "error");
  const programErrors = [
    ...new Set(
      errors
        .filter((d) => !d.urn && !/^error: (preview|update) failed\s*$/.test(d.message))
        .map((d) => d.message.replace(/^error: /, "").trim()),
    ),
  ];
  const { risks, updates } = dataRisks(preview);
  const rolls: Roll[] = [];
  const scales: Scale[] = [];
  const handled = new Set([...risks, ...updates].map((r) => r.urn));
  for (const step of preview.steps.filter(
    (s) => parseUrn(s.urn).type === "kubernetes:apps/v1:Deployment" && !NO_CHANGE_OPS.has(s.op),
  )) {
    const { roll, scale } = deploymentChange(step);
    if (roll) rolls.push(roll);
    if (scale) scales.push(scale);
    handled.add(step.urn);
  }
  const migration = migrationOf(preview);
  if (migration) handled.add(migration.urn);
  const otherChanges = preview.steps
    // Components (custom: false) only group their children: the children are what changes.
    .filter((s) => !NO_CHANGE_OPS.has(s.op) && !handled.has(s.urn) && state(s)?.custom !== false)
    .map((s) => {
      const r = resourceOf(s);
      return `${s.op} ${r.kind} ${r.name}`;
    });
  const dataUrns = new Set(risks.map((r) => r.urn));
  const resourceErrors = [...errorsByUrn(preview.diagnostics)]
    .filter(([urn]) => !dataUrns.has(urn))
    .map(([urn, reasons]) => ({
      ...resourceOf(preview.steps.find((s) => s.urn === urn) ?? { urn }),
      reasons,
    }));
  return {
    failed: errors.length > 0,
    resourceErrors,
    dataRisks: risks,
    dataUpdates: updates,
    rolls,
    scales,
    migration,
    upgrade: upgradeOf(preview, programErrors),
    programErrors,
    otherChanges,
    changeSummary: preview.changeSummary,
  };
}
