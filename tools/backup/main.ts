// npm run backup -- now [-n namespace] [--instance name] [--kubeconfig file] [--timeout seconds]
// Takes one backup now: a Job from the install's backup CronJob (what `kubectl create job
// --from=cronjob/<instance>-backup` does), awaited, then prints the backup's id and sizes as JSON.
import { runMain } from "../cli";
import { getJson, Kube, resolveKube, run } from "../stack/kube";

const USAGE =
  "usage: npm run backup -- now [-n <namespace>] [--instance <name>] [--kubeconfig <file>] [--timeout <seconds>]";

export interface BackupArgs {
  namespace: string;
  instance: string;
  kubeconfig?: string;
  timeoutSeconds: number;
}

export function parseArgs(argv: string[]): BackupArgs {
  const args: BackupArgs = { namespace: "pulp", instance: "pulp", timeoutSeconds: 3600 };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (!v) throw new Error(`${a} needs a value; ${USAGE}`);
      return v;
    };
    if (a === "-n" || a === "--namespace") args.namespace = value();
    else if (a === "--instance") args.instance = value();
    else if (a === "--kubeconfig") args.kubeconfig = value();
    else if (a === "--timeout") {
      args.timeoutSeconds = Number(value());
      if (!(args.timeoutSeconds > 0)) throw new Error(`--timeout must be a number of seconds; ${USAGE}`);
    } else rest.push(a);
  }
  if (rest.length !== 1 || rest[0] !== "now")
    throw new Error(`unknown command "${rest.join(" ")}"; ${USAGE}`);
  return args;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The message the backup container left (backup.sh writes its result or its failure there). */
function containerMessage(kube: Kube, namespace: string, job: string): string {
  const pods = getJson(kube, ["pods", "-n", namespace, "-l", `job-name=${job}`]);
  for (const pod of pods?.items ?? []) {
    for (const status of [
      ...(pod.status?.initContainerStatuses ?? []),
      ...(pod.status?.containerStatuses ?? []),
    ]) {
      const terminated = status.state?.terminated;
      if (terminated?.message) return terminated.message.trim();
      const waiting = status.state?.waiting;
      if (waiting?.reason && waiting.reason !== "PodInitializing")
        return `${status.name}: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ""}`;
    }
  }
  return "";
}

/** Creates a Job from the CronJob and waits for it; returns the backup's result line (JSON). */
export async function backupNow(kube: Kube, args: BackupArgs, now: Date = new Date()): Promise<string> {
  const cronJob = `${args.instance}-backup`;
  if (!getJson(kube, ["cronjob", cronJob, "-n", args.namespace])) {
    throw new Error(
      `no CronJob ${cronJob} in namespace ${args.namespace}: backups are off for this install. ` +
        "Turn them on: pulumi config set --path pulp:backup.enabled true && pulumi up",
    );
  }
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "t").toLowerCase();
  const job = `${cronJob}-now-${stamp}`;
  const created = run(kube, ["create", "job", job, "-n", args.namespace, `--from=cronjob/${cronJob}`]);
  if (!created.ok) throw new Error(`kubectl create job ${job} failed: ${created.stderr.trim()}`);
  process.stderr.write(
    `backup: Job ${job} created in ${args.namespace}; waiting (up to ${args.timeoutSeconds} s)\n`,
  );
  const deadline = Date.now() + args.timeoutSeconds * 1000;
  for (;;) {
    const status = getJson(kube, ["job", job, "-n", args.namespace])?.status ?? {};
    if (status.succeeded) return containerMessage(kube, args.namespace, job);
    if (status.failed) {
      throw new Error(
        `backup Job ${job} failed: ${containerMessage(kube, args.namespace, job) || "no message; see kubectl logs job/" + job}`,
      );
    }
    if (Date.now() > deadline) {
      const seen = containerMessage(kube, args.namespace, job);
      throw new Error(
        `backup Job ${job} not done after ${args.timeoutSeconds} s${seen ? ` (${seen})` : ""}; ` +
          `follow it: kubectl logs -f -n ${args.namespace} job/${job}`,
      );
    }
    await sleep(2000);
  }
}

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  process.stdout.write(`${await backupNow(resolveKube(args.kubeconfig), args)}\n`);
  return 0;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
