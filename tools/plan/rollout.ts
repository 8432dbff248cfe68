// Which Deployments get new pods and why, which only scale, and whether a migration Job runs.
import { parseUrn, PreviewJson, PreviewStep, valueAt } from "./previewJson";
import { changedProperties, resourceOf } from "./resources";

import { CONFIG_HASH_ANNOTATION, TYPES } from "../../components/contract";
export { CONFIG_HASH_ANNOTATION };

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
      // The Job of the MigrationJob component: its type is in the URN's parent chain.
      s.urn.includes(`$${TYPES.migrationJob}$`),
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
