// pulp:proxy: the standard proxy variables for Pulp's processes, with NO_PROXY listing every in-cluster
// name Pulp uses. Short Service names match no domain suffix; without them, in-cluster traffic went to the
// corporate proxy (galaxy-operator #275, a Sev1).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { fixedName, Identity, labels } from "../common/labels";
import { ProxyConfig } from "../config/schema";

/** What a pod needs for the proxy: the Secret with its URLs (they may hold a password), and NO_PROXY. */
export interface ProxyRuntime {
  secretName: string;
  keys: ("http" | "https")[];
  noProxy: string;
}

export const METADATA_HOSTS = [
  "169.254.169.254",
  "169.254.170.23",
  "fd00:ec2::254",
  "metadata.google.internal",
];

/** The names NO_PROXY lists: loopback, Pulp's own Services, every Service's longer names, then the user's. */
export function noProxyList(args: {
  identity: Identity;
  namespace: string;
  databaseHost: string;
  /** The object storage endpoint, when there is one: its host is listed when it has no domain (in-cluster). */
  storageEndpoint?: string;
  extra: readonly string[];
}): string[] {
  const endpointHost = args.storageEndpoint ? new URL(args.storageEndpoint).hostname : undefined;
  return [
    ...new Set([
      "localhost",
      "127.0.0.1",
      "::1",
      ...["api", "content", "web", "redis"].map((c) => fixedName(args.identity, c)),
      args.databaseHost,
      ...(endpointHost && !endpointHost.includes(".") ? [endpointHost] : []),
      // <service>.<namespace>, <service>.<namespace>.svc and the full name (a leading dot: any host under it).
      `.${args.namespace}`,
      ".svc",
      ".cluster.local",
      "kubernetes.default",
      // The node's metadata services, where a pod's cloud identity comes from (AWS IMDS and EKS Pod Identity,
      // GKE's metadata server, Azure IMDS): link-local, never behind a proxy. botocore and google-auth honour
      // the proxy variables, so without these a keyless identity fails once a proxy is set.
      ...METADATA_HOSTS,
      ...args.extra,
    ]),
  ];
}

/** HTTP_PROXY, HTTPS_PROXY and NO_PROXY, each also in lower case (curl reads only http_proxy so). */
export function proxyEnv(proxy: ProxyRuntime | undefined): k8s.types.input.core.v1.EnvVar[] {
  if (!proxy) return [];
  const fromSecret = (key: string) => ({ secretKeyRef: { name: proxy.secretName, key } });
  return [
    ...proxy.keys.flatMap((key) => [
      { name: `${key.toUpperCase()}_PROXY`, valueFrom: fromSecret(key) },
      { name: `${key}_proxy`, valueFrom: fromSecret(key) },
    ]),
    { name: "NO_PROXY", value: proxy.noProxy },
    { name: "no_proxy", value: proxy.noProxy },
  ];
}

export interface ProxyArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  proxy: ProxyConfig;
  noProxy: string[];
}

/** The Secret with the proxy's URLs. */
export class Proxy extends pulumi.ComponentResource {
  readonly runtime: ProxyRuntime;
  readonly secret: k8s.core.v1.Secret;

  constructor(name: string, args: ProxyArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:proxy:Proxy", name, {}, opts);
    const secretName = fixedName(args.identity, "proxy");
    const urls = {
      ...(args.proxy.httpProxy ? { http: args.proxy.httpProxy } : {}),
      ...(args.proxy.httpsProxy ? { https: args.proxy.httpsProxy } : {}),
    };
    this.secret = new k8s.core.v1.Secret(
      name,
      {
        metadata: { name: secretName, namespace: args.namespace, labels: labels(args.identity, "config") },
        type: "Opaque",
        stringData: pulumi.secret(urls),
      },
      { parent: this },
    );
    this.runtime = {
      secretName,
      keys: Object.keys(urls) as ProxyRuntime["keys"],
      noProxy: args.noProxy.join(","),
    };
    this.registerOutputs({ secretName });
  }
}
