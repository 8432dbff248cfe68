// Samples the ready endpoints of Services every `intervalMs` straight from the API server (no kubectl
// process per sample), in its own process so that a blocking `pulumi up` does not pause it.
//   ts-node -T testbed/bench/endpointSampler.ts <kubeconfig> <namespace> <out.jsonl> <intervalMs> <service>...
// One JSON line per sample: {"t": <ms since epoch>, "ready": {"<service>": <count>}, "pods": [PodSample]}
// (the namespace's Pulp pods: which ReplicaSet, ready, terminating). Stops on SIGTERM.
import * as fs from "fs";
import { kubeApi } from "../../components/upgrade/kubeApi";

interface EndpointSliceList {
  items: { endpoints?: { conditions?: { ready?: boolean } }[] }[];
}

/** One pod in one sample: name, component, pod-template-hash, ready, terminating. */
export interface PodSample {
  name: string;
  component: string;
  hash: string;
  ready: boolean;
  terminating: boolean;
}

interface PodList {
  items: {
    metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
    status?: { conditions?: { type: string; status: string }[] };
  }[];
}

function podSamples(list: PodList): PodSample[] {
  return list.items.map((p) => ({
    name: p.metadata.name,
    component: p.metadata.labels?.["app.kubernetes.io/component"] ?? "",
    hash: p.metadata.labels?.["pod-template-hash"] ?? "",
    ready: (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
    terminating: Boolean(p.metadata.deletionTimestamp),
  }));
}

/** GET as JSON through the program's own API client; a missing list reads as empty. */
function client(kubeconfig: string) {
  // A short timeout: a slow answer must not stretch the sampling interval.
  const api = kubeApi({ kubeconfig }, { timeoutMs: 2000 });
  return async <T>(path: string) => ((await api.request("GET", path)) ?? { items: [] }) as unknown as T;
}

/** Ready endpoints of one Service: the ready addresses over all its EndpointSlices. */
export function readyCount(slices: EndpointSliceList): number {
  return slices.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready === true).length;
}

async function main() {
  const [kubeconfig, namespace, out, interval, ...services] = process.argv.slice(2);
  const get = client(kubeconfig);
  const stream = fs.createWriteStream(out, { flags: "w" });
  let running = true;
  process.on("SIGTERM", () => (running = false));
  while (running) {
    const started = Date.now();
    const ready: Record<string, number> = {};
    await Promise.all(
      services.map(async (svc) => {
        const slices = await get<EndpointSliceList>(
          `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D${svc}`,
        ).catch((): EndpointSliceList => ({ items: [] }));
        ready[svc] = readyCount(slices);
      }),
    );
    const pods = await get<PodList>(
      `/api/v1/namespaces/${namespace}/pods?labelSelector=app.kubernetes.io%2Fname%3Dpulp`,
    ).then(podSamples, (): PodSample[] => []);
    stream.write(`${JSON.stringify({ t: started, ready, pods })}\n`);
    await new Promise((r) => setTimeout(r, Math.max(0, Number(interval) - (Date.now() - started))));
  }
  stream.end(() => process.exit(0));
}

if (require.main === module) void main();
