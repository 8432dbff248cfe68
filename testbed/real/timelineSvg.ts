// A load run drawn as one SVG: requests per second (answered by Pulp, by pulp-web's content cache, failed) over time, the phases shaded, and the
// pods' changes marked below, so a gap or a burst of failures is seen beside the pod that caused it. Pure:
// records, phase bounds and pod events in, the SVG's text out (underLoad writes it next to the figures).
import type { LoadRecord } from "./loadReport";
import type { PodEvent } from "./podTimeline";

export interface TimelineInput {
  title: string;
  records: LoadRecord[];
  phases: Record<string, [number, number]>;
  events: PodEvent[];
}

const WIDTH = 960;
const LEFT = 170; // room for the pods' names
const RIGHT = 16;
const TOP = 36;
const CHART = 180;
const LANE = 14;
const OK = "#3a7d44";
const FAILED = "#c0392b";
const CACHED = "#2e6da4";
const PHASE_FILL = ["#f4f6f8", "#fdf2e3", "#eef5fb"];

const escape = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * Counts per whole second since `start`: requests answered by Pulp, answered by pulp-web from its content
 * cache, and failed (task records are not requests).
 */
export function perSecond(
  records: LoadRecord[],
  start: number,
  seconds: number,
): { ok: number; cached: number; failed: number }[] {
  const bins = Array.from({ length: seconds }, () => ({ ok: 0, cached: 0, failed: 0 }));
  for (const r of records) {
    if (r.kind === "task") continue;
    const i = Math.floor((r.t - start) / 1000);
    if (i < 0 || i >= seconds) continue;
    if (!r.ok) bins[i].failed++;
    else if (r.cached) bins[i].cached++;
    else bins[i].ok++;
  }
  return bins;
}

/** The pod a watch line is about and what happened to it, in a few characters: `+`, `-`, `ready`, `unready`. */
function podChange(line: string): { pod: string; mark: string } | undefined {
  const [type, pod] = line.split(" ");
  if (!pod) return undefined;
  if (type === "ADDED") return { pod, mark: "+" };
  if (type === "DELETED") return { pod, mark: "-" };
  if (/deleting=\S/.test(line)) return { pod, mark: "stopping" };
  if (/ready=True/.test(line)) return { pod, mark: "ready" };
  if (/ready=False/.test(line)) return { pod, mark: "unready" };
  return undefined;
}

export function timelineSvg(input: TimelineInput): string {
  const bounds = Object.values(input.phases);
  const start = Math.min(...bounds.map(([s]) => s));
  const end = Math.max(...bounds.map(([, e]) => e));
  const seconds = Math.max(1, Math.ceil((end - start) / 1000));
  const bins = perSecond(input.records, start, seconds);
  const peak = Math.max(1, ...bins.map((b) => b.ok + b.cached + b.failed));
  const x = (t: number) => LEFT + ((t - start) / (end - start || 1)) * (WIDTH - LEFT - RIGHT);
  const barWidth = (WIDTH - LEFT - RIGHT) / seconds;
  // 20 % headroom above the highest bar for the phase names.
  const y = (count: number) => TOP + CHART - (count / (peak * 1.2)) * CHART;

  // One lane per pod, in the order the pods first appear.
  const changes = input.events
    .map((e) => ({ t: e.t, change: podChange(e.line) }))
    .filter(
      (e): e is { t: number; change: { pod: string; mark: string } } =>
        !!e.change && e.t >= start && e.t <= end,
    );
  const lanes = [...new Set(changes.map((c) => c.change.pod))];
  const height = TOP + CHART + 36 + lanes.length * LANE + 12;

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<title>${escape(input.title)}</title>`,
    `<text x="${LEFT}" y="16" font-size="13" font-weight="bold">${escape(input.title)}</text>`,
    `<text x="${WIDTH - RIGHT}" y="16" text-anchor="end"><tspan fill="${OK}">answered</tspan> / <tspan fill="${CACHED}">from pulp-web's cache</tspan> / <tspan fill="${FAILED}">failed</tspan> requests per second (peak ${peak})</text>`,
  ];
  Object.entries(input.phases).forEach(([, [s, e]], i) => {
    out.push(
      `<rect class="phase" x="${x(s).toFixed(1)}" y="${TOP}" width="${(x(e) - x(s)).toFixed(1)}" height="${CHART}" fill="${PHASE_FILL[i % PHASE_FILL.length]}"/>`,
    );
  });
  bins.forEach((b, i) => {
    const left = (LEFT + i * barWidth).toFixed(1);
    const w = Math.max(0.5, barWidth - 0.5).toFixed(1);
    if (b.ok > 0)
      out.push(
        `<rect class="ok" x="${left}" y="${y(b.ok).toFixed(1)}" width="${w}" height="${(TOP + CHART - y(b.ok)).toFixed(1)}" fill="${OK}"/>`,
      );
    // Stacked: Pulp's answers, then the cache's, then the failures.
    let below = b.ok;
    for (const [kind, count, fill] of [
      ["cached", b.cached, CACHED],
      ["failed", b.failed, FAILED],
    ] as const) {
      if (count === 0) continue;
      const top = y(below + count);
      out.push(
        `<rect class="${kind}" x="${left}" y="${top.toFixed(1)}" width="${w}" height="${(y(below) - top).toFixed(1)}" fill="${fill}"><title>${i} s: ${count} ${kind}</title></rect>`,
      );
      below += count;
    }
  });
  // Phase names and bounds over the bars, in the headroom the scale leaves.
  Object.entries(input.phases).forEach(([name, [s, e]]) => {
    out.push(
      `<line x1="${x(s).toFixed(1)}" y1="${TOP}" x2="${x(s).toFixed(1)}" y2="${TOP + CHART}" stroke="#555" stroke-dasharray="3,3"/>`,
      `<text x="${(x(s) + 4).toFixed(1)}" y="${TOP + 12}" fill="#333">${escape(name)} (${Math.round((e - s) / 1000)} s)</text>`,
    );
  });
  // The time axis: a tick every 10 s (every 60 s for runs over 10 minutes).
  const step = seconds > 600 ? 60 : 10;
  out.push(
    `<line x1="${LEFT}" y1="${TOP + CHART}" x2="${WIDTH - RIGHT}" y2="${TOP + CHART}" stroke="#333"/>`,
  );
  for (let s = 0; s <= seconds; s += step) {
    const at = x(start + s * 1000).toFixed(1);
    out.push(
      `<line x1="${at}" y1="${TOP + CHART}" x2="${at}" y2="${TOP + CHART + 4}" stroke="#333"/>`,
      `<text x="${at}" y="${TOP + CHART + 15}" text-anchor="middle">${s} s</text>`,
    );
  }
  if (lanes.length > 0)
    out.push(
      `<text x="${WIDTH - RIGHT}" y="${TOP + CHART + 28}" text-anchor="end" font-size="9" fill="#555">pods: <tspan fill="${OK}">added or ready</tspan>, <tspan fill="#d68910">not ready</tspan>, <tspan fill="${FAILED}">stopping or gone</tspan></text>`,
    );
  lanes.forEach((pod, i) => {
    const laneY = TOP + CHART + 36 + i * LANE;
    out.push(
      `<text class="lane" x="${LEFT - 4}" y="${laneY + 9}" text-anchor="end" font-size="9">${escape(pod)}</text>`,
    );
    for (const c of changes.filter((e) => e.change.pod === pod)) {
      const color =
        c.change.mark === "ready" || c.change.mark === "+"
          ? OK
          : c.change.mark === "unready"
            ? "#d68910"
            : FAILED;
      out.push(
        `<circle class="pod-event" cx="${x(c.t).toFixed(1)}" cy="${laneY + 5}" r="3" fill="${color}"><title>${escape(`${pod} ${c.change.mark} at ${((c.t - start) / 1000).toFixed(1)} s`)}</title></circle>`,
      );
    }
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
