// npm run bench:faults — faults staged on a real Pulp on the real node (two api, content, web and worker pods,
// the test bed's PostgreSQL), under client traffic from the load generator (testbed/real/load.ts: status GETs,
// downloads, uploads that run tasks, through pulp-web's ClusterIP). Each fault starts from a steady state
// and is repeated PULP_BENCH_REPEATS times (default 3):
//   settings_change    a setting changed and `up` run: api, content and worker roll
//   api_killed         one api pod's container SIGKILLed through the node's containerd (a crash, an OOM kill)
//   content_killed     the same for a content pod
//   web_killed         the same for a pulp-web pod
//   redis_killed       the same for Redis (the content cache; it comes back empty)
//   worker_killed      the worker running a slow sync SIGKILLed: what becomes of the sync, and of the next
//                      task on the same repository
//   worker_stopped     the pod of the worker running a slow sync deleted (SIGTERM, then its grace period)
//   database_outage    the database gone for 60 s (its Deployment scaled to 0, then back)
//   cnpg_switchover    on an install of its own whose database is the program's CloudNativePG cluster of
//                      two instances: a switchover to the replica, as `kubectl cnpg promote` makes it
//   cnpg_switchover_pooled  the same on a third install whose Pulp reaches that cluster through the
//                      program's Pooler (database.cloudnativepg.pooler, PgBouncer in session mode)
// For each round: failed requests, failed upload tasks, the longest time without a successful request, the
// seconds until steady again (every Deployment ready, no pod going, status/ answering), and the Pulp
// containers that restarted. One figure a line; `<fault>_<figure>_max` over the rounds at the end.
// PULP_BENCH_FAULTS=worker_killed,worker_stopped runs only those. Needs the images (`npm run images`) and
// the cluster with its real node.
import { execFileSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as http from "http";
import * as path from "path";
import { getJson, items, kubectl, kubectlTry, mustPulumi } from "../harness";
import { NODE_ADDRESS, NODE_CONTAINERD, runMain, STATE } from "../local/environment";
import { get, getApiJson, postJson, Pulp } from "../real/clients";
import { switchover } from "../real/cnpg";
import { DATABASE_NAMESPACE, psql } from "../real/database";
import { freePort } from "../real/hostServer";
import type { LoadTarget } from "../real/load";
import { longestWithoutSuccess } from "../real/loadReport";
import { underLoad } from "../real/loadTarget";
import { SMALL_PODS } from "../real/stack";
import { dropRelease, installRelease, ReleaseStack } from "../real/upgradeStack";

const RELEASE = "3.123.1";
const STACK: ReleaseStack = {
  stack: "bench-faults",
  namespace: "pulp-bench-faults",
  database: "pulp_bench_faults",
  password: "bench-faults-Zq8",
};
/** The install the CloudNativePG faults run on. */
const CNPG_STACK: ReleaseStack = {
  cloudnativepg: { instances: 2 },
  stack: "bench-faults-cnpg",
  namespace: "pulp-bench-faults-cnpg",
  database: "pulp_bench_faults_cnpg",
  password: "bench-faults-Zq8",
};
/** The install the pooled switchover runs on: the same cluster behind the program's Pooler. */
const POOLED_STACK: ReleaseStack = {
  cloudnativepg: { instances: 2, pooler: { instances: 1 } },
  stack: "bench-faults-pooled",
  namespace: "pulp-bench-faults-pooled",
  database: "pulp_bench_faults_pooled",
  password: "bench-faults-Zq8",
};
/** The program's name for its CloudNativePG cluster (instance name pulp). */
const CNPG_CLUSTER = "pulp-db";
const REPEATS = Number(process.env.PULP_BENCH_REPEATS ?? 3);
/** How long a killed worker's sync may take to end before the round says it did not. */
const TASK_END_CAP_S = Number(process.env.PULP_BENCH_TASK_CAP_S ?? 900);
/** The slow remote's file: 30 chunks, one a second, so a sync downloads for about 30 s. */
const SLOW_CHUNKS = 30;
const CHUNK = Buffer.alloc(16 * 1024, 7);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => Number((ms / 1000).toFixed(1));

type Figures = Record<string, number | string>;
/** The install a fault hits: Pulp's API, and the namespace its pods run in. */
type Install = Pulp & { namespace: string };

interface Fault {
  name: string;
  /**
   * The install it runs on: the test bed's PostgreSQL (the default), the program's CloudNativePG, or that
   * behind the program's Pooler.
   */
  on?: "cloudnativepg" | "pooled";
  /** Stages the fault and waits it out; returns what it measured beyond the common figures. */
  stage(round: number, pulp: Install): Promise<Figures>;
}

/** Restarts of every container in the namespace, by pod name. */
function restarts(ns: string): Record<string, number> {
  return Object.fromEntries(
    items("pods", ns).map((p) => [
      p.metadata.name,
      (p.status.containerStatuses ?? []).reduce(
        (n: number, c: { restartCount: number }) => n + c.restartCount,
        0,
      ),
    ]),
  );
}

/** Every Deployment has all its replicas updated and ready, no pod is going, and status/ answers 200. */
async function steady(pulp: Install): Promise<boolean> {
  const deployments = items("deployments", pulp.namespace);
  const rolled = deployments.every(
    (d) =>
      (d.status.readyReplicas ?? 0) === d.spec.replicas &&
      (d.status.updatedReplicas ?? 0) === d.spec.replicas &&
      (d.status.replicas ?? 0) === d.spec.replicas,
  );
  if (!rolled || items("pods", pulp.namespace).some((p) => p.metadata.deletionTimestamp)) return false;
  return get(`${pulp.baseUrl}/pulp/api/v3/status/`).then(
    (r) => r.status === 200,
    () => false,
  );
}

/** Waits for a steady state; returns the ms it took (fails after 15 minutes, naming what was not ready). */
async function untilSteady(pulp: Install, from = Date.now()): Promise<number> {
  while (!(await steady(pulp))) {
    if (Date.now() - from > 900_000) {
      throw new Error(
        `${pulp.namespace} not steady within 15 minutes:\n${kubectl(["get", "pods", "-n", pulp.namespace, "-o", "wide"])}`,
      );
    }
    await sleep(1000);
  }
  return Date.now() - from;
}

/** The names of one component's pods (api, content, web, worker) that are not going. */
function podsOf(ns: string, component: string): string[] {
  return items("pods", ns)
    .filter(
      (p) =>
        p.metadata.labels?.["app.kubernetes.io/component"] === component && !p.metadata.deletionTimestamp,
    )
    .map((p) => p.metadata.name as string);
}

/** SIGKILLs a pod's main container through the node's containerd, as a crash or the OOM killer would. */
function killContainer(ns: string, pod: string): void {
  const p = getJson(["pod", pod, "-n", ns]);
  const name = p.spec.containers[0].name;
  const id = String(p.status.containerStatuses.find((c: { name: string }) => c.name === name).containerID);
  execFileSync("ctr", [
    "--address",
    NODE_CONTAINERD,
    "-n",
    "k8s.io",
    "tasks",
    "kill",
    "--signal",
    "SIGKILL",
    id.replace(/^containerd:\/\//, ""),
  ]);
}

/** Polls a task until it ends or `capS` passes (answers that fail, a database outage say, are asked again). */
async function taskEnd(
  pulp: Install,
  href: string,
  capS: number,
): Promise<{ state: string; at: number; error?: string }> {
  const started = Date.now();
  let state = "unknown";
  let error: string | undefined;
  while (Date.now() - started < capS * 1000) {
    try {
      const task = await getApiJson(pulp, href);
      state = task.state;
      error = task.error?.reason ?? task.error?.description;
      if (["completed", "failed", "canceled"].includes(state)) break;
    } catch {
      // not answering now: asked again
    }
    await sleep(1000);
  }
  return { state, at: Date.now(), ...(error ? { error } : {}) };
}

/**
 * A file remote on the host that sends its one file slowly (SLOW_CHUNKS seconds), so a sync is still
 * downloading when a fault hits its worker. Each round has a file of its own (a new sha256), so no sync
 * finds its artifact already saved.
 */
async function slowRemote(): Promise<{ url: (round: string) => string; close: () => void }> {
  const fileOf = (round: string) =>
    Buffer.concat([Buffer.from(`round ${round}\n`), ...Array.from({ length: SLOW_CHUNKS }, () => CHUNK)]);
  const port = await freePort();
  const server = http.createServer((req, res) => {
    const match = /^\/([\w.-]+)\/(PULP_MANIFEST|slow\.bin)$/.exec(req.url ?? "");
    if (!match) return void res.writeHead(404).end();
    const data = fileOf(match[1]);
    if (match[2] === "PULP_MANIFEST") {
      const digest = crypto.createHash("sha256").update(data).digest("hex");
      return void res.writeHead(200).end(`slow.bin,${digest},${data.length}\n`);
    }
    res.writeHead(200, { "Content-Length": data.length });
    let sent = 0;
    const timer = setInterval(() => {
      const end = Math.min(data.length, sent + CHUNK.length + 64);
      res.write(data.subarray(sent, end));
      sent = end;
      if (sent >= data.length) {
        clearInterval(timer);
        res.end();
      }
    }, 1000);
    res.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(port, NODE_ADDRESS, resolve));
  return {
    url: (round) => `http://${NODE_ADDRESS}:${port}/${round}/PULP_MANIFEST`,
    close: () => server.close(),
  };
}

/**
 * Starts a slow sync into a new repository `name` and waits until a worker runs it (10 s into the
 * download); returns the task and the pod of the worker running it (a worker's name is `pid@hostname`).
 * Reads the database (the test bed's PostgreSQL), as pulpcore 3.89 and later keep the worker nowhere else.
 */
async function slowSync(
  pulp: Install,
  remoteUrl: string,
  name: string,
): Promise<{ task: string; pod: string; repository: string }> {
  const remote = await postJson(pulp, "/pulp/api/v3/remotes/file/file/", {
    name,
    url: remoteUrl,
    policy: "immediate",
  });
  if (remote.status !== 201)
    throw new Error(`remote ${name}: ${remote.status} ${JSON.stringify(remote.json)}`);
  // A repository of its own: a sync a fault left running must not hold the next round's.
  const made = await postJson(pulp, "/pulp/api/v3/repositories/file/file/", { name });
  if (made.status !== 201) throw new Error(`repository ${name}: ${made.status} ${JSON.stringify(made.json)}`);
  const repository: string = made.json.pulp_href;
  const sync = await postJson(pulp, `${repository}sync/`, { remote: remote.json.pulp_href });
  if (sync.status !== 202) throw new Error(`sync: ${sync.status} ${JSON.stringify(sync.json)}`);
  const task: string = sync.json.task;
  // Since 3.89 a task names no worker (its `worker` is null): the worker holding it is its app_lock.
  const holder = () =>
    psql(
      `SELECT a.name FROM core_task t JOIN core_appstatus a ON a.pulp_id = t.app_lock_id ` +
        `WHERE t.pulp_id = '${task.split("/").at(-2)}' AND t.state = 'running'`,
      STACK.database,
    );
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(500)) {
    const name = holder();
    if (name) {
      await sleep(10_000);
      if (holder() !== name) throw new Error(`the slow sync ${task} ended or moved before its fault`);
      return { task, pod: name.split("@")[1], repository };
    }
  }
  throw new Error(`the slow sync ${task} did not start running within 120 s`);
}

/** A task on the same repository right after the fault (a modify: it needs the repository alone). */
async function nextTask(pulp: Install, repository: string): Promise<string> {
  const modify = await postJson(pulp, `${repository}modify/`, {});
  if (modify.status !== 202) throw new Error(`modify: ${modify.status} ${JSON.stringify(modify.json)}`);
  return modify.json.task;
}

function faults(remote: { url: (round: string) => string }): Fault[] {
  const killOne = (component: string): Fault => ({
    name: `${component}_killed`,
    async stage(_round, pulp) {
      const pod = podsOf(pulp.namespace, component)[0];
      const killedAt = Date.now();
      const before = restarts(pulp.namespace)[pod];
      killContainer(pulp.namespace, pod);
      // Steady only counts once the kubelet has seen the container go.
      while (restarts(pulp.namespace)[pod] === before) await sleep(200);
      return { steady_seconds: seconds(await untilSteady(pulp, killedAt)) };
    },
  });
  const workerFault = (name: string, hit: (ns: string, pod: string) => void): Fault => ({
    name,
    async stage(round, pulp) {
      const id = `${name}-${round}-${Date.now()}`;
      const sync = await slowSync(pulp, remote.url(id), id);
      const hitAt = Date.now();
      hit(pulp.namespace, sync.pod);
      const nextAt = Date.now();
      const next = await nextTask(pulp, sync.repository);
      const [syncEnd, nextEnd] = await Promise.all([
        taskEnd(pulp, sync.task, TASK_END_CAP_S),
        taskEnd(pulp, next, TASK_END_CAP_S),
      ]);
      const steadyMs = await untilSteady(pulp, hitAt);
      process.stdout.write(
        `${name} ${round}: the sync ended ${syncEnd.state}${syncEnd.error ? ` (${syncEnd.error})` : ""}\n`,
      );
      return {
        sync_state: syncEnd.state,
        sync_end_seconds: seconds(syncEnd.at - hitAt),
        next_task_state: nextEnd.state,
        next_task_seconds: seconds(nextEnd.at - nextAt),
        steady_seconds: seconds(steadyMs),
      };
    },
  });
  return [
    {
      name: "settings_change",
      async stage(round, pulp) {
        const started = Date.now();
        mustPulumi(STACK.stack, [
          "config",
          "set",
          "--path",
          "pulp:extraSettings.FAULTS_BENCH_ROUND",
          `r${round}-${started}`,
        ]);
        const up = mustPulumi(STACK.stack, ["up", "--yes", "--skip-preview"]);
        return {
          up_seconds: seconds(up.seconds * 1000),
          steady_seconds: seconds(await untilSteady(pulp, started)),
        };
      },
    },
    killOne("api"),
    killOne("content"),
    killOne("web"),
    killOne("redis"),
    workerFault("worker_killed", killContainer),
    workerFault("worker_stopped", (ns, pod) => kubectl(["delete", "pod", pod, "-n", ns, "--wait=false"])),
    {
      name: "database_outage",
      async stage(_round, pulp) {
        const started = Date.now();
        kubectl(["scale", "deployment/postgres", "-n", DATABASE_NAMESPACE, "--replicas=0"]);
        await sleep(60_000);
        kubectl(["scale", "deployment/postgres", "-n", DATABASE_NAMESPACE, "--replicas=1"]);
        kubectl(["rollout", "status", "deployment/postgres", "-n", DATABASE_NAMESPACE, "--timeout=180s"]);
        return { steady_seconds: seconds(await untilSteady(pulp, started)) };
      },
    },
    ...(["cloudnativepg", "pooled"] as const).map((on): Fault => ({
      name: on === "pooled" ? "cnpg_switchover_pooled" : "cnpg_switchover",
      on,
      async stage(round, pulp) {
        const started = Date.now();
        const moved = await switchover(pulp.namespace, CNPG_CLUSTER);
        process.stdout.write(`${this.name} ${round}: ${moved.from} -> ${moved.to}\n`);
        return {
          switchover_seconds: seconds(moved.seconds * 1000),
          steady_seconds: seconds(await untilSteady(pulp, started)),
        };
      },
    })),
  ];
}

/** One round of a fault from a steady state, under load: the common figures and the fault's own. */
async function runRound(
  out: string,
  target: LoadTarget,
  pulp: Install,
  fault: Fault,
  round: number,
): Promise<Figures> {
  await untilSteady(pulp);
  const before = restarts(pulp.namespace);
  const run = await underLoad(
    target,
    out,
    `${fault.name}-${round}`,
    pulp.namespace,
    () => fault.stage(round, pulp),
    15_000,
  );
  const after = restarts(pulp.namespace);
  saveLogs(pulp.namespace, path.join(out, `${fault.name}-${round}-logs.txt`), run.during[0] - 15_000);
  // The load's upload tasks that failed from the fault on (the phase reports count them as failures too).
  const failedTasks = run.records.filter((r) => r.kind === "task" && !r.ok && r.t >= run.during[0]).length;
  return {
    failed_requests: run.report.during.failed + run.report.after.failed - failedTasks,
    failed_tasks: failedTasks,
    longest_without_success_ms: longestWithoutSuccess(run.records, run.during[0], run.during[1] + 15_000).ms,
    container_restarts: Object.entries(after).reduce((n, [pod, c]) => n + (c - (before[pod] ?? 0)), 0),
    ...run.result,
  };
}

async function bench(): Promise<number> {
  const out = path.join(STATE, "bench-faults");
  fs.mkdirSync(out, { recursive: true });
  const only = process.env.PULP_BENCH_FAULTS?.split(",").filter(Boolean);
  const remote = await slowRemote();
  const lines: string[] = [];
  const byFault: Record<string, Figures[]> = {};
  const selected = faults(remote).filter((f) => !only || only.includes(f.name));
  // Each install runs the faults meant for it, then goes; one no selected fault needs is not made.
  const installs = [
    {
      stack: STACK,
      faults: selected.filter((f) => !f.on),
      options: {
        config: { worker: { replicas: 2, terminationGracePeriodSeconds: 60, resources: SMALL_PODS } },
      },
    },
    {
      stack: CNPG_STACK,
      faults: selected.filter((f) => f.on === "cloudnativepg"),
      options: {},
    },
    {
      stack: POOLED_STACK,
      faults: selected.filter((f) => f.on === "pooled"),
      options: {},
    },
  ];
  try {
    for (const install of installs.filter((i) => i.faults.length > 0)) {
      try {
        const { target } = await installRelease(install.stack, RELEASE, install.options);
        const pulp: Install = { ...target, namespace: install.stack.namespace };
        for (const fault of install.faults) {
          for (let round = 1; round <= REPEATS; round++) {
            const figures = await runRound(out, target, pulp, fault, round);
            (byFault[fault.name] ??= []).push(figures);
            const roundLines = Object.entries(figures).map(
              ([key, value]) => `${fault.name}_r${round}_${key} ${value}`,
            );
            lines.push(...roundLines);
            process.stdout.write(`${roundLines.join("\n")}\n`);
          }
        }
      } finally {
        dropRelease(install.stack);
      }
    }
  } finally {
    remote.close();
  }
  for (const [fault, rounds] of Object.entries(byFault)) {
    for (const key of Object.keys(rounds[0])) {
      const values = rounds.map((r) => r[key]);
      if (values.every((v) => typeof v === "number"))
        lines.push(`${fault}_${key}_max ${Math.max(...(values as number[]))}`);
    }
  }
  process.stdout.write(`\nrelease ${RELEASE}, ${REPEATS} round(s) a fault\n${lines.join("\n")}\n`);
  fs.writeFileSync(path.join(out, "figures.txt"), `${lines.join("\n")}\n`);
  return 0;
}

/** What every container of the install logged since `since` (and the previous instance of a restarted one). */
function saveLogs(ns: string, file: string, since: number): void {
  const sinceTime = new Date(since).toISOString();
  const logs = items("pods", ns).flatMap((p) =>
    [false, true].map((previous) => {
      const r = kubectlTry([
        "logs",
        "-n",
        ns,
        p.metadata.name,
        `--since-time=${sinceTime}`,
        "--timestamps",
        ...(previous ? ["--previous"] : []),
      ]);
      return r.ok && r.output.trim()
        ? `==> ${p.metadata.name}${previous ? " (previous)" : ""}\n${r.output}`
        : "";
    }),
  );
  fs.writeFileSync(file, logs.filter(Boolean).join("\n"));
}

runMain(bench);
