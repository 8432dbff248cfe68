// The stop-the-world step's API client finds the cluster and credentials the way the Kubernetes provider
// does. Checked against a real local HTTP server that records what arrives.
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { AddressInfo } from "net";
import { kubeApi } from "../../../../components/upgrade/kubeApi";

let server: http.Server;
let base: string;
const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kubeapi-"));

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url!.includes("missing")) res.writeHead(404).end("{}");
      else if (req.url!.includes("forbidden")) {
        res.writeHead(403).end(JSON.stringify({ message: 'deployments.apps "x" is forbidden' }));
      } else res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());
beforeEach(() => (seen.length = 0));

const kubeconfig = (user: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    "current-context": "main",
    contexts: [
      { name: "main", context: { cluster: "c", user: "u" } },
      { name: "other", context: { cluster: "c", user: "other" } },
    ],
    clusters: [{ name: "c", cluster: { server: base } }],
    users: [
      { name: "u", user },
      { name: "other", user: { token: "other-token" } },
    ],
    ...extra,
  });

test("a kubeconfig given as content, its current context and bearer token", async () => {
  const api = kubeApi({ kubeconfig: kubeconfig({ token: "t0k3n" }) });
  await expect(api.request("GET", "/api/v1/pods")).resolves.toEqual({ ok: true });
  expect(seen[0].headers.authorization).toBe("Bearer t0k3n");
});

test("kubernetes:context picks another context", async () => {
  await kubeApi({ kubeconfig: kubeconfig({ token: "t0k3n" }), context: "other" }).request("GET", "/x");
  expect(seen[0].headers.authorization).toBe("Bearer other-token");
});

test("a kubeconfig path, an exec credential plugin, and impersonation", async () => {
  const file = path.join(dir, "config");
  const plugin = `process.stdout.write(JSON.stringify({apiVersion:"client.authentication.k8s.io/v1",kind:"ExecCredential",status:{token:"from-"+process.env.WHO}}))`;
  fs.writeFileSync(
    file,
    kubeconfig({
      exec: {
        apiVersion: "client.authentication.k8s.io/v1",
        command: process.execPath,
        args: ["-e", plugin],
        env: [{ name: "WHO", value: "plugin" }],
      },
      as: "system:serviceaccount:pulp-delivery:workspace",
    }),
  );
  await kubeApi({ kubeconfig: file }).request("GET", "/x");
  expect(seen[0].headers.authorization).toBe("Bearer from-plugin");
  expect(seen[0].headers["impersonate-user"]).toBe("system:serviceaccount:pulp-delivery:workspace");
});

test("$KUBECONFIG when no kubernetes:kubeconfig is set", async () => {
  const file = path.join(dir, "env-config");
  fs.writeFileSync(file, kubeconfig({ username: "admin", password: "pw" }));
  const saved = process.env.KUBECONFIG;
  process.env.KUBECONFIG = `${file}${path.delimiter}/nonexistent`;
  try {
    await kubeApi({}).request("GET", "/x");
  } finally {
    process.env.KUBECONFIG = saved;
  }
  expect(seen[0].headers.authorization).toBe(`Basic ${Buffer.from("admin:pw").toString("base64")}`);
});

test("a merge patch is sent as one, 404 is undefined, other errors carry the API's message", async () => {
  const api = kubeApi({ kubeconfig: kubeconfig({ token: "t" }) });
  await api.request("PATCH", "/scale", { spec: { replicas: 0 } }, "application/merge-patch+json");
  expect(seen[0]).toMatchObject({
    method: "PATCH",
    body: '{"spec":{"replicas":0}}',
    headers: { "content-type": "application/merge-patch+json" },
  });
  await expect(api.request("GET", "/missing")).resolves.toBeUndefined();
  await expect(api.request("GET", "/forbidden")).rejects.toThrow(
    'GET /forbidden: HTTP 403: deployments.apps "x" is forbidden',
  );
});

test("a missing kubeconfig file and an unknown context are named", () => {
  expect(() => kubeApi({ kubeconfig: path.join(dir, "nope") })).toThrow(/kubeconfig .*nope does not exist/);
  expect(() => kubeApi({ kubeconfig: kubeconfig({ token: "t" }), context: "prod" })).toThrow(
    /no context named "prod"/,
  );
});
