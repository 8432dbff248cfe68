// kubectl for the shipped tools (stack, backup): which cluster, and errors a person can act on in one
// line. It finds the cluster as kubectl does and knows nothing of the test bed.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

/** A failure the person can fix: printed as one line, exit code 1. */
export class ToolError extends Error {}

export interface Kube {
  kubectl: string;
  kubeconfig?: string;
}

/**
 * --kubeconfig, else $KUBECONFIG, else nothing: kubectl then reads ~/.kube/config, as it does for the
 * person at the keyboard. kubectl is $PULP_KUBECTL, else the one on PATH.
 */
export function resolveKube(flagKubeconfig?: string, env: NodeJS.ProcessEnv = process.env): Kube {
  const kubeconfig = flagKubeconfig ?? (env.KUBECONFIG || undefined);
  if (kubeconfig && kubeconfig.split(path.delimiter).every((f) => !fs.existsSync(f))) {
    throw new ToolError(
      `kubeconfig ${kubeconfig} does not exist: point KUBECONFIG (or --kubeconfig) at your cluster's`,
    );
  }
  return { kubectl: env.PULP_KUBECTL ?? "kubectl", kubeconfig };
}

export interface KubectlResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

export function run(kube: Kube, args: string[], input?: string): KubectlResult {
  const r = spawnSync(
    kube.kubectl,
    [...(kube.kubeconfig ? ["--kubeconfig", kube.kubeconfig] : []), ...args],
    {
      encoding: "utf8",
      input,
      timeout: 30_000,
    },
  );
  if (r.error) {
    throw new ToolError(
      `cannot run kubectl (${kube.kubectl}): ${r.error.message}; install kubectl or set PULP_KUBECTL to its path`,
    );
  }
  return { ok: r.status === 0, stdout: r.stdout, stderr: r.stderr };
}

/** Turns kubectl's answer for a cluster-level problem into one actionable line, or returns undefined. */
export function clusterProblem(kube: Kube, stderr: string): string | undefined {
  const where = kube.kubeconfig ? `kubeconfig ${kube.kubeconfig}` : "kubectl's default kubeconfig";
  if (/connection refused|Unable to connect to the server|no such host|i\/o timeout|dial tcp/i.test(stderr)) {
    return `no Kubernetes API server answers (${where}): start one (npm run cluster:up) or point KUBECONFIG at your cluster`;
  }
  if (
    /the server doesn't have a resource type "stacks"|no matches for kind "Stack"|resource type "stacks.pulumi.com"/i.test(
      stderr,
    )
  ) {
    return `the Stack CRD (stacks.pulumi.com) is not installed in this cluster (${where}): install the Pulumi Kubernetes Operator v2 (its CRDs) first`;
  }
  if (/Forbidden|forbidden/.test(stderr)) {
    return `not allowed: ${stderr.trim().split("\n")[0]} — use a kubeconfig that may read Stacks, Events and Pods in that namespace`;
  }
  if (/invalid configuration|no configuration has been provided/i.test(stderr)) {
    return `no usable kubeconfig (${where}): set KUBECONFIG or pass --kubeconfig <file>`;
  }
  return undefined;
}

/** `kubectl get ... -o json`: undefined when NotFound, a ToolError for cluster-level problems. */
export function getJson(kube: Kube, args: string[]): any | undefined {
  const r = run(kube, ["get", ...args, "-o", "json"]);
  if (r.ok) return JSON.parse(r.stdout);
  if (/NotFound|not found/.test(r.stderr)) return undefined;
  const problem = clusterProblem(kube, r.stderr);
  throw new ToolError(problem ?? `kubectl get ${args.join(" ")} failed: ${r.stderr.trim().split("\n")[0]}`);
}
