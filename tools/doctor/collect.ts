// Reads one Pulp install from the API server into a snapshot (snapshot.ts): its pods, Deployments, Jobs,
// events, volumes, database cluster, DataVolumes and backup CronJob, by their instance label, and Pulp's
// status through the API server's proxy to the api Service (no port-forward, no credentials: the status
// endpoint is anonymous). Secrets are never read.
import { namespaceEvents } from "../events";
import { clusterProblem, getJson, Kube, run, ToolError } from "../kube";
import {
  ContainerState,
  DataVolumeState,
  JobState,
  PodState,
  PulpStatus,
  Snapshot,
  TaskQueue,
} from "./snapshot";

/* eslint-disable @typescript-eslint/no-explicit-any -- Kubernetes objects as kubectl prints them */

const COMPONENT = "app.kubernetes.io/component";

/** Reads what the doctor judges. `now` is injectable so that a snapshot can be replayed. */
export function collect(kube: Kube, namespace: string, instance: string, now = new Date()): Snapshot {
  const selector = `app.kubernetes.io/instance=${instance},app.kubernetes.io/part-of=pulp`;
  const list = (kind: string, sel = selector): any[] =>
    (getJson(kube, [kind, "-n", namespace, "-l", sel]) as { items: any[] } | undefined)?.items ?? [];

  const deploymentsRaw = list("deployments");
  const pods = list("pods").map(podState);
  const otherPods = ((getJson(kube, ["pods", "-n", namespace]) as { items: any[] } | undefined)?.items ?? [])
    .filter((p) => !pods.some((o) => o.name === p.metadata.name))
    .map((p) => ({ name: p.metadata.name as string, phase: (p.status?.phase ?? "") as string }));
  const jobs = list("jobs").map(jobState(kube, namespace));
  const events = namespaceEvents(kube, namespace);
  const pvcs = list("persistentvolumeclaims").map((p) => ({
    name: p.metadata.name,
    phase: p.status?.phase ?? "",
    storageClass: p.spec?.storageClassName,
    accessModes: p.spec?.accessModes ?? [],
  }));
  const clusters = optionalList(kube, "clusters.postgresql.cnpg.io", namespace, selector);
  const poolers = optionalList(kube, "poolers.postgresql.cnpg.io", namespace, selector);
  // The operator names the pooler's Deployment after the Pooler (pkg/specs/pgbouncer/deployments.go).
  const poolerDeployment =
    poolers[0] && getJson(kube, ["deployment", poolers[0].metadata.name, "-n", namespace]);
  const dataVolumes = optionalList(kube, "datavolumes.cdi.kubevirt.io", namespace, selector).map(
    dataVolumeState,
  );
  const cronJob = list("cronjobs").find((c) => c.metadata.labels?.[COMPONENT] === "backup");

  return {
    namespace,
    instance,
    at: now.toISOString(),
    status: pulpStatus(kube, namespace, instance, deploymentsRaw),
    tasks: taskQueue(kube, namespace, pods),
    pods,
    otherPods,
    deployments: deploymentsRaw.map((d) => {
      const progressing = (d.status?.conditions ?? []).find((c: any) => c.type === "Progressing");
      return {
        name: d.metadata.name,
        component: d.metadata.labels?.[COMPONENT] ?? "",
        desired: d.spec?.replicas ?? 1,
        available: d.status?.availableReplicas ?? 0,
        updated: d.status?.updatedReplicas ?? 0,
        ...(progressing?.status === "False"
          ? { stalled: progressing.reason, stalledMessage: progressing.message }
          : {}),
      };
    }),
    jobs,
    events,
    pvcs,
    database: clusters[0] && {
      name: clusters[0].metadata.name,
      phase: clusters[0].status?.phase ?? "",
      phaseReason: clusters[0].status?.phaseReason,
      instances: clusters[0].spec?.instances ?? 1,
      readyInstances: clusters[0].status?.readyInstances ?? 0,
    },
    pooler: poolers[0] && {
      name: poolers[0].metadata.name,
      instances: poolers[0].spec?.instances ?? 1,
      readyInstances: poolerDeployment?.status?.readyReplicas ?? 0,
    },
    dataVolumes,
    backup: cronJob && {
      cronJob: cronJob.metadata.name,
      suspended: cronJob.spec?.suspend === true,
      schedule: cronJob.spec?.schedule ?? "",
      lastSuccess: cronJob.status?.lastSuccessfulTime,
    },
  };
}

/** A kind whose CRD may be absent (no CloudNativePG, no CDI): nothing, rather than an error. */
function optionalList(kube: Kube, kind: string, namespace: string, selector: string): any[] {
  const r = run(kube, ["get", kind, "-n", namespace, "-l", selector, "-o", "json"]);
  if (r.ok) return JSON.parse(r.stdout).items;
  if (/the server doesn't have a resource type|no matches for kind/i.test(r.stderr)) return [];
  throw new ToolError(
    clusterProblem(kube, r.stderr) ?? `kubectl get ${kind} failed: ${r.stderr.trim().split("\n")[0]}`,
  );
}

function podState(p: any): PodState {
  const ready = (p.status?.conditions ?? []).find((c: any) => c.type === "Ready");
  return {
    name: p.metadata.name,
    component: p.metadata.labels?.[COMPONENT] ?? "",
    phase: p.status?.phase ?? "",
    node: p.spec?.nodeName,
    created: p.metadata.creationTimestamp,
    ready: ready?.status ?? "Unknown",
    deleting: p.metadata.deletionTimestamp,
    job: (p.metadata.ownerReferences ?? []).find((o: any) => o.kind === "Job")?.name,
    containers: (p.status?.containerStatuses ?? []).map((c: any): ContainerState => ({
      name: c.name,
      ready: c.ready === true,
      restarts: c.restartCount ?? 0,
      waiting: c.state?.waiting?.reason,
      waitingMessage: c.state?.waiting?.message,
      lastEnded: c.lastState?.terminated && {
        reason: c.lastState.terminated.reason ?? "",
        exitCode: c.lastState.terminated.exitCode,
        finishedAt: c.lastState.terminated.finishedAt,
        message: c.lastState.terminated.message,
      },
    })),
  };
}

function jobState(kube: Kube, namespace: string) {
  return (j: any): JobState => {
    const failed = (j.status?.conditions ?? []).find((c: any) => c.type === "Failed" && c.status === "True");
    let said: string | undefined;
    if (failed) {
      // The Job's pods end with a termination message: the script's last words (its last log lines).
      const pods = getJson(kube, ["pods", "-n", namespace, "-l", `job-name=${j.metadata.name}`]) as
        { items: any[] } | undefined;
      const last = (pods?.items ?? []).sort(
        (a, b) => Date.parse(b.metadata.creationTimestamp) - Date.parse(a.metadata.creationTimestamp),
      )[0];
      said = last?.status?.containerStatuses
        ?.map((c: any) => c.state?.terminated?.message?.trim())
        .filter(Boolean)
        .join(" | ")
        .slice(-600);
    }
    return {
      name: j.metadata.name,
      component: j.metadata.labels?.[COMPONENT] ?? "",
      created: j.metadata.creationTimestamp,
      active: j.status?.active ?? 0,
      succeeded: j.status?.succeeded ?? 0,
      failed: j.status?.failed ?? 0,
      ...(failed ? { failure: { reason: failed.reason ?? "", message: failed.message ?? "" } } : {}),
      ...(said ? { said } : {}),
    };
  };
}

function dataVolumeState(dv: any): DataVolumeState {
  return {
    name: dv.metadata.name,
    phase: dv.status?.phase ?? "",
    progress: dv.status?.progress,
    restarts: dv.status?.restartCount ?? 0,
    conditions: (dv.status?.conditions ?? [])
      .filter((c: any) => c.status !== "True")
      .map((c: any) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })),
  };
}

/**
 * GET <apiRoot>api/v3/status/ through the API server's service proxy. The path is the api's readiness
 * probe's (the program probes exactly that), so a non-default API root needs no flag.
 */
function pulpStatus(kube: Kube, namespace: string, instance: string, deployments: any[]): Snapshot["status"] {
  const api = deployments.find((d) => d.metadata.labels?.[COMPONENT] === "api");
  if (!api) return { ok: false, error: `no api Deployment of instance ${instance} in ${namespace}` };
  const probe = api.spec?.template?.spec?.containers?.find((c: any) => c.name === "api")?.readinessProbe;
  const statusPath: string = probe?.httpGet?.path ?? "/pulp/api/v3/status/";
  const service = `${instance}-api`;
  const r = run(kube, [
    "get",
    "--raw",
    `/api/v1/namespaces/${namespace}/services/http:${service}:http/proxy${statusPath}`,
  ]);
  if (!r.ok) return { ok: false, error: r.stderr.trim().split("\n")[0] || "no answer" };
  try {
    return { ok: true, body: JSON.parse(r.stdout) as PulpStatus };
  } catch {
    return { ok: false, error: `not JSON: ${r.stdout.slice(0, 200)}` };
  }
}

/** Counts Pulp's tasks by state, in a ready api pod; the database's own clock measures the waits. */
const TASK_QUEUE_PY = `
import datetime, json
from django.db.models import Min
from django.utils import timezone
from pulpcore.app.models import Task
now = timezone.now()
waiting = Task.objects.filter(state="waiting")
def abandoned():
    # Tasks are held through app_lock since pulpcore 3.89; before, by advisory locks a dead worker gives back.
    if not any(f.name == "app_lock" for f in Task._meta.get_fields()):
        return {"tasks": 0, "workers": [], "silentSeconds": 0}
    from pulpcore.app.models import AppStatus
    held = Task.objects.filter(state__in=["running", "canceling"], app_lock__in=AppStatus.objects.missing())
    beats = list(held.values_list("app_lock__name", "app_lock__last_heartbeat"))
    return {
        "tasks": len(beats),
        "workers": sorted({name for name, _ in beats}),
        "silentSeconds": max([(now - beat).total_seconds() for _, beat in beats], default=0),
    }
oldest = waiting.aggregate(m=Min("pulp_created"))["m"]
print("PULP_DOCTOR " + json.dumps({
    "waiting": waiting.count(),
    "oldestWaitingSeconds": (now - oldest).total_seconds() if oldest else None,
    "running": Task.objects.filter(state="running").count(),
    "failedLastHour": Task.objects.filter(state="failed", finished_at__gte=now - datetime.timedelta(hours=1)).count(),
    "abandoned": abandoned(),
}))
`;

function taskQueue(kube: Kube, namespace: string, pods: PodState[]): Snapshot["tasks"] {
  const api = pods.find((p) => p.component === "api" && p.ready === "True");
  if (!api) return { ok: false, error: "no ready api pod to ask" };
  const r = run(kube, [
    "exec",
    "-n",
    namespace,
    api.name,
    "-c",
    "api",
    "--",
    "pulpcore-manager",
    "shell",
    "-c",
    TASK_QUEUE_PY,
  ]);
  const line = r.stdout.split("\n").find((l) => l.startsWith("PULP_DOCTOR "));
  if (!r.ok || !line) return { ok: false, error: (r.stderr.trim().split("\n").pop() ?? "") || "no answer" };
  return { ok: true, queue: JSON.parse(line.slice("PULP_DOCTOR ".length)) as TaskQueue };
}
