// npm run backup -- now | list | export <id> | keys <id> [--archive <file>]: backups of a Pulp install (components/backup) from the
// outside. Finds the cluster as kubectl does (tools/kube.ts).
import { runMain, wantsHelp } from "../cli";
import { resolveKube } from "../kube";
import { parseArgs, USAGE } from "./args";
import { backupNow } from "./now";
import { exportBackup, keysFromArchive, keysFromVolume, listBackups, setRestoreKeys } from "./volume";

export async function main(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const args = parseArgs(argv);
  if (args.command === "keys" && args.archive) {
    const set = setRestoreKeys(keysFromArchive(args.archive, args.id!), args);
    process.stdout.write(
      `set ${set.join(", ")} from ${args.archive}${args.stack ? ` in stack ${args.stack}` : ""}\n`,
    );
    return 0;
  }
  const kube = resolveKube(args.kubeconfig);
  if (args.command === "now") process.stdout.write(`${await backupNow(kube, args)}\n`);
  if (args.command === "list") process.stdout.write(await listBackups(kube, args));
  if (args.command === "export") process.stdout.write(`${JSON.stringify(await exportBackup(kube, args))}\n`);
  if (args.command === "keys") {
    const set = setRestoreKeys(await keysFromVolume(kube, args), args);
    process.stdout.write(
      `set ${set.join(", ")} from backup ${args.id}${args.stack ? ` in stack ${args.stack}` : ""}\n`,
    );
  }
  return 0;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
