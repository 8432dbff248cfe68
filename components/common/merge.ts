// The podSpecOverrides escape hatch: the pod spec the program builds, with the user's overrides merged in
// the way `kubectl apply` merges them (strategic merge): objects key by key, and the lists Kubernetes keys
// by name merged item by item, so adding one env var keeps the container's image, command, mounts and probes.
import * as k8s from "@pulumi/kubernetes";

type PodSpec = k8s.types.input.core.v1.PodSpec;

/** Lists merged item by item; the value is the field that identifies an item (as in the Kubernetes API). */
export const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: "name",
  initContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  ports: "containerPort",
  imagePullSecrets: "name",
};

/** The probe handlers: a probe has exactly one, so overriding it with another replaces the old one. */
const PROBE_HANDLERS = ["exec", "httpGet", "tcpSocket", "grpc"];

/** A named list item in an override: the key is required, every other field is optional. */
type NamedItem<T, K extends keyof T> = Partial<T> & Required<Pick<T, K>>;

/** Overrides of one container: its lists merge by name (env, volumeMounts by mountPath, ports by containerPort). */
export type ContainerOverride = Omit<
  Partial<k8s.types.input.core.v1.Container>,
  "env" | "volumeMounts" | "ports"
> & {
  name: string;
  env?: NamedItem<k8s.types.input.core.v1.EnvVar, "name">[];
  volumeMounts?: NamedItem<k8s.types.input.core.v1.VolumeMount, "mountPath">[];
  ports?: NamedItem<k8s.types.input.core.v1.ContainerPort, "containerPort">[];
};

/**
 * The escape hatch's shape: any pod spec field. Lists of containers, init containers, volumes and image pull
 * secrets merge by `name`: an item with a new name is added (a sidecar), an item with a known name is merged
 * into it. Nothing the program generates can be removed by leaving it out. Other lists (tolerations, command,
 * args) are replaced. Maps (nodeSelector, securityContext, probes) merge key by key; a probe given another
 * handler (exec, httpGet, tcpSocket, grpc) drops the generated one.
 */
export type PodSpecOverrides = Omit<Partial<PodSpec>, "containers" | "initContainers" | "volumes"> & {
  containers?: ContainerOverride[];
  initContainers?: ContainerOverride[];
  volumes?: NamedItem<k8s.types.input.core.v1.Volume, "name">[];
};

/** Deep-merges `overrides` into `base` (see PodSpecOverrides); neither argument is changed. */
export function deepMerge<T>(base: T, overrides: Record<string, unknown> | PodSpecOverrides): T {
  return mergeObject(base as Record<string, unknown>, overrides as Record<string, unknown>) as T;
}

function mergeObject(
  base: Record<string, unknown>,
  overrides: Record<string, unknown>,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  if (PROBE_HANDLERS.some((h) => h in overrides)) for (const h of PROBE_HANDLERS) delete result[h];
  for (const [key, value] of Object.entries(overrides)) {
    const current = result[key];
    const mergeKey = MERGE_KEYS[key];
    if (mergeKey && Array.isArray(current) && Array.isArray(value)) {
      result[key] = mergeList(current, value, mergeKey);
    } else if (isPlainObject(current) && isPlainObject(value)) {
      result[key] = mergeObject(current, value);
    } else {
      result[key] = value;
    }
  }
  return result;
}

/** Items of `overrides` merged into the item of `base` with the same key; new keys appended in order. */
function mergeList(base: unknown[], overrides: unknown[], mergeKey: string): unknown[] {
  const result = [...base];
  for (const item of overrides) {
    const key = isPlainObject(item) ? item[mergeKey] : undefined;
    const at = key === undefined ? -1 : result.findIndex((b) => isPlainObject(b) && b[mergeKey] === key);
    if (at >= 0 && isPlainObject(item)) result[at] = mergeObject(result[at] as Record<string, unknown>, item);
    else result.push(item);
  }
  return result;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
