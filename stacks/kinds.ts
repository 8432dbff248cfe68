// What the Pulp program (index.ts) touches in its namespace, as data: the workspace's Role is derived
// from these tables, and test/unit/stacks/kinds.test.ts fails when the program registers a Kubernetes
// type that is not here (or this lists one it no longer makes), so the grants cannot drift.

/** A Kubernetes resource type the Pulp program creates, updates and deletes. */
export interface ManagedKind {
  /** API group; "" is the core group. */
  apiGroup: string;
  version: string;
  kind: string;
  /** Plural resource name, as RBAC rules name it. */
  resource: string;
  namespaced: boolean;
  /** Which config turns it on (documentation; the drift test renders every feature). */
  when: string;
}

export const PULP_KINDS: readonly ManagedKind[] = [
  { apiGroup: "", version: "v1", kind: "Secret", resource: "secrets", namespaced: true, when: "always" },
  {
    apiGroup: "",
    version: "v1",
    kind: "ConfigMap",
    resource: "configmaps",
    namespaced: true,
    when: "web.enabled (nginx.conf)",
  },
  {
    apiGroup: "",
    version: "v1",
    kind: "Service",
    resource: "services",
    namespaced: true,
    when: "always",
  },
  {
    apiGroup: "",
    version: "v1",
    kind: "PersistentVolumeClaim",
    resource: "persistentvolumeclaims",
    namespaced: true,
    when: "storage.pvc",
  },
  {
    apiGroup: "apps",
    version: "v1",
    kind: "Deployment",
    resource: "deployments",
    namespaced: true,
    when: "always",
  },
  { apiGroup: "batch", version: "v1", kind: "Job", resource: "jobs", namespaced: true, when: "always" },
  {
    apiGroup: "policy",
    version: "v1",
    kind: "PodDisruptionBudget",
    resource: "poddisruptionbudgets",
    namespaced: true,
    when: "always",
  },
  {
    apiGroup: "networking.k8s.io",
    version: "v1",
    kind: "Ingress",
    resource: "ingresses",
    namespaced: true,
    when: "ingress.kind Ingress",
  },
  {
    apiGroup: "route.openshift.io",
    version: "v1",
    kind: "Route",
    resource: "routes",
    namespaced: true,
    when: "ingress.kind Route",
  },
  {
    apiGroup: "postgresql.cnpg.io",
    version: "v1",
    kind: "Cluster",
    resource: "clusters",
    namespaced: true,
    when: "database.cloudnativepg",
  },
  {
    apiGroup: "postgresql.cnpg.io",
    version: "v1",
    kind: "Pooler",
    resource: "poolers",
    namespaced: true,
    when: "database.cloudnativepg.pooler",
  },
  {
    apiGroup: "cdi.kubevirt.io",
    version: "v1beta1",
    kind: "DataVolume",
    resource: "datavolumes",
    namespaced: true,
    when: "dataVolumes",
  },
];

/**
 * Kinds the Pulp program can make that the workspace must NOT manage: the delivery program owns them
 * (the Stack sets `pulp:createNamespace: "false"`), so the workspace needs no cluster-scoped grant.
 * Likewise the Role and RoleBinding that let OpenShift's router read a Route's certificate: the delivery
 * program makes them (stackDeployment.ts) and the Stack sets `ingress.routerAccess: false`, so the
 * workspace never creates a Role.
 */
export const OWNED_BY_DELIVERY: readonly ManagedKind[] = [
  {
    apiGroup: "",
    version: "v1",
    kind: "Namespace",
    resource: "namespaces",
    namespaced: false,
    when: "createNamespace (false in the Stack)",
  },
];

/** Create, read, update (server-side apply is `patch`), delete; list and watch for the provider's await. */
export const MANAGE_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"] as const;

/** A grant on resources the program does not create but reads or operates. */
export interface OperateRule {
  apiGroup: string;
  resources: string[];
  verbs: string[];
  why: string;
}

/**
 * Read/operate: what @pulumi/kubernetes 4.25's await logic watches beside the objects it creates
 * (provider/v4 pkg/await: deployment.go watches replicasets and pods, job.go and pod.go pods,
 * service.go and ingress.go endpoints, watchers.go events of each awaited object), and what the coming
 * scale-down dynamic provider needs (`deployments/scale`, pods).
 */
export const READ_OPERATE: readonly OperateRule[] = [
  {
    apiGroup: "",
    resources: ["pods"],
    verbs: ["get", "list", "watch"],
    why: "Deployment and Job awaits; the scale-down provider waits for pods to go",
  },
  {
    apiGroup: "",
    resources: ["endpoints"],
    verbs: ["get", "list", "watch"],
    why: "Service and Ingress awaits",
  },
  {
    apiGroup: "",
    resources: ["events"],
    verbs: ["get", "list", "watch"],
    why: "await warnings (event aggregator)",
  },
  { apiGroup: "apps", resources: ["replicasets"], verbs: ["get", "list", "watch"], why: "Deployment await" },
  {
    apiGroup: "",
    resources: ["resourcequotas"],
    verbs: ["get", "list"],
    why: "a CDI import's preflight reads the namespace's real quota (components/cdi/importWatch.ts)",
  },
  {
    apiGroup: "apps",
    resources: ["deployments/scale"],
    verbs: ["get", "patch", "update"],
    why: "the scale-down dynamic provider (stop every Pulp process before a RequireVersion migration)",
  },
];

/**
 * The one cluster-scoped read the provider may make: a PVC's await reads its StorageClass
 * (pkg/await/awaiters.go pvcBindMode) to know whether Pending is final (WaitForFirstConsumer). Without
 * it the provider logs a warning and waits for Bound, which never comes on a WaitForFirstConsumer class
 * before a pod uses the claim: opt in (`delivery:readStorageClasses`) for such artifact storage classes.
 */
export const STORAGE_CLASS_READ: OperateRule = {
  apiGroup: "storage.k8s.io",
  resources: ["storageclasses"],
  verbs: ["get"],
  why: "PVC await on WaitForFirstConsumer storage classes",
};

/** The Pulumi resource type token of a kind, as the SDK registers it (`kubernetes:apps/v1:Deployment`). */
export function pulumiType(kind: ManagedKind): string {
  return `kubernetes:${kind.apiGroup === "" ? "core" : kind.apiGroup}/${kind.version}:${kind.kind}`;
}
