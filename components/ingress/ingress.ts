import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { PulpConfig } from "../config/parse";
import { fixedName, Identity, labels } from "../shared/labels";

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

/** Ingress (or an OpenShift Route per path) for Pulp's host. */
export class PulpIngress extends pulumi.ComponentResource {
  constructor(name: string, args: PulpIngressArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:ingress:PulpIngress", name, {}, opts);
    const { ingress } = args;
    const metadata = (suffix: string) => ({
      name: fixedName(args.identity, suffix),
      namespace: args.namespace,
      labels: labels(args.identity, "web"),
      annotations: ingress.annotations,
    });
    if (ingress.kind === "Ingress") {
      new k8s.networking.v1.Ingress(
        name,
        {
          metadata: metadata("ingress"),
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
      args.routes.forEach((r, i) => {
        new k8s.apiextensions.CustomResource(
          `${name}-${i}`,
          {
            apiVersion: "route.openshift.io/v1",
            kind: "Route",
            metadata: metadata(`route-${i}`),
            spec: {
              host: ingress.host,
              path: r.path,
              to: { kind: "Service", name: r.backend.service, weight: 100 },
              port: { targetPort: "http" },
              tls: { termination: "edge", insecureEdgeTerminationPolicy: "Redirect" },
            },
          },
          { parent: this },
        );
      });
    }
    this.registerOutputs({});
  }
}
