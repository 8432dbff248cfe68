// Unit, no mocks, real HTTP: the import watch against a local HTTP server standing for the API server.
// A failed import (an importer that keeps crashing on a 404) ends the update naming the cause, and its
// DataVolume is deleted so that the next update can make it again from a corrected URL. In preview, a
// storage class given as an Output not known yet is not checked against the cluster's classes.
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { AddressInfo } from "net";
import { importWatchProvider, ImportWatchInputs } from "../../../../components/cdi/importWatch";
import { clusterFrom } from "../../../../components/upgrade/cluster";

const DV = "/apis/cdi.kubevirt.io/v1beta1/namespaces/pulp/datavolumes/restored-restore-x";
const seen: string[] = [];
let dataVolume: object | undefined;
let server: http.Server;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "import-watch-"));
let kube: ImportWatchInputs["kube"];

const importer = {
  metadata: { name: "importer-restored-restore-x" },
  status: {
    phase: "Running",
    containerStatuses: [
      {
        restartCount: 3,
        lastState: {
          terminated: {
            exitCode: 1,
            message:
              "Unable to connect to http data source: expected status code 200, got 404. Status: 404 Not Found",
          },
        },
      },
    ],
  },
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => {
      const json = (body: unknown) =>
        res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
      if (req.url === DV && req.method === "DELETE") {
        dataVolume = undefined;
        return json({ kind: "Status", status: "Success" });
      }
      if (req.url === DV) return dataVolume ? json(dataVolume) : res.writeHead(404).end("{}");
      if (req.url!.endsWith("/pods")) return json({ items: dataVolume ? [importer] : [] });
      if (req.url === "/apis/storage.k8s.io/v1/storageclasses")
        return json({ items: [{ metadata: { name: "standard" } }] });
      if (req.url!.endsWith("/resourcequotas")) return json({ items: [] });
      if (req.url!.endsWith("/persistentvolumeclaims") || req.url!.endsWith("/events"))
        return json({ items: [] });
      return res.writeHead(404).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const kubeconfig = path.join(dir, "kubeconfig");
  fs.writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "c",
      contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      clusters: [
        { name: "c", cluster: { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } },
      ],
      users: [{ name: "u", user: { token: "t" } }],
    }),
  );
  kube = clusterFrom(kubeconfig, undefined, {}, dir);
});
afterAll(() => {
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("an importer that keeps crashing fails the update with its message, and the failed DataVolume is deleted", async () => {
  dataVolume = {
    metadata: { name: "restored-restore-x" },
    status: {
      phase: "ImportInProgress",
      conditions: [{ type: "Running", status: "False", reason: "Error" }],
    },
  };
  const inputs: ImportWatchInputs = {
    namespace: "pulp",
    name: "restored-restore-x",
    size: "1Gi",
    timeoutSeconds: 60,
    kube,
  };
  const failure = importWatchProvider.create!(inputs);
  await expect(failure).rejects.toThrow(
    "DataVolume pulp/restored-restore-x: importer pod importer-restored-restore-x keeps failing (restarted 3 times, last exit 1): " +
      "Unable to connect to http data source: expected status code 200, got 404. Status: 404 Not Found",
  );
  await expect(failure).rejects.toThrow(
    "The failed DataVolume pulp/restored-restore-x was deleted: fix the cause, then `pulumi up --refresh` creates it again.",
  );
  expect(seen).toContain(`DELETE ${DV}`);
  expect(dataVolume).toBeUndefined();
});

test("in preview, a storage class not known yet (an Output of another resource) is not checked; a known one is", async () => {
  dataVolume = undefined;
  const news = (storageClass: string): ImportWatchInputs => ({
    namespace: "pulp",
    name: "restored-restore-x",
    size: "1Gi",
    storageClass,
    timeoutSeconds: 60,
    kube,
  });
  seen.length = 0;
  await expect(
    importWatchProvider.check!({}, news("04da6b54-80e4-46f7-96ec-b56ff0331ba9")),
  ).resolves.toBeDefined();
  expect(seen).not.toContain("GET /apis/storage.k8s.io/v1/storageclasses");
  await expect(importWatchProvider.check!({}, news("nope"))).rejects.toThrow(
    "StorageClass nope for restored-restore-x does not exist.",
  );
});
