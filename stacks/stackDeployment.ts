import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { routerCertificateAccess } from "../components/ingress/routerAccess";
import { POD_SECURITY_LABELS } from "../components/namespace/namespace";
import { DeliveryConfig } from "./config";
import { WorkspaceAccess } from "./rbac";
import { routeCertificate, STACK_API_VERSION, stackSpec, stackVariants } from "./stackSpec";

export interface StackDeploymentArgs {
  /** Validated, from `loadDeliveryConfig` or `parseDeliveryConfig`. */
  config: DeliveryConfig;
}

/**
 * In-cluster delivery of the Pulp program by the Pulumi Kubernetes Operator v2: the Pulp namespace (so
 * the workspace needs no cluster-scoped grant), a delivery namespace for the Stack CRs and workspace
 * pods, the workspace's least-privilege RBAC, the Stack, and optionally a preview-only Stack.
 *
 * Two namespaces because the workspace may read every Secret in the Pulp namespace (the program creates
 * them), while the delivery namespace holds the state backend URL and the secrets passphrase: the Pulp
 * program must not be able to read those, and a Pulp-namespace admin must not be able to edit the Stack.
 */
export class StackDeployment extends pulumi.ComponentResource {
  readonly pulpNamespace: pulumi.Output<string>;
  readonly deliveryNamespace: pulumi.Output<string>;
  readonly serviceAccountName: pulumi.Output<string>;
  readonly stackNames: string[];

  constructor(name: string, args: StackDeploymentArgs, opts?: pulumi.ComponentResourceOptions) {
    // Was pulp:operator:StackDeployment (components/operator/): the alias keeps existing stacks' URNs,
    // its children's with it; the caller's own aliases are kept.
    super(
      "pulp:delivery:StackDeployment",
      name,
      {},
      pulumi.mergeOptions(opts, { aliases: [{ type: "pulp:operator:StackDeployment" }] }),
    );
    const { config } = args;
    const child = { parent: this };
    const labels = {
      "app.kubernetes.io/name": "pulp-delivery",
      "app.kubernetes.io/instance": config.stackName,
      "app.kubernetes.io/managed-by": "pulumi",
    };

    const namespace = (suffix: string, nsName: string, component: string, adopt = false) =>
      new k8s.core.v1.Namespace(
        `${name}-${suffix}`,
        {
          metadata: {
            name: nsName,
            labels: { ...labels, "app.kubernetes.io/component": component, ...POD_SECURITY_LABELS },
          },
        },
        {
          ...child,
          // Deleting a namespace deletes everything in it: Pulp's volumes, the backend Secrets.
          retainOnDelete: true,
          // An existing Pulp namespace (installed by hand) is imported, not created: the engine
          // refuses an import whose inputs differ from the object, so its labels stay as they are.
          ...(adopt ? { import: nsName, ignoreChanges: ["metadata.labels", "metadata.annotations"] } : {}),
        },
      );
    const pulpNs = namespace("pulp-namespace", config.pulpNamespace, "pulp", config.adoptPulpNamespace);
    const deliveryNs = namespace("delivery-namespace", config.deliveryNamespace, "delivery");
    this.pulpNamespace = pulpNs.metadata.name;
    this.deliveryNamespace = deliveryNs.metadata.name;

    const access = new WorkspaceAccess(
      `${name}-workspace`,
      {
        deliveryNamespace: this.deliveryNamespace,
        pulpNamespace: this.pulpNamespace,
        serviceAccountName: `${config.stackName}-workspace`,
        readStorageClasses: config.readStorageClasses,
        labels,
      },
      child,
    );
    this.serviceAccountName = access.serviceAccountName;
    // What the workspace may not grant: OpenShift's router reading the Routes' certificate.
    const certificate = routeCertificate(config);
    const routerAccess = certificate
      ? routerCertificateAccess(
          `${name}-router-certificate`,
          {
            namespace: this.pulpNamespace,
            secretName: certificate.secretName,
            instance: certificate.instance,
            labels: { ...labels, "app.kubernetes.io/component": "pulp" },
          },
          child,
        )
      : [];

    this.stackNames = [];
    for (const variant of stackVariants(config)) {
      const cr = stackSpec(config, variant, `${config.stackName}-workspace`, {
        ...labels,
        "app.kubernetes.io/component": variant.preview ? "preview" : "stack",
      });
      new k8s.apiextensions.CustomResource(
        `${name}-${variant.preview ? "preview" : "stack"}`,
        { apiVersion: STACK_API_VERSION, kind: "Stack", metadata: cr.metadata, spec: cr.spec },
        // The operator starts the workspace at once: its permissions must exist first.
        { ...child, dependsOn: [access, ...routerAccess] },
      );
      this.stackNames.push(variant.name);
    }
    this.registerOutputs({
      pulpNamespace: this.pulpNamespace,
      deliveryNamespace: this.deliveryNamespace,
      serviceAccountName: this.serviceAccountName,
      stackNames: this.stackNames,
    });
  }
}
