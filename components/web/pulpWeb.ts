import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { contentCacheVolumeBytes, scratchSize, SMALL_DIR, toQuantity } from "../config/ephemeral";
import { parseQuantity } from "../config/formats";
import { PulpConfig } from "../config/parse";
import { webService } from "../config/schema";
import { contentHash } from "../common/hash";
import { fixedName, Identity, labels } from "../common/labels";
import { PodSpecOverrides } from "../common/merge";
import { PodDefaults } from "../workload/podSecurity";
import { Workload, WorkloadArgs } from "../workload/workload";
import { CONTENT_CACHE_DIR, ContentCacheInput, renderNginxConf, NginxInput, WEB_PORT } from "./nginx";

export interface PulpWebArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  web: PulpConfig["web"];
  upstreams: Omit<NginxInput, "clientMaxBodySize" | "listenIPv6" | "contentCache">;
  after?: pulumi.Resource[];
  podDefaults?: PodDefaults;
  /** Sized by a HorizontalPodAutoscaler (pulp:web.autoscaling; decide.ts). */
  autoscaled?: WorkloadArgs["autoscaled"];
}

export const NGINX_GRACEFUL_STOP = "sleep 10; nginx -s quit; while [ -e /tmp/nginx.pid ]; do sleep 1; done";

/** The pulp-web nginx in front of api and content, with its config in a content-named ConfigMap. */
export class PulpWeb extends pulumi.ComponentResource {
  readonly workload: Workload;

  constructor(name: string, args: PulpWebArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:web:PulpWeb", name, {}, opts);
    const cache = args.web.contentCache;
    const contentCache: ContentCacheInput | undefined = cache.enabled
      ? {
          maxBytes: parseQuantity(cache.size) ?? 0,
          maxEntryBytes: parseQuantity(cache.maxEntrySize) ?? 0,
          privateHeaders: cache.privateHeaders,
        }
      : undefined;
    const cacheVolume = toQuantity(contentCacheVolumeBytes(cache));
    const conf = renderNginxConf({
      ...args.upstreams,
      clientMaxBodySize: args.web.clientMaxBodySize,
      listenIPv6: args.web.listenIPv6,
      contentCache,
    });
    const hash = contentHash(conf);
    const configMap = new k8s.core.v1.ConfigMap(
      name,
      {
        metadata: {
          name: fixedName(args.identity, `web-${hash}`),
          namespace: args.namespace,
          labels: labels(args.identity, "config"),
        },
        immutable: true,
        data: { "nginx.conf": conf },
      },
      { parent: this, dependsOn: args.after },
    );
    const health = { httpGet: { path: "/healthz", port: WEB_PORT }, periodSeconds: 10, timeoutSeconds: 5 };
    const startupTuned = Object.values(args.web.probes.startup).some((v) => v !== undefined);
    this.workload = new Workload(
      name,
      {
        namespace: args.namespace,
        identity: args.identity,
        component: "web",
        runsPulp: false,
        replicas: args.web.replicas,
        autoscaled: args.autoscaled,
        configHash: hash,
        service: { ...webService(args.web), targetPort: WEB_PORT },
        disruptionBudget: args.web.podDisruptionBudget,
        topologySpread: args.web.topologySpread,
        podSpecOverrides: args.web.podSpecOverrides as PodSpecOverrides,
        podAnnotations: args.web.podAnnotations,
        podDefaults: args.podDefaults,
        after: args.after,
        podSpec: {
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: "web",
              image: args.web.image,
              ports: [{ name: "http", containerPort: WEB_PORT }],
              resources: args.web.resources,
              // nginx answers /healthz as soon as it listens: a startup probe only when one is tuned, so
              // pods without the key stay as they are.
              startupProbe: startupTuned ? { ...health, ...args.web.probes.startup } : undefined,
              readinessProbe: { ...health, ...args.web.probes.readiness },
              livenessProbe: { ...health, failureThreshold: 5, ...args.web.probes.liveness },
              // SIGTERM is nginx's fast shutdown and cuts open downloads: after the endpoint removal has
              // spread, ask for the graceful one (QUIT) and wait until the master has exited.
              lifecycle: { preStop: { exec: { command: ["/bin/sh", "-c", NGINX_GRACEFUL_STOP] } } },
              volumeMounts: [
                { name: "conf", mountPath: "/etc/nginx/nginx.conf", subPath: "nginx.conf", readOnly: true },
                { name: "tmp", mountPath: "/tmp" },
                { name: "cache", mountPath: "/var/cache/nginx" },
                ...(contentCache ? [{ name: "content-cache", mountPath: CONTENT_CACHE_DIR }] : []),
              ],
            },
          ],
          volumes: [
            { name: "conf", configMap: { name: configMap.metadata.name } },
            // Request bodies and buffered responses (nginx.ts temp paths): what the limit leaves beside logs.
            {
              name: "tmp",
              emptyDir: {
                sizeLimit: scratchSize(args.web.resources.limits["ephemeral-storage"], cacheVolume),
              },
            },
            // The image's compiled-in temp directories, which the config moves to /tmp: left empty.
            { name: "cache", emptyDir: { sizeLimit: SMALL_DIR } },
            // Lost with the pod: each pod fills its own from what it serves.
            ...(contentCache ? [{ name: "content-cache", emptyDir: { sizeLimit: cacheVolume } }] : []),
          ],
        },
      },
      { parent: this },
    );
    this.registerOutputs({});
  }
}
