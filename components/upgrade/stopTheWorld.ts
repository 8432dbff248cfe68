// The stop-the-world step of an upgrade across a RequireVersion floor (plan.ts): every old api, content
// and worker process stops and their heartbeats age past the TTL before the migration Job may start.
import * as pulumi from "@pulumi/pulumi";
import { STOP_THE_WORLD_STEP, StopTheWorldContract, TYPES } from "../contract";
import { KubeTarget, kubeApi } from "./kubeApi";

/** The inputs the plan summary reads (the contract), plus where the cluster is. */
export interface StopTheWorldInputs extends StopTheWorldContract {
  /** The component's cluster (upgrade/cluster.ts): the only one the step talks to. */
  kube: KubeTarget;
  /** How long KEDA has to confirm a pause (default PAUSE_TIMEOUT_SECONDS). */
  pauseTimeoutSeconds?: number;
}

/** A Deployment this step scaled to zero, and how to tell later whether anything has changed it since. */
export interface StoppedDeployment {
  name: string;
  replicas: number;
  /** metadata.generation right after the scale-down. */
  generation: number;
}

export interface StopTheWorldOutputs extends StopTheWorldInputs {
  stopped: StoppedDeployment[];
  /** When the last old pod was gone; migrations may run a TTL later. */
  lastPodGoneAt: string;
  heartbeatsExpiredAt: string;
}

const FIELD_MANAGER = "pulp-stop-the-world";

/**
 * create: scale the Deployments to zero through their scale subresource, wait until their pods are gone,
 * then wait out the heartbeat TTL. Runs once per upgrade (the resource name carries from and to).
 *
 * delete (the next update, when the upgrade is over or was reverted): a Deployment that nothing has
 * changed since it was stopped (same generation, still zero) is scaled back. That is the revert path:
 * the migration failed, the config goes back to the old release, and Pulumi sees no change in the
 * Deployments themselves. After a successful upgrade the new release's apply has changed them, so
 * nothing is touched.
 */
export const stopTheWorldProvider: pulumi.dynamic.ResourceProvider = {
  async create(inputs: StopTheWorldInputs) {
    const api = kubeApi(inputs.kube);
    const base = `/apis/apps/v1/namespaces/${inputs.namespace}/deployments`;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    // Paused first, and confirmed: until KEDA has stopped its scale loop it would wake a worker for the
    // tasks waiting. The ScaledObject's own apply, after the new release has rolled out, unpauses it.
    for (const name of inputs.scaledObjects ?? []) {
      await pauseScaledObject(api, inputs.namespace, name, true);
    }
    const pauseTimeout = inputs.pauseTimeoutSeconds ?? PAUSE_TIMEOUT_SECONDS;
    for (const name of inputs.scaledObjects ?? []) {
      if (await kedaConfirmsPause(api, inputs.namespace, name, pauseTimeout * 1000)) continue;
      for (const other of inputs.scaledObjects ?? []) {
        await pauseScaledObject(api, inputs.namespace, other, false);
      }
      throw new Error(
        `stop-the-world for pulpcore ${inputs.from} -> ${inputs.to}: KEDA did not confirm the pause of ` +
          `ScaledObject ${inputs.namespace}/${name} within ${pauseTimeout} s (no Paused condition), so ` +
          `it could still wake old workers. Nothing was stopped or upgraded. Check KEDA's operator ` +
          `(kubectl get pods -A -l app=keda-operator), then run pulumi up again.`,
      );
    }
    const stopped: StoppedDeployment[] = [];
    const selectors: string[] = [];
    for (const name of inputs.deployments) {
      const deployment = await api.request("GET", `${base}/${name}`);
      if (!deployment) continue;
      const replicas: number = deployment.spec.replicas ?? 1;
      const matchLabels: Record<string, string> = deployment.spec.selector?.matchLabels ?? {};
      selectors.push(
        Object.entries(matchLabels)
          .map(([k, v]) => `${k}=${v}`)
          .join(","),
      );
      if (replicas === 0) continue;
      await api.request(
        "PATCH",
        `${base}/${name}/scale?fieldManager=${FIELD_MANAGER}`,
        { spec: { replicas: 0 } },
        "application/merge-patch+json",
      );
      const after = await api.request("GET", `${base}/${name}`);
      stopped.push({ name, replicas, generation: after?.metadata.generation ?? 0 });
    }

    // Heartbeats stop when the process exits; a pod object outlives its process, so its absence is proof.
    const deadline = Date.now() + inputs.podsGoneTimeoutSeconds * 1000;
    for (;;) {
      const left: string[] = [];
      for (const selector of selectors) {
        const pods = await api.request(
          "GET",
          `/api/v1/namespaces/${inputs.namespace}/pods?labelSelector=${encodeURIComponent(selector)}`,
        );
        left.push(...(pods?.items ?? []).map((p) => p.metadata.name));
      }
      if (left.length === 0) break;
      if (Date.now() > deadline) {
        throw new Error(
          `stop-the-world for pulpcore ${inputs.from} -> ${inputs.to}: after ${inputs.podsGoneTimeoutSeconds} s ` +
            `these pods still exist in ${inputs.namespace}: ${left.join(", ")}. Migrations did not run and ` +
            `nothing was upgraded. Find out what holds them (kubectl describe pod), then run pulumi up again.`,
        );
      }
      await sleep(1000);
    }
    const lastPodGoneAt = new Date();
    await sleep(inputs.heartbeatTtlSeconds * 1000);

    return {
      id: `${inputs.namespace}/${inputs.from}->${inputs.to}`,
      outs: {
        ...inputs,
        stopped,
        lastPodGoneAt: lastPodGoneAt.toISOString(),
        heartbeatsExpiredAt: new Date().toISOString(),
      },
    };
  },

  async diff() {
    // Done once; a later change (a new kubeconfig path, say) must not stop Pulp again.
    return { changes: false };
  },

  async delete(_id: string, outs: StopTheWorldOutputs) {
    const api = kubeApi(outs.kube);
    const base = `/apis/apps/v1/namespaces/${outs.namespace}/deployments`;
    let restarted = false;
    for (const s of outs.stopped ?? []) {
      const deployment = await api.request("GET", `${base}/${s.name}`);
      if (!deployment || !shouldRestart(s, deployment)) continue;
      await api.request(
        "PATCH",
        `${base}/${s.name}/scale?fieldManager=${FIELD_MANAGER}`,
        { spec: { replicas: s.replicas } },
        "application/merge-patch+json",
      );
      restarted = true;
    }
    // The revert path (nothing has applied the Deployments, so nothing has applied the ScaledObjects either).
    if (restarted) {
      for (const name of outs.scaledObjects ?? []) {
        await pauseScaledObject(api, outs.namespace, name, false);
      }
    }
  },
};

/** KEDA's pause annotation (kedacore/keda apis/keda/v1alpha1 scaledobject_types.go): "false" scales again. */
export const KEDA_PAUSED = "autoscaling.keda.sh/paused";
/** Paused at this count: KEDA scales the target to it once its scale loop has stopped. */
export const KEDA_PAUSED_REPLICAS = "autoscaling.keda.sh/paused-replicas";
/** How long KEDA's operator has to confirm a pause (its Paused condition) before the update fails. */
export const PAUSE_TIMEOUT_SECONDS = 120;

/** Whether KEDA reports the ScaledObject paused (or it is gone) within `timeoutMs`. */
export async function kedaConfirmsPause(
  api: ReturnType<typeof kubeApi>,
  namespace: string,
  name: string,
  timeoutMs: number,
  pollMs = 1000,
): Promise<boolean> {
  const path = `/apis/keda.sh/v1alpha1/namespaces/${namespace}/scaledobjects/${name}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const so = await api.request("GET", path);
    if (!so) return true;
    if ((so.status?.conditions ?? []).some((c) => c.type === "Paused" && c.status === "True")) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

async function pauseScaledObject(
  api: ReturnType<typeof kubeApi>,
  namespace: string,
  name: string,
  paused: boolean,
): Promise<void> {
  const path = `/apis/keda.sh/v1alpha1/namespaces/${namespace}/scaledobjects/${name}`;
  if (!(await api.request("GET", path))) return;
  await api.request(
    "PATCH",
    `${path}?fieldManager=${FIELD_MANAGER}`,
    { metadata: { annotations: { [KEDA_PAUSED]: String(paused) } } },
    "application/merge-patch+json",
  );
}

/** The revert path: nothing but this step has touched the Deployment since it was stopped. */
export function shouldRestart(
  stopped: StoppedDeployment,
  live: { metadata: { generation: number }; spec: { replicas?: number } },
): boolean {
  return stopped.replicas > 0 && live.spec.replicas === 0 && live.metadata.generation === stopped.generation;
}

export type StopTheWorldArgs = Omit<StopTheWorldInputs, "namespace" | "kube"> & {
  namespace: pulumi.Input<string>;
  /** May hold a whole kubeconfig: kept as a secret in the state (the delete step needs it). */
  kube: pulumi.Input<KubeTarget>;
};

/** The step itself; a resource of its own so it runs in the update's dependency order. */
class StopTheWorldStep extends pulumi.dynamic.Resource {
  constructor(name: string, args: StopTheWorldArgs, opts: pulumi.CustomResourceOptions) {
    super(
      stopTheWorldProvider,
      name,
      {
        ...args,
        kube: pulumi.secret(args.kube),
        stopped: undefined,
        lastPodGoneAt: undefined,
        heartbeatsExpiredAt: undefined,
      },
      // Registered as `pulumi-nodejs:dynamic:Resource` before it had a type of its own.
      pulumi.mergeOptions(opts, { aliases: [{ type: "pulumi-nodejs:dynamic:Resource" }] }),
      STOP_THE_WORLD_STEP.module,
      STOP_THE_WORLD_STEP.type,
    );
  }
}

/**
 * Stops the old release for an upgrade whose migrations need every older process gone. The migration
 * Job depends on it; the Deployments, which depend on the Job, bring the new release up.
 */
export class StopTheWorld extends pulumi.ComponentResource {
  readonly step: pulumi.CustomResource;

  constructor(name: string, args: StopTheWorldArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPES.stopTheWorld, name, {}, opts);
    const what = args.restoring ? `restore-${args.restoring}` : `${args.from}-to-${args.to}`;
    // What the component waits for (a restore's import), its step waits for.
    this.step = new StopTheWorldStep(`${name}-${what}`, args, { parent: this, dependsOn: opts?.dependsOn });
    this.registerOutputs({});
  }
}
