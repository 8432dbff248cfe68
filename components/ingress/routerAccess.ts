import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";

/**
 * OpenShift's router serves a Route's own certificate from `spec.tls.externalCertificate` only when it may
 * read that one Secret: the API server refuses the Route otherwise ("insufficient permission to read
 * resource"). The grant is by name, so the router reads nothing else in the namespace
 * (openshift/enhancements, ingress/route-secret-injection-for-external-certificate-management.md).
 */
export const OPENSHIFT_ROUTER = { namespace: "openshift-ingress", serviceAccount: "router" };

/** The Role's and RoleBinding's name: one place, as the Pulp program and the delivery program both make them. */
export const routerCertificateName = (instance: string) => `${instance}-router-certificate`;

export interface RouterCertificateAccessArgs {
  namespace: pulumi.Input<string>;
  /** The kubernetes.io/tls Secret the Routes name. */
  secretName: pulumi.Input<string>;
  /** The Pulp instance whose Routes they are (names the Role and the RoleBinding). */
  instance: string;
  labels: Record<string, string>;
}

/** A Role that reads one Secret, bound to OpenShift's router. Returns both, for dependsOn. */
export function routerCertificateAccess(
  name: string,
  args: RouterCertificateAccessArgs,
  opts: pulumi.CustomResourceOptions,
): pulumi.Resource[] {
  const metadata = {
    name: routerCertificateName(args.instance),
    namespace: args.namespace,
    labels: args.labels,
  };
  const role = new k8s.rbac.v1.Role(
    name,
    {
      metadata,
      rules: [
        {
          apiGroups: [""],
          resources: ["secrets"],
          resourceNames: [args.secretName],
          verbs: ["get", "list", "watch"],
        },
      ],
    },
    opts,
  );
  const binding = new k8s.rbac.v1.RoleBinding(
    name,
    {
      metadata,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role.metadata.name },
      subjects: [
        {
          kind: "ServiceAccount",
          name: OPENSHIFT_ROUTER.serviceAccount,
          namespace: OPENSHIFT_ROUTER.namespace,
        },
      ],
    },
    opts,
  );
  return [role, binding];
}
