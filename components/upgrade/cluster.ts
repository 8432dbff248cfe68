// The cluster the default Kubernetes provider deploys to, resolved once in the program the way the
// provider resolves it, and handed to the stop-the-world step explicitly: the step never looks for a
// cluster of its own, so it cannot stop Pulp anywhere but where the program deploys.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { KubeTarget } from "./kubeApi";

/** The targets providerCluster made: resolved as the default provider resolves its cluster. */
const resolvedAsDefaultProvider = new WeakSet<object>();

/** Whether `cluster` is what providerCluster returned, so the default provider's own cluster. */
export function isProviderCluster(cluster: unknown): boolean {
  return typeof cluster === "object" && cluster !== null && resolvedAsDefaultProvider.has(cluster);
}

/**
 * `kubernetes:kubeconfig` (a path or the content) and `kubernetes:context`; without a kubeconfig there,
 * the file the provider would read ($KUBECONFIG's first entry, else ~/.kube/config);
 * without any, `{inCluster: true}` (the operator's workspace pod, like the provider).
 */
export function providerCluster(
  env: NodeJS.ProcessEnv = process.env,
  home = os.homedir(),
): pulumi.Output<KubeTarget> {
  const kubernetes = new pulumi.Config("kubernetes");
  const cluster = pulumi
    .all([kubernetes.getSecret("kubeconfig"), kubernetes.get("context")])
    .apply(([kubeconfig, context]) => clusterFrom(kubeconfig, context, env, home));
  resolvedAsDefaultProvider.add(cluster);
  return cluster;
}

/** The pure part of providerCluster. A file is named by its absolute path (its relative paths resolve beside it). */
export function clusterFrom(
  kubeconfig: string | undefined,
  context: string | undefined,
  env: NodeJS.ProcessEnv,
  home: string,
): KubeTarget {
  const isContent = (k: string) => k.includes("\n") || k.trimStart().startsWith("{");
  const file =
    kubeconfig && !isContent(kubeconfig)
      ? kubeconfig
      : kubeconfig
        ? undefined
        : (env.KUBECONFIG?.split(path.delimiter).find((p) => p) ?? path.join(home, ".kube", "config"));
  if (!file) return { kubeconfig, context };
  if (fs.existsSync(file)) return { kubeconfig: path.resolve(file), context };
  if (kubeconfig || env.KUBECONFIG) throw new Error(`kubeconfig ${file} does not exist`);
  return { context, inCluster: true };
}
