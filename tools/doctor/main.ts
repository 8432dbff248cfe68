// pulp-doctor [-n namespace] [--instance name] [-o json] [--kubeconfig file]
// Looks at a live Pulp install and says what is wrong and what to run: Pulp's own status, crash loops and
// why, pods no node takes, volume attach and mount failures, stalled rollouts, the migration Job, the
// database cluster and its pooler, CDI imports, unbound volumes and the backups' age. Exit 0: nothing found; 2: problems
// or warnings (for scripts and CI); 1: the doctor could not look (one line says why).
import { runMain, wantsHelp } from "../cli";
import { resolveKube, ToolError } from "../kube";
import { diagnose } from "./checks";
import { collect } from "./collect";
import { render, renderJson } from "./render";

const USAGE = "usage: pulp-doctor [-n <namespace>] [--instance <name>] [-o json] [--kubeconfig <file>]";

export function parseArgs(argv: string[]): {
  namespace: string;
  instance: string;
  json: boolean;
  kubeconfig?: string;
} {
  // The program's own defaults (pulp:namespace, pulp:instanceName).
  let namespace = "pulp";
  let instance = "pulp";
  let json = false;
  let kubeconfig: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (!v || v.startsWith("-")) throw new ToolError(`${a} needs a value; ${USAGE}`);
      return v;
    };
    if (a === "-n" || a === "--namespace") namespace = value();
    else if (a === "--instance") instance = value();
    else if (a === "--kubeconfig") kubeconfig = value();
    else if (a === "-o" || a === "--output") {
      const v = value();
      if (v !== "json") throw new ToolError(`-o ${v}: only json is known; ${USAGE}`);
      json = true;
    } else throw new ToolError(`unexpected ${a}; ${USAGE}`);
  }
  return { namespace, instance, json, kubeconfig };
}

export async function main(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const args = parseArgs(argv);
  const kube = resolveKube(args.kubeconfig);
  const snapshot = collect(kube, args.namespace, args.instance);
  if (snapshot.deployments.length === 0 && snapshot.pods.length === 0) {
    throw new ToolError(
      `no Pulp instance "${args.instance}" in namespace ${args.namespace} (nothing labelled app.kubernetes.io/instance=${args.instance}): pass -n and --instance as in the stack config (pulp:namespace, pulp:instanceName)`,
    );
  }
  const findings = diagnose(snapshot);
  process.stdout.write(`${args.json ? renderJson(snapshot, findings) : render(snapshot, findings)}\n`);
  return findings.length === 0 ? 0 : 2;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
