// Talking to the embedded cluster and the real CLI, for end-to-end tests and benchmarks: what they
// check is what the API server holds, never what the program meant to do.
import { ChildProcess, execFileSync, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as yaml from "js-yaml";
import * as path from "path";
import { KUBECONFIG, REPO, stackLocks, toolchainBin } from "./local/environment";

const BIN = toolchainBin();

/** The kwok scenarios' base stack config (simulated nodes, stand-in CloudNativePG); the dev stack is real. */
export const KWOK_STACK_FILE = path.join(REPO, "test/e2e/kwok.stack.yaml");

export function kubectl(args: string[], input?: string): string {
  return execFileSync(path.join(BIN, "kubectl"), ["--kubeconfig", KUBECONFIG, ...args], {
    encoding: "utf8",
    input,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/**
 * Starts a long-running kubectl (a port-forward, an interactive exec) and resolves once it has printed
 * `ready`; fails with what it printed when it exits first or takes over 30 s. `input` goes to its stdin.
 */
export async function kubectlUntil(args: string[], ready: RegExp, input?: string): Promise<ChildProcess> {
  const child = spawn(path.join(toolchainBin(), "kubectl"), ["--kubeconfig", KUBECONFIG, ...args], {
    stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  if (input !== undefined) child.stdin!.write(input);
  const deadline = Date.now() + 30_000;
  while (!ready.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      throw new Error(`kubectl ${args.join(" ")} failed: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return child;
}

/** `kubectl apply` that may be refused: returns the API server's answer instead of throwing. */
export function kubectlTry(args: string[], input?: string): { ok: boolean; output: string } {
  const r = spawnSync(path.join(BIN, "kubectl"), ["--kubeconfig", KUBECONFIG, ...args], {
    encoding: "utf8",
    input,
  });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}

export interface ShippedToolRun {
  /** The exit code; null when it was killed (see `error`). */
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
  /** Why it did not exit by itself: a timeout or a failure to start, in words. */
  error?: string;
}

/**
 * One of the shipped tools (tools/<name>/main.ts: stack, backup, doctor, convert) as a person runs it from
 * a checkout, with the bed's kubectl and `env`. Loaded as the programs are (program/typescript.js, whose
 * cache keeps repeated runs cheap: the kwok suite runs at nice 19 beside real Pulp, where a ts-node start
 * took minutes). A run past `timeoutMs` is killed and says so in `error`.
 */
export function shippedTool(
  name: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): ShippedToolRun {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 10 * 60 * 1000;
  const r = spawnSync(
    process.execPath,
    [
      "--require",
      path.join(REPO, "program/typescript.js"),
      path.join(REPO, "tools", name, "main.ts"),
      ...args,
    ],
    {
      cwd: REPO,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: {
        ...process.env,
        KUBECONFIG,
        PULP_KUBECTL: path.join(BIN, "kubectl"),
        PATH: `${BIN}:${process.env.PATH}`,
        ...options.env,
      },
      timeout: timeoutMs,
    },
  );
  const seconds = (Date.now() - started) / 1000;
  const error = r.error
    ? `${name}: ${r.error.message}`
    : r.signal
      ? `${name} ${args.join(" ")}: killed by ${r.signal} after ${seconds.toFixed(0)} s (timeout ${timeoutMs / 1000} s)`
      : undefined;
  return {
    code: r.status,
    stdout: r.stdout ?? "",
    stderr: r.stderr ?? "",
    seconds,
    ...(error ? { error } : {}),
  };
}

/**
 * Polls `done` until it holds; fails after `seconds`, naming `what` and, when given, what `detail()`
 * says of the state at that moment.
 */
export async function waitUntil(
  what: string,
  seconds: number,
  done: () => boolean | Promise<boolean>,
  options: { intervalMs?: number; detail?: () => string } = {},
): Promise<void> {
  for (const deadline = Date.now() + seconds * 1000; !(await done());) {
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${seconds} s${options.detail ? `\n${options.detail()}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 1000));
  }
}

export function getJson<T = any>(args: string[]): T {
  return JSON.parse(kubectl(["get", ...args, "-o", "json"])) as T;
}

export function items(kind: string, namespace: string): any[] {
  return getJson<{ items: any[] }>([kind, "-n", namespace]).items;
}

/**
 * Waits until only the current pods of `deployment` are left. Pulumi's rollout is complete once the new
 * pods are ready; the old ones serve through their preStop sleep while the Service's endpoints converge.
 */
export async function oldPodsGone(namespace: string, deployment: string, seconds = 120): Promise<void> {
  const pods = () => items("pods", namespace).filter((p) => p.metadata.name.startsWith(`${deployment}-`));
  const templates = (ps: any[]) => new Set(ps.map((p) => p.metadata.labels?.["pod-template-hash"]));
  await waitUntil(
    `${deployment}: only the new pods`,
    seconds,
    () => {
      const ps = pods();
      return ps.every((p) => !p.metadata.deletionTimestamp) && templates(ps).size === 1;
    },
    {
      detail: () =>
        pods()
          .map((p) => `${p.metadata.name} ${p.metadata.deletionTimestamp ? "terminating" : p.status.phase}`)
          .join("\n"),
    },
  );
}

export interface PulumiRun {
  code: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** The command line that runs the real CLI on `stack` through testbed/local/pulumi.ts. */
export function pulumiCommand(stack: string, args: string[], programDir?: string): [string, string[]] {
  const dirArgs = programDir ? ["--program-dir", programDir] : [];
  const [node, ...loader] = programLoader(programDir);
  return [
    node,
    [
      ...loader,
      path.join(REPO, "testbed/local/pulumi.ts"),
      ...dirArgs,
      ...args,
      "--stack",
      stack,
      "--non-interactive",
    ],
  ];
}

/**
 * How Pulumi's Node.js runtime would load a program's TypeScript, from its Pulumi.yaml: the `nodeargs` it
 * names (the Pulp programs: sucrase's require hook), else ts-node, the runtime's default. The program runs
 * in testbed/local/pulumi.ts's process, so that process is started the same way.
 */
export function programLoader(programDir = "."): string[] {
  const dir = path.resolve(REPO, programDir); // relative to the repository, or a project outside it
  const project = yaml.load(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8")) as {
    runtime?: { options?: { typescript?: boolean; nodeargs?: string } };
  };
  const options = project.runtime?.options ?? {};
  if (options.typescript !== false) return [path.join(REPO, "node_modules/.bin/ts-node"), "-T"];
  // Relative paths in nodeargs are the program directory's (the runtime starts node there).
  const args = (options.nodeargs ?? "").split(/\s+/).filter(Boolean);
  return [process.execPath, ...args.map((a) => (/^\.\.?\//.test(a) ? path.resolve(dir, a) : a))];
}

/**
 * Runs the real CLI on `stack` (through testbed/local/pulumi.ts) and returns what it printed.
 * `programDir` (relative to the repository) runs another project, e.g. "stacks".
 */
export function pulumi(
  stack: string,
  args: string[],
  timeoutMs = 15 * 60 * 1000,
  programDir?: string,
  input?: string,
): PulumiRun {
  const started = Date.now();
  const [command, commandArgs] = pulumiCommand(stack, args, programDir);
  const r = spawnSync(command, commandArgs, {
    cwd: REPO,
    encoding: "utf8",
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, FORCE_COLOR: "0" },
    input,
  });
  const seconds = (Date.now() - started) / 1000;
  // A run killed at its timeout ends mid-progress, with no diagnostics of its own: say so where they would be.
  const killed = r.signal
    ? `\npulumi ${args[0]} killed by ${r.signal} after ${seconds.toFixed(0)} s (its timeout: ${timeoutMs / 1000} s)\n`
    : "";
  return { code: r.status ?? 1, stdout: r.stdout, stderr: `${r.stderr ?? ""}${killed}`, seconds };
}

export function mustPulumi(stack: string, args: string[], programDir?: string, input?: string): PulumiRun {
  const run = pulumi(stack, args, undefined, programDir, input);
  if (run.code !== 0) {
    throw new Error(
      `pulumi ${args.join(" ")} exited ${run.code}\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-4000)}`,
    );
  }
  return run;
}

/**
 * Sets stack secrets (`config set-all --secret key=value`: a value that starts with "-" stays a value).
 * A failure names the keys, not the values.
 */
export function setSecrets(stack: string, secrets: Record<string, string>): void {
  const args = Object.entries(secrets).flatMap(([key, value]) => ["--secret", `${key}=${value}`]);
  const run = pulumi(stack, ["config", "set-all", ...args]);
  if (run.code !== 0) {
    throw new Error(
      `pulumi config set-all --secret ${Object.keys(secrets).join(" ")} exited ${run.code}\n${run.stderr.slice(-4000)}`,
    );
  }
}

/** Writes Pulumi.<stack>.yaml from `base` (the kwok scenarios' config by default) with `changes` applied (raw keys, no prefix). */
export function writeStackConfig(
  stack: string,
  changes: Record<string, unknown>,
  base = KWOK_STACK_FILE,
): void {
  const dev = yaml.load(fs.readFileSync(base, "utf8")) as {
    config: Record<string, unknown>;
    encryptionsalt?: string;
  };
  const config = { ...dev.config };
  for (const [key, value] of Object.entries(changes)) config[`pulp:${key}`] = value;
  fs.writeFileSync(
    path.join(REPO, `Pulumi.${stack}.yaml`),
    yaml.dump({ config, ...(dev.encryptionsalt ? { encryptionsalt: dev.encryptionsalt } : {}) }),
  );
}

/** Each Deployment's revision: a rollout (a pod template change) makes a new one, a scale does not. */
export function revisions(namespace: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const d of items("deployments", namespace)) {
    result[d.metadata.name] = `rev-${d.metadata.annotations?.["deployment.kubernetes.io/revision"]}`;
  }
  return result;
}

/**
 * The Deployments whose rollout is not complete at this instant, as `kubectl rollout status` judges it:
 * the controller has not seen the latest spec, or a pod of an older template is left, or a new one is not
 * available. Empty once `up` has returned, if `up` waited for every rollout.
 */
export function unfinishedRollouts(namespace: string): string[] {
  return items("deployments", namespace).flatMap((d) => {
    const want = d.spec.replicas ?? 1;
    const s = d.status ?? {};
    const counts = `generation ${d.metadata.generation}, observed ${s.observedGeneration}; ${want} wanted, ${s.replicas ?? 0} pods, ${s.updatedReplicas ?? 0} updated, ${s.availableReplicas ?? 0} available`;
    const done =
      s.observedGeneration >= d.metadata.generation &&
      (s.updatedReplicas ?? 0) === want &&
      (s.replicas ?? 0) === want &&
      (s.availableReplicas ?? 0) === want;
    return done ? [] : [`${d.metadata.name}: ${counts}`];
  });
}

/**
 * A fresh stack of its own for a test or benchmark, on a running embedded cluster: what an interrupted
 * run left (a stale lock, the stack itself) is cleared first. `stack rm` deletes the config file, so it is
 * written again before `stack init`.
 */
export function freshStack(stack: string, changes: Record<string, unknown>, base = KWOK_STACK_FILE): void {
  execFileSync("bash", [path.join(REPO, "testbed/cluster/cluster.sh"), "up"], { stdio: "inherit" });
  for (const lock of stackLocks(stack).filter((l) => l.stale)) fs.rmSync(lock.file);
  // An interrupted run leaves its namespace (kept on destroy, owned by the old stack's field manager).
  // Deleting it can take minutes (a database's finalizers, terminating pods); an install into a namespace
  // still terminating would fail in obscure ways, so a namespace that does not go fails here. A stack with
  // `createNamespace: false` installs beside another one, whose namespace stays.
  if (typeof changes.namespace === "string" && changes.createNamespace !== false) {
    deleteNamespace(changes.namespace, 300);
  }
  writeStackConfig(stack, changes, base);
  pulumi(stack, ["stack", "rm", "--force", "--yes"]);
  writeStackConfig(stack, changes, base);
  mustPulumi(stack, ["stack", "init"]);
}

/**
 * Deletes a namespace and waits until it is gone; fails after `seconds` with what is left. While pods
 * remain, Kubernetes' namespace controller (OrderedNamespaceDeletion, pkg/controller/namespace) deletes
 * nothing else and looks again only after half the longest pod grace period: 30 min for Pulp's workers
 * (3600 s), however soon they exit. Any change to the namespace makes it look at once, so it is touched
 * every few seconds (what docs/operations.md tells a user to do by hand).
 */
export function deleteNamespace(namespace: string, seconds: number): void {
  kubectlTry(["delete", "namespace", namespace, "--ignore-not-found", "--wait=false"]);
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const left = kubectlTry(["get", "namespace", namespace, "-o", "jsonpath={.status}"]);
    if (!left.ok && /NotFound/.test(left.output)) return;
    if (Date.now() > deadline) {
      const pods = kubectlTry(["get", "pods", "-n", namespace, "-o", "wide"]).output;
      throw new Error(`namespace ${namespace} is still there after ${seconds} s: ${left.output}\n${pods}`);
    }
    kubectlTry(["annotate", "namespace", namespace, `testbed.pulp/looked-at=${Date.now()}`, "--overwrite"]);
    spawnSync("sleep", ["3"]);
  }
}

/**
 * Forgets the stack and its config file and, when given, deletes its namespace, leaving the cluster clean.
 * Without one, what the stack made stays for whoever deletes the namespace it shares.
 */
export function dropStack(stack: string, namespace?: string): void {
  pulumi(stack, ["stack", "rm", "--force", "--yes"]);
  fs.rmSync(path.join(REPO, `Pulumi.${stack}.yaml`), { force: true });
  if (namespace) kubectlTry(["delete", "namespace", namespace, "--wait=false"]);
}

/**
 * Config for the test bed's kwok stages (testbed/cluster/stages): a migration whose pod fails with `logTail`
 * as its termination message (what the kubelet keeps of the log), and pods slow to become ready or never.
 */
export const failingMigration = (logTail: string) => ({
  backoffLimit: 0,
  podAnnotations: {
    "pulp-e2e/fail": "true",
    // kwok's own pod-complete stage must never take these pods.
    "pod-complete.stage.kwok.x-k8s.io/weight": "0",
    "pulp-e2e/log-tail": logTail,
  },
});

export const readiness = (mode: "slow" | "never", after = "4s") => ({
  podAnnotations: { "pulp-e2e/readiness": mode, "pulp-e2e/ready-after": after },
});

/** Whether a pod or node reports the condition Ready True. */
export const isReady = (object: any): boolean =>
  Boolean(
    object.status?.conditions?.some(
      (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
    ),
  );

/** A node the scheduler can place a pod on: Ready, not cordoned, with the capacity kwok (or a kubelet) gave it. */
export function schedulable(node: any): boolean {
  // A quantity ("110", or "1M" as kwok's default node has it): its leading number says whether there is room.
  return isReady(node) && !node.spec?.unschedulable && parseFloat(node.status?.allocatable?.pods ?? "0") > 0;
}

/** The scheduler's latest word on each pod of the namespace it could not place, one line a pod. */
export function schedulingFailures(namespace: string): string[] {
  const events = getJson<{ items: any[] }>([
    "events",
    "-n",
    namespace,
    "--field-selector",
    "reason=FailedScheduling",
  ]).items;
  const latest = new Map<string, string>();
  for (const e of events.sort((a, b) =>
    String(a.lastTimestamp ?? a.eventTime).localeCompare(String(b.lastTimestamp ?? b.eventTime)),
  ))
    latest.set(e.involvedObject.name, `${e.lastTimestamp ?? e.eventTime} ${e.message}`);
  return [...latest].map(([pod, message]) => `${pod} unscheduled: ${message}`);
}
