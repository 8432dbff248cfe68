// `npm run backup -- now`: a Job from the install's backup CronJob (what `kubectl create job
// --from=cronjob/<instance>-backup` does), awaited; returns the backup's result line (JSON).
import { getJson, Kube, run } from "../kube";
import { BackupArgs } from "./args";
import { readBackupCronJob } from "./cronJob";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The message the last container to end left: backup.sh's result or failure, or with object storage,
 * upload.py's (the result with the archive's place, or why it is not there).
 */
function containerMessage(kube: Kube, namespace: string, job: string): string {
  const pods = getJson(kube, ["pods", "-n", namespace, "-l", `job-name=${job}`]);
  let last = "";
  for (const pod of pods?.items ?? []) {
    for (const status of [
      ...(pod.status?.initContainerStatuses ?? []),
      ...(pod.status?.containerStatuses ?? []),
    ]) {
      const terminated = status.state?.terminated;
      if (terminated?.message) last = terminated.message.trim();
      const waiting = status.state?.waiting;
      if (waiting?.reason && waiting.reason !== "PodInitializing")
        return `${status.name}: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ""}`;
    }
  }
  return last;
}

/** Creates a Job from the CronJob and waits for it; returns the backup's result line (JSON). */
export async function backupNow(kube: Kube, args: BackupArgs, now: Date = new Date()): Promise<string> {
  const cronJob = readBackupCronJob(kube, args).metadata.name as string;
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
