import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { MANAGE_VERBS, OperateRule, PULP_KINDS, READ_OPERATE, STORAGE_CLASS_READ } from "./kinds";

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * The Role of the workspace in the Pulp namespace, derived from kinds.ts: every verb on exactly the kinds
 * the Pulp program manages, then the read/operate grants. One rule per API group and verb set, sorted,
 * so the Role is stable (no diff between runs) and easy to read in `kubectl describe role`.
 */
export function workspaceRules(): PolicyRule[] {
  const groups = new Map<string, PolicyRule>();
  const add = (apiGroup: string, resources: readonly string[], verbs: readonly string[]) => {
    const key = `${apiGroup}|${[...verbs].join(",")}`;
    const rule = groups.get(key) ?? { apiGroups: [apiGroup], resources: [], verbs: [...verbs] };
    rule.resources.push(...resources);
    groups.set(key, rule);
  };
  for (const kind of PULP_KINDS) add(kind.apiGroup, [kind.resource], MANAGE_VERBS);
  for (const rule of READ_OPERATE) add(rule.apiGroup, rule.resources, rule.verbs);
  return [...groups.values()]
    .map((r) => ({ ...r, resources: [...new Set(r.resources)].sort() }))
    .sort((a, b) => `${a.apiGroups[0]}|${a.verbs}`.localeCompare(`${b.apiGroups[0]}|${b.verbs}`));
}

/** The cluster-scoped read, when opted in: only `get`, only StorageClasses (no Secrets, nothing writable). */
export function storageClassRules(): PolicyRule[] {
  const r: OperateRule = STORAGE_CLASS_READ;
  return [{ apiGroups: [r.apiGroup], resources: [...r.resources], verbs: [...r.verbs] }];
}

/** PKO v2's workspace authenticates the operator's calls (TokenReview, SubjectAccessReview). */
export const AUTH_DELEGATOR = "system:auth-delegator";

export interface WorkspaceAccessArgs {
  /** Namespace of the Stack and its workspace pod (the ServiceAccount lives there). */
  deliveryNamespace: pulumi.Input<string>;
  /** The only namespace the workspace may change. */
  pulpNamespace: pulumi.Input<string>;
  serviceAccountName: string;
  /** Grant `get storageclasses` (cluster-scoped, read-only): see kinds.ts STORAGE_CLASS_READ. */
  readStorageClasses: boolean;
  labels: Record<string, string>;
}

/**
 * The workspace's identity and least privilege: a ServiceAccount in the delivery namespace, the
 * auth-delegator binding PKO v2 requires, and a Role + RoleBinding in the Pulp namespace only.
 */
export class WorkspaceAccess extends pulumi.ComponentResource {
  readonly serviceAccountName: pulumi.Output<string>;
  readonly role: k8s.rbac.v1.Role;

  constructor(name: string, args: WorkspaceAccessArgs, opts?: pulumi.ComponentResourceOptions) {
    // Was pulp:operator:WorkspaceAccess: the alias keeps existing stacks' URNs.
    super(
      "pulp:delivery:WorkspaceAccess",
      name,
      {},
      pulumi.mergeOptions(opts, { aliases: [{ type: "pulp:operator:WorkspaceAccess" }] }),
    );
    const child = { parent: this };
    const subject = (sa: k8s.core.v1.ServiceAccount) => ({
      kind: "ServiceAccount",
      name: sa.metadata.name,
      namespace: sa.metadata.namespace,
    });

    // A fixed name: people type it (`kubectl auth can-i --as=system:serviceaccount:<ns>:<name>`).
    const sa = new k8s.core.v1.ServiceAccount(
      `${name}-sa`,
      { metadata: { name: args.serviceAccountName, namespace: args.deliveryNamespace, labels: args.labels } },
      child,
    );
    this.serviceAccountName = sa.metadata.name;

    new k8s.rbac.v1.ClusterRoleBinding(
      `${name}-auth-delegator`,
      {
        metadata: { labels: args.labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: AUTH_DELEGATOR },
        subjects: [subject(sa)],
      },
      child,
    );

    this.role = new k8s.rbac.v1.Role(
      `${name}-pulp`,
      { metadata: { namespace: args.pulpNamespace, labels: args.labels }, rules: workspaceRules() },
      child,
    );
    new k8s.rbac.v1.RoleBinding(
      `${name}-pulp`,
      {
        metadata: { namespace: args.pulpNamespace, labels: args.labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: this.role.metadata.name },
        subjects: [subject(sa)],
      },
      child,
    );

    if (args.readStorageClasses) {
      const reader = new k8s.rbac.v1.ClusterRole(
        `${name}-storageclasses`,
        { metadata: { labels: args.labels }, rules: storageClassRules() },
        child,
      );
      new k8s.rbac.v1.ClusterRoleBinding(
        `${name}-storageclasses`,
        {
          metadata: { labels: args.labels },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: reader.metadata.name },
          subjects: [subject(sa)],
        },
        child,
      );
    }
    this.registerOutputs({ serviceAccountName: this.serviceAccountName });
  }
}
