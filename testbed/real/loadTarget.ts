// What the upgrade tests need around the load generator: content to serve (a file repository, an upload,
// a publication and a distribution, made with pulp-cli) and a run of load around one step, reported by phase.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { distributeFile, get, sha256 } from "./clients";
import { LoadTarget, startLoad } from "./load";
import { LoadRecord, loadReport, PhaseReport, reportLines } from "./loadReport";

/** Makes the file the load downloads and the repository it uploads into; checks the download once. */
export async function prepareLoadTarget(baseUrl: string, password: string): Promise<LoadTarget> {
  const pulp = { baseUrl, password };
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
  result: T;
  records: LoadRecord[];
  report: Record<"before" | "during" | "after", PhaseReport>;
  /** When `step` started and ended (ms since the epoch). */
  during: [number, number];
}

/**
 * Load for `settleMs`, then `step` (a blocking `pulumi up`, say), then `settleMs` more. Writes the records
 * and the report to `<dir>/<name>.jsonl` and `<name>-report.json`, and prints the report's lines.
 */
export async function underLoad<T>(
  target: LoadTarget,
  dir: string,
  name: string,
  step: () => T,
  settleMs = 30_000,
): Promise<LoadRun<T>> {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const load = startLoad(target, path.join(dir, `${name}.jsonl`));
  const t0 = Date.now();
  await sleep(settleMs);
  const t1 = Date.now();
  const result = step();
  const t2 = Date.now();
  await sleep(settleMs);
  const records = await load.stop();
  const report = loadReport(records, {
    before: [t0, t1],
    during: [t1, t2],
    after: [t2, Date.now()],
  }) as LoadRun<T>["report"];
  process.stdout.write(`${reportLines(`${name}_`, report).join("\n")}\n`);
  fs.writeFileSync(path.join(dir, `${name}-report.json`), JSON.stringify(report, null, 2));
  return { result, records, report, during: [t1, t2] };
}
