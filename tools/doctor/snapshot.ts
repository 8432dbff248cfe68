// What the doctor reads of one Pulp install, as plain data: collected from the API server by collect.ts,
// judged by checks.ts. Nothing here holds a secret's value.
import type { EventSummary } from "../events";

/** Pulp's own view (GET <apiRoot>api/v3/status/ through the API server's service proxy). */
export interface PulpStatus {
  versions: { component: string; version: string }[];
  database_connection: { connected: boolean };
  redis_connection?: { connected: boolean } | null;
  online_workers: { name: string; last_heartbeat: string }[];
  online_api_apps?: { name: string; last_heartbeat: string }[];
  online_content_apps: { name: string; last_heartbeat: string }[];
  storage?: { total: number | null; used: number | null; free: number | null } | null;
}

export interface ContainerState {
  name: string;
  ready: boolean;
  restarts: number;
  /** `state.waiting.reason` (CrashLoopBackOff, ImagePullBackOff, ...). */
  waiting?: string;
  waitingMessage?: string;
  /** How the container last ended: `lastState.terminated`. */
  lastEnded?: { reason: string; exitCode: number; finishedAt: string; message?: string };
}

export interface PodState {
  name: string;
  component: string;
  phase: string;
  node?: string;
  created: string;
  /** The Ready condition's status ("True", "False") and, when False, why. */
  ready: string;
  containers: ContainerState[];
  /** When it was asked to go (metadata.deletionTimestamp): a pod the kubelet has not let go of yet. */
  deleting?: string;
  /** The Job that owns it, if one does. */
  job?: string;
}

export interface DeploymentState {
  name: string;
  component: string;
  desired: number;
  available: number;
  updated: number;
  /** The Progressing condition's reason when it is False (ProgressDeadlineExceeded). */
  stalled?: string;
  stalledMessage?: string;
}

export interface JobState {
  name: string;
  component: string;
  created: string;
  active: number;
  succeeded: number;
  failed: number;
  /** The Failed condition's reason and message, when the Job has failed. */
  failure?: { reason: string; message: string };
  /** The last pod's termination message (what the Job's script said last). */
  said?: string;
}

export interface DatabaseClusterState {
  name: string;
  phase: string;
  phaseReason?: string;
  instances: number;
  readyInstances: number;
}

/** The CloudNativePG Pooler in front of the database (database.cloudnativepg.pooler), and its Deployment. */
export interface PoolerState {
  name: string;
  instances: number;
  readyInstances: number;
}

export interface DataVolumeState {
  name: string;
  phase: string;
  progress?: string;
  /** Conditions that are not True, with their reason and message. */
  conditions: { type: string; status: string; reason?: string; message?: string }[];
  restarts: number;
}

export interface PvcState {
  name: string;
  phase: string;
  storageClass?: string;
  accessModes: string[];
}

export interface BackupState {
  cronJob: string;
  suspended: boolean;
  schedule: string;
  lastSuccess?: string;
}

/** Pulp's task queue, read in an api pod (`pulpcore-manager shell`): what the status endpoint does not say. */
export interface TaskQueue {
  waiting: number;
  /** How long the oldest waiting task has waited, in seconds (null when none waits). */
  oldestWaitingSeconds: number | null;
  running: number;
  failedLastHour: number;
  /**
   * Running (or canceling) tasks held by a worker whose heartbeat is older than its TTL (pulpcore 3.89 and
   * later hold a task through `app_lock`; before, always 0): the workers named, and the longest silence.
   */
  abandoned?: { tasks: number; workers: string[]; silentSeconds: number };
}

export interface Snapshot {
  namespace: string;
  instance: string;
  /** When it was read: ages are measured from here, so checks are pure. */
  at: string;
  /** Pulp's status, or why it could not be read. */
  status: { ok: true; body: PulpStatus } | { ok: false; error: string };
  /** The task queue, or why it was not read (no ready api pod, exec not allowed, the database away). */
  tasks: { ok: true; queue: TaskQueue } | { ok: false; error: string };
  pods: PodState[];
  /**
   * The namespace's other pods (the database's, an importer's), by name and phase: only to tell whether a
   * warning event about one is history. Absent in snapshots read before it was collected.
   */
  otherPods?: { name: string; phase: string }[];
  deployments: DeploymentState[];
  jobs: JobState[];
  events: EventSummary[];
  pvcs: PvcState[];
  database?: DatabaseClusterState;
  pooler?: PoolerState;
  dataVolumes: DataVolumeState[];
  backup?: BackupState;
}
