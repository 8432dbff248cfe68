// Watches a CDI import to its end, so that `pulumi up` names what went wrong instead of waiting out its
// timeout: the CDI guide's failures (a namespace quota without room for the scratch space, no usable
// storage class, an importer pod that cannot be scheduled or keeps crashing) each end the update with
// its cause and fix. Before the DataVolume exists (in preview), the real ResourceQuotas and
// StorageClasses are read; while it imports, the DataVolume, its PVCs, the importer pod and their events.
import * as pulumi from "@pulumi/pulumi";
import { KubeTarget, kubeApi } from "../upgrade/kubeApi";

export interface ImportWatchInputs {
  namespace: string;
  /** The DataVolume, and the PVC CDI makes for it (same name; the scratch PVC is `<name>-scratch`). */
  name: string;
  /** The volume's requested size: CDI needs as much again for scratch space while it imports. */
  size: string;
  storageClass?: string;
  /** How long the import may take before the update fails (the DataVolume's own timeout). */
  timeoutSeconds: number;
  kube: KubeTarget;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- API objects, read field by field */
/** What the watch reads on each poll. */
export interface ImportObserved {
  dataVolume?: any;
  pvcs: any[];
  /** The importer pod(s) of this DataVolume. */
  pods: any[];
  /** Events of the DataVolume, its PVCs and importer pods, oldest first. */
  events: any[];
}

export type ImportVerdict =
  { state: "done" } | { state: "waiting"; detail: string } | { state: "failed"; message: string };

const UNITS: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
};

/** A storage quantity in bytes ("20Gi", "500M", "1e9"); NaN when unreadable. */
export function bytesOf(quantity: string): number {
  const m = /^([0-9.e+]+)([KMGTP]i|[kMGT])?$/.exec(String(quantity).trim());
  return m ? Number(m[1]) * (m[2] ? UNITS[m[2]] : 1) : NaN;
}

const gi = (bytes: number) => `${Math.ceil(bytes / 2 ** 30)}Gi`;

/**
 * Before the import: each ResourceQuota of the namespace that limits storage must have room for the
 * volume and its scratch space (2 x size), and the storage class must exist, or a default must be there
 * (exactly one). Returns the problems, each with its fix; `classes` undefined when they could not be read.
 */
export function preflightProblems(
  inputs: Pick<ImportWatchInputs, "namespace" | "name" | "size" | "storageClass">,
  quotas: any[],
  classes: any[] | undefined,
): string[] {
  const problems: string[] = [];
  const needed = 2 * bytesOf(inputs.size);
  for (const q of quotas) {
    for (const key of [
      "requests.storage",
      `${inputs.storageClass ?? ""}.storageclass.storage.k8s.io/requests.storage`,
    ]) {
      const hard = q.status?.hard?.[key];
      if (hard === undefined) continue;
      const free = bytesOf(hard) - bytesOf(q.status?.used?.[key] ?? "0");
      if (free >= needed) continue;
      problems.push(
        `ResourceQuota ${q.metadata.name} in ${inputs.namespace} has ${gi(Math.max(free, 0))} of ${key} left ` +
          `(hard ${hard}, used ${q.status?.used?.[key] ?? "0"}), and importing ${inputs.name} needs ${gi(needed)}: ` +
          `its ${inputs.size} volume and as much again for CDI's scratch space. Raise the quota: kubectl -n ${inputs.namespace} ` +
          `patch resourcequota ${q.metadata.name} --type merge -p '{"spec":{"hard":{"${key}":"${gi(bytesOf(hard) - free + needed)}"}}}'`,
      );
    }
  }
  if (classes) {
    const names = classes.map((c) => c.metadata.name);
    const defaults = classes
      .filter((c) => c.metadata.annotations?.["storageclass.kubernetes.io/is-default-class"] === "true")
      .map((c) => c.metadata.name);
    const setClass = `pulumi config set --path '<the key of ${inputs.name}>.storageClass' <one of: ${names.join(", ") || "none exists"}>`;
    if (inputs.storageClass && !names.includes(inputs.storageClass)) {
      problems.push(`StorageClass ${inputs.storageClass} for ${inputs.name} does not exist. ${setClass}`);
    } else if (!inputs.storageClass && defaults.length === 0) {
      problems.push(
        `${inputs.name} names no storage class and the cluster has no default one: its PVC would wait forever. ${setClass}`,
      );
    } else if (!inputs.storageClass && defaults.length > 1) {
      problems.push(
        `${inputs.name} names no storage class and the cluster has ${defaults.length} defaults (${defaults.join(", ")}): ` +
          `which one CDI's volumes get is not defined. ${setClass}`,
      );
    }
  }
  return problems;
}

/** While it imports: done, still going (and what it waits on), or a failure with its cause and fix. */
export function importVerdict(
  inputs: Pick<ImportWatchInputs, "namespace" | "name">,
  seen: ImportObserved,
): ImportVerdict {
  const dv = seen.dataVolume;
  const phase: string | undefined = dv?.status?.phase;
  if (phase === "Succeeded") return { state: "done" };
  const where = `DataVolume ${inputs.namespace}/${inputs.name}`;
  const conditions: any[] = dv?.status?.conditions ?? [];
  const messages = [
    ...conditions.map((c) => ({ reason: String(c.reason ?? ""), message: String(c.message ?? "") })),
    ...seen.events.map((e) => ({ reason: String(e.reason ?? ""), message: String(e.message ?? "") })),
  ];
  const quota = messages.find((m) => /ExceededQuota/.test(m.reason) || /exceeded quota/.test(m.message));
  if (quota) {
    return {
      state: "failed",
      message:
        `${where}: the namespace quota has no room: ${quota.message}. CDI needs the volume's size twice while it ` +
        `imports (the scratch PVC). Raise the quota's requests.storage (kubectl -n ${inputs.namespace} edit resourcequota), then pulumi up again`,
    };
  }
  const missingClass = messages.find((m) =>
    /storageclass\.storage\.k8s\.io "([^"]+)" not found/.test(m.message),
  );
  if (missingClass) {
    const name = /storageclass\.storage\.k8s\.io "([^"]+)" not found/.exec(missingClass.message)![1];
    const scratch = seen.pvcs.some(
      (p) => p.metadata.name.endsWith("-scratch") && p.spec?.storageClassName === name,
    );
    return {
      state: "failed",
      message: scratch
        ? `${where}: the scratch space's storage class ${name} does not exist (a stale scratchSpaceStorageClass in CDIConfig). ` +
          `Point it at an existing class: kubectl patch cdiconfig config --type merge -p '{"spec":{"scratchSpaceStorageClass":"<class>"}}'`
        : `${where}: storage class ${name} does not exist: ${missingClass.message}`,
    };
  }
  const noClass = messages.find((m) => /no storage class is set/.test(m.message));
  if (noClass) {
    return {
      state: "failed",
      message: `${where}: its PVC names no storage class and the cluster has no default: ${noClass.message}. Set the import's storageClass`,
    };
  }
  for (const pod of seen.pods) {
    const unschedulable = (pod.status?.conditions ?? []).find(
      (c: any) => c.type === "PodScheduled" && c.status === "False" && c.reason === "Unschedulable",
    );
    // CDI makes the importer pod before its scratch PVC, and a PVC is unbound while it is provisioned: the
    // scheduler retries once they are there (seen on the real CDI: `persistentvolumeclaim "…-scratch" not
    // found`). What no retry mends (no node with the room, a selector, a taint) ends the wait.
    const passing = /persistentvolumeclaim "[^"]+" not found|unbound immediate PersistentVolumeClaims/;
    if (unschedulable && !passing.test(String(unschedulable.message ?? ""))) {
      return {
        state: "failed",
        message: `${where}: importer pod ${pod.metadata.name} cannot be scheduled: ${unschedulable.message}`,
      };
    }
    for (const c of pod.status?.containerStatuses ?? []) {
      // CDI retries by restarting the importer (a server not up yet, say): a third restart is a loop.
      const crashing = (c.restartCount ?? 0) >= 3;
      if (!crashing) continue;
      const last = c.lastState?.terminated ?? c.state?.terminated ?? {};
      return {
        state: "failed",
        message:
          `${where}: importer pod ${pod.metadata.name} keeps failing (restarted ${c.restartCount} times, last exit ` +
          `${last.exitCode ?? "?"}): ${String(last.message ?? last.reason ?? "no message").trim()}. Check the URL serves an uncompressed tar`,
      };
    }
  }
  if (phase === "Failed") {
    return {
      state: "failed",
      message: `${where} failed: ${messages
        .map((m) => m.message)
        .filter(Boolean)
        .join("; ")}`,
    };
  }
  return {
    state: "waiting",
    detail: `phase ${phase ?? "(none yet)"}${dv?.status?.progress ? `, ${dv.status.progress}` : ""}`,
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** How the engine hands a dynamic provider's check a value not known yet (the SDK's runtime/rpc unknownValue). */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** How long the DataVolume may be missing before the watch says so (a GET right after create can miss it). */
const ABSENT_GRACE_MS = 30_000;
/** How long a failed import's deletion (the DataVolume, its PVCs and importer pod) is awaited. */
const DELETE_WAIT_MS = 120_000;

export const importWatchProvider: pulumi.dynamic.ResourceProvider = {
  // In preview, before the DataVolume exists: the real quotas and storage classes.
  async check(_olds: ImportWatchInputs, news: ImportWatchInputs) {
    if (typeof news.namespace !== "string" || typeof news.size !== "string") return { inputs: news };
    const api = kubeApi(news.kube);
    const dv = await api
      .request("GET", `/apis/cdi.kubevirt.io/v1beta1/namespaces/${news.namespace}/datavolumes/${news.name}`)
      .catch(() => undefined);
    if (dv) return { inputs: news };
    const quotas =
      (await api.request("GET", `/api/v1/namespaces/${news.namespace}/resourcequotas`).catch(() => undefined))
        ?.items ?? [];
    // Cluster-scoped: an operator workspace may not read them; the watch still names the consequence.
    // A storage class given as an Output of another resource is unknown in the first preview: nothing to
    // compare with yet (its class-scoped quota neither); the check runs again in the update.
    const pending = news.storageClass === UNKNOWN;
    const classes = pending
      ? undefined
      : (await api.request("GET", "/apis/storage.k8s.io/v1/storageclasses").catch(() => undefined))?.items;
    const problems = preflightProblems(
      pending ? { ...news, storageClass: undefined } : news,
      quotas,
      classes,
    );
    if (problems.length > 0) throw new Error(problems.join("\n"));
    return { inputs: news };
  },

  async create(inputs: ImportWatchInputs) {
    const api = kubeApi(inputs.kube);
    const ns = `/api/v1/namespaces/${inputs.namespace}`;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const deadline = Date.now() + inputs.timeoutSeconds * 1000;
    const mine = (o: { metadata: { name: string } }) =>
      o.metadata.name === inputs.name ||
      o.metadata.name.startsWith(`${inputs.name}-scratch`) ||
      o.metadata.name.startsWith(`importer-${inputs.name}`);
    const dvPath = `/apis/cdi.kubevirt.io/v1beta1/namespaces/${inputs.namespace}/datavolumes/${inputs.name}`;
    const where = `DataVolume ${inputs.namespace}/${inputs.name}`;
    const again = "`pulumi up --refresh` creates it again";
    let absentSince: number | undefined;
    for (;;) {
      const dataVolume = await api.request("GET", dvPath);
      // Created before this watch: gone means deleted, by a failed import's watch or by hand.
      absentSince = dataVolume ? undefined : (absentSince ?? Date.now());
      if (absentSince !== undefined && Date.now() - absentSince > ABSENT_GRACE_MS) {
        throw new Error(`${where} does not exist (a failed import deletes its DataVolume): ${again}`);
      }
      const pvcs = ((await api.request("GET", `${ns}/persistentvolumeclaims`))?.items ?? []).filter(mine);
      const pods = ((await api.request("GET", `${ns}/pods`))?.items ?? []).filter((p) =>
        p.metadata.name.startsWith(`importer-${inputs.name}`),
      );
      const events = ((await api.request("GET", `${ns}/events`))?.items ?? []).filter((e) => {
        const about = (e as { involvedObject?: { name: string } }).involvedObject;
        return about !== undefined && mine({ metadata: { name: about.name } });
      });
      const verdict = importVerdict(inputs, { dataVolume, pvcs, pods, events });
      if (verdict.state === "done") return { id: `${inputs.namespace}/${inputs.name}`, outs: inputs };
      if (verdict.state === "failed") {
        // A failed import holds no data. Deleted, with its PVCs and importer pod, the next update can make
        // it again, with the same name, from a corrected URL or config. Background: in the foreground, the
        // garbage collector was seen leaving the crashed importer pod, and so everything, for minutes.
        await api.request("DELETE", dvPath, {
          apiVersion: "v1",
          kind: "DeleteOptions",
          propagationPolicy: "Background",
        });
        const gone = Date.now() + DELETE_WAIT_MS;
        const left = async () => [
          ...((await api.request("GET", dvPath)) ? [`DataVolume ${inputs.name}`] : []),
          ...((await api.request("GET", `${ns}/persistentvolumeclaims`))?.items ?? [])
            .filter(mine)
            .map((p) => `PVC ${p.metadata.name}`),
        ];
        let remaining = await left();
        while (remaining.length > 0 && Date.now() < gone) {
          await sleep(2000);
          remaining = await left();
        }
        const deleted =
          remaining.length === 0
            ? `The failed ${where} was deleted: fix the cause, then ${again}.`
            : `The failed ${where} is being deleted (${remaining.join(", ")} still there after ${DELETE_WAIT_MS / 1000} s): once they are gone, fix the cause, then ${again}.`;
        throw new Error(`${verdict.message}\n${deleted}`);
      }
      if (Date.now() > deadline) {
        throw new Error(
          `DataVolume ${inputs.namespace}/${inputs.name} did not finish importing within ${inputs.timeoutSeconds} s (${verdict.detail})`,
        );
      }
      await sleep(3000);
    }
  },

  async diff() {
    // Imported once; the DataVolume's spec cannot change.
    return { changes: false };
  },
};

/** Ends `pulumi up` when the import is done, or with the named cause of its failure. */
export class ImportWatch extends pulumi.dynamic.Resource {
  constructor(
    name: string,
    args: Omit<ImportWatchInputs, "kube" | "storageClass"> & {
      kube: pulumi.Input<KubeTarget>;
      storageClass?: pulumi.Input<string>;
    },
    opts: pulumi.CustomResourceOptions,
  ) {
    super(
      importWatchProvider,
      name,
      { ...args, kube: pulumi.secret(args.kube) },
      opts,
      "pulp",
      "ImportWatch",
    );
  }
}
