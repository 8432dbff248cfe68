// Unit: the load run's timeline (testbed/real/timelineSvg.ts) drawn from a fixture: a minute of requests with
// a failed stretch while one api pod went and another came. The SVG is parsed by Python's XML parser, and
// what it draws is counted: one answered bar per second with answers, a failed bar for each second with
// failures, the phases, and each pod change in its pod's lane.
import { execFileSync } from "child_process";
import { LoadRecord } from "../../../../testbed/real/loadReport";
import { PodEvent } from "../../../../testbed/real/podTimeline";
import { perSecond, timelineSvg } from "../../../../testbed/real/timelineSvg";

const T0 = Date.parse("2026-11-26T06:00:00Z");
const at = (s: number) => T0 + s * 1000;

// Two status requests a second for 60 s; seconds 30-34 fail (the api had no ready pod), a task runs long;
// in seconds 36-37 a download is answered from pulp-web's cache.
const records: LoadRecord[] = [
  ...Array.from({ length: 120 }, (_, i): LoadRecord => {
    const second = Math.floor(i / 2);
    const failed = second >= 30 && second < 35;
    return {
      t: at(second) + (i % 2) * 400,
      kind: "status",
      ms: failed ? 3 : 40,
      ok: !failed,
      ...(failed ? { error: "502" } : {}),
    };
  }),
  { t: at(10), kind: "task", ms: 20_000, ok: true },
  { t: at(36) + 100, kind: "content", ms: 5, ok: true, cached: true },
  { t: at(37) + 100, kind: "content", ms: 5, ok: true, cached: true },
];
const events: PodEvent[] = [
  {
    t: at(25),
    line: "MODIFIED pulp-api-aaaa-11111 Running ready=True deleting=2026-11-26T06:00:25Z ip=10.0.0.5",
  },
  {
    t: at(29),
    line: "DELETED pulp-api-aaaa-11111 Running ready=False deleting=2026-11-26T06:00:25Z ip=10.0.0.5",
  },
  { t: at(26), line: "ADDED pulp-api-bbbb-22222 Pending ready= deleting= ip=" },
  { t: at(35), line: "MODIFIED pulp-api-bbbb-22222 Running ready=True deleting= ip=10.0.0.9" },
  // Outside the run: not drawn.
  { t: at(-100), line: "ADDED pulp-old-cccc-33333 Running ready=True deleting= ip=10.0.0.2" },
];
const phases: Record<string, [number, number]> = {
  before: [at(0), at(20)],
  during: [at(20), at(40)],
  after: [at(40), at(60)],
};

/** The SVG's elements by class, and its text, as Python's XML parser reads them (it fails on bad XML). */
function parsed(svg: string): { classes: Record<string, number>; text: string; lanes: string[] } {
  const py = `
import sys, json, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read())
ns = "{http://www.w3.org/2000/svg}"
classes = {}
for e in root.iter():
    c = e.get("class")
    if c: classes[c] = classes.get(c, 0) + 1
text = " ".join(t.strip() for t in root.itertext() if t.strip())
lanes = [t.text for t in root.iter(ns + "text") if t.get("class") == "lane"]
print(json.dumps({"classes": classes, "text": text, "lanes": lanes}))
`;
  return JSON.parse(execFileSync("python3", ["-c", py], { input: svg, encoding: "utf8" }));
}

test("requests are counted per second, task records aside", () => {
  const bins = perSecond(records, T0, 60);
  expect(bins[0]).toEqual({ ok: 2, cached: 0, failed: 0 });
  expect(bins[30]).toEqual({ ok: 0, cached: 0, failed: 2 });
  expect(bins[10]).toEqual({ ok: 2, cached: 0, failed: 0 }); // the task record is not a request
  expect(bins[36]).toEqual({ ok: 2, cached: 1, failed: 0 });
  expect(bins.reduce((n, b) => n + b.ok + b.cached + b.failed, 0)).toBe(122);
});

test("the timeline draws each second's answers and failures, the phases and each pod's changes", () => {
  const svg = timelineSvg({ title: "rolling <3.121.3 -> 3.123.1>", records, phases, events });
  const { classes, text, lanes } = parsed(svg);
  expect(classes).toEqual({ phase: 3, ok: 55, cached: 2, failed: 5, lane: 2, "pod-event": 4 });
  expect(lanes).toEqual(["pulp-api-aaaa-11111", "pulp-api-bbbb-22222"]);
  expect(text).toContain("rolling <3.121.3 -> 3.123.1>"); // escaped in the file, read back as written
  expect(text).toContain("during (20 s)");
  expect(text).toContain("30 s: 2 failed");
  expect(text).toContain("36 s: 1 cached");
  expect(text).toContain("pulp-api-aaaa-11111 stopping at 25.0 s");
  expect(text).toContain("pulp-api-bbbb-22222 ready at 35.0 s");
  expect(text).toContain("(peak 3)"); // second 36: two answers and one from the cache, stacked
});

test("a run without failures draws no failed bar", () => {
  const healthy = records.map((r) => ({ ...r, ok: true }));
  expect(parsed(timelineSvg({ title: "ok", records: healthy, phases, events: [] })).classes).toEqual({
    phase: 3,
    ok: 60,
    cached: 2,
  });
});
