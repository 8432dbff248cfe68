import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { holds } from "../contract";

/** Pod Security Standards labels: the API server rejects any pod of this namespace that is not `restricted`. */
export const POD_SECURITY_LABELS = {
  "pod-security.kubernetes.io/enforce": "restricted",
  "pod-security.kubernetes.io/enforce-version": "latest",
  "pod-security.kubernetes.io/warn": "restricted",
  "pod-security.kubernetes.io/audit": "restricted",
};

export interface PulpNamespaceArgs {
  name: string;
  /** false: the namespace exists already and is managed elsewhere (its labels are then not set here). */
  create: boolean;
  labels: Record<string, string>;
  /** With create false: read the namespace through the provider anyway, for its uid. */
  read?: boolean;
}

/** The namespace Pulp lives in, labelled to enforce Pod Security `restricted`. */
export class PulpNamespace extends pulumi.ComponentResource {
  readonly name: pulumi.Output<string>;
  readonly namespace?: k8s.core.v1.Namespace;
  /**
   * The namespace's uid as the Kubernetes provider sees it (undefined when neither created nor read): the
   * job guard compares it with what its own client sees, so both are known to be the same cluster.
   */
  readonly uid?: pulumi.Output<string>;

  constructor(name: string, args: PulpNamespaceArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:namespace:PulpNamespace", name, {}, opts);
    if (args.create) {
      this.namespace = new k8s.core.v1.Namespace(
        name,
        {
          metadata: {
            name: args.name,
            labels: { ...args.labels, ...POD_SECURITY_LABELS },
            annotations: holds("namespace"),
          },
        },
        // Deleting a namespace deletes every PVC in it: neither a config change nor `destroy` may do that.
        { parent: this, retainOnDelete: true },
      );
      this.name = this.namespace.metadata.name;
      this.uid = this.namespace.metadata.uid;
    } else {
      this.name = pulumi.output(args.name);
      if (args.read) this.uid = k8s.core.v1.Namespace.get(name, args.name, { parent: this }).metadata.uid;
    }
    this.registerOutputs({ name: this.name });
  }
}
