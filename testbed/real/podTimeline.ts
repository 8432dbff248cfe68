// What a namespace's pods did while load ran, so a failed request can be read beside the pod changes around
// it (which pod was starting, going or not ready). A `kubectl get --watch` in a process group of its own
// (the caller blocks in `pulumi up`), each line stamped with the time it was seen.
import { spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { KUBECONFIG, toolchainBin } from "../local/environment";
import type { LoadRecord } from "./loadReport";

export interface PodEvent {
  /** When the watch saw it, ms since the epoch. */
  t: number;
  /** The watch event, the pod, and what of it decides routing: phase, Ready, deleting, IP. */
  line: string;
}

const FIELDS =
  '{.type} {.object.metadata.name} {.object.status.phase} ready={.object.status.conditions[?(@.type=="Ready")].status}' +
  ' deleting={.object.metadata.deletionTimestamp} ip={.object.status.podIP}{"\\n"}';

/** Starts watching; stop() ends the watch and returns what it saw. */
export function watchPods(namespace: string, file: string): { stop: () => PodEvent[] } {
  const kubectl = [path.join(toolchainBin(), "kubectl"), "--kubeconfig", KUBECONFIG];
  const watch = [...kubectl, "get", "pods", "-n", namespace, "--watch", "--output-watch-events"];
  const script = `${watch.map((a) => `'${a}'`).join(" ")} -o 'jsonpath=${FIELDS}' | while IFS= read -r l; do printf '%s %s\\n' "$(date +%s%3N)" "$l"; done`;
  const out = fs.openSync(file, "w");
  const child = spawn("bash", ["-c", script], { stdio: ["ignore", out, out], detached: true });
  return {
    stop: () => {
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        // already gone: what it wrote is still read
      }
      fs.closeSync(out);
      return fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => /^\d+ /.test(l))
        .map((l) => ({ t: Number(l.slice(0, l.indexOf(" "))), line: l.slice(l.indexOf(" ") + 1) }));
    },
  };
}

/** Each failed request with the pod events from 15 s before it started to 5 s after it ended. */
export function failuresInContext(failures: LoadRecord[], events: PodEvent[]): string[] {
  const at = (t: number) => new Date(t).toISOString().slice(11, 23);
  return failures.flatMap((f) => [
    `${at(f.t)} ${f.kind} failed after ${f.ms} ms: ${f.error}`,
    ...events
      .filter((e) => e.t >= f.t - 15_000 && e.t <= f.t + f.ms + 5_000)
      .map((e) => `  ${at(e.t)} ${e.line}`),
  ]);
}
