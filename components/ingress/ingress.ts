import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { PulpConfig } from "../config/parse";
import { fixedName, Identity, labels } from "../common/labels";
import { routerCertificateAccess } from "./routerAccess";

export interface Backend {
  service: string;
  port: number;
}

export interface PulpIngressArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  ingress: PulpConfig["ingress"];
  /** With pulp-web, everything goes to it; without, content paths go to content and the rest to api. */
  routes: { path: string; backend: Backend }[];
}

/**
 * ingress-nginx's own defaults (1m body, 60 s read) answer container layer pushes with 413 and slow API
 * calls with 504. These are pulp-operator's (controllers/repo_manager/ingress.go), but in whole seconds:
 * ingress-nginx reads the timeouts as integers and ignores the operator's "120s". No body limit (registry
 * pushes send layers of any size); reads and sends wait as long as pulp-web's proxy_read_timeout; connects
 * 60 s (nginx caps them near 75 s).
 */
export const NGINX_INGRESS_DEFAULTS: Record<string, string> = {
  "nginx.ingress.kubernetes.io/proxy-body-size": "0",
  "nginx.ingress.kubernetes.io/proxy-read-timeout": "600",
  "nginx.ingress.kubernetes.io/proxy-send-timeout": "600",
  "nginx.ingress.kubernetes.io/proxy-connect-timeout": "60",
};

/**
 * OpenShift's router answers 504 after 30 s without a response (its default server timeout), which a large
 * upload, a container push or a slow API call outlasts. pulp-operator sets 180 s (`haproxy_timeout`); this
 * is the nginx defaults' 600 s, so both kinds of exposure wait as long as pulp-web does. The router has no
 * body limit.
 */
export const OPENSHIFT_ROUTE_DEFAULTS: Record<string, string> = {
  "haproxy.router.openshift.io/timeout": "600s",
};

/**
 * The "nginx" class, or none: the cluster's default class, which is ingress-nginx on most clusters, and where
 * it is not, no other controller reads nginx.ingress.kubernetes.io annotations.
 */
const isNginxClass = (className: string | undefined) => className === undefined || className === "nginx";

/** Ingress (or an OpenShift Route per path) for Pulp's host. */
export class PulpIngress extends pulumi.ComponentResource {
  constructor(name: string, args: PulpIngressArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:ingress:PulpIngress", name, {}, opts);
    const { ingress } = args;
    const metadata = (suffix: string, defaults: Record<string, string> = {}) => ({
      name: fixedName(args.identity, suffix),
      namespace: args.namespace,
      labels: labels(args.identity, "web"),
      // The user's annotations win over the defaults.
      annotations: { ...defaults, ...ingress.annotations },
    });
    if (ingress.kind === "Ingress") {
      new k8s.networking.v1.Ingress(
        name,
        {
          metadata: metadata("ingress", isNginxClass(ingress.className) ? NGINX_INGRESS_DEFAULTS : {}),
          spec: {
            ingressClassName: ingress.className,
            tls: ingress.tlsSecretName
              ? [{ hosts: [ingress.host!], secretName: ingress.tlsSecretName }]
              : undefined,
            rules: [
              {
                host: ingress.host,
                http: {
                  paths: args.routes.map((r) => ({
                    path: r.path,
                    pathType: "Prefix",
                    backend: { service: { name: r.backend.service, port: { number: r.backend.port } } },
                  })),
                },
              },
            ],
          },
        },
        { parent: this },
      );
    } else {
      // A certificate of the user's: the router reads it from the Secret, so a renewal (cert-manager's)
      // reaches the router without an update here, and the key is never copied into the Route.
      const certificate = ingress.tlsSecretName;
      const access =
        certificate && ingress.routerAccess !== false
          ? routerCertificateAccess(
              `${name}-router-certificate`,
              {
                namespace: args.namespace,
                secretName: certificate,
                instance: args.identity.instance,
                labels: labels(args.identity, "web"),
              },
              { parent: this },
            )
          : [];
      args.routes.forEach((r, i) => {
        new k8s.apiextensions.CustomResource(
          `${name}-${i}`,
          {
            apiVersion: "route.openshift.io/v1",
            kind: "Route",
            metadata: metadata(`route-${i}`, OPENSHIFT_ROUTE_DEFAULTS),
            spec: {
              host: ingress.host,
              path: r.path,
              to: { kind: "Service", name: r.backend.service, weight: 100 },
              port: { targetPort: "http" },
              tls: {
                termination: "edge",
                insecureEdgeTerminationPolicy: "Redirect",
                ...(certificate ? { externalCertificate: { name: certificate } } : {}),
              },
            },
          },
          // The API server checks the router's access when it admits the Route.
          { parent: this, dependsOn: access },
        );
      });
    }
    this.registerOutputs({});
  }
}
