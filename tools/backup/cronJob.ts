// The install's backup CronJob (components/backup/backup.ts): what the other commands start from.
import { getJson, Kube } from "../kube";

/** The CronJob `<instance>-backup`; fails saying how to turn backups on when the install has none. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function readBackupCronJob(kube: Kube, args: { namespace: string; instance: string }): any {
  const name = `${args.instance}-backup`;
  const cronJob = getJson(kube, ["cronjob", name, "-n", args.namespace]);
  if (!cronJob) {
    throw new Error(
      `no CronJob ${name} in namespace ${args.namespace}: backups are off for this install. ` +
        "Turn them on: pulumi config set --path pulp:backup.enabled true && pulumi up",
    );
  }
  return cronJob;
}
