// The plan summary as Markdown for a pull request: a machine-readable first line (an HTML comment, so it
// does not show), data at risk at the top, then upgrade, rolls, migration and the rest.
import { Analysis, DataRisk, NO_CHANGE_OPS, Roll, StopTheWorld } from "./analyze";
import { readUpgradeRefusal } from "../../components/contract";

/** The first line's marker; also how the CI step finds its own earlier comment to edit. */
export const MARKER = "pulp-plan-summary";

/** `key=value` facts for scripts: `<!-- pulp-plan-summary data-risk=2 refused=2 ... -->`. */
export function headerLine(a: Analysis): string {
  const facts = {
    preview: a.failed ? "failed" : "ok",
    "data-risk": a.dataRisks.length,
    refused: a.dataRisks.filter((r) => r.refusals.length > 0).length,
    rolls: a.rolls.filter((r) => r.op === "update").length,
    migration: a.migration ? "yes" : "no",
    upgrade: a.upgrade?.kind ?? "none",
    downtime: a.upgrade?.kind === "stop-the-world" ? "yes" : "no",
  };
  return `<!-- ${MARKER} ${Object.entries(facts)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ")} -->`;
}

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/** What the op does to the object and its data; `retainOnDelete` leaves the old object in the cluster. */
function riskWhat(r: DataRisk): string {
  if (r.op === "update") return `would be changed in place (${r.fields.map(code).join(", ")})`;
  if (r.op === "replace" && r.retained)
    return "would be **replaced** by a new, empty one (`retainOnDelete`: the old one and its data stay in the cluster, unmanaged; the install moves to the empty one)";
  if (r.op === "replace") return "would be **replaced**: deleted with its data, then created empty";
  if (r.op === "delete" && r.retained)
    return "would be **dropped** from the stack (`retainOnDelete`: it stays in the cluster with its data, unmanaged; the install stops using it)";
  if (r.op === "delete") return "would be **deleted** with its data";
  return `would be changed (${r.op})`;
}

function riskLine(r: DataRisk, failed: boolean): string {
  const why = r.reasons.length > 0 ? `; ${r.reasons.map(code).join(", ")} cannot change in place` : "";
  const name = r.oldName ? `${code(r.oldName)} -> ${code(r.name)}` : code(r.name);
  const unstopped = failed
    ? "**not protected**: only the other refusals in this preview stop it"
    : "**nothing stops this**: it happens on `pulumi up`";
  const status = (r.refusals.length > 0 ? r.refusals : [unstopped]).map((x) => `\n  - ${x}`).join("");
  return `- ${r.kind} ${name} ${riskWhat(r)}${why}. It holds ${r.holds}.${status}`;
}

function dataSection(a: Analysis): string[] {
  if (a.dataRisks.length === 0) return [];
  const refusedAll = a.dataRisks.every((r) => r.refusals.length > 0);
  return [
    "> [!CAUTION]",
    `> **Data at risk: ${a.dataRisks.length} data-holding resource(s) would be replaced, deleted or refused a change.** ${
      refusedAll
        ? "Each one was refused, so the preview failed and `pulumi up` of this change fails too; nothing is lost, but this change cannot be applied as it is."
        : a.failed
          ? "Some are refused, so the preview failed; the others are not protected and only those refusals stop them."
          : "Nothing stops them: merging this and running `pulumi up` loses data."
    }`,
    "",
    ...a.dataRisks.map((r) => riskLine(r, a.failed)),
    "",
  ];
}

/** Downtime in plain words: what stops, why, and about how long. */
export function downtimeText(s: StopTheWorld): string[] {
  const stopping =
    s.podsGoneTimeoutSeconds !== undefined
      ? `the old pods' shutdown (running tasks finish first; up to ${s.podsGoneTimeoutSeconds} s) + `
      : "the old pods' shutdown + ";
  const startup =
    s.startupBudgetSeconds !== undefined
      ? ` The startup probes give the new pods up to ${s.startupBudgetSeconds} s to become ready.`
      : "";
  const stopped = s.deployments.length > 0 ? s.deployments.map(code).join(", ") : "every Pulp Deployment";
  if (s.restoring) {
    return [
      `**Downtime.** Restoring backup ${code(s.restoring)} over the live install replaces its database and adds the ` +
        "backup's artifacts: nothing may write meanwhile.",
      "",
      `This update stops ${stopped} in ${code(s.namespace)}, waits until their pods are gone, restores, runs the ` +
        "migrations, then starts them again. Pulp serves no API, content or tasks meanwhile.",
      "",
      `Expected downtime: about ${stopping}the restore Job's run time + the migration Job's run time + the pods' start-up.${startup}`,
    ];
  }
  return [
    `**Downtime.** Upgrading pulpcore ${s.from} -> ${s.to} needs every old process stopped first: ` +
      `migrations ${s.migrations} need every process at ${s.floor} or later (older ones must stop, and their heartbeats expire).`,
    "",
    `This update stops ${stopped} in ` +
      `${code(s.namespace)}, waits until their pods are gone and ${s.heartbeatTtlSeconds} s more for the old heartbeats to expire, runs the migrations, then starts ${s.to}.`,
    "",
    `Expected downtime: about ${stopping}${s.heartbeatTtlSeconds} s (heartbeat TTL) + the migration Job's run time + the pods' start-up; ` +
      `never less than ${s.heartbeatTtlSeconds} s. Pulp serves no API, content or tasks meanwhile.${startup}`,
  ];
}

function upgradeSection(a: Analysis): string[] {
  const u = a.upgrade;
  if (!u) return [];
  const lines = ["### Upgrade", ""];
  if (u.stopTheWorld) {
    lines.push(...downtimeText(u.stopTheWorld));
    if (u.text) lines.push("", `The program's plan: ${u.text}`);
  } else if (u.kind === "refused") {
    lines.push("**Refused by the program.** Nothing was changed:", "", "```", u.text, "```");
  } else if (u.kind === "stop-the-world") lines.push(`**Downtime.** ${u.text}`);
  else if (u.kind === "rolling") lines.push(`Rolling, no downtime: ${u.text}.`);
  else lines.push(`${u.text}.`);
  return [...lines, ""];
}

function rollReason(r: Roll): string {
  const why = [
    ...r.images.map((i) => `image ${i}`),
    ...(r.config ? ["configuration changed (config-hash: settings.py, secrets or nginx.conf)"] : []),
    ...(r.other.length > 0 ? [`pod template: ${r.other.map(code).join(", ")}`] : []),
  ];
  return why.join("; ");
}

function rollSection(a: Analysis): string[] {
  // In a stop-the-world upgrade the old pods are gone before the new ones start: not a rolling update.
  const rollingTitle = a.upgrade?.stopTheWorld
    ? "New pods, started after the stop (the old ones are already gone):"
    : "New pods (a rolling update, one pod at a time, `maxUnavailable: 0`):";
  if (a.rolls.length === 0 && a.scales.length === 0) return [];
  const rolling = a.rolls.filter((r) => r.op === "update").map((r) => `- ${code(r.name)}: ${rollReason(r)}`);
  const recreated = a.rolls
    .filter((r) => r.op !== "update")
    .map((r) => `- ${code(r.name)}: ${r.op}${r.other.length > 0 ? ` (${r.other.join(", ")})` : ""}`);
  const scaled = a.scales
    .filter((s) => !a.rolls.some((r) => r.name === s.name))
    .map((s) => `- ${code(s.name)}: ${s.changes.map(code).join(", ")}`);
  return [
    "### Deployments",
    "",
    ...(rolling.length > 0 ? [rollingTitle, "", ...rolling, ""] : []),
    ...(recreated.length > 0
      ? [
          "Created, replaced or deleted as a whole (not a rolling update: the old pods go with the old object):",
          "",
          ...recreated,
          "",
        ]
      : []),
    ...(scaled.length > 0 ? ["Updated without new pods:", "", ...scaled, ""] : []),
  ];
}

function migrationSection(a: Analysis): string[] {
  if (!a.migration) return [];
  const m = a.migration;
  return [
    "### Migration",
    "",
    `A migration Job runs: ${code(m.job)}${m.replaces ? ` (replaces ${code(m.replaces)})` : ""}, before any Deployment changes${
      m.reasons.length > 0 ? `; it differs in ${m.reasons.map(code).join(", ")}` : ""
    }.`,
    "",
  ];
}

function headline(a: Analysis): string {
  if (a.dataRisks.length > 0) return "data-holding resources at risk";
  if (a.upgrade?.kind === "refused") return "upgrade refused";
  if (a.failed) return "preview failed";
  if (a.upgrade?.kind === "stop-the-world") return "upgrade with downtime";
  const changes = Object.entries(a.changeSummary).filter(([op, n]) => !NO_CHANGE_OPS.has(op) && n > 0);
  if (changes.length === 0) return "no changes";
  return changes.map(([op, n]) => `${n} to ${op}`).join(", ");
}

export function render(a: Analysis): string {
  const other = [
    ...a.dataUpdates.map((u) => `update ${u.kind} ${u.name} in place (${u.fields.join(", ")})`),
    ...a.otherChanges,
  ];
  // The refusal is quoted in the upgrade section already.
  const errors = a.programErrors.filter((e) => (readUpgradeRefusal(e) ?? e) !== a.upgrade?.text);
  return [
    headerLine(a),
    `## Pulp preview: ${headline(a)}`,
    "",
    ...dataSection(a),
    ...(errors.length > 0 ? ["**The preview failed:**", "", "```", ...errors, "```", ""] : []),
    ...(a.resourceErrors.length > 0
      ? [
          "**The preview failed on:**",
          "",
          ...a.resourceErrors.map((e) => `- ${e.kind} ${code(e.name)}: ${e.reasons.join("; ")}`),
          "",
        ]
      : []),
    ...upgradeSection(a),
    ...rollSection(a),
    ...migrationSection(a),
    ...(a.migration || a.failed || a.rolls.length === 0 ? [] : ["No migration Job runs.", ""]),
    ...(other.length > 0
      ? [
          "<details><summary>Other changes (" + other.length + ")</summary>",
          "",
          ...other.map((o) => `- ${o}`),
          "",
          "</details>",
          "",
        ]
      : []),
  ].join("\n");
}
