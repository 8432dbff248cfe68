// npm run backup -- now | list | export <id> | keys <id>: backups of a Pulp install (components/backup) from the
// outside. Finds the cluster as kubectl does (tools/stack/kube.ts).
import { runMain } from "../cli";
import { resolveKube } from "../stack/kube";
import { parseArgs } from "./args";
import { backupNow } from "./now";
import { exportBackup, listBackups, setRestoreKeys } from "./volume";

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  const kube = resolveKube(args.kubeconfig);
  if (args.command === "now") process.stdout.write(`${await backupNow(kube, args)}\n`);
  if (args.command === "list") process.stdout.write(await listBackups(kube, args));
  if (args.command === "export") process.stdout.write(`${JSON.stringify(await exportBackup(kube, args))}\n`);
  if (args.command === "keys") {
    const set = await setRestoreKeys(kube, args);
    process.stdout.write(
      `set ${set.join(", ")} from backup ${args.id}${args.stack ? ` in stack ${args.stack}` : ""}\n`,
    );
  }
  return 0;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
