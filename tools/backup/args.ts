// The command line of `npm run backup`.
import { OPERATOR_BACKUP_ID, OWN_BACKUP_ID } from "../../components/backup/backupIds";

export const USAGE = [
  "usage: npm run backup -- <command> [-n <namespace>] [--instance <name>] [--kubeconfig <file>]",
  "  now [--timeout <seconds>]     take a backup now and wait for it",
  "  list                          the backups in the install's backups volume and, with backup.s3, its bucket",
  "  export <id> [-o <file>]       one backup as a tar without its keys (manifest.json first), by default",
  "                                ./pulp-backup-<id>.tar, and its keys apart (mode 0600): <file less .tar>.keys.tar",
  "  keys <id> [--stack <name>] [--claim <pvc> | --archive <keys file>]",
  "                                set a restore's keys in the stack config from the backup (pulumi config set --secret),",
  "                                read from its volume or from its keys archive (for a restore over http): the",
  "                                .keys.tar export wrote, or <id>.keys.tar in the bucket. <id> may be a pulp-operator",
  "                                PulpBackup's directory (openshift-backup-...), read from its claim or a tar of it",
].join("\n");

export interface BackupArgs {
  command: "now" | "list" | "export" | "keys";
  namespace: string;
  instance: string;
  kubeconfig?: string;
  timeoutSeconds: number;
  /** export and keys: the backup; export: the file it goes to. */
  id?: string;
  output?: string;
  /** keys: the stack to set them in (default: the selected one) and the volume that holds the backup. */
  stack?: string;
  claim?: string;
  /** keys: a keys archive (`export`'s .keys.tar, the bucket's <id>.keys.tar), read instead of the volume. */
  archive?: string;
}

const ID = OWN_BACKUP_ID;

export function parseArgs(argv: string[]): BackupArgs {
  const args: Omit<BackupArgs, "command"> = { namespace: "pulp", instance: "pulp", timeoutSeconds: 3600 };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (!v) throw new Error(`${a} needs a value\n${USAGE}`);
      return v;
    };
    if (a === "-n" || a === "--namespace") args.namespace = value();
    else if (a === "--instance") args.instance = value();
    else if (a === "--kubeconfig") args.kubeconfig = value();
    else if (a === "-o" || a === "--output") args.output = value();
    else if (a === "--stack") args.stack = value();
    else if (a === "--claim") args.claim = value();
    else if (a === "--archive") args.archive = value();
    else if (a === "--timeout") {
      args.timeoutSeconds = Number(value());
      if (!(args.timeoutSeconds > 0)) throw new Error(`--timeout must be a number of seconds\n${USAGE}`);
    } else rest.push(a);
  }
  const [command, ...operands] = rest;
  if (command === "now" || command === "list") {
    if (operands.length) throw new Error(`unexpected ${operands.join(" ")}\n${USAGE}`);
    return { ...args, command };
  }
  if (command === "export" || command === "keys") {
    const [id, ...extra] = operands;
    const operator = command === "keys" && OPERATOR_BACKUP_ID.test(id ?? "");
    if (!id || extra.length || !(ID.test(id) || operator)) {
      throw new Error(
        `${command} needs one backup id such as 20261124T031500Z (npm run backup -- list shows them)` +
          `${command === "keys" ? ", or a PulpBackup's directory such as openshift-backup-2026-11-24-031500" : ""}\n${USAGE}`,
      );
    }
    return command === "export"
      ? { ...args, command, id, output: args.output ?? `pulp-backup-${id}.tar` }
      : { ...args, command, id };
  }
  throw new Error(`unknown command "${rest.join(" ")}"\n${USAGE}`);
}
