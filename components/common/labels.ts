/** The part a pod plays; also the `app.kubernetes.io/component` label and the Service name suffix. */
export type Component =
  | "api"
  | "content"
  | "worker"
  | "web"
  | "redis"
  | "migration"
  | "database"
  | "storage"
  | "config"
  | "import"
  | "backup"
  | "identity";

export interface Identity {
  /** `app.kubernetes.io/instance`, and the prefix of every fixed name. */
  instance: string;
  /** pulpcore version, for `app.kubernetes.io/version` on what runs it (see `runningLabels`). */
  version: string;
}

/** Selector labels: unique per workload and never changing (a Deployment's selector is immutable). */
export function selectorLabels(id: Identity, component: Component): Record<string, string> {
  return {
    "app.kubernetes.io/name": "pulp",
    "app.kubernetes.io/instance": id.instance,
    "app.kubernetes.io/component": component,
  };
}

/**
 * Labels of every object. No version: an upgrade must not touch what does not run Pulp code (the PVC, the
 * database Cluster, the key Secrets, DataVolumes, the Namespace) just to bump a label.
 */
export function labels(id: Identity, component: Component): Record<string, string> {
  return {
    ...selectorLabels(id, component),
    "app.kubernetes.io/part-of": "pulp",
    "app.kubernetes.io/managed-by": "pulumi",
  };
}

/**
 * Labels of what runs the Pulp image, where the version means something: the api, content and worker pod
 * templates (they roll on an upgrade anyway) and the migration Job (one per release).
 */
export function runningLabels(id: Identity, component: Component): Record<string, string> {
  return { ...labels(id, component), "app.kubernetes.io/version": id.version };
}

/** Fixed names: what people type in kubectl and what DNS and settings refer to. */
export function fixedName(id: Identity, suffix: string): string {
  return `${id.instance}-${suffix}`;
}
