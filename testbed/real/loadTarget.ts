// What the upgrade tests need around the load generator: content to serve (a file repository, an upload,
// a publication and a distribution, made with pulp-cli) and a run of load around one step, reported by phase.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { distributeFile, get, sha256 } from "./clients";
import { LoadTarget, startLoad } from "./load";
import { LoadRecord, loadReport, PhaseReport, reportLines } from "./loadReport";
import { failuresInContext, PodEvent, watchPods } from "./podTimeline";
import { timelineSvg } from "./timelineSvg";

/** Makes the file the load downloads and the repository it uploads into; checks the download once. */
export async function prepareLoadTarget(
  baseUrl: string,
  password: string,
  namespace?: string,
): Promise<LoadTarget> {
  const pulp = { baseUrl, password, namespace };
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "load-")), "served.bin");
  const data = Buffer.concat([Buffer.from("served through the upgrade\n"), Buffer.alloc(128 * 1024, 5)]);
  fs.writeFileSync(file, data);
  const { repositoryHref, contentPath } = distributeFile(pulp, "load", file, "served.bin");
  const target = { baseUrl, password, contentPath, contentSha256: sha256(data), repositoryHref };
  const served = await get(`${baseUrl}${target.contentPath}`);
  if (sha256(served.body) !== target.contentSha256)
    throw new Error(`${target.contentPath} does not serve what was uploaded`);
  return target;
}

export interface LoadRun<T> {
  result: Awaited<T>;
  records: LoadRecord[];
  report: Record<"before" | "during" | "after", PhaseReport>;
  /** When `step` started and ended (ms since the epoch). */
  during: [number, number];
}

/**
 * Load for `settleMs` (30 s), then `step` (a blocking `pulumi up`, or a fault staged and waited out), then
 * `settleMs` more. Writes the records, the report
 * and the pods of `namespace` as they changed to `<dir>/<name>.jsonl`, `<name>-report.json` and
 * `<name>-pods.txt`, and draws them in `<name>-timeline.svg`; prints the report's lines, and each failed request beside the pod changes around it.
 */
export async function underLoad<T>(
  target: LoadTarget,
  dir: string,
  name: string,
  namespace: string,
  step: () => T,
  settleMs = 30_000,
): Promise<LoadRun<T>> {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const pods = watchPods(namespace, path.join(dir, `${name}-pods.txt`));
  const load = startLoad(target, path.join(dir, `${name}.jsonl`));
  const t0 = Date.now();
  let t1: number, t2: number, result: Awaited<T>, records: LoadRecord[], podEvents: PodEvent[];
  try {
    await sleep(settleMs);
    t1 = Date.now();
    result = await step();
    t2 = Date.now();
    await sleep(settleMs);
  } finally {
    // Also when the step fails: a load left running would write into the next run's records.
    records = await load.stop();
    podEvents = pods.stop();
  }
  const phases: Record<string, [number, number]> = {
    before: [t0, t1],
    during: [t1, t2],
    after: [t2, Date.now()],
  };
  const report = loadReport(records, phases) as LoadRun<T>["report"];
  const at = (t: number) => new Date(t).toISOString().slice(11, 23);
  process.stdout.write(`${name}: the step ran from ${at(t1)} to ${at(t2)}\n`);
  process.stdout.write(`${reportLines(`${name}_`, report).join("\n")}\n`);
  const failures = failuresInContext(
    Object.values(report).flatMap((phase) => phase.failures), // the first few of each phase
    podEvents,
  );
  if (failures.length > 0)
    process.stdout.write(
      `${name}: failed requests, with the pods of ${namespace} around them\n${failures.join("\n")}\n`,
    );
  fs.writeFileSync(path.join(dir, `${name}-report.json`), JSON.stringify(report, null, 2));
  const timeline = path.join(dir, `${name}-timeline.svg`);
  fs.writeFileSync(
    timeline,
    timelineSvg({
      title: `${name}: requests through pulp-web while the step ran`,
      records,
      phases,
      events: podEvents,
    }),
  );
  process.stdout.write(`${name}: timeline drawn in ${timeline}\n`);
  return { result, records, report, during: [t1, t2] };
}
