// Unit, no mocks, real HTTP: the stop-the-world step talks only to the cluster the component deploys to.
// Two local HTTP servers stand for two API servers; $KUBECONFIG points at the wrong one and must not be
// used, whether it is set before the program resolves the cluster or changed afterwards.
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { AddressInfo } from "net";
import { clusterFrom } from "../../../../components/upgrade/cluster";
import { stopTheWorldProvider, StopTheWorldInputs } from "../../../../components/upgrade/stopTheWorld";

interface ApiServer {
  server: http.Server;
  seen: string[];
  /** The body of each PATCH, in order, as "<path> <body>". */
  patches: string[];
  kubeconfig: string;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stw-cluster-"));
/** pulp-api's spec.replicas on the stand-in servers. */
let apiReplicas = 2;
/** Whether the stand-in KEDA sets its Paused condition when the pause annotation arrives. */
let kedaRunning = true;

/** An API server with one Deployment, pulp-api (2 replicas), whose pods are already gone, and one ScaledObject. */
async function apiServer(name: string): Promise<ApiServer> {
  const seen: string[] = [];
  const patches: string[] = [];
  let paused = false;
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "PATCH") patches.push(`${req.url!.split("?")[0]} ${Buffer.concat(chunks)}`);
      if (req.method === "PATCH" && req.url!.includes("/scaledobjects/"))
        paused =
          kedaRunning && Buffer.concat(chunks).toString().includes('"autoscaling.keda.sh/paused":"true"');
      const json = (body: unknown) =>
        res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
      if (req.url!.includes("/pods")) return json({ items: [] });
      if (req.url!.includes("/scaledobjects/pulp-worker"))
        return json({
          metadata: { name: "pulp-worker" },
          status: { conditions: [{ type: "Paused", status: paused ? "True" : "False" }] },
        });
      if (req.url!.includes("/deployments/pulp-api"))
        return json({
          metadata: { name: "pulp-api", generation: 3 },
          spec: { replicas: apiReplicas, selector: { matchLabels: { app: "pulp-api" } } },
        });
      return res.writeHead(404).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = path.join(dir, `${name}.yaml`);
  fs.writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": name,
      contexts: [{ name, context: { cluster: name, user: name } }],
      clusters: [{ name, cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name, user: { token: `token-${name}` } }],
    }),
  );
  return { server, seen, patches, kubeconfig };
}

let target: ApiServer;
let wrong: ApiServer;
const saved = process.env.KUBECONFIG;

beforeAll(async () => {
  target = await apiServer("target");
  wrong = await apiServer("wrong");
});
afterAll(() => {
  target.server.close();
  wrong.server.close();
  process.env.KUBECONFIG = saved;
  fs.rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  target.seen.length = 0;
  target.patches.length = 0;
  wrong.seen.length = 0;
});

const inputs = (kube: StopTheWorldInputs["kube"]): StopTheWorldInputs => ({
  namespace: "pulp",
  deployments: ["pulp-api"],
  from: "3.84.0",
  to: "3.85.0",
  floor: "3.85.0",
  migrations: "core 0140",
  heartbeatTtlSeconds: 0,
  podsGoneTimeoutSeconds: 5,
  kube,
});

test("kubernetes:kubeconfig names the target: the step scales there, $KUBECONFIG's cluster hears nothing", async () => {
  process.env.KUBECONFIG = wrong.kubeconfig;
  const cluster = clusterFrom(target.kubeconfig, undefined, process.env, dir);
  const result = await stopTheWorldProvider.create!(inputs(cluster));
  expect(result.outs.stopped).toEqual([{ name: "pulp-api", replicas: 2, generation: 3 }]);
  expect(target.seen).toContain(
    "PATCH /apis/apps/v1/namespaces/pulp/deployments/pulp-api/scale?fieldManager=pulp-stop-the-world",
  );
  expect(wrong.seen).toEqual([]);
});

test("the kubeconfig content itself works the same way", async () => {
  process.env.KUBECONFIG = wrong.kubeconfig;
  const content = fs.readFileSync(target.kubeconfig, "utf8").replace("{", "{\n");
  await stopTheWorldProvider.create!(inputs(clusterFrom(content, undefined, process.env, dir)));
  expect(target.seen.length).toBeGreaterThan(0);
  expect(wrong.seen).toEqual([]);
});

test("resolved from $KUBECONFIG at program time, the step keeps that cluster when $KUBECONFIG changes", async () => {
  const cluster = clusterFrom(undefined, undefined, { KUBECONFIG: target.kubeconfig }, dir);
  expect(cluster).toEqual({ kubeconfig: target.kubeconfig, context: undefined });
  process.env.KUBECONFIG = wrong.kubeconfig; // the dynamic provider's process sees another one
  await stopTheWorldProvider.create!(inputs(cluster));
  await stopTheWorldProvider.delete!("id", {
    ...inputs(cluster),
    stopped: [{ name: "pulp-api", replicas: 2, generation: 3 }],
    lastPodGoneAt: "",
    heartbeatsExpiredAt: "",
  });
  expect(target.seen.length).toBeGreaterThan(0);
  expect(wrong.seen).toEqual([]);
});

test("no kubeconfig anywhere: the in-cluster service account, never a guess", () => {
  expect(clusterFrom(undefined, "ctx", {}, dir)).toEqual({ context: "ctx", inCluster: true });
  expect(() => clusterFrom(undefined, undefined, { KUBECONFIG: path.join(dir, "missing") }, dir)).toThrow(
    /does not exist/,
  );
});

test("KEDA is paused before the scale-down, and unpaused on the revert path with the Deployment it scales back", async () => {
  const cluster = clusterFrom(target.kubeconfig, undefined, {}, dir);
  const withKeda = { ...inputs(cluster), scaledObjects: ["pulp-worker", "gone"] };
  await stopTheWorldProvider.create!(withKeda);
  const scaledObject = "/apis/keda.sh/v1alpha1/namespaces/pulp/scaledobjects/pulp-worker";
  expect(target.patches).toEqual([
    `${scaledObject} {"metadata":{"annotations":{"autoscaling.keda.sh/paused":"true"}}}`,
    `/apis/apps/v1/namespaces/pulp/deployments/pulp-api/scale {"spec":{"replicas":0}}`,
  ]);
  // A ScaledObject that is not there ("gone") is skipped, not an error.
  target.patches.length = 0;
  const outs = {
    ...withKeda,
    stopped: [{ name: "pulp-api", replicas: 2, generation: 3 }],
    lastPodGoneAt: "",
    heartbeatsExpiredAt: "",
  };
  // The stand-in Deployment has 2 replicas: the new release's update applied it (and the ScaledObject).
  await stopTheWorldProvider.delete!("id", outs);
  expect(target.patches).toEqual([]);
  // Still at zero with the same generation: the revert path restarts it and unpauses KEDA.
  apiReplicas = 0;
  try {
    await stopTheWorldProvider.delete!("id", outs);
  } finally {
    apiReplicas = 2;
  }
  expect(target.patches).toEqual([
    `/apis/apps/v1/namespaces/pulp/deployments/pulp-api/scale {"spec":{"replicas":2}}`,
    `${scaledObject} {"metadata":{"annotations":{"autoscaling.keda.sh/paused":"false"}}}`,
  ]);
});

test("KEDA that never confirms the pause fails the step before anything stops, and the pause is taken back", async () => {
  const cluster = clusterFrom(target.kubeconfig, undefined, {}, dir);
  const scaledObject = "/apis/keda.sh/v1alpha1/namespaces/pulp/scaledobjects/pulp-worker";
  target.patches.length = 0;
  kedaRunning = false;
  try {
    await expect(
      stopTheWorldProvider.create!({
        ...inputs(cluster),
        scaledObjects: ["pulp-worker"],
        pauseTimeoutSeconds: 1,
      }),
    ).rejects.toThrow(
      /KEDA did not confirm the pause of ScaledObject pulp\/pulp-worker within 1 s.*Nothing was stopped/,
    );
  } finally {
    kedaRunning = true;
  }
  expect(target.patches).toEqual([
    `${scaledObject} {"metadata":{"annotations":{"autoscaling.keda.sh/paused":"true"}}}`,
    `${scaledObject} {"metadata":{"annotations":{"autoscaling.keda.sh/paused":"false"}}}`,
  ]);
});
