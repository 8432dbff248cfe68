// An OTLP/HTTP metrics receiver on the real node's bridge address (testbed/otlp/receiver.py), standing in
// for the OpenTelemetry Collector a user runs: every data point Pulp exports, decoded, as a JSON line.
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { NODE_ADDRESS as HOST, REPO } from "../local/environment";
import { freePort, listening } from "./hostServer";

export interface MetricPoint {
  /** The exporting process's service.name (pulp-api, pulp-content, pulp-worker). */
  service: string;
  metric: string;
  kind: string;
  attributes: Record<string, unknown>;
  value: unknown;
}

export interface MetricsReceiver {
  /** http://<bridge address>:<port>: pulp:metrics.otlpEndpoint */
  endpoint: string;
  /** Every point received so far. */
  points(): MetricPoint[];
  stop(): void;
}

export async function startMetricsReceiver(): Promise<MetricsReceiver> {
  const bin = execFileSync("bash", [path.join(REPO, "testbed/otlp/install.sh")], { encoding: "utf8" }).trim();
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-otlp-")), "points.jsonl");
  const port = await freePort();
  const child = spawn(
    path.join(bin, "python3"),
    [path.join(REPO, "testbed/otlp/receiver.py"), HOST, String(port), out],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr!.on("data", (c) => (log = (log + c).slice(-4000)));
  await listening("the OTLP receiver", port, child, () => log);
  return {
    endpoint: `http://${HOST}:${port}`,
    points: () =>
      (fs.existsSync(out) ? fs.readFileSync(out, "utf8") : "")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as MetricPoint),
    stop: () => void child.kill(),
  };
}
