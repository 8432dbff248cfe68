// The doctor's judgement: a snapshot of one install in, findings out (what is wrong, where, and the
// command that shows or fixes it). Pure, so every case is tested as data; collect.ts reads the cluster.
import { ContainerState, PodState, Snapshot } from "./snapshot";

export interface Finding {
  /** `problem`: something does not work now. `warning`: it works, but will not for long or did not lately. */
  severity: "problem" | "warning";
  /** What it is about, as kubectl names it: `pod/pulp-api-7d9c`, `job/pulp-migrate-1a2b`, `pulp`. */
  subject: string;
  what: string;
  /** A command or a config change that shows the cause or mends it. */
  fix: string;
}

/** A pod that has waited this long for a node is stuck, not starting. */
const PENDING_SECONDS = 120;
/** Restarts older than this are history, not news. */
const RECENT_SECONDS = 3600;
/** A migration running longer than this deserves a look (the Job's own deadline is migration.timeout). */
const LONG_MIGRATION_SECONDS = 30 * 60;
/**
 * A running task whose worker has been silent this long was not released by the workers' check (twice the
 * TTL of 30 s, then a readiness period of 30 s): the check does not run (the redis worker type) or fails.
 */
const ABANDONED_TASK_SECONDS = 180;

/** A task waiting this long while workers are online is stuck or starved. */
const STUCK_TASK_SECONDS = 10 * 60;
/** KEDA wakes a worker within its polling interval and the pod's start: minutes, not more. */
const WAKE_SECONDS = 5 * 60;
/** A scheduled backup whose last success is older than this has been failing or not running. */
const STALE_BACKUP_SECONDS = 8 * 24 * 3600;

const PULP_PROCESSES = ["api", "content", "worker"];

export function diagnose(s: Snapshot): Finding[] {
  const ns = `-n ${s.namespace}`;
  const age = (time: string) => (Date.parse(s.at) - Date.parse(time)) / 1000;
  const findings: Finding[] = [];
  const add = (f: Finding) => findings.push(f);

  // Pulp's own view first: it says what clients meet.
  if (!s.status.ok) {
    add({
      severity: "problem",
      subject: `service/${s.instance}-api`,
      what: `Pulp's API does not answer its status: ${s.status.error}`,
      fix: `kubectl get pods -l app.kubernetes.io/instance=${s.instance},app.kubernetes.io/component=api ${ns}; kubectl logs deployment/${s.instance}-api ${ns}`,
    });
  } else {
    const st = s.status.body;
    if (!st.database_connection.connected) {
      add({
        severity: "problem",
        subject: "database",
        what: "Pulp cannot reach its database: no API call, download or task works",
        fix: s.database
          ? `kubectl get cluster ${s.database.name} ${ns} (CloudNativePG); kubectl get pods -l cnpg.io/cluster=${s.database.name} ${ns}`
          : "check the external database's host and credentials (pulp:database.external) from a pod in the namespace",
      });
    }
    if (st.redis_connection && !st.redis_connection.connected) {
      add({
        severity: "problem",
        subject: "redis",
        what: "Pulp cannot reach Redis (its cache or its task queue)",
        fix: `kubectl get pods -l app.kubernetes.io/instance=${s.instance},app.kubernetes.io/component=redis ${ns}`,
      });
    }
    // Workers scaled to zero (pulp:worker.autoscaling with minReplicas 0, or maintenance) are idle, not
    // down: only a task left waiting says that nothing wakes them.
    const workersAtZero = s.deployments.some((d) => d.component === "worker" && d.desired === 0);
    const queue = s.tasks.ok ? s.tasks.queue : undefined;
    if (st.database_connection.connected && st.online_workers.length === 0 && !workersAtZero) {
      add({
        severity: "problem",
        subject: `deployment/${s.instance}-worker`,
        what: "no worker is online: every task (sync, publish, upload, delete) waits",
        fix: `kubectl get deployment ${s.instance}-worker ${ns}; kubectl logs deployment/${s.instance}-worker ${ns}`,
      });
    } else if (
      workersAtZero &&
      queue &&
      queue.waiting > 0 &&
      (queue.oldestWaitingSeconds ?? 0) > WAKE_SECONDS
    ) {
      add({
        severity: "problem",
        subject: `deployment/${s.instance}-worker`,
        what:
          `the workers are scaled to zero and ${queue.waiting} tasks wait, the oldest for ` +
          `${Math.round(queue.oldestWaitingSeconds!)} s: nothing has woken a worker`,
        fix:
          `pulumi config get pulp:maintenance (true keeps the workers stopped); kubectl get scaledobject ` +
          `${s.instance}-worker ${ns} -o yaml (KEDA: its Ready and Active conditions, its paused annotation); ` +
          "kubectl logs -n keda deployment/keda-operator",
      });
    }
    if (st.database_connection.connected && st.online_content_apps.length === 0) {
      add({
        severity: "problem",
        subject: `deployment/${s.instance}-content`,
        what: "no content app is online: downloads fail",
        fix: `kubectl get deployment ${s.instance}-content ${ns}; kubectl logs deployment/${s.instance}-content ${ns}`,
      });
    }
  }

  if (s.tasks.ok && s.status.ok && s.status.body.online_workers.length > 0) {
    const q = s.tasks.queue;
    if (q.waiting > 0 && (q.oldestWaitingSeconds ?? 0) > STUCK_TASK_SECONDS) {
      add({
        severity: "warning",
        subject: "tasks",
        what: `${q.waiting} tasks wait, the oldest for ${Math.round(q.oldestWaitingSeconds! / 60)} min, with ${s.status.body.online_workers.length} workers online and ${q.running} tasks running`,
        fix: `pulp task list --state waiting; more workers (pulumi config set --path pulp:worker.replicas <n>) if they are all busy; kubectl logs deployment/${s.instance}-worker ${ns} if they are not`,
      });
    }
    // The workers' readiness check releases such a task about a minute after its worker went quiet
    // (components/workload/workerCheck.py); one still held after ABANDONED_TASK_SECONDS is not released.
    if (q.abandoned && q.abandoned.tasks > 0 && q.abandoned.silentSeconds > ABANDONED_TASK_SECONDS) {
      add({
        severity: "problem",
        subject: "tasks",
        what:
          `${q.abandoned.tasks} tasks are still "running" on workers gone ${Math.round(q.abandoned.silentSeconds / 60)} min ` +
          `(${q.abandoned.workers.join(", ")}: killed, OOM, a lost node); the repositories they hold wait`,
        fix:
          `delete the missing workers' records as pulpcore's own cleanup would and wake the workers, which fail ` +
          `those tasks: kubectl exec ${ns} deployment/${s.instance}-api -- pulpcore-manager shell -c ` +
          `"from pulpcore.app.models import AppStatus; from pulpcore.tasking.tasks import wakeup_worker; ` +
          `AppStatus.objects.missing().delete(); wakeup_worker('handle')"`,
      });
    }
    if (q.failedLastHour > 0) {
      add({
        severity: "warning",
        subject: "tasks",
        what: `${q.failedLastHour} tasks failed in the last hour`,
        fix: "pulp task list --state failed (each says why: a remote, a checksum, a lock)",
      });
    }
  }

  for (const pod of s.pods) {
    for (const c of pod.containers) podFinding(pod, c, ns, age).forEach(add);
    // A Job's spare pod once the Job has succeeded is no one's wait; a pod asked to go is not waiting for
    // a node, and a kubelet that does not let it go is said apart.
    const jobDone = pod.job !== undefined && s.jobs.some((j) => j.name === pod.job && j.succeeded > 0);
    if (pod.phase === "Pending" && pod.deleting && age(pod.deleting) > PENDING_SECONDS) {
      add({
        severity: "warning",
        subject: `pod/${pod.name}`,
        what: `was asked to go ${Math.round(age(pod.deleting))} s ago and its node has not let it go`,
        fix: `kubectl describe pod ${pod.name} ${ns} (its node's kubelet and runtime)`,
      });
    } else if (pod.phase === "Pending" && !pod.deleting && !jobDone && age(pod.created) > PENDING_SECONDS) {
      const scheduling = s.events.filter(
        (e) => e.object === `Pod/${pod.name}` && e.reason === "FailedScheduling",
      );
      const why = scheduling.at(-1)?.message;
      add({
        severity: "problem",
        subject: `pod/${pod.name}`,
        what: `has waited ${Math.round(age(pod.created))} s for a node${why ? `: ${why}` : ""}`,
        fix:
          why && /PersistentVolumeClaim/i.test(why)
            ? `kubectl get pvc ${ns}; kubectl describe pvc ${ns} (is the storage class there?)`
            : why && /Insufficient/i.test(why)
              ? "lower the component's resources.requests (pulumi config set --path pulp:<component>.resources.requests.cpu …) or add nodes"
              : `kubectl describe pod ${pod.name} ${ns}`,
      });
    }
  }

  // A volume that failed to attach or mount and then did (the kubelet retries; under load its Secret cache
  // can time out once, or the node authorizer not yet know a new pod's PVC) is history once the pod has
  // started, and nobody waits on a spare pod of a Job that has succeeded, nor on a pod that is gone.
  const settled = (object: string) => {
    const pod = s.pods.find((p) => `Pod/${p.name}` === object);
    if (!pod) {
      if (s.otherPods === undefined) return false;
      const other = s.otherPods.find((p) => `Pod/${p.name}` === object);
      return other === undefined || other.phase !== "Pending";
    }
    const jobDone = pod.job !== undefined && s.jobs.some((j) => j.name === pod.job && j.succeeded > 0);
    return pod.phase !== "Pending" || jobDone;
  };
  for (const e of s.events) {
    if (e.type !== "Warning" || settled(e.object)) continue;
    if (e.reason === "FailedAttachVolume" && /Multi-Attach/.test(e.message)) {
      add({
        severity: "problem",
        subject: e.object.toLowerCase(),
        what: `a ReadWriteOnce volume is attached on another node: ${e.message}`,
        fix: "the volume must be ReadWriteMany for pods on several nodes: a RWX storage class (pulp:storage.pvc.storageClass on a new install) or object storage (pulp:storage.s3); meanwhile delete the pod stuck on the other node",
      });
    } else if (e.reason === "FailedMount" && age(e.last) < RECENT_SECONDS) {
      add({
        severity: "problem",
        subject: e.object.toLowerCase(),
        what: `a volume does not mount: ${e.message}`,
        fix: `kubectl describe ${e.object.toLowerCase()} ${ns}`,
      });
    }
  }

  for (const d of s.deployments) {
    if (d.stalled) {
      add({
        severity: "problem",
        subject: `deployment/${d.name}`,
        what: `its rollout stopped (${d.stalled}): ${d.stalledMessage ?? ""}`.trim(),
        fix: "the pods above say why; fix that and pulumi up again (the old ReplicaSet serves meanwhile)",
      });
    } else if (d.desired > 0 && d.available === 0) {
      add({
        severity: "problem",
        subject: `deployment/${d.name}`,
        what: `none of its ${d.desired} pods is available`,
        fix: `kubectl get pods -l app.kubernetes.io/instance=${s.instance},app.kubernetes.io/component=${d.component} ${ns}`,
      });
    }
  }

  // Backups and restores share the backup component; a restore's Jobs are <instance>-restore-*.
  const restoring = (name: string) => name.startsWith(`${s.instance}-restore-`);
  const newest = (component: string, restore = false) =>
    s.jobs
      .filter((j) => j.component === component && restoring(j.name) === restore)
      .sort((a, b) => Date.parse(b.created) - Date.parse(a.created))[0];
  // The Jobs that run Pulp's manager commands share the migration component: each kind is judged by its newest.
  const managerJobs = s.jobs.filter((j) => j.component === "migration");
  const newestNamed = (match: (name: string) => boolean) =>
    managerJobs.filter((j) => match(j.name)).sort((a, b) => Date.parse(b.created) - Date.parse(a.created))[0];
  const signing = newestNamed((n) => n === `${s.instance}-signing-services`);
  if (signing?.failure) {
    add({
      severity: "problem",
      subject: `job/${signing.name}`,
      what: `the signing services' registration failed (${signing.failure.reason})${signing.said ? `: ${signing.said}` : ""}`,
      fix: `kubectl logs job/${signing.name} ${ns}; fix the cause, then pulumi up (the failed Job is replaced)`,
    });
  }
  const migration = newestNamed((n) => n.startsWith(`${s.instance}-migrate-`));
  if (migration?.failure) {
    add({
      severity: "problem",
      subject: `job/${migration.name}`,
      what: `the migration failed (${migration.failure.reason})${migration.said ? `: ${migration.said}` : ""}`,
      fix: `kubectl logs job/${migration.name} ${ns}; fix the cause, then pulumi up (the failed Job is replaced; the running release keeps serving)`,
    });
  } else if (migration && migration.active > 0 && age(migration.created) > LONG_MIGRATION_SECONDS) {
    add({
      severity: "warning",
      subject: `job/${migration.name}`,
      what: `the migration has run for ${Math.round(age(migration.created) / 60)} min`,
      fix: `kubectl logs job/${migration.name} ${ns} (a lock it waits for, a database that does not answer)`,
    });
  }
  const restoreJob = newest("backup", true);
  if (restoreJob?.failure) {
    add({
      severity: "problem",
      subject: `job/${restoreJob.name}`,
      what: `the restore failed${restoreJob.said ? `: ${restoreJob.said}` : ""}`,
      fix: `kubectl logs job/${restoreJob.name} ${ns}; docs/backup-restore.md says what each refusal needs`,
    });
  }
  const backupJob = newest("backup");
  if (backupJob?.failure) {
    add({
      severity: "problem",
      subject: `job/${backupJob.name}`,
      what: `the last backup failed${backupJob.said ? `: ${backupJob.said}` : ""}`,
      fix: `kubectl logs job/${backupJob.name} ${ns}; then take one: pulp-backup now -n ${s.namespace}`,
    });
  }
  if (s.backup && !s.backup.suspended) {
    const last = s.backup.lastSuccess;
    if (!last || age(last) > STALE_BACKUP_SECONDS) {
      add({
        severity: "warning",
        subject: `cronjob/${s.backup.cronJob}`,
        what: last
          ? `the last successful backup is ${Math.round(age(last) / 86400)} days old (schedule ${s.backup.schedule})`
          : `no scheduled backup has succeeded yet (schedule ${s.backup.schedule})`,
        fix: `kubectl get jobs -l app.kubernetes.io/component=backup ${ns}; pulp-backup now -n ${s.namespace}`,
      });
    }
  }

  if (s.database) {
    const db = s.database;
    if (!/healthy/i.test(db.phase)) {
      add({
        severity: "problem",
        subject: `cluster/${db.name}`,
        what: `the CloudNativePG cluster is "${db.phase}"${db.phaseReason ? `: ${db.phaseReason}` : ""}`,
        fix: `kubectl describe cluster ${db.name} ${ns}; kubectl logs -l cnpg.io/cluster=${db.name} ${ns}`,
      });
    } else if (db.readyInstances < db.instances) {
      add({
        severity: "warning",
        subject: `cluster/${db.name}`,
        what: `${db.readyInstances} of ${db.instances} database instances are ready: a failover has less to go to`,
        fix: `kubectl get pods -l cnpg.io/cluster=${db.name} ${ns}`,
      });
    }
  }

  if (s.pooler && s.pooler.readyInstances < s.pooler.instances) {
    const p = s.pooler;
    const none = p.readyInstances === 0;
    add({
      severity: none ? "problem" : "warning",
      subject: `pooler/${p.name}`,
      what: none
        ? "no pooler pod is ready: Pulp's processes connect through it, so they cannot reach the database"
        : `${p.readyInstances} of ${p.instances} pooler pods are ready`,
      fix: `kubectl get pods -l cnpg.io/poolerName=${p.name} ${ns}; kubectl logs -l cnpg.io/poolerName=${p.name} ${ns}`,
    });
  }

  for (const pvc of s.pvcs) {
    if (pvc.phase !== "Pending") continue;
    add({
      severity: "problem",
      subject: `pvc/${pvc.name}`,
      what: `is not bound (storage class ${pvc.storageClass ?? "the cluster's default"})`,
      fix: `kubectl describe pvc ${pvc.name} ${ns}; kubectl get storageclass (does it exist, and does it provision ${pvc.accessModes.join(", ")}?)`,
    });
  }

  for (const dv of s.dataVolumes) {
    const why = dv.conditions
      .filter((c) => c.message)
      .map((c) => `${c.reason ?? c.type}: ${c.message}`)
      .join("; ");
    if (dv.phase === "Failed") {
      add({
        severity: "problem",
        subject: `datavolume/${dv.name}`,
        what: `the import failed${why ? `: ${why}` : ""}`,
        fix: "fix the URL, the quota or the storage class it names, then pulumi up --refresh to import again",
      });
    } else if (dv.phase !== "Succeeded" && dv.restarts > 0) {
      add({
        severity: "warning",
        subject: `datavolume/${dv.name}`,
        what: `the importer has restarted ${dv.restarts} times (${dv.phase}${dv.progress ? `, ${dv.progress}` : ""})${why ? `: ${why}` : ""}`,
        fix: `kubectl logs -l cdi.kubevirt.io=importer ${ns}`,
      });
    }
  }
  return findings;
}

function podFinding(pod: PodState, c: ContainerState, ns: string, age: (time: string) => number): Finding[] {
  const subject = `pod/${pod.name}`;
  const ended = c.lastEnded;
  const endedText = ended ? `last ended ${ended.reason} (exit ${ended.exitCode}) at ${ended.finishedAt}` : "";
  if (c.waiting === "CrashLoopBackOff") {
    const oom = ended?.reason === "OOMKilled";
    return [
      {
        severity: "problem",
        subject,
        what: `${c.name} keeps failing (${c.restarts} restarts, ${endedText})`,
        fix: oom
          ? `it ran out of memory: raise its limit, pulumi config set --path pulp:${pod.component}.resources.limits.memory <more>, then pulumi up`
          : `kubectl logs ${pod.name} -c ${c.name} --previous ${ns}`,
      },
    ];
  }
  if (c.waiting && /ImagePull|ErrImage|InvalidImageName/.test(c.waiting)) {
    return [
      {
        severity: "problem",
        subject,
        what: `${c.name} cannot pull its image (${c.waiting})${c.waitingMessage ? `: ${c.waitingMessage}` : ""}`,
        fix: "check the image reference (pulp:image, pulp:web.image, pulp:redis.image) and, for a private registry, pulp:imagePullSecrets",
      },
    ];
  }
  if (c.waiting && /CreateContainer(Config)?Error|RunContainerError/.test(c.waiting)) {
    return [
      {
        severity: "problem",
        subject,
        what: `${c.name} cannot start (${c.waiting})${c.waitingMessage ? `: ${c.waitingMessage}` : ""}`,
        fix: `kubectl describe pod ${pod.name} ${ns}`,
      },
    ];
  }
  if (ended && c.restarts > 0 && age(ended.finishedAt) < RECENT_SECONDS) {
    const pulp = PULP_PROCESSES.includes(pod.component);
    return [
      {
        severity: "warning",
        subject,
        what:
          `${c.name} restarted ${c.restarts} times, ${endedText}` +
          (pulp && ended.reason !== "OOMKilled"
            ? " (a Pulp process ends when it cannot reach its database: see the database's state)"
            : ""),
        fix:
          ended.reason === "OOMKilled"
            ? `pulumi config set --path pulp:${pod.component}.resources.limits.memory <more>`
            : `kubectl logs ${pod.name} -c ${c.name} --previous ${ns}`,
      },
    ];
  }
  return [];
}
