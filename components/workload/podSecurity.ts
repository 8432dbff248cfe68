import * as k8s from "@pulumi/kubernetes";

type PodSpec = k8s.types.input.core.v1.PodSpec;
type Container = k8s.types.input.core.v1.Container;

/**
 * The pod spec fields every pod the program creates shares: where it may run (the `scheduling` config)
 * and the Secrets its images are pulled with (`imagePullSecrets`). Empty fields are left out.
 */
export type PodDefaults = Pick<PodSpec, "nodeSelector" | "tolerations" | "affinity" | "imagePullSecrets">;

export function podDefaults(
  s: {
    nodeSelector: Record<string, string>;
    tolerations: k8s.types.input.core.v1.Toleration[];
    affinity?: k8s.types.input.core.v1.Affinity;
  },
  imagePullSecrets: string[],
): PodDefaults {
  return {
    ...(Object.keys(s.nodeSelector).length > 0 ? { nodeSelector: s.nodeSelector } : {}),
    ...(s.tolerations.length > 0 ? { tolerations: s.tolerations } : {}),
    ...(s.affinity ? { affinity: s.affinity } : {}),
    ...(imagePullSecrets.length > 0 ? { imagePullSecrets: imagePullSecrets.map((name) => ({ name })) } : {}),
  };
}

/** Pulp's images run as uid/gid 700; the pulp-minimal image ends with `USER root`, so the pod must say so. */
export const PULP_UID = 700;

/**
 * Makes a pod spec pass the Pod Security `restricted` profile: non-root, no privilege escalation, all
 * capabilities dropped, the runtime's default seccomp profile; and beyond it, a read-only root
 * filesystem. fsGroup lets the pod write its volumes.
 */
export function restricted(spec: PodSpec, uid: number = PULP_UID): PodSpec {
  const secure = (c: Container): Container => ({
    ...c,
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      runAsNonRoot: true,
      // Everything Pulp, nginx and Redis write goes to a volume (/tmp, the data volume, /data): a write
      // anywhere else is a bug that must fail here, not fill a node's disk. Proven on real pods.
      readOnlyRootFilesystem: true,
      ...(c.securityContext as object | undefined),
    },
  });
  return {
    ...spec,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: uid,
      runAsGroup: uid,
      fsGroup: uid,
      fsGroupChangePolicy: "OnRootMismatch",
      seccompProfile: { type: "RuntimeDefault" },
      ...(spec.securityContext as object | undefined),
    },
    containers: (spec.containers as Container[]).map(secure),
    initContainers: (spec.initContainers as Container[] | undefined)?.map(secure),
    automountServiceAccountToken: spec.automountServiceAccountToken ?? false,
  };
}

const ALLOWED_VOLUME_TYPES = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
];

/**
 * The checks of the Pod Security `restricted` profile (Kubernetes 1.33) that a pod spec can fail, as
 * messages; empty when the spec passes. For unit tests on plain specs: the API server's own admission is
 * what the end-to-end tests rely on.
 */
export function restrictedViolations(spec: Record<string, unknown>): string[] {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const s = spec as any;
  const problems: string[] = [];
  if (s.hostNetwork || s.hostPID || s.hostIPC) problems.push("host namespaces");
  for (const v of s.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== "name");
    if (!type || !ALLOWED_VOLUME_TYPES.includes(type)) problems.push(`volume ${v.name} of type ${type}`);
  }
  const podCtx = s.securityContext ?? {};
  const podSeccomp = podCtx.seccompProfile?.type;
  const containers = [...(s.containers ?? []), ...(s.initContainers ?? [])];
  for (const c of containers) {
    const ctx = c.securityContext ?? {};
    const where = `container ${c.name}`;
    if (ctx.privileged) problems.push(`${where}: privileged`);
    if (ctx.allowPrivilegeEscalation !== false) problems.push(`${where}: allowPrivilegeEscalation != false`);
    const drop: string[] = ctx.capabilities?.drop ?? [];
    if (!drop.includes("ALL")) problems.push(`${where}: capabilities.drop lacks ALL`);
    for (const cap of ctx.capabilities?.add ?? []) {
      if (cap !== "NET_BIND_SERVICE") problems.push(`${where}: adds capability ${cap}`);
    }
    if ((ctx.runAsNonRoot ?? podCtx.runAsNonRoot) !== true) problems.push(`${where}: runAsNonRoot != true`);
    if ((ctx.runAsUser ?? podCtx.runAsUser) === 0) problems.push(`${where}: runAsUser 0`);
    const seccomp = ctx.seccompProfile?.type ?? podSeccomp;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost")
      problems.push(`${where}: seccompProfile not set`);
    for (const p of c.ports ?? []) if (p.hostPort) problems.push(`${where}: hostPort ${p.hostPort}`);
  }
  return problems;
}
