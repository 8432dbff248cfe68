// npm run stack -- status <name> [-n namespace] [--kubeconfig file]
// npm run stack -- retry <name> [-n namespace] [--kubeconfig file]
// Operating a Pulumi Kubernetes Operator Stack: one screen of what it is doing and why it fails (with the
// fix), and a forced retry (the `pulumi.com/reconciliation-request` annotation the operator watches).
import { DEFAULT_DELIVERY_NAMESPACE } from "../../stacks/config";
import { runMain, wantsHelp } from "../cli";
import { collect, readStack } from "./collect";
import { diagnose } from "./failures";
import { resolveKube, run, ToolError, clusterProblem } from "../kube";
import { render } from "./render";

export const DEFAULT_NAMESPACE = DEFAULT_DELIVERY_NAMESPACE;
export const RECONCILE_ANNOTATION = "pulumi.com/reconciliation-request";

const USAGE = "usage: npm run stack -- status|retry <stack-name> [-n <namespace>] [--kubeconfig <file>]";

export function parseArgs(argv: string[]): {
  command: string;
  name: string;
  namespace: string;
  kubeconfig?: string;
} {
  const rest: string[] = [];
  let namespace = DEFAULT_NAMESPACE;
  let kubeconfig: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-n" || a === "--namespace") namespace = argv[++i] ?? "";
    else if (a.startsWith("--namespace=")) namespace = a.slice("--namespace=".length);
    else if (a === "--kubeconfig") kubeconfig = argv[++i];
    else rest.push(a);
  }
  const [command, name, ...extra] = rest;
  if (!command || !["status", "retry"].includes(command))
    throw new ToolError(`unknown command "${command ?? ""}"; ${USAGE}`);
  if (!name) throw new ToolError(`which Stack? ${USAGE}`);
  if (extra.length) throw new ToolError(`unexpected ${extra.join(" ")}; ${USAGE}`);
  if (!namespace) throw new ToolError(`-n needs a namespace; ${USAGE}`);
  return { command, name, namespace, kubeconfig };
}

export async function main(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const args = parseArgs(argv);
  const kube = resolveKube(args.kubeconfig);
  if (args.command === "status") {
    const snapshot = collect(kube, args.name, args.namespace);
    const diagnoses = diagnose(snapshot);
    process.stdout.write(`${render(snapshot, diagnoses)}\n`);
    // Scripts can tell a healthy Stack from one that needs a person.
    return diagnoses.length === 0 ? 0 : 2;
  }
  readStack(kube, args.name, args.namespace); // a clear error for an unknown name, before annotating
  const stamp = new Date().toISOString();
  const r = run(kube, [
    "annotate",
    "stacks.pulumi.com",
    args.name,
    "-n",
    args.namespace,
    `${RECONCILE_ANNOTATION}=${stamp}`,
    "--overwrite",
  ]);
  if (!r.ok)
    throw new ToolError(clusterProblem(kube, r.stderr) ?? `kubectl annotate failed: ${r.stderr.trim()}`);
  process.stdout.write(
    `retry requested: ${args.namespace}/${args.name} ${RECONCILE_ANNOTATION}=${stamp}\n` +
      `the operator records it in status.observedReconcileRequest when it picks it up: npm run stack -- status ${args.name} -n ${args.namespace}\n`,
  );
  return 0;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
