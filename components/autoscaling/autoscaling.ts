// The autoscalers of an install: a HorizontalPodAutoscaler on CPU for api, content and pulp-web, and KEDA
// on the depth of Pulp's task queue for the workers. The Deployments they size leave spec.replicas to
// them (workload.ts; decide.ts says when an update must set it instead).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { CpuAutoscaling, QueueAutoscaling } from "../config/schema";
import { Component, fixedName, Identity, labels } from "../common/labels";
import { DatabaseSettings } from "../settings/render";
import { SecretKeyRef } from "../secrets/pulpSecrets";
import { KEDA_PAUSED, KEDA_PAUSED_REPLICAS, PAUSE_TIMEOUT_SECONDS } from "../upgrade/stopTheWorld";

/**
 * Work in hand: tasks running, and waiting tasks a worker has found unblocked (their locks free), so that a
 * queue of tasks on one repository, which run one after another, does not start a worker for each. With no
 * worker nothing marks tasks unblocked: any waiting task then counts as one, which wakes the first worker.
 * Both states are indexed (pulpcore app/models/task.py, 3.85 to 3.123).
 */
export const TASK_QUEUE_QUERY =
  "SELECT GREATEST(COUNT(*) FILTER (WHERE state = 'running' OR unblocked_at IS NOT NULL), LEAST(COUNT(*), 1)) " +
  "FROM core_task WHERE state IN ('waiting', 'running')";

/** An HPA on the pods' CPU use (a share of their request), named as the Deployment it sizes. */
export function cpuAutoscaler(
  name: string,
  args: {
    namespace: pulumi.Input<string>;
    identity: Identity;
    component: Component;
    deployment: pulumi.Input<string>;
    autoscaling: CpuAutoscaling;
  },
  opts: pulumi.CustomResourceOptions,
): k8s.autoscaling.v2.HorizontalPodAutoscaler {
  return new k8s.autoscaling.v2.HorizontalPodAutoscaler(
    name,
    {
      metadata: {
        name: fixedName(args.identity, args.component),
        namespace: args.namespace,
        labels: labels(args.identity, args.component),
      },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: args.deployment },
        minReplicas: args.autoscaling.minReplicas,
        maxReplicas: args.autoscaling.maxReplicas,
        metrics: [
          {
            type: "Resource",
            resource: {
              name: "cpu",
              target: { type: "Utilization", averageUtilization: args.autoscaling.cpuUtilization },
            },
          },
        ],
      },
    },
    opts,
  );
}

export interface TaskQueueScalerArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  /** The worker Deployment. */
  deployment: pulumi.Input<string>;
  autoscaling: QueueAutoscaling;
  database: DatabaseSettings;
  /** The Secret key holding the database password Pulp uses. */
  password: SecretKeyRef;
  /**
   * Held at zero (idle, maintenance): KEDA stops its scale loop, holds the workers at zero itself and says so
   * (its Paused condition) before this resource is done. Whatever depends on it runs after that.
   */
  paused: boolean;
  /**
   * Changes whenever the worker pods change. A stop-the-world step pauses KEDA through the same annotation;
   * with this the ScaledObject is applied again after the new workers rolled out, which unpauses it.
   */
  rolloutKey: pulumi.Input<string>;
}

/**
 * KEDA's ScaledObject for the workers, with the PostgreSQL scaler reading TASK_QUEUE_QUERY. KEDA makes
 * and owns the HorizontalPodAutoscaler behind it, and scales to zero and back itself.
 */
export class TaskQueueScaler extends pulumi.ComponentResource {
  readonly scaledObject: k8s.apiextensions.CustomResource;

  constructor(name: string, args: TaskQueueScalerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:autoscaling:TaskQueueScaler", name, {}, opts);
    const metaLabels = labels(args.identity, "worker");
    const scaledObjectName = fixedName(args.identity, "worker");
    const auth = new k8s.apiextensions.CustomResource(
      name,
      {
        apiVersion: "keda.sh/v1alpha1",
        kind: "TriggerAuthentication",
        metadata: { name: `${scaledObjectName}-queue`, namespace: args.namespace, labels: metaLabels },
        spec: {
          secretTargetRef: [{ parameter: "password", name: args.password.name, key: args.password.key }],
        },
      },
      { parent: this },
    );
    const { autoscaling } = args;
    this.scaledObject = new k8s.apiextensions.CustomResource(
      name,
      {
        apiVersion: "keda.sh/v1alpha1",
        kind: "ScaledObject",
        metadata: {
          name: scaledObjectName,
          namespace: args.namespace,
          labels: metaLabels,
          annotations: {
            [KEDA_PAUSED]: String(args.paused),
            // Paused alone keeps the count KEDA last set: with tasks waiting that may be a worker it woke
            // while the Deployment was going to zero. With a count, KEDA scales to it once paused.
            ...(args.paused
              ? {
                  [KEDA_PAUSED_REPLICAS]: "0",
                  "pulumi.com/waitFor": "condition=Paused",
                  "pulumi.com/timeoutSeconds": String(PAUSE_TIMEOUT_SECONDS),
                }
              : {}),
            "pulp.pulpproject.org/workers": args.rolloutKey,
            // Takes the pause annotation back from the stop-the-world step's field manager.
            "pulumi.com/patchForce": "true",
          },
        },
        spec: {
          scaleTargetRef: { name: args.deployment },
          minReplicaCount: autoscaling.minReplicas,
          maxReplicaCount: autoscaling.maxReplicas,
          pollingInterval: autoscaling.pollingIntervalSeconds,
          cooldownPeriod: autoscaling.cooldownSeconds,
          advanced: {
            horizontalPodAutoscalerConfig: {
              name: scaledObjectName,
              // Between 1 and max, the HPA removes workers; the same wait as KEDA's to zero.
              behavior: { scaleDown: { stabilizationWindowSeconds: autoscaling.cooldownSeconds } },
            },
          },
          triggers: [
            {
              type: "postgresql",
              metadata: {
                ...scalerConnection(args.database, args.namespace),
                query: TASK_QUEUE_QUERY,
                targetQueryValue: String(autoscaling.tasksPerWorker),
                activationTargetQueryValue: "0",
              },
              authenticationRef: { name: auth.metadata.name },
            },
          ],
        },
      },
      { parent: this },
    );
    this.registerOutputs({ scaledObject: this.scaledObject.metadata.name });
  }
}

/**
 * Where KEDA's operator (in its own namespace) reaches Pulp's database. A name without a dot is the
 * in-namespace Service Pulp reaches it by. KEDA's pgx cannot be given the server's CA: a verifying mode
 * becomes `require` (encrypted, the server not verified) for this query only; Pulp keeps its own.
 */
export function scalerConnection(
  db: DatabaseSettings,
  namespace: pulumi.Input<string>,
): Record<string, pulumi.Input<string>> {
  return {
    host: db.host.includes(".") ? db.host : pulumi.interpolate`${db.host}.${namespace}.svc`,
    port: String(db.port),
    userName: db.user,
    dbName: db.name,
    sslmode: db.sslmode === "verify-ca" || db.sslmode === "verify-full" ? "require" : db.sslmode,
  };
}
