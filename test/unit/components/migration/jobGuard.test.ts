// Unit: the Job guard (components/migration/jobGuard.ts) as the dynamic provider runs it at every preview and
// update: its check lists the install's Jobs through kubeApi from a stand-in API server (node http, a
// kubeconfig pointing at it) and refuses while a migration or restore Job is unfinished. That the provider
// would otherwise replace the running Job is pulumi-kubernetes' Diff (provider.go@v4.25.0, read, not run).
import * as http from "http";
import { AddressInfo } from "net";
import {
  JobGuardInputs,
  JobStatus,
  jobGuardProvider,
  unfinished,
} from "../../../../components/migration/jobGuard";

const job = (name: string, component: string, status: JobStatus["status"], suspend = false): JobStatus => ({
  metadata: {
    name,
    labels: { "app.kubernetes.io/instance": "pulp", "app.kubernetes.io/component": component },
  },
  spec: { suspend },
  status,
});
const COMPLETE = { conditions: [{ type: "Complete", status: "True" }] };
const FAILED = { conditions: [{ type: "Failed", status: "True" }] };
const RUNNING = { startTime: "2026-11-25T10:00:00Z", active: 1 };

let server: http.Server;
let jobs: JobStatus[] = [];
/** The uid of namespace pulp in this stand-in cluster. */
const namespaceUid = "6f1d2c3b-0000-4000-8000-00000000000b";
const requests: string[] = [];
let kubeconfig: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests.push(req.url ?? "");
    res.setHeader("Content-Type", "application/json");
    if (req.url === "/api/v1/namespaces/pulp") {
      res.end(JSON.stringify({ kind: "Namespace", metadata: { name: "pulp", uid: namespaceUid } }));
      return;
    }
    res.end(JSON.stringify({ kind: "JobList", items: jobs }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  kubeconfig = [
    "apiVersion: v1",
    "current-context: test",
    "contexts: [{name: test, context: {cluster: test, user: test}}]",
    `clusters: [{name: test, cluster: {server: "http://127.0.0.1:${port}"}}]`,
    "users: [{name: test, user: {token: t}}]",
    "",
  ].join("\n");
});
const requestsServer = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const check = (instance = "pulp", more: Partial<JobGuardInputs> = {}) => {
  const inputs = { namespace: "pulp", instance, timeout: "6h", kube: { kubeconfig }, ...more };
  return jobGuardProvider.check!({}, inputs);
};

test("finished, suspended, and other components' Jobs pass; the list is the install's, in its namespace", async () => {
  jobs = [
    job("pulp-migrate-0a1b2c3d", "migration", COMPLETE),
    job("pulp-migrate-99999999", "migration", FAILED),
    job("pulp-restore-check-20261124t031500z", "backup", {}, true),
    job("pulp-backup-29000000", "backup", RUNNING), // a scheduled backup: not the guard's business
  ];
  await expect(check()).resolves.toMatchObject({ inputs: { namespace: "pulp" } });
  expect(requests).toContain(
    "/apis/batch/v1/namespaces/pulp/jobs?labelSelector=app.kubernetes.io%2Finstance%3Dpulp",
  );
});

test("a running migration Job is refused, naming the wait command", async () => {
  jobs = [job("pulp-migrate-0a1b2c3d", "migration", RUNNING)];
  await expect(check()).rejects.toThrow(
    /job\/pulp-migrate-0a1b2c3d, started 2026-11-25T10:00:00Z: wait for it with\n\s+kubectl wait --for=condition=complete job\/pulp-migrate-0a1b2c3d -n pulp --timeout=6h\n/,
  );
});

test("the refusal says what to run when the Job fails or cannot finish", async () => {
  jobs = [job("pulp-migrate-0a1b2c3d", "migration", RUNNING)];
  const refused = await check().catch((e: Error) => e.message);
  expect(refused).toContain("then run `pulumi up` again");
  expect(refused).toContain("`kubectl logs job/<name> -n pulp` says why");
  expect(refused).toContain("`kubectl delete job/<name> -n pulp`");
});

test("a migration Job between retries (no pod active, not failed yet) counts as running", async () => {
  jobs = [job("pulp-migrate-0a1b2c3d", "migration", { active: 0, conditions: [] })];
  await expect(check()).rejects.toThrow(/still running/);
});

test("a running restore Job is refused; its running check Job and another instance's names are not", async () => {
  jobs = [
    job("pulp-restore-20261124t031500z", "backup", RUNNING),
    job("pulp-restore-check-20261124t031500z", "backup", RUNNING),
  ];
  await expect(check()).rejects.toThrow(/job\/pulp-restore-20261124t031500z,/);
  await expect(check()).rejects.not.toThrow(/restore-check/);
  await expect(check("other")).resolves.toBeDefined();
});

// The provider previews a namespace it is about to create with its dry run's uid: no cluster holds it yet.
test("in a preview, a namespace the given cluster does not hold yet passes; in the update it is refused", async () => {
  jobs = [];
  const dryRunUid = "6f1d2c3b-0000-4000-8000-00000000000c";
  const fresh = { namespace: "pulp-new", namespaceUid: dryRunUid };
  await expect(check("pulp", { ...fresh, dryRun: true })).resolves.toBeDefined();
  const refused = await check("pulp", { ...fresh, dryRun: false }).catch((e: Error) => e.message);
  expect(refused).toContain(
    `namespace pulp-new has uid ${dryRunUid} through the provider, and does not exist at ${requestsServer()}`,
  );
  // Seen by both with two uids: refused in a preview too.
  await expect(check("pulp", { namespaceUid: dryRunUid, dryRun: true })).rejects.toThrow(/are not the same/);
});

test("unfinished", () => {
  expect(unfinished(job("a", "migration", COMPLETE))).toBe(false);
  expect(unfinished(job("a", "migration", FAILED))).toBe(false);
  expect(unfinished(job("a", "migration", { conditions: [{ type: "Failed", status: "False" }] }))).toBe(true);
  expect(unfinished(job("a", "migration", RUNNING, true))).toBe(false);
});

// Two clusters: the provider's, where namespace pulp has one uid, and this stand-in, where it has another.
test("a provider and a cluster argument that are two clusters are refused before anything stops", async () => {
  jobs = [];
  const providers = "6f1d2c3b-0000-4000-8000-00000000000a";
  const refused = await check("pulp", { namespaceUid: providers }).catch((e: Error) => e.message);
  expect(refused).toBe(
    `The Kubernetes provider and the cluster the Pulp component was given are not the same: namespace pulp ` +
      `has uid ${providers} through the provider, and uid ${namespaceUid} at ${requestsServer()}. Nothing was ` +
      "stopped, migrated or restored. Pass the same cluster to both: the kubeconfig you gave the provider as " +
      "the component's `cluster: { kubeconfig }` (and the same context).",
  );
  // The same cluster passes; an unknown uid (a first install's preview) is not looked up.
  await expect(check("pulp", { namespaceUid })).resolves.toBeDefined();
  const before = requests.length;
  await expect(
    check("pulp", { namespaceUid: "04da6b54-80e4-46f7-96ec-b56ff0331ba9" }),
  ).resolves.toBeDefined();
  expect(requests.slice(before)).not.toContain("/api/v1/namespaces/pulp");
});
