import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { Component, fixedName, Identity, labels, runningLabels, selectorLabels } from "../common/labels";
import { contentHash } from "../common/hash";
import { deepMerge, PodSpecOverrides } from "../common/merge";
import { PodDefaults, restricted } from "./podSecurity";
import { cpuAutoscaler } from "../autoscaling/autoscaling";
import { CpuAutoscaling } from "../config/schema";

/** Pod-template annotation holding a hash of exactly the config the pods consume: a change rolls them. */
import { CONFIG_HASH_ANNOTATION } from "../contract";
export { CONFIG_HASH_ANNOTATION };

/** Deployment annotation: a hash of the pod template the last `up` saw roll out completely. */
export const ROLLED_OUT_ANNOTATION = "pulp.pulpproject.org/rolled-out-template";

export interface WorkloadArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  component: Component;
  replicas: number;
  /** Containers, volumes and the like; security context, labels and spreading are added here. */
  podSpec: k8s.types.input.core.v1.PodSpec;
  /** Hash of the settings, secrets and files the pods read. */
  configHash: pulumi.Input<string>;
  /** Exposes `port` through a Service named `<instance>-<component>` (ClusterIP unless `type` says). */
  service?: {
    port: number;
    targetPort: number;
    type?: "ClusterIP" | "NodePort" | "LoadBalancer";
    nodePort?: number;
    annotations?: Record<string, pulumi.Input<string>>;
    loadBalancerSourceRanges?: string[];
  };
  disruptionBudget: { maxUnavailable: number } | { minAvailable: number };
  topologySpread: boolean;
  /** Merged over the generated spec, lists by name (common/merge.ts); sidecars get the secure defaults too. */
  podSpecOverrides?: PodSpecOverrides;
  /** nodeSelector, tolerations and affinity of the pods (before podSpecOverrides). */
  podDefaults?: PodDefaults;
  /** Pod template annotations; the config-hash annotation is always added. */
  podAnnotations?: Record<string, string>;
  /** Pod template labels beside the program's own, such as the one AKS's workload identity webhook reads. */
  podLabels?: Record<string, string>;
  /** @default 600 */
  progressDeadlineSeconds?: number;
  uid?: number;
  /**
   * Whether the pods run the Pulp image, and so their template carries `app.kubernetes.io/version`. Redis and
   * pulp-web run images of their own: a Pulp upgrade must not change (and roll) their pod templates. The
   * Deployment, PodDisruptionBudget and Service never carry it: an upgrade changes only what runs.
   */
  runsPulp: boolean;
  /**
   * Sized by an autoscaler: `replicas` is the count on create (and when `leaveReplicas` is false); with
   * `cpu` a HorizontalPodAutoscaler is made here (the workers' KEDA ScaledObject is made by pulp.ts).
   */
  autoscaled?: { leaveReplicas: boolean; maxReplicas: number; cpu?: CpuAutoscaling };
  /** What must be done before the Deployment changes (the migration Job). A component's own dependsOn
   * does not hold back its children, so it is passed down to the Deployment itself. */
  after?: pulumi.Resource[];
}

/**
 * One Pulp process kind: a Deployment that rolls with `maxUnavailable: 0` (a new pod must be ready
 * before an old one goes), a PodDisruptionBudget, and a Service when the process listens.
 */
export class Workload extends pulumi.ComponentResource {
  readonly deployment: k8s.apps.v1.Deployment;
  readonly autoscaler?: k8s.autoscaling.v2.HorizontalPodAutoscaler;
  /**
   * Done once the Deployment's current generation has rolled out: every pod new and available, no old one
   * left. What must come after a rollout (the api and content after the workers, the history record)
   * depends on this rather than on the Deployment.
   */
  readonly rolledOut: k8s.apps.v1.DeploymentPatch;
  readonly service?: k8s.core.v1.Service;
  readonly disruptionBudget: k8s.policy.v1.PodDisruptionBudget;
  readonly name: string;

  constructor(name: string, args: WorkloadArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:workload:Workload", name, {}, opts);
    const selector = selectorLabels(args.identity, args.component);
    const metaLabels = labels(args.identity, args.component);
    const podLabels = args.runsPulp ? runningLabels(args.identity, args.component) : metaLabels;
    this.name = fixedName(args.identity, args.component);

    const spread = (topologyKey: string): k8s.types.input.core.v1.TopologySpreadConstraint => ({
      maxSkew: 1,
      topologyKey,
      // ScheduleAnyway: a single-zone or single-node cluster still schedules every replica.
      whenUnsatisfiable: "ScheduleAnyway",
      labelSelector: { matchLabels: selector },
      // Spread each ReplicaSet on its own, so a rollout's new pods are spread too.
      matchLabelKeys: ["pod-template-hash"],
    });
    const podSpec = restricted(
      deepMerge(
        {
          ...args.podSpec,
          // Service links would put PULP_REDIS_PORT=tcp://... in the env of an instance named "pulp", and
          // dynaconf reads every PULP_* variable as a setting (found on real Pulp: Redis unreachable).
          enableServiceLinks: false,
          ...args.podDefaults,
          topologySpreadConstraints: args.topologySpread
            ? [spread("topology.kubernetes.io/zone"), spread("kubernetes.io/hostname")]
            : undefined,
        },
        args.podSpecOverrides ?? {},
      ),
      args.uid,
    );

    const template = {
      metadata: {
        labels: { ...args.podLabels, ...podLabels },
        annotations: { ...args.podAnnotations, [CONFIG_HASH_ANNOTATION]: args.configHash },
      },
      spec: podSpec,
    };
    const progressDeadlineSeconds = args.progressDeadlineSeconds ?? 600;
    const rolloutTimeout = `${progressDeadlineSeconds * ((args.autoscaled?.maxReplicas ?? args.replicas) + 1)}s`;
    this.deployment = new k8s.apps.v1.Deployment(
      name,
      {
        metadata: {
          name: this.name,
          namespace: args.namespace,
          labels: metaLabels,
          // A stop-the-world upgrade scales Pulp's Deployments to zero through the scale subresource (another
          // field manager); the new release's apply must take spec.replicas back instead of failing on the
          // conflict (pulumi-kubernetes provider/pkg/await/await.go, patchForce).
          annotations: args.runsPulp ? { "pulumi.com/patchForce": "true" } : undefined,
        },
        spec: {
          replicas: args.replicas,
          selector: { matchLabels: selector },
          strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
          revisionHistoryLimit: 5,
          progressDeadlineSeconds,
          template,
        },
      },
      {
        parent: this,
        dependsOn: args.after,
        // The provider reports ProgressDeadlineExceeded but keeps waiting until its own timeout (10 min by
        // default): end the wait once every new pod has had its deadline, so `up` fails with the reason.
        customTimeouts: { create: rolloutTimeout, update: rolloutTimeout },
        // The autoscaler's count stays: under server-side apply the provider leaves the field out when the
        // autoscaler owns it, and sends the live value while this stack still does (pulumi-kubernetes
        // provider/pkg/await/await.go, handleSSAIgnoreFields). A dropped field would fall back to 1.
        ignoreChanges: args.autoscaled?.leaveReplicas ? ["spec.replicas"] : undefined,
      },
    );

    // The Deployment's own await can take a rollout as done before it starts: pulumi-kubernetes (4.25 to
    // 4.32, provider/pkg/await/deployment.go) subscribes to the namespace's shared informer after its patch,
    // and a cached copy from before the patch has observedGeneration == generation and the old revision
    // complete (CI: `up` returned with an old content pod serving). This patch, applied after the Deployment
    // returned, only annotates it (no rollout; a new annotation does bump a Deployment's generation, so the
    // value is the template's hash, which only the program changes); its await waits until the controller
    // has observed the Deployment's latest generation and reports its ReplicaSet available.
    this.rolledOut = new k8s.apps.v1.DeploymentPatch(
      `${name}-rolled-out`,
      {
        metadata: {
          name: this.deployment.metadata.name,
          namespace: this.deployment.metadata.namespace,
          annotations: {
            [ROLLED_OUT_ANNOTATION]: pulumi.output(template).apply((t) => contentHash(t)),
          },
        },
      },
      { parent: this, customTimeouts: { create: rolloutTimeout, update: rolloutTimeout } },
    );

    if (args.autoscaled?.cpu) {
      this.autoscaler = cpuAutoscaler(
        name,
        {
          namespace: args.namespace,
          identity: args.identity,
          component: args.component,
          deployment: this.deployment.metadata.name,
          autoscaling: args.autoscaled.cpu,
        },
        { parent: this },
      );
    }

    this.disruptionBudget = new k8s.policy.v1.PodDisruptionBudget(
      name,
      {
        metadata: { name: this.name, namespace: args.namespace, labels: metaLabels },
        spec: { ...args.disruptionBudget, selector: { matchLabels: selector } },
      },
      { parent: this, dependsOn: args.after },
    );

    if (args.service) {
      this.service = new k8s.core.v1.Service(
        name,
        {
          metadata: {
            name: this.name,
            namespace: args.namespace,
            labels: metaLabels,
            annotations: serviceAnnotations(args.service.annotations, args.replicas),
          },
          spec: {
            type: args.service.type ?? "ClusterIP",
            selector,
            ports: [
              {
                name: "http",
                port: args.service.port,
                targetPort: args.service.targetPort,
                protocol: "TCP",
                nodePort: args.service.nodePort,
              },
            ],
            loadBalancerSourceRanges: args.service.loadBalancerSourceRanges?.length
              ? args.service.loadBalancerSourceRanges
              : undefined,
          },
        },
        // The Service's await needs ready endpoints, which exist only once the Deployment's pods are ready.
        { parent: this, dependsOn: [this.deployment] },
      );
    }

    this.registerOutputs({ deployment: this.deployment.metadata.name, service: this.service?.metadata.name });
  }
}

/** The user's annotations; with no replicas (idle) there are no endpoints to wait for. */
function serviceAnnotations(
  given: Record<string, pulumi.Input<string>> | undefined,
  replicas: number,
): Record<string, pulumi.Input<string>> | undefined {
  const all = { ...given, ...(replicas === 0 ? { "pulumi.com/skipAwait": "true" } : {}) };
  return Object.keys(all).length > 0 ? all : undefined;
}
