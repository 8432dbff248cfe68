// What a preview means for a Pulp install, as plain facts: data at risk, what rolls and why, whether a
// migration runs, and the upgrade plan. Pure: the Markdown is in render.ts.
import { DataRisk, dataRisks, DataUpdate } from "./dataRisk";
import { parseUrn, PreviewJson } from "./previewJson";
import { errorsByUrn, NO_CHANGE_OPS, Resource, resourceOf, state } from "./resources";
import { deploymentChange, Migration, migrationOf, Roll, Scale } from "./rollout";
import { Upgrade, upgradeOf } from "./upgrade";

export type { DataRisk } from "./dataRisk";
export type { Migration, Roll, Scale } from "./rollout";
export type { StopTheWorld, Upgrade } from "./upgrade";
export { NO_CHANGE_OPS } from "./resources";
export { dataHeld } from "./dataRisk";

export interface Analysis {
  failed: boolean;
  dataRisks: DataRisk[];
  /** Data-holding objects changed in place (labels, sizes) without removal. */
  dataUpdates: DataUpdate[];
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
  // By name: the engine's step order varies from run to run, the report should not.
  rolls.sort((x, y) => x.name.localeCompare(y.name));
  scales.sort((x, y) => x.name.localeCompare(y.name));
  const migration = migrationOf(preview);
  if (migration) handled.add(migration.urn);
  const upgrade = upgradeOf(preview, programErrors);
  if (upgrade?.stopTheWorld) handled.add(upgrade.stopTheWorld.urn);
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
    upgrade,
    programErrors,
    otherChanges,
    changeSummary: preview.changeSummary,
  };
}
