// Everything `npm run stack -- status` reads about one Stack, as plain data: the diagnosis (failures.ts)
// and the screen (render.ts) are pure functions of it, so each is unit-tested without a cluster.
import type { EventSummary } from "../events";

export type { EventSummary };

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface StackObject {
  metadata: {
    name: string;
    namespace: string;
    generation?: number;
    annotations?: Record<string, string>;
    creationTimestamp?: string;
    managedFields?: {
      manager?: string;
      operation?: string;
      time?: string;
      subresource?: string;
      fieldsV1?: any;
    }[];
  };
  spec: Record<string, any>;
  status?: {
    conditions?: Condition[];
    observedGeneration?: number;
    observedReconcileRequest?: string;
    lastUpdate?: {
      state?: string;
      generation?: number;
      name?: string;
      message?: string;
      permalink?: string;
      failures?: number;
      lastAttemptedCommit?: string;
      lastSuccessfulCommit?: string;
      lastResyncTime?: string;
      type?: string;
    };
    currentUpdate?: { name?: string; generation?: number; commit?: string; reconcileRequest?: string };
  };
}

export interface ContainerState {
  name: string;
  init: boolean;
  ready: boolean;
  restartCount: number;
  /** `running`, `waiting: CrashLoopBackOff`, `terminated: OOMKilled (137)`. */
  state: string;
  /** The previous run's end, e.g. `terminated: OOMKilled (137)`. */
  lastState?: string;
  /** Reason of the current or the last termination, for matching. */
  reasons: string[];
  /** When the current or last run that ended with a termination reason finished. */
  finishedAt?: string;
  message?: string;
}

export interface PodSummary {
  name: string;
  phase: string;
  containers: ContainerState[];
  conditions: Condition[];
}

/** A Secret that the Stack references (envRefs, gitAuth): does it exist, does it have the key? */
export interface SecretRefCheck {
  use: string;
  secret: string;
  key: string;
  /** `ok`, `missing secret`, `missing key`, or `unreadable` (no permission to check). */
  found: "ok" | "missing secret" | "missing key" | "unreadable";
}

export interface StackSnapshot {
  stack: StackObject;
  events: EventSummary[];
  workspace?: { name: string; conditions: Condition[]; address?: string };
  pods: PodSummary[];
  /** Update objects (auto.pulumi.com) named by currentUpdate / lastUpdate, with their status message. */
  updates: { name: string; message?: string; conditions: Condition[] }[];
  secretRefs: SecretRefCheck[];
  /** When the snapshot was taken (for "ago" and for staleness rules). */
  now: Date;
}

export function condition(s: StackSnapshot, type: string): Condition | undefined {
  return s.stack.status?.conditions?.find((c) => c.type === type);
}

const time = (iso: string | undefined) => (iso ? Date.parse(iso) : NaN);

/**
 * When the spec last changed: the newest managedFields entry that owns spec fields (kubectl, Pulumi's
 * server-side apply), else the creation time of a first generation. Undefined when unknown.
 */
export function specChangedAt(stack: StackObject): string | undefined {
  const times = (stack.metadata.managedFields ?? [])
    .filter((m) => m.subresource !== "status" && m.time && m.fieldsV1 && "f:spec" in m.fieldsV1)
    .map((m) => m.time!)
    .sort((a, b) => time(a) - time(b));
  if (times.length) return times[times.length - 1];
  return (stack.metadata.generation ?? 1) <= 1 ? stack.metadata.creationTimestamp : undefined;
}

/**
 * Evidence older than this says nothing about the Stack as it is now: the last spec change (the operator
 * acts on the new spec), the last successful update, or the moment Ready turned True. Undefined: no such
 * moment is known, everything counts.
 */
export function diagnosisSince(s: StackSnapshot): string | undefined {
  const lu = s.stack.status?.lastUpdate;
  const ready = condition(s, "Ready");
  const candidates = [
    specChangedAt(s.stack),
    lu?.state === "succeeded" ? lu.lastResyncTime : undefined,
    ready?.status === "True" ? ready.lastTransitionTime : undefined,
  ].filter((t): t is string => !Number.isNaN(time(t)));
  return candidates.sort((a, b) => time(a) - time(b)).pop();
}

/** Whether something that happened at `at` predates diagnosisSince (then it is history, not a diagnosis). */
export function isHistory(s: StackSnapshot, at: string | undefined): boolean {
  const since = diagnosisSince(s);
  return since !== undefined && !Number.isNaN(time(at)) && time(at) < time(since);
}

/** Events that may explain the Stack's current state: none from before diagnosisSince. */
export function currentEvents(s: StackSnapshot): EventSummary[] {
  return s.events.filter((e) => !isHistory(s, e.last));
}

/** All the free text that may carry an error: conditions, last update, Update objects, current events. */
export function messages(s: StackSnapshot): string {
  return [
    ...(s.stack.status?.conditions ?? []).map((c) => c.message ?? ""),
    s.stack.status?.lastUpdate?.message ?? "",
    ...s.updates.map((u) => u.message ?? ""),
    ...s.updates.flatMap((u) => u.conditions.map((c) => c.message ?? "")),
    ...currentEvents(s).map((e) => e.message),
    ...(s.workspace?.conditions ?? []).map((c) => c.message ?? ""),
    ...s.pods.flatMap((p) => p.containers.map((c) => c.message ?? "")),
  ].join("\n");
}

/** Summarises a Pod object as the API server returns it. */
export function podSummary(pod: any): PodSummary {
  const describe = (st: any): { text: string; reason?: string; message?: string; finishedAt?: string } => {
    if (!st) return { text: "unknown" };
    if (st.running) return { text: "running" };
    if (st.waiting)
      return {
        text: `waiting: ${st.waiting.reason ?? "?"}`,
        reason: st.waiting.reason,
        message: st.waiting.message,
      };
    if (st.terminated) {
      const t = st.terminated;
      return {
        text: `terminated: ${t.reason ?? "?"} (exit ${t.exitCode})`,
        reason: t.reason,
        message: t.message,
        finishedAt: t.finishedAt,
      };
    }
    return { text: "unknown" };
  };
  const containers = (list: any[] | undefined, init: boolean): ContainerState[] =>
    (list ?? []).map((c) => {
      const now = describe(c.state);
      const last = c.lastState && Object.keys(c.lastState).length > 0 ? describe(c.lastState) : undefined;
      return {
        name: c.name,
        init,
        ready: c.ready === true,
        restartCount: c.restartCount ?? 0,
        state: now.text,
        lastState: last?.text,
        reasons: [now.reason, last?.reason].filter((r): r is string => !!r),
        message: [now.message, last?.message].filter(Boolean).join("\n") || undefined,
        finishedAt: now.finishedAt ?? last?.finishedAt,
      };
    });
  return {
    name: pod.metadata.name,
    phase: pod.status?.phase ?? "Unknown",
    containers: [
      ...containers(pod.status?.initContainerStatuses, true),
      ...containers(pod.status?.containerStatuses, false),
    ],
    conditions: pod.status?.conditions ?? [],
  };
}

/** Every Secret the Stack names, and what it is used for. */
export function secretRefsOf(stack: StackObject): { use: string; secret: string; key: string }[] {
  const refs: { use: string; secret: string; key: string }[] = [];
  for (const [env, ref] of Object.entries((stack.spec.envRefs ?? {}) as Record<string, any>)) {
    if (ref?.type === "Secret" && ref.secret?.name)
      refs.push({ use: `envRefs.${env}`, secret: ref.secret.name, key: ref.secret.key });
  }
  for (const [field, ref] of Object.entries((stack.spec.gitAuth ?? {}) as Record<string, any>)) {
    if (ref?.type === "Secret" && ref.secret?.name)
      refs.push({ use: `gitAuth.${field}`, secret: ref.secret.name, key: ref.secret.key });
  }
  return refs;
}
