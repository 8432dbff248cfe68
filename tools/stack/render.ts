// One readable screen from a snapshot: what the operator says (conditions, updates, events), what the
// workspace pod does, and for each known failure the cause and the fix.
import { Diagnosis } from "./failures";
import { Condition, diagnosisSince, isHistory, StackSnapshot } from "./snapshot";

export function ago(iso: string | undefined, now: Date): string {
  if (!iso) return "";
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
  if (Number.isNaN(s)) return "";
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  if (s < 172800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

const clip = (text: string | undefined, n = 160) => {
  const one = (text ?? "").replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 3)}...` : one;
};

function conditionLine(c: Condition, now: Date): string {
  return `  ${c.type.padEnd(12)} ${c.status.padEnd(7)} ${(c.reason ?? "").padEnd(22)} ${clip(c.message, 90)}  ${ago(c.lastTransitionTime, now)}`.trimEnd();
}

export function render(s: StackSnapshot, diagnoses: Diagnosis[]): string {
  const { metadata, spec, status } = s.stack;
  const out: string[] = [];
  const source = spec.projectRepo
    ? `${spec.projectRepo}  ${spec.commit ? `commit ${spec.commit}` : `branch ${spec.branch ?? "?"}`}  dir ${spec.repoDir ?? "."}`
    : spec.programRef
      ? `Program ${spec.programRef.name}`
      : spec.fluxSource
        ? `Flux ${spec.fluxSource.sourceRef?.kind}/${spec.fluxSource.sourceRef?.name}`
        : "(no source)";
  out.push(
    `Stack ${metadata.namespace}/${metadata.name} -> pulumi stack ${spec.stack ?? "?"}${spec.preview ? "  (preview only)" : ""}`,
  );
  out.push(`  source      ${source}`);
  const request = metadata.annotations?.["pulumi.com/reconciliation-request"];
  out.push(
    `  generation  ${metadata.generation ?? "?"} (observed ${status?.observedGeneration ?? "never"})` +
      (request
        ? `  retry requested ${request} (observed ${status?.observedReconcileRequest ?? "not yet"})`
        : ""),
  );

  out.push("Conditions");
  const conditions = status?.conditions ?? [];
  if (conditions.length === 0) out.push("  (none: the operator has not reported on this Stack)");
  for (const c of conditions) out.push(conditionLine(c, s.now));

  const lu = status?.lastUpdate;
  if (lu) {
    out.push(
      `Last update  ${lu.state ?? "?"}  ${lu.type ?? ""} generation ${lu.generation ?? "?"}  ${lu.name ?? ""}  failures ${lu.failures ?? 0}  ${ago(lu.lastResyncTime, s.now)}`.replace(
        / +/g,
        " ",
      ),
    );
    if (lu.message) out.push(`  message     ${clip(lu.message, 300)}`);
    const commits = [
      lu.lastAttemptedCommit && `attempted ${lu.lastAttemptedCommit.slice(0, 12)}`,
      lu.lastSuccessfulCommit && `last successful ${lu.lastSuccessfulCommit.slice(0, 12)}`,
      lu.permalink && lu.permalink,
    ].filter(Boolean);
    if (commits.length) out.push(`  commits     ${commits.join("  ")}`);
  } else {
    out.push("Last update  none yet");
  }
  const cu = status?.currentUpdate;
  out.push(
    cu?.name
      ? `Current update  ${cu.name}  generation ${cu.generation ?? "?"}${cu.commit ? `  commit ${cu.commit.slice(0, 12)}` : ""}`
      : "Current update  none",
  );
  for (const u of s.updates) {
    if (u.message) out.push(`  update ${u.name}: ${clip(u.message, 200)}`);
  }

  const since = diagnosisSince(s);
  const history = s.events.some((e) => isHistory(s, e.last));
  out.push(
    `Events (newest last${history ? `; "history": before ${since} (last spec change or success), not part of the diagnosis` : ""})`,
  );
  if (s.events.length === 0) out.push("  (none: events expire after an hour)");
  for (const e of s.events.slice(-10)) {
    out.push(
      `  ${ago(e.last, s.now).padEnd(8)} ${(isHistory(s, e.last) ? "history" : e.type).padEnd(7)} ${e.reason.padEnd(28)} ${e.object}: ${clip(e.message, 100)}${e.count > 1 ? ` (x${e.count})` : ""}`,
    );
  }

  if (s.workspace) {
    const ready = s.workspace.conditions.find((c) => c.type === "Ready");
    out.push(
      `Workspace ${s.workspace.name}  Ready ${ready?.status ?? "?"}${ready?.reason ? ` (${ready.reason})` : ""}${ready?.message ? `: ${clip(ready.message, 100)}` : ""}`,
    );
  } else {
    out.push("Workspace  none");
  }
  for (const p of s.pods) {
    out.push(`  pod ${p.name}  ${p.phase}`);
    for (const c of p.containers) {
      out.push(
        `    ${(c.init ? "init " : "") + c.name}`.padEnd(18) +
          ` ${c.state}  restarts ${c.restartCount}${c.lastState ? `  last: ${c.lastState}` : ""}`,
      );
    }
  }
  if (s.secretRefs.length) {
    out.push("Secrets referenced");
    for (const r of s.secretRefs) out.push(`  ${r.use.padEnd(34)} ${r.secret}/${r.key}  ${r.found}`);
  }

  out.push("Diagnosis");
  const ready = conditions.find((c) => c.type === "Ready");
  if (diagnoses.length === 0) {
    out.push(
      ready?.status === "True"
        ? "  ok: Ready, nothing to fix"
        : "  no known failure matches; read the workspace log: kubectl logs -n " +
            `${metadata.namespace} ${s.pods[0]?.name ?? `${metadata.name}-workspace-0`} -c pulumi`,
    );
  }
  for (const d of diagnoses) {
    out.push(`  x ${d.failure.title}  [${d.failure.id}]`);
    out.push(`      seen:  ${clip(d.evidence, 200)}`);
    out.push(`      cause: ${d.failure.cause}`);
    out.push(`      fix:   ${d.failure.fix(s)}`);
  }
  return out.join("\n");
}
