// Real Pulp on the real node: the program's own install (local images built from Debian and PyPI, its
// default database, a CloudNativePG Cluster run by the real operator, real nginx and Redis), used by real
// clients through pulp-web: pulp-cli, skopeo and plain HTTP. Ordered: each test builds on the install
// the first one made.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as yaml from "js-yaml";
import {
  dropStack,
  freshStack,
  getJson,
  items,
  kubectl,
  kubectlTry,
  mustPulumi,
  oldPodsGone,
  revisions,
  setSecrets,
  waitUntil,
} from "../../../testbed/harness";
import { NODE_ADDRESS, REPO } from "../../../testbed/local/environment";
import {
  distributeFile,
  get,
  portForward,
  Pulp,
  postJson,
  pulpCli,
  pullImage,
  sha256,
  skopeoCopy,
} from "../../../testbed/real/clients";
import { ensureCnpgOperator, hibernate, wake } from "../../../testbed/real/cnpg";
import { serveFilesOverHttps } from "../../../testbed/real/httpsFiles";
import { dropKey, newSigningKey, verifies } from "../../../testbed/real/gpg";
import { GROUPS, PEOPLE, startDirectory } from "../../../testbed/real/ldap";
import { doctor, PULP_LIBPQ, pulpShell } from "../../../testbed/real/operate";
import { busyboxArchive, importImages, ONE_POD_EACH } from "../../../testbed/real/stack";
import { ensureTls } from "../../../testbed/tls/selfSigned";

jest.setTimeout(30 * 60 * 1000);

const STACK = "real";
const NS = "pulp-real";
const PORT = 24880;
const ORIGIN = `http://127.0.0.1:${PORT}`;
// Both would break a naive install: argparse takes a leading "-" for an option, and dynaconf reads an
// all-digit value as a number.
const ADMIN_PASSWORD = "-starts-with-a-dash-Zq8";
const SECRET_KEY = "1234567890".repeat(6);

// The dev stack (real node, local images, one CloudNativePG instance), one pod per process, with two
// PostgreSQL settings of its own (database.cloudnativepg.parameters; one PostgreSQL reads only at start).
const DEV_STACK = path.join(REPO, "Pulumi.dev.yaml");
const DATABASE_PARAMETERS = { max_connections: "150", work_mem: "8MB" };
const devDatabase = (yaml.load(fs.readFileSync(DEV_STACK, "utf8")) as { config: Record<string, any> }).config[
  "pulp:database"
];
const BASE = {
  namespace: NS,
  contentOrigin: ORIGIN,
  ...ONE_POD_EACH,
  database: { cloudnativepg: { ...devDatabase.cloudnativepg, parameters: DATABASE_PARAMETERS } },
};
const DATABASE_CLUSTER = "pulp-db";
const pulp: Pulp = { baseUrl: ORIGIN, password: ADMIN_PASSWORD, namespace: NS };
const timings: Record<string, number> = {};
let forward: { stop: () => void } | undefined;

async function reconnect(): Promise<void> {
  forward?.stop();
  forward = await portForward(NS, "pulp-web", PORT, 8080);
}

const inApiPod = (code: string) => pulpShell(NS, "pulp", code);

beforeAll(
  () => {
    importImages();
    ensureCnpgOperator();
    freshStack(STACK, BASE, DEV_STACK);
    // The admin password starts with "-": set-all keeps it a value, not a flag.
    setSecrets(STACK, { "pulp:adminPassword": ADMIN_PASSWORD, "pulp:secretKey": SECRET_KEY });
  },
  10 * 60 * 1000,
);

afterAll(() => {
  forward?.stop();
  process.stdout.write(`real-Pulp timings (s): ${JSON.stringify(timings)}\n`);
  if (!process.env.PULP_KEEP_STACK) {
    dropStack(STACK, NS);
  }
});

test("a fresh `pulumi up` brings up Pulp on the real node, and `pulp status` is green through pulp-web", async () => {
  const run = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  timings.freshUp = run.seconds;
  await reconnect();
  const status = pulpCli(pulp, ["status"]);
  expect(status.database_connection.connected).toBe(true);
  expect(status.redis_connection.connected).toBe(true);
  expect(status.online_workers.length).toBeGreaterThanOrEqual(1);
  expect(status.online_content_apps.length).toBeGreaterThanOrEqual(1);
  expect(status.content_settings.content_origin).toBe(ORIGIN);
  // Every pod really ran on the real node, and nginx never crash-looped waiting for its upstreams.
  for (const pod of items("pods", NS).filter((p) => p.status.phase === "Running")) {
    expect({ pod: pod.metadata.name, node: pod.spec.nodeName }).toEqual({
      pod: pod.metadata.name,
      node: "real-0",
    });
    if (pod.metadata.name.startsWith("pulp-web-")) {
      expect(pod.status.containerStatuses[0].restartCount).toBe(0);
    }
  }
  // The doctor finds no problem in it (a start-up restart may remain as a warning).
  const checkup = doctor(NS);
  expect({ stderr: checkup.stderr, problems: problems(checkup.findings) }).toEqual({
    stderr: "",
    problems: [],
  });
  // It read the task queue in an api pod: nothing waits on a fresh install.
  expect(checkup.tasks).toMatchObject({ ok: true, queue: { waiting: 0, oldestWaitingSeconds: null } });
});

// What the api pod runs: its own connection's TLS state, then libpq with Pulp's own settings but another
// CA, and by address rather than name: each must be refused if the server is really verified.
const DATABASE_TLS_CHECK = `${PULP_LIBPQ}
with connection.cursor() as cursor:
    cursor.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
    ssl = cursor.fetchone()[0]
    cursor.execute("SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name IN ('max_connections', 'work_mem')")
    settings = dict(cursor.fetchall())
print(json.dumps({
    "ssl": ssl,
    "settings": settings,
    "sslmode": base["sslmode"],
    "asPulp": attempt(),
    "otherCa": attempt(sslrootcert="/etc/ssl/certs/ca-certificates.crt"),
    "byAddress": attempt(host=socket.gethostbyname(s["HOST"])),
}))
`;

test("Pulp reaches CloudNativePG over TLS and verifies it: another CA, or the server by its address, is refused; the server runs with pulp:database.cloudnativepg.parameters", () => {
  const seen = JSON.parse(inApiPod(DATABASE_TLS_CHECK).split("\n").at(-1)!);
  expect(seen).toMatchObject({ ssl: true, sslmode: "verify-full", asPulp: "connected" });
  // pg_settings gives work_mem in kB: 8MB is 8192kB.
  expect(seen.settings).toEqual({ max_connections: DATABASE_PARAMETERS.max_connections, work_mem: "8192kB" });
  expect(seen.otherCa).toMatch(/certificate verify failed/);
  expect(seen.byAddress).toMatch(/does not match host name/);
});

/** The doctor's problems as "subject: what", so that a failure says what it saw. */
const problems = (findings: { severity: string; subject: string; what: string }[]) =>
  findings.filter((f) => f.severity === "problem").map((f) => `${f.subject}: ${f.what}`);

test("the admin password that starts with '-' logs in, and the all-digit secret key reaches Django as that string", () => {
  expect(pulpCli(pulp, ["user", "show", "--username", "admin"]).username).toBe("admin");
  const seen = inApiPod(
    "import hashlib; from django.conf import settings; " +
      "print(type(settings.SECRET_KEY).__name__, hashlib.sha256(settings.SECRET_KEY.encode()).hexdigest())",
  );
  expect(seen).toBe(`str ${sha256(SECRET_KEY)}`);
});

test("a changed pulp:adminPassword reaches Pulp: the new one logs in, the old one no longer does", async () => {
  const rotated = { ...pulp, password: "rotated-admin-password-Kp4" };
  const login = (who: Pulp) => {
    try {
      return pulpCli(who, ["user", "show", "--username", "admin"]).username;
    } catch (e) {
      return /Authentication failed|401/.test(String(e)) ? "refused" : String(e).slice(-500);
    }
  };
  setSecrets(STACK, { "pulp:adminPassword": rotated.password });
  let after: { rotated: string; old: string };
  try {
    timings.passwordRotationUp = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]).seconds;
    await reconnect();
    after = { rotated: login(rotated), old: login(pulp) };
  } finally {
    // Back, for the tests after this one, whatever happened.
    setSecrets(STACK, { "pulp:adminPassword": ADMIN_PASSWORD });
    mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    await reconnect();
  }
  expect(after).toEqual({ rotated: "admin", old: "refused" });
  expect(login(pulp)).toBe("admin");
});

test("file content: upload, publish, distribute, and download it through the content path with the same sha256", async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-file-")), "hello.bin");
  const data = Buffer.concat([Buffer.from("real pulp\n"), Buffer.alloc(256 * 1024, 7)]);
  fs.writeFileSync(file, data);
  const { contentPath } = distributeFile(pulp, "files", file, "hello.bin");
  const download = await get(`${ORIGIN}${contentPath}`);
  expect(download.status).toBe(200);
  expect(sha256(download.body)).toBe(sha256(data));
});

// pulpcore's workers look for waiting tasks only when woken (a dispatch, a finished task, their cleanup
// every 10-100 heartbeats): a task dispatched while no worker listened would wait up to an hour after one
// starts. The worker check (components/workload/workerCheck.py) wakes them.
test("a task dispatched while no worker runs completes soon after a worker starts", async () => {
  const replicas = getJson(["deployment", "-n", NS, "pulp-worker"]).spec.replicas;
  const workerPods = () => items("pods", NS).filter((p) => p.metadata.name.startsWith("pulp-worker-"));
  kubectl(["scale", "deployment", "-n", NS, "pulp-worker", "--replicas=0"]);
  let task = { state: "", pulp_href: "" };
  try {
    await waitUntil("the worker pods gone", 120, () => workerPods().length === 0);
    // Orphan cleanup keeps anything younger than a day by default: a task that changes nothing here.
    const dispatched = await postJson(pulp, "/pulp/api/v3/orphans/cleanup/", {});
    expect(dispatched.status).toBe(202);
    task = pulpCli(pulp, ["task", "show", "--href", dispatched.json.task]);
    expect(task.state).toBe("waiting");
  } finally {
    kubectl(["scale", "deployment", "-n", NS, "pulp-worker", `--replicas=${replicas}`]);
  }
  const started = Date.now();
  await waitUntil(
    "the task dispatched while no worker ran completed",
    180,
    () => {
      task = pulpCli(pulp, ["task", "show", "--href", task.pulp_href]);
      return task.state === "completed";
    },
    { intervalMs: 3000, detail: () => JSON.stringify(task) },
  );
  timings.strandedTaskSeconds = (Date.now() - started) / 1000;
});

test("container registry with token auth off: skopeo pushes to /v2/ and pulls back the same layers", () => {
  const image = busyboxArchive();
  const pushed = skopeoCopy(`oci-archive:${image}`, `docker://127.0.0.1:${PORT}/test/busybox:1`, pulp);
  expect(pushed.output).not.toMatch(/error|denied/i);
  expect(pushed.ok).toBe(true);
  // Every layer pulled back matches its digest.
  expect(pullImage(`127.0.0.1:${PORT}/test/busybox:1`, pulp).length).toBeGreaterThan(0);
});

test("plugin URLs and static files are what a client needs", async () => {
  expect(inApiPod("from django.conf import settings; print(settings.ANSIBLE_API_HOSTNAME)")).toBe(ORIGIN);
  const css = await get(`${ORIGIN}/assets/rest_framework/css/bootstrap.min.css`);
  expect(css.status).toBe(200);
});

test("Pod Security `restricted` is enforced on the real pods", () => {
  expect(getJson(["namespace", NS]).metadata.labels["pod-security.kubernetes.io/enforce"]).toBe("restricted");
  const refused = kubectlTry(
    ["apply", "-n", NS, "-f", "-"],
    JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "privileged-probe" },
      spec: { containers: [{ name: "c", image: "localhost/none:0", securityContext: { privileged: true } }] },
    }),
  );
  expect(refused.output).toMatch(/violates PodSecurity "restricted/);
});

test("every container's root filesystem is read-only: what Pulp, nginx and Redis write lies in a volume", () => {
  // The tests around this one upload, sync, publish, push, migrate and collect static files: with the
  // root read-only, any of them writing outside a volume fails there. Here: the specs say so, and the
  // kernel refuses a write in each running container.
  const pods = items("pods", NS).filter((p) => p.status.phase === "Running");
  expect(pods.map((p) => p.metadata.name.replace(/-[a-z0-9]+-[a-z0-9]+$/, "")).sort()).toEqual(
    expect.arrayContaining(["pulp-api", "pulp-content", "pulp-redis", "pulp-web", "pulp-worker"]),
  );
  for (const pod of pods) {
    for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
      expect({
        container: `${pod.metadata.name}/${c.name}`,
        readOnly: c.securityContext?.readOnlyRootFilesystem,
      }).toEqual({ container: `${pod.metadata.name}/${c.name}`, readOnly: true });
    }
    for (const c of pod.spec.containers) {
      const write = kubectlTry([
        "exec",
        "-n",
        NS,
        pod.metadata.name,
        "-c",
        c.name,
        "--",
        "touch",
        "/write-probe",
      ]);
      expect({ container: `${pod.metadata.name}/${c.name}`, output: write.output }).toEqual({
        container: `${pod.metadata.name}/${c.name}`,
        output: expect.stringMatching(/Read-only file system/),
      });
    }
  }
  const job = items("jobs", NS).find((j) => j.metadata.name.startsWith("pulp-migrate"));
  for (const c of [...job.spec.template.spec.containers, ...(job.spec.template.spec.initContainers ?? [])]) {
    expect({ container: `job/${c.name}`, readOnly: c.securityContext?.readOnlyRootFilesystem }).toEqual({
      container: `job/${c.name}`,
      readOnly: true,
    });
  }
});

test("a no-op `up` rolls nothing; a settings change and a setting from a Secret reach every Pulp pod and Pulp reports them", async () => {
  const before = revisions(NS);
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(revisions(NS)).toEqual(before);

  // Allowing sha1 needs the Job to fill in the missing checksums (pulpcore's check E002 stops `migrate` otherwise).
  // Item by item, as a user would with --path (the list is not in the stack file yet).
  ["sha1", "sha224", "sha256", "sha384", "sha512"].forEach((algorithm, i) =>
    mustPulumi(STACK, ["config", "set", "--path", `pulp:allowedContentChecksums[${i}]`, algorithm]),
  );
  // A credential from the user's own Secret, all digits with a leading zero (dynaconf would read a number).
  kubectl(["-n", NS, "create", "secret", "generic", "keycloak", "--from-literal=client-secret=0123456789"]);
  const keycloak = "pulp:secretSettings.SOCIAL_AUTH_KEYCLOAK_SECRET";
  mustPulumi(STACK, ["config", "set", "--path", `${keycloak}.secretName`, "keycloak"]);
  mustPulumi(STACK, ["config", "set", "--path", `${keycloak}.key`, "client-secret"]);
  const run = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  timings.settingsChangeUp = run.seconds;
  const after = revisions(NS);
  for (const d of ["pulp-api", "pulp-content", "pulp-worker"]) expect(after[d]).not.toBe(before[d]);
  await reconnect();
  const artifacts = pulpCli(pulp, ["artifact", "list"]);
  expect(artifacts.length).toBeGreaterThan(0);
  for (const artifact of artifacts) expect(artifact.sha1).toMatch(/^[0-9a-f]{40}$/);
  await oldPodsGone(NS, "pulp-api");
  const fromSecret = inApiPod(
    "from django.conf import settings; print(repr(settings.SOCIAL_AUTH_KEYCLOAK_SECRET))",
  );
  expect(fromSecret.trim()).toBe("'0123456789'");
});

test("pulp-web's Service becomes a NodePort in place: `pulp status` answers from the host through the node's port, and no pod rolls", async () => {
  const before = revisions(NS);
  const nodePort = 30880;
  mustPulumi(STACK, ["config", "set", "--path", "pulp:web.service.type", "NodePort"]);
  mustPulumi(STACK, ["config", "set", "--path", "pulp:web.service.nodePort", String(nodePort)]);
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(revisions(NS)).toEqual(before);
  const service = getJson(["service", "pulp-web", "-n", NS]);
  expect(service.spec.type).toBe("NodePort");
  expect(service.spec.ports[0].nodePort).toBe(nodePort);
  const status = pulpCli({ ...pulp, baseUrl: `http://${NODE_ADDRESS}:${nodePort}` }, ["status"]);
  expect(status.database_connection.connected).toBe(true);
  expect(status.online_content_apps.length).toBeGreaterThanOrEqual(1);
});

/** Restarts per Pulp process kind (api, content, worker) since the pods started, and how each ended. */
function pulpRestarts(): { count: Record<string, number>; endings: string[] } {
  const count: Record<string, number> = { api: 0, content: 0, worker: 0 };
  const endings: string[] = [];
  for (const pod of items("pods", NS)) {
    const kind = /^pulp-(api|content|worker)-/.exec(pod.metadata.name)?.[1];
    if (!kind) continue;
    for (const c of pod.status.containerStatuses ?? []) {
      count[kind] += c.restartCount;
      const ended = c.lastState?.terminated;
      if (ended) endings.push(`${kind}: exit ${ended.exitCode} (${ended.reason})`);
    }
  }
  return { count, endings };
}

// pulpcore's processes exit when they cannot write their heartbeat (the api: app/entrypoint.py, "Exit
// process if heartbeat fails"), so an outage longer than a heartbeat interval restarts them whatever the
// probes say. Measured here: every Pulp container restarted once in a 130 s outage. What the program owns:
// nothing is left crash-looping or needs a hand, and Pulp serves again soon after the database is back.
test("a database outage (CloudNativePG hibernates every instance): Pulp's processes restart by themselves and Pulp serves again once the database is back, and no process ends after that", async () => {
  const before = pulpRestarts();
  const outage = Date.now();
  try {
    await hibernate(NS, DATABASE_CLUSTER);
    // Longer than a database-bound liveness probe would take to restart a pod: 20 s period x 5 failures.
    await new Promise((r) => setTimeout(r, 60_000));
    // Meanwhile the doctor names it: the api has no ready pod (its readiness asks the database) or, if it
    // still answers, Pulp's status says the database is away.
    const asked = Date.now();
    const checkup = doctor(NS);
    timings.doctorSeconds = (Date.now() - asked) / 1000;
    expect(checkup.code).toBe(2);
    expect(problems(checkup.findings)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(service\/pulp-api|database): /)]),
    );
    await new Promise((r) => setTimeout(r, Math.max(0, outage + 130_000 - Date.now())));
  } finally {
    await wake(NS, DATABASE_CLUSTER);
  }
  const back = Date.now();
  let status: { database_connection: { connected: boolean }; online_workers: unknown[] } | undefined;
  while (Date.now() - back < 300_000) {
    try {
      status = pulpCli(pulp, ["status"]);
      if (status?.database_connection.connected && status.online_workers.length > 0) break;
    } catch {
      // pulp-cli fails while the api has no database: keep asking
    }
    await new Promise((r) => setTimeout(r, 5000));
  }
  timings.recoveryAfterDatabaseSeconds = (Date.now() - back) / 1000;
  expect(status?.database_connection.connected).toBe(true);
  expect(status?.online_workers.length).toBeGreaterThan(0);

  const after = pulpRestarts();
  for (const kind of ["api", "content", "worker"]) {
    timings[`${kind}RestartsDuringOutage`] = after.count[kind] - before.count[kind];
  }
  process.stdout.write(`database outage: container endings ${JSON.stringify(after.endings)}\n`);
  timings.livenessKillsDuringOutage = items("events", NS).filter(
    (e) =>
      new Date(e.lastTimestamp ?? e.eventTime).getTime() >= outage - 1000 &&
      e.reason === "Killing" &&
      /liveness probe/i.test(e.message ?? ""),
  ).length;
  // Nothing was killed for memory, and every Pulp pod is ready again: no crash loop is left behind.
  for (const ending of after.endings) expect(ending).not.toMatch(/OOMKilled/);
  const notReady = () =>
    items("pods", NS)
      .filter((p) => /^pulp-(api|content|worker)-/.test(p.metadata.name))
      .filter(
        (p) => p.status.conditions?.find((c: { type: string }) => c.type === "Ready")?.status !== "True",
      )
      .map((p) => p.metadata.name);
  const deadline = Date.now() + 180_000;
  while (notReady().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5000));
  expect(notReady()).toEqual([]);

  // And none ends later: a heartbeat stuck on a connection to the vanished server once ended the api
  // minutes after the database was back, mid-request (502). The settings' connection limits end such a
  // wait within about 30 s; a minute of requests with no restart shows none is left.
  const settled = pulpRestarts();
  const failed: string[] = [];
  for (const until = Date.now() + 60_000; Date.now() < until;) {
    try {
      pulpCli(pulp, ["status"]);
    } catch (e) {
      failed.push(String(e).slice(0, 300));
    }
    await new Promise((r) => setTimeout(r, 3000));
  }
  expect({ restarts: pulpRestarts().count, failed }).toEqual({ restarts: settled.count, failed: [] });
  // The doctor sees no problem left; the restarts are warnings that point at the database.
  const recovered = doctor(NS);
  expect(problems(recovered.findings)).toEqual([]);
  expect(recovered.findings.map((f) => f.what).join("\n")).toMatch(/cannot reach its database/);
});

/** The address pods reach the host at: the real node's own (its bridge). */
function hostAddress(): string {
  const node = getJson(["node", "real-0"]);
  return node.status.addresses.find((a: { type: string }) => a.type === "InternalIP").address;
}

test("a trusted CA: a sync from an HTTPS server with a private CA fails until pulp:trustedCa names it", async () => {
  const host = hostAddress();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "https-files-"));
  const data = Buffer.concat([Buffer.from("behind a private CA\n"), Buffer.alloc(64 * 1024, 3)]);
  fs.writeFileSync(path.join(root, "private.bin"), data);
  fs.writeFileSync(path.join(root, "PULP_MANIFEST"), `private.bin,${sha256(data)},${data.length}\n`);
  const tls = ensureTls(fs.mkdtempSync(path.join(os.tmpdir(), "private-ca-")), `IP:${host}`);
  const server = await serveFilesOverHttps(root, host, 24843, tls);
  try {
    pulpCli(pulp, ["file", "remote", "create", "--name", "private", "--url", `${server.url}PULP_MANIFEST`]);
    pulpCli(pulp, ["file", "repository", "create", "--name", "private", "--remote", "private"]);
    // Without the CA, Pulp's own TLS check refuses the server (and the server saw the attempt).
    expect(() => pulpCli(pulp, ["file", "repository", "sync", "--name", "private"])).toThrow(
      /CERTIFICATE_VERIFY_FAILED|certificate verify failed/,
    );

    // As the README says: a multi-line value comes in on standard input.
    mustPulumi(
      STACK,
      ["config", "set", "--path", "pulp:trustedCa.certificates"],
      undefined,
      fs.readFileSync(tls.ca, "utf8"),
    );
    const run = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    timings.trustedCaUp = run.seconds;
    await reconnect();
    pulpCli(pulp, ["file", "repository", "sync", "--name", "private"]);
    const content = pulpCli(pulp, ["file", "content", "list", "--relative-path", "private.bin"]);
    expect(content.map((c: { sha256: string }) => c.sha256)).toEqual([sha256(data)]);
    // The server's log arrives through this process's event loop, which pulp-cli's spawnSync held up.
    await new Promise((r) => setTimeout(r, 500));
    expect(server.log()).toMatch(/GET \/private.bin 200/);
  } finally {
    server.stop();
  }
});

test("container registry with token auth on: skopeo pushes and pulls with a bearer token from /token/", async () => {
  mustPulumi(STACK, ["config", "set", "pulp:tokenAuth", "true"]);
  const run = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  timings.tokenAuthUp = run.seconds;
  await reconnect();
  // (An old api pod still answers Basic until it is gone: seen once in CI, right after the update.)
  await oldPodsGone(NS, "pulp-api");
  // The registry now challenges with a Bearer realm at the token server, not Basic.
  const challenge = await get(`${ORIGIN}/v2/`);
  expect(challenge.status).toBe(401);
  expect(String(challenge.headers["www-authenticate"])).toMatch(
    new RegExp(`^Bearer realm="${ORIGIN}/token/"`),
  );
  const image = busyboxArchive();
  const pushed = skopeoCopy(`oci-archive:${image}`, `docker://127.0.0.1:${PORT}/test/busybox:token`, pulp);
  expect(pushed.output).not.toMatch(/error|denied/i);
  expect(pushed.ok).toBe(true);
  const back = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulled-")), "oci");
  const pulled = skopeoCopy(`docker://127.0.0.1:${PORT}/test/busybox:token`, `oci:${back}`, pulp);
  expect(pulled.ok).toBe(true);
  // And without credentials the token server gives no pull rights to a private push repository.
  const anonymous = await get(`${ORIGIN}/v2/test/busybox/manifests/token`);
  expect(anonymous.status).toBe(401);
});

// pulp:signing registers the service (no add-signing-service by hand), the workers sign with the key, and a
// new key reaches the same service, which repositories keep (pulp-operator #1608).
test("signing: an rpm repository's repomd.xml.asc and an APT repository's Release.gpg verify with pulp:signingKey; a new key updates the same services and signs the next publications", async () => {
  const first = newSigningKey("Pulp Test Signing <first@example.com>");
  const second = newSigningKey("Pulp Test Signing <second@example.com>");
  const repomd = async () => {
    const base = `${ORIGIN}/pulp/content/signed/repodata/repomd.xml`;
    const [data, signature] = [await get(base), await get(`${base}.asc`)];
    expect({ data: data.status, signature: signature.status }).toEqual({ data: 200, signature: 200 });
    return { data: data.body, signature: signature.body };
  };
  const publish = () => {
    const publication = pulpCli(pulp, ["rpm", "publication", "create", "--repository", "signed"]);
    return publication.pulp_href as string;
  };
  // APT: pulp-cli 0.41 has no deb commands (pulp-cli-deb wants pulp-cli < 0.41), so the REST API; a simple
  // publication signs Release with the repository's service (pulp_deb tasks/publishing.py).
  const created = async (apiPath: string, body: object): Promise<string> => {
    const answer = await postJson(pulp, `/pulp/api/v3/${apiPath}`, body);
    if (answer.status >= 300)
      throw new Error(`POST ${apiPath}: ${answer.status} ${JSON.stringify(answer.json)}`);
    if (!answer.json.task) return answer.json.pulp_href;
    const task = pulpCli(pulp, ["task", "show", "--href", answer.json.task, "--wait"]);
    expect({ apiPath, state: task.state }).toEqual({ apiPath, state: "completed" });
    return task.created_resources[0] ?? "";
  };
  const aptRelease = async (repository: string, basePath: string) => {
    const publication = await created("publications/deb/apt/", { repository, simple: true });
    await created("distributions/deb/apt/", { name: basePath, base_path: basePath, publication });
    const base = `${ORIGIN}/pulp/content/${basePath}/dists/default`;
    const [release, signature, inRelease] = [
      await get(`${base}/Release`),
      await get(`${base}/Release.gpg`),
      await get(`${base}/InRelease`),
    ];
    expect([release.status, signature.status, inRelease.status]).toEqual([200, 200, 200]);
    expect(inRelease.body.toString()).toMatch(/^-----BEGIN PGP SIGNED MESSAGE-----/);
    return { data: release.body, signature: signature.body };
  };
  try {
    // As docs/operations.md says: the key through a pipe, the service by --path.
    mustPulumi(STACK, ["config", "set", "--secret", "pulp:signingKey"], undefined, first.secretKey);
    mustPulumi(STACK, ["config", "set", "--path", "pulp:signing.services[0].name", "rpm-metadata"]);
    mustPulumi(STACK, ["config", "set", "--path", "pulp:signing.services[0].kind", "detached"]);
    mustPulumi(STACK, ["config", "set", "--path", "pulp:signing.services[1].name", "deb-release"]);
    mustPulumi(STACK, ["config", "set", "--path", "pulp:signing.services[1].kind", "apt"]);
    timings.signingUp = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]).seconds;
    await reconnect();
    const service = pulpCli(pulp, ["signing-service", "show", "--name", "rpm-metadata"]);
    expect(service.pubkey_fingerprint).toBe(first.fingerprint);
    const aptService = pulpCli(pulp, ["signing-service", "show", "--name", "deb-release"]);
    expect(aptService.pubkey_fingerprint).toBe(first.fingerprint);
    const aptRepository = await created("repositories/deb/apt/", {
      name: "signed-deb",
      signing_service: aptService.pulp_href,
    });
    const aptSigned = await aptRelease(aptRepository, "signed-deb");
    expect(verifies(first, aptSigned.data, aptSigned.signature)).toMatchObject({ ok: true });

    pulpCli(pulp, [
      "rpm",
      "repository",
      "create",
      "--name",
      "signed",
      "--metadata-signing-service",
      "rpm-metadata",
    ]);
    const published = publish();
    pulpCli(pulp, [
      "rpm",
      "distribution",
      "create",
      "--name",
      "signed",
      "--base-path",
      "signed",
      "--publication",
      published,
    ]);
    const signed = await repomd();
    expect(verifies(first, signed.data, signed.signature)).toMatchObject({ ok: true });

    // Rotation: only the workers roll, and the service is updated in place.
    const before = revisions(NS);
    mustPulumi(STACK, ["config", "set", "--secret", "pulp:signingKey"], undefined, second.secretKey);
    timings.signingKeyRotationUp = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]).seconds;
    const after = revisions(NS);
    expect({ api: after["pulp-api"], content: after["pulp-content"] }).toEqual({
      api: before["pulp-api"],
      content: before["pulp-content"],
    });
    expect(after["pulp-worker"]).not.toBe(before["pulp-worker"]);
    await oldPodsGone(NS, "pulp-worker");
    const rotated = pulpCli(pulp, ["signing-service", "show", "--name", "rpm-metadata"]);
    expect({ href: rotated.pulp_href, fingerprint: rotated.pubkey_fingerprint }).toEqual({
      href: service.pulp_href,
      fingerprint: second.fingerprint,
    });
    const aptRotated = pulpCli(pulp, ["signing-service", "show", "--name", "deb-release"]);
    expect({ href: aptRotated.pulp_href, fingerprint: aptRotated.pubkey_fingerprint }).toEqual({
      href: aptService.pulp_href,
      fingerprint: second.fingerprint,
    });
    const aptResigned = await aptRelease(aptRepository, "signed-deb-rotated");
    expect(verifies(second, aptResigned.data, aptResigned.signature)).toMatchObject({ ok: true });
    const repository = pulpCli(pulp, ["rpm", "repository", "show", "--name", "signed"]);
    expect(repository.metadata_signing_service).toBe(service.pulp_href);

    pulpCli(pulp, ["rpm", "distribution", "update", "--name", "signed", "--publication", publish()]);
    const resigned = await repomd();
    expect(verifies(second, resigned.data, resigned.signature)).toMatchObject({ ok: true });
    expect(verifies(first, resigned.data, resigned.signature).ok).toBe(false);
    // A no-op `up` registers nothing again and rolls nothing.
    const settled = revisions(NS);
    const jobUid = getJson(["job", "-n", NS, "pulp-signing-services"]).metadata.uid;
    mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    expect(revisions(NS)).toEqual(settled);
    expect(getJson(["job", "-n", NS, "pulp-signing-services"]).metadata.uid).toBe(jobUid);
  } finally {
    dropKey(first);
    dropKey(second);
  }
});

// pulp:ldap: directory users log in with pulp-cli, over StartTLS verified against the directory's CA (in
// pulp:trustedCa); a member of a directory group gets the role an admin granted that group in Pulp, a user in
// no group gets nothing, and a member of the superuser group is an admin. Pulp's own admin still logs in.
test("LDAP: directory users log in over StartTLS; a group's members get the group's Pulp role, the superuser group's are admins", async () => {
  const directory = await startDirectory([
    { uid: "alice", password: "alice-Pw-1", groups: ["pulp-readers"] },
    { uid: "bob", password: "bob-Pw-1", groups: [] },
    { uid: "carol", password: "carol-Pw-1", groups: ["pulp-admins"] },
  ]);
  const as = (username: string, password: string): Pulp => ({ ...pulp, username, password });
  const names = (user: Pulp) =>
    pulpCli(user, ["file", "repository", "list", "--name-startswith", "ldap-visible"]).map(
      (r: { name: string }) => r.name,
    );
  try {
    // The group and its role exist in Pulp before anyone logs in: mirroring joins members to it by name.
    pulpCli(pulp, ["group", "create", "--name", "pulp-readers"]);
    const role = ["--group", "pulp-readers", "--role", "file.filerepository_viewer", "--object", ""];
    pulpCli(pulp, ["group", "role-assignment", "add", ...role]);
    pulpCli(pulp, ["file", "repository", "create", "--name", "ldap-visible"]);

    // As docs/operations.md says. The directory's CA joins the one the trusted-CA test set.
    const trusted = mustPulumi(STACK, ["config", "get", "--path", "pulp:trustedCa.certificates"]).stdout;
    const certificates = `${trusted.trim()}\n${directory.caPem}`;
    mustPulumi(STACK, ["config", "set", "--path", "pulp:trustedCa.certificates"], undefined, certificates);
    mustPulumi(
      STACK,
      ["config", "set", "--secret", "pulp:ldapBindPassword"],
      undefined,
      directory.bindPassword,
    );
    for (const [key, value] of [
      ["serverUri", directory.uri],
      ["startTls", "true"],
      ["bindDn", directory.bindDn],
      ["userSearch.baseDn", PEOPLE],
      ["groups.baseDn", GROUPS],
      ["groups.superuser", `cn=pulp-admins,${GROUPS}`],
    ]) {
      mustPulumi(STACK, ["config", "set", "--path", `pulp:ldap.${key}`, value]);
    }
    timings.ldapUp = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]).seconds;
    await reconnect();
    await oldPodsGone(NS, "pulp-api");

    expect(names(as("alice", "alice-Pw-1"))).toEqual(["ldap-visible"]);
    // A viewer may not create; a user in no group sees nothing; a wrong password is refused.
    expect(() =>
      pulpCli(as("alice", "alice-Pw-1"), ["file", "repository", "create", "--name", "by-alice"]),
    ).toThrow(/Operation repositories_file_file_create is not authorized/); // pulp-glue's words for a 403
    expect(names(as("bob", "bob-Pw-1"))).toEqual([]);
    expect(() => names(as("alice", "not-her-password"))).toThrow(/Authentication failed for/); // a 401
    pulpCli(as("carol", "carol-Pw-1"), ["file", "repository", "create", "--name", "by-carol"]);
    expect(names(pulp)).toEqual(["ldap-visible"]);

    const alice = pulpCli(pulp, ["user", "show", "--username", "alice"]);
    expect({ groups: alice.groups.map((g: { name: string }) => g.name), email: alice.email }).toEqual({
      groups: ["pulp-readers"],
      email: "alice@pulp.test",
    });
    // The API does not show is_superuser; Django does.
    const superusers = inApiPod(
      "from django.contrib.auth import get_user_model; " +
        "print(sorted(u.username for u in get_user_model().objects.filter(is_superuser=True)))",
    );
    expect(superusers).toBe("['admin', 'carol']");
    // Every bind, Pulp's search account's and the users', came on a connection that had completed StartTLS.
    // (slapd's log arrives through this process's event loop, which pulp-cli's spawnSync held up.)
    await new Promise((r) => setTimeout(r, 500));
    const binds = directory.binds();
    expect(binds.map((b) => b.dn)).toEqual(
      expect.arrayContaining([
        directory.bindDn,
        `uid=alice,${PEOPLE}`,
        `uid=bob,${PEOPLE}`,
        `uid=carol,${PEOPLE}`,
      ]),
    );
    expect(binds.filter((b) => !b.tls)).toEqual([]);
  } catch (e) {
    throw new Error(`${e}\n--- slapd, last lines:\n${directory.log().slice(-6000)}`);
  } finally {
    directory.stop();
  }
});
