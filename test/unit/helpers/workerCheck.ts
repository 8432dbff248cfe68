// The worker check's probe command, run as the kubelet runs it with python3 standing in for Pulp's
// interpreter and a given django.db: shared by the unit test (a stand-in database) and the e2e test that
// runs its SQL on a real PostgreSQL (test/e2e/workerCheckDatabase.test.ts).
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pulpProbes, PulpRuntime } from "../../../components/workload/pulpProcess";
import { NO_PROBE_TUNING, pulpRuntime } from "./runtime";

const runtime = (workerType: PulpRuntime["workerType"]) => pulpRuntime({ workerType });
const noTuning = NO_PROBE_TUNING;
export const probeCommand = (workerType: PulpRuntime["workerType"]) =>
  (pulpProbes("worker", runtime(workerType), noTuning).readinessProbe as { exec: { command: string[] } }).exec
    .command;

/**
 * Runs the probe's command line as the kubelet would, with python3 for Pulp's interpreter and an installed
 * pulpcore of `pulpcoreVersion` as importlib.metadata sees one (a dist-info directory, no code).
 */
export function runCheck(
  workerType: PulpRuntime["workerType"],
  env: Record<string, string>,
  djangoDb: string,
  pulpcoreVersion = "3.123.1",
) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "worker-check-"));
  fs.mkdirSync(path.join(dir, "django"));
  fs.writeFileSync(path.join(dir, "django", "__init__.py"), "");
  fs.writeFileSync(path.join(dir, "django", "db.py"), djangoDb);
  const distInfo = path.join(dir, `pulpcore-${pulpcoreVersion}.dist-info`);
  fs.mkdirSync(distInfo);
  fs.writeFileSync(
    path.join(distInfo, "METADATA"),
    `Metadata-Version: 2.1\nName: pulpcore\nVersion: ${pulpcoreVersion}\n`,
  );
  const [, , script, ...args] = probeCommand(workerType);
  // The interpreter line reads pulpcore-manager's shebang; here python3 stands in for it.
  const r = spawnSync("sh", ["-c", script.replace(/^py=.*$/m, "py=python3"), ...args], {
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: dir, ...env },
  });
  fs.rmSync(dir, { recursive: true, force: true });
  if (r.error) throw r.error;
  return { code: r.status, sql: r.stdout.split("\n").filter((l) => l.startsWith("SQL:")), out: r.stdout };
}
