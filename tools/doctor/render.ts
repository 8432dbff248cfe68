// The doctor's report: one line per finding, problems first, each with what to run; or JSON for scripts.
import { Finding } from "./checks";
import { Snapshot } from "./snapshot";

export function render(s: Snapshot, findings: Finding[]): string {
  const lines = [`Pulp ${s.instance} in namespace ${s.namespace} (${s.at})`];
  if (s.status.ok) {
    const st = s.status.body;
    const core = st.versions.find((v) => v.component === "core")?.version ?? "?";
    lines.push(
      `  pulpcore ${core}; database ${st.database_connection.connected ? "connected" : "NOT connected"}` +
        (st.redis_connection
          ? `; redis ${st.redis_connection.connected ? "connected" : "NOT connected"}`
          : "") +
        `; online: ${st.online_api_apps?.length ?? "?"} api, ${st.online_content_apps.length} content, ` +
        `${st.online_workers.length} workers`,
    );
  }
  lines.push(
    s.tasks.ok
      ? `  tasks: ${s.tasks.queue.waiting} waiting, ${s.tasks.queue.running} running, ${s.tasks.queue.failedLastHour} failed in the last hour`
      : `  tasks: not read (${s.tasks.error})`,
  );
  const ready = s.deployments.map((d) => `${d.name} ${d.available}/${d.desired}`).join(", ");
  if (ready) lines.push(`  available: ${ready}`);
  if (s.database)
    lines.push(
      `  database cluster ${s.database.name}: ${s.database.phase} (${s.database.readyInstances}/${s.database.instances} ready)`,
    );
  if (s.pooler)
    lines.push(`  database pooler ${s.pooler.name}: ${s.pooler.readyInstances}/${s.pooler.instances} ready`);
  if (findings.length === 0) {
    lines.push("", "No problems found.");
    return lines.join("\n");
  }
  const ordered = [...findings].sort((a, b) =>
    a.severity === b.severity ? 0 : a.severity === "problem" ? -1 : 1,
  );
  lines.push("");
  for (const f of ordered) {
    lines.push(
      `${f.severity === "problem" ? "PROBLEM" : "warning"} ${f.subject}: ${f.what}`,
      `    -> ${f.fix}`,
    );
  }
  const problems = findings.filter((f) => f.severity === "problem").length;
  lines.push("", `${problems} problem(s), ${findings.length - problems} warning(s).`);
  return lines.join("\n");
}

export function renderJson(s: Snapshot, findings: Finding[]): string {
  return JSON.stringify(
    { instance: s.instance, namespace: s.namespace, at: s.at, findings, snapshot: s },
    null,
    2,
  );
}
