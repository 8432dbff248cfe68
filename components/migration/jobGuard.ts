// Refuses an update while a migration or restore Job of this install is still running (runtime review B6).
// The Jobs carry `pulumi.com/replaceUnready` so that a failed one runs again on the next `up`; but
// pulumi-kubernetes 4.25 decides "unready" at every diff with checkjob.Ready (cloud-ready-checks), which is
// false for an active Job as much as for a failed one (provider/pkg/provider/provider.go Diff@v4.25.0), and
// replaces it, same name, delete first. A migration that outlived `pulp:migration.timeout` (or an `up`
// interrupted) would be killed mid-way by the next `up`: Django's transaction is rolled back and the work
// lost, and a non-atomic one (0147 at 3.106.0, CREATE INDEX CONCURRENTLY) leaves an INVALID index. A new
// Job name (new settings or image) would instead run a second `migrate` beside the first. So the install's
// Jobs are listed on every preview and update, before anything else that touches the database, and an
// unfinished one is refused, naming the command that waits for it: by Pulp.history before anything is
// declared, and by this step (a dynamic resource, a process of its own) where the program cannot vouch for
// that read: a provider of the caller's, a history the caller passed, a cluster not known yet (pulp.ts).
import * as pulumi from "@pulumi/pulumi";
import { findInstall, historyMismatch } from "../upgrade/history";
import { KubeTarget, kubeApi } from "../upgrade/kubeApi";

export interface JobGuardInputs {
  /** Plain, not the Namespace's output: unknown on a first preview, when there is nothing to wait for. */
  namespace: string;
  instance: string;
  /** pulp:migration.timeout, for the wait command. */
  timeout: string;
  kube: KubeTarget;
  /**
   * The release the program planned from (undefined: a new install). Checked against the cluster's
   * history (upgrade/history.ts), so a program that planned from anything else stops here.
   */
  expected?: { pulpcoreVersion?: string };
  /**
   * The namespace's uid as the Kubernetes provider sees it: compared with what `kube` sees, so that the
   * steps that call the API themselves act on the cluster the provider deploys to. Unknown while the
   * provider cannot tell it; checked again in the update.
   */
  namespaceUid?: string;
  /**
   * Whether this is a preview. The provider previews a namespace it is about to create with a uid of its
   * server-side dry run, which no cluster holds yet: in a preview, a namespace that `kube` does not see is
   * not refused (the update checks again, once the namespace exists, before anything stops).
   */
  dryRun?: boolean;
}

/** The fields of a Job read here. */
export interface JobStatus {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { suspend?: boolean };
  status?: { startTime?: string; active?: number; conditions?: { type: string; status: string }[] };
}

/** A Job that may still change the database: not suspended, and neither Complete nor Failed. */
export function unfinished(job: JobStatus): boolean {
  if (job.spec?.suspend) return false;
  const done = (job.status?.conditions ?? []).some(
    (c) => c.status === "True" && (c.type === "Complete" || c.type === "Failed"),
  );
  return !done;
}

/** The migration Jobs (component=migration) and the restore Jobs (`<instance>-restore-<backup id>`). */
export function guarded(job: JobStatus, instance: string): boolean {
  return (
    job.metadata.labels?.["app.kubernetes.io/component"] === "migration" ||
    new RegExp(`^${instance}-restore-\\d{8}t\\d{6}z$`).test(job.metadata.name)
  );
}

/** The refusal for the Jobs that are still running, or undefined when none is. */
export function runningJobsProblem(
  jobs: JobStatus[],
  inputs: Omit<JobGuardInputs, "kube" | "expected" | "namespaceUid">,
): string | undefined {
  const running = jobs.filter((j) => unfinished(j) && guarded(j, inputs.instance));
  if (running.length === 0) return undefined;
  const ns = inputs.namespace;
  const lines = running.map((j) => {
    const since = j.status?.startTime ? `, started ${j.status.startTime}` : "";
    return (
      `  job/${j.metadata.name}${since}: wait for it with\n` +
      `      kubectl wait --for=condition=complete job/${j.metadata.name} -n ${ns} --timeout=${inputs.timeout}`
    );
  });
  return (
    `Pulp's ${running.length === 1 ? "Job is" : "Jobs are"} still running, and this update would replace or ` +
    `run beside ${running.length === 1 ? "it" : "them"} (a migration killed mid-way loses its work or leaves ` +
    `an INVALID index); no Job was replaced and no Pulp pod changed:\n${lines.join("\n")}\n` +
    `then run \`pulumi up\` again. If a Job fails instead (kubectl get job -n ${ns} shows Failed), ` +
    `\`kubectl logs job/<name> -n ${ns}\` says why; once the cause is fixed, \`pulumi up\` runs it again. ` +
    `A Job that cannot finish (its pod never scheduled) is given up with \`kubectl delete job/<name> -n ${ns}\`; ` +
    `the next migration Job drops or names any INVALID index one killed mid-way left.`
  );
}

/** Refused by Pulp.history, before anything is registered: a Job of an earlier `up` still runs. */
export class JobsRunning extends Error {
  /** Printed without a stack trace (the Pulumi runtime's RunError). */
  readonly __pulumiRunError = true;
}

/** The refusal when the provider and `kube` are two clusters. */
export function clusterMismatch(
  namespace: string,
  providerUid: string,
  seenUid: string | undefined,
  server: string,
): string {
  return (
    `The Kubernetes provider and the cluster the Pulp component was given are not the same: namespace ` +
    `${namespace} has uid ${providerUid} through the provider, and ${seenUid ? `uid ${seenUid}` : "does not exist"} ` +
    `at ${server}. Nothing was stopped, migrated or restored. Pass the same cluster to both: the kubeconfig ` +
    `you gave the provider as the component's \`cluster: { kubeconfig }\` (and the same context).`
  );
}

export const jobGuardProvider: pulumi.dynamic.ResourceProvider = {
  async check(_olds: JobGuardInputs, news: JobGuardInputs) {
    const api = kubeApi(news.kube);
    // A value the engine does not know yet arrives as its unknown sentinel (pulumi runtime/rpc.ts).
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    if (news.namespaceUid && news.namespaceUid !== unknown) {
      const seen = await api.request("GET", `/api/v1/namespaces/${encodeURIComponent(news.namespace)}`);
      const uid = (seen as unknown as { metadata?: { uid?: string } } | undefined)?.metadata?.uid;
      const notCreatedYet = uid === undefined && news.dryRun === true;
      if (uid !== news.namespaceUid && !notCreatedYet) {
        throw new Error(clusterMismatch(news.namespace, news.namespaceUid, uid, api.server));
      }
    }
    const found = await findInstall(api, news.namespace, news.instance);
    const problem = runningJobsProblem(found.jobs ?? [], news);
    if (problem) throw new Error(problem);
    if (news.expected) {
      const where = { namespace: news.namespace, instance: news.instance };
      const mismatch = historyMismatch(found, where, news.expected);
      if (mismatch) throw new Error(mismatch);
    }
    return { inputs: news };
  },
  async create() {
    return { id: "job-guard", outs: {} };
  },
  async diff() {
    return { changes: false };
  },
};

export type JobGuardArgs = Omit<JobGuardInputs, "kube" | "namespaceUid" | "dryRun"> & {
  /** May hold a whole kubeconfig: a secret in the state. */
  kube: pulumi.Input<KubeTarget>;
  namespaceUid?: pulumi.Input<string>;
};

/** The check itself: the restore and migration Jobs (and the stop-the-world step) depend on it. */
export class JobGuard extends pulumi.dynamic.Resource {
  constructor(name: string, args: JobGuardArgs, opts?: pulumi.CustomResourceOptions) {
    const inputs = { ...args, kube: pulumi.secret(args.kube), dryRun: pulumi.runtime.isDryRun() };
    super(jobGuardProvider, name, inputs, opts, "pulp", "JobGuard");
  }
}
