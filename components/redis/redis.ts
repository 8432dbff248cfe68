import * as pulumi from "@pulumi/pulumi";
import { scratchSize } from "../config/ephemeral";
import { ResourcesConfig } from "../config/schema";
import { contentHash } from "../common/hash";
import { fixedName, Identity } from "../common/labels";
import { PodSpecOverrides } from "../common/merge";
import { PodDefaults } from "../workload/podSecurity";
import { Workload } from "../workload/workload";

export const REDIS_PORT = 6379;
/** The uid of the official redis images' `redis` user. */
const REDIS_UID = 999;

export interface RedisArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  image: string;
  resources: ResourcesConfig;
  /** 1, or 0 when the install is idle. */
  replicas: number;
  /** Merged over the generated pod spec, lists by name (common/merge.ts). */
  podSpecOverrides?: PodSpecOverrides;
  podDefaults?: PodDefaults;
  /** What must be done before the Deployment is made (a restore's check). */
  after?: pulumi.Resource[];
}

/** The Service name of an instance's Redis, known before the Redis is made. */
export function redisHost(identity: Identity): string {
  return fixedName(identity, "redis");
}

/** A single Redis for the content cache and the redis worker type. It holds no data worth keeping. */
export class Redis extends pulumi.ComponentResource {
  readonly workload: Workload;
  readonly host: string;

  constructor(name: string, args: RedisArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:redis:Redis", name, {}, opts);
    // A cache only: nothing saved. Protected mode refuses every client off loopback when no password is
    // set, and this `command` replaces the image entrypoint that would turn it off (found on real Pulp:
    // "DENIED Redis is running in protected mode"). Only pods in the namespace reach the Service.
    const command = [
      "redis-server",
      "--save",
      "",
      "--appendonly",
      "no",
      "--port",
      String(REDIS_PORT),
      "--protected-mode",
      "no",
    ];
    const probe = { tcpSocket: { port: REDIS_PORT }, periodSeconds: 10, timeoutSeconds: 5 };
    this.workload = new Workload(
      name,
      {
        namespace: args.namespace,
        identity: args.identity,
        component: "redis",
        runsPulp: false,
        replicas: args.replicas,
        uid: REDIS_UID,
        configHash: contentHash({ command }),
        service: { port: REDIS_PORT, targetPort: REDIS_PORT },
        disruptionBudget: { maxUnavailable: 1 },
        topologySpread: false,
        podSpecOverrides: args.podSpecOverrides,
        podDefaults: args.podDefaults,
        after: args.after,
        podSpec: {
          containers: [
            {
              name: "redis",
              image: args.image,
              command,
              ports: [{ name: "redis", containerPort: REDIS_PORT }],
              resources: args.resources,
              readinessProbe: probe,
              livenessProbe: { ...probe, failureThreshold: 5 },
              volumeMounts: [{ name: "data", mountPath: "/data" }],
            },
          ],
          volumes: [
            {
              name: "data",
              emptyDir: { sizeLimit: scratchSize(args.resources.limits["ephemeral-storage"]) },
            },
          ],
        },
      },
      { parent: this },
    );
    this.host = this.workload.name;
    this.registerOutputs({ host: this.host });
  }
}
