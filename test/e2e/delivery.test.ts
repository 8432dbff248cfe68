// Kwok e2e. In-cluster delivery on the embedded cluster with the real engine: `pulumi up` of the stacks/
// program, the API server's verdict on the Stack CRs, SubjectAccessReviews of everything the workspace
// must and must not do, and the real Pulp program installed and destroyed AS the workspace's
// ServiceAccount (a kubeconfig that impersonates it). The repository is served the way the operator
// accepts it: https smart-HTTP on loopback (testbed/git/serve.ts: git http-backend behind a TLS server,
// with a CA made here), and the Stack CR points at it. The operator itself is not built here
// (stacks/README.md).
import { ChildProcess, execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { MANAGE_VERBS, PULP_KINDS, READ_OPERATE } from "../../stacks/kinds";
import { operatorRepoUrl } from "../../stacks/projectRepo";
import { workspaceRules } from "../../stacks/rbac";
import { KUBECONFIG, REPO, STATE, stackLocks } from "../../testbed/local/environment";
import {
  getJson,
  items,
  kubectl,
  kubectlTry,
  KWOK_STACK_FILE,
  mustPulumi,
  pulumi,
} from "../../testbed/harness";

jest.setTimeout(20 * 60 * 1000);

const STACK = "delivery-e2e"; // of the stacks/ program
const PULP_STACK = "delivery-e2e-pulp"; // of the Pulp program, run as the workspace
const PULP_NS = "pulp-deliv-e2e";
const DELIVERY_NS = "pulp-deliv-e2e-delivery";
const CR = "pulp-deliv-e2e";
const SA = `${CR}-workspace`;
const SA_USER = `system:serviceaccount:${DELIVERY_NS}:${SA}`;
const timings: Record<string, number> = {};

const DELIVERY_CONFIG = {
  pulpNamespace: PULP_NS,
  deliveryNamespace: DELIVERY_NS,
  stackName: CR,
  pulumiStack: `organization/pulp/${PULP_STACK}`,
  projectRepo: "", // the https URL of the server started in beforeAll
  branch: "main",
  backend: { secretName: "pulp-delivery-state", key: "url" },
  secretsProvider: { passphrase: { secretName: "pulp-delivery-state", key: "passphrase" } },
  pulpConfig: { contentOrigin: "http://pulp.localhost:8080", database: { cloudnativepg: { instances: 1 } } },
  preview: { enabled: true, branch: "delivery" },
  workspace: { pulumiLogLevel: 3 },
};

function writeYaml(file: string, config: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  fs.writeFileSync(file, yaml.dump({ config, ...extra }));
}

const stacksFile = path.join(REPO, "stacks", `Pulumi.${STACK}.yaml`);
const pulpFile = path.join(REPO, `Pulumi.${PULP_STACK}.yaml`);

/** The repository over https: the server's URL and CA, from its first stdout line. */
let git: { url: string; ca: string; server: ChildProcess; state: string };

function serveRepository(): Promise<typeof git> {
  // A CA of this run's own, in a directory of its own: the test proves that trusting it is what works.
  const state = fs.mkdtempSync(path.join(STATE, "git-e2e-"));
  const server = spawn(
    path.join(REPO, "node_modules/.bin/ts-node"),
    ["-T", path.join(REPO, "testbed/git/serve.ts"), "--port", "0"],
    { cwd: REPO, env: { ...process.env, PULP_STATE_DIR: state }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  server.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  return new Promise((resolve, reject) => {
    let out = "";
    server.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) {
        const first = JSON.parse(out.split("\n")[0]) as { url: string; ca: string };
        resolve({ url: first.url, ca: first.ca, server, state });
      }
    });
    server.on("exit", (code) => reject(new Error(`git:serve exited ${code}: ${log}`)));
  });
}

beforeAll(
  async () => {
    execFileSync("bash", [path.join(REPO, "testbed/cluster/cluster.sh"), "up"], { stdio: "inherit" });
    git = await serveRepository();
    DELIVERY_CONFIG.projectRepo = git.url;
    // What an interrupted run left: stale locks, both stacks, the namespaces (kept on delete by design).
    for (const lock of [...stackLocks(STACK, "pulp-delivery"), ...stackLocks(PULP_STACK)].filter(
      (l) => l.stale,
    )) {
      fs.rmSync(lock.file);
    }
    pulumi(STACK, ["stack", "rm", "--force", "--yes"], undefined, "stacks");
    pulumi(PULP_STACK, ["stack", "rm", "--force", "--yes"]);
    for (const ns of [PULP_NS, DELIVERY_NS]) kubectlTry(["delete", "namespace", ns, "--wait=true"]);
    // Cluster-scoped leftovers: deleting the namespaces does not take them along.
    kubectlTry(["delete", "clusterrolebindings,clusterroles", "-l", `app.kubernetes.io/instance=${CR}`]);
    writeYaml(
      stacksFile,
      Object.fromEntries(Object.entries(DELIVERY_CONFIG).map(([k, v]) => [`delivery:${k}`, v])),
    );
    mustPulumi(STACK, ["stack", "init"], "stacks");
  },
  10 * 60 * 1000,
);

afterAll(() => {
  git?.server.kill();
  if (git) fs.rmSync(git.state, { recursive: true, force: true });
  process.stdout.write(`delivery e2e timings (s): ${JSON.stringify(timings)}\n`);
  pulumi(STACK, ["destroy", "--yes", "--skip-preview"], undefined, "stacks");
  pulumi(STACK, ["stack", "rm", "--force", "--yes"], undefined, "stacks");
  pulumi(PULP_STACK, ["stack", "rm", "--force", "--yes"]);
  for (const f of [stacksFile, pulpFile, path.join(STATE, "cluster", "kubeconfig-workspace")])
    fs.rmSync(f, { force: true });
  for (const ns of [PULP_NS, DELIVERY_NS]) kubectlTry(["delete", "namespace", ns, "--wait=false"]);
  kubectlTry(["delete", "clusterrolebindings,clusterroles", "-l", `app.kubernetes.io/instance=${CR}`]);
});

test("the repository is served over https smart-HTTP, as the operator accepts it, and only with the CA", () => {
  // What PKO's gitutil.ParseGitRepoURL makes of it: the same URL, no subdirectory.
  expect(operatorRepoUrl(git.url)).toEqual({ repository: git.url, subdirectory: "" });
  const lsRemote = (env: Record<string, string>) => {
    try {
      return {
        ok: true,
        out: execFileSync("git", ["ls-remote", git.url, "refs/heads/main"], {
          env: { ...process.env, ...env },
          encoding: "utf8",
          stdio: "pipe",
        }),
      };
    } catch (e) {
      return { ok: false, out: String((e as { stderr?: string }).stderr ?? e) };
    }
  };
  const t0 = Date.now();
  const trusted = lsRemote({ GIT_SSL_CAINFO: git.ca });
  timings.lsRemoteHttps = (Date.now() - t0) / 1000;
  const main = execFileSync("git", ["-C", REPO, "rev-parse", "refs/heads/main"], { encoding: "utf8" }).trim();
  expect(trusted).toEqual({ ok: true, out: `${main}\trefs/heads/main\n` });
  // Without the CA the TLS handshake fails: the server is really https, and trust is what makes it work.
  const untrusted = lsRemote({ GIT_SSL_CAINFO: "/dev/null", SSL_CERT_FILE: "/dev/null" });
  expect(untrusted.ok).toBe(false);
  expect(untrusted.out).toMatch(/certificate|SSL/i);
  // A clone (what the workspace's `agent init` does) of the branch the Stack follows.
  const clone = fs.mkdtempSync(path.join(STATE, "git-clone-"));
  execFileSync("git", ["clone", "--quiet", "--depth", "1", "--branch", "main", git.url, clone], {
    env: { ...process.env, GIT_SSL_CAINFO: git.ca },
  });
  expect(execFileSync("git", ["-C", clone, "rev-parse", "HEAD"], { encoding: "utf8" }).trim()).toBe(main);
  expect(fs.existsSync(path.join(clone, "Pulumi.yaml"))).toBe(true);
  fs.rmSync(clone, { recursive: true, force: true });
});

test("`pulumi up` of stacks/ creates the namespaces, the workspace RBAC and both Stack CRs", () => {
  const run = mustPulumi(STACK, ["up", "--yes", "--skip-preview"], "stacks");
  timings.deliveryUp = run.seconds;

  for (const ns of [PULP_NS, DELIVERY_NS]) {
    expect(getJson(["namespace", ns]).metadata.labels["pod-security.kubernetes.io/enforce"]).toBe(
      "restricted",
    );
  }
  expect(getJson(["serviceaccount", SA, "-n", DELIVERY_NS]).metadata.name).toBe(SA);
  const roles = items("roles.rbac.authorization.k8s.io", PULP_NS);
  expect(roles).toHaveLength(1);
  expect(roles[0].rules).toEqual(workspaceRules());
  // Nothing of the workspace's in the delivery namespace: it may not even read its own Stack there.
  expect(items("roles.rbac.authorization.k8s.io", DELIVERY_NS)).toEqual([]);
  expect(items("rolebindings.rbac.authorization.k8s.io", DELIVERY_NS)).toEqual([]);
  const clusterBindings = getJson<{ items: any[] }>(["clusterrolebindings"]).items.filter((b) =>
    (b.subjects ?? []).some((s: any) => s.kind === "ServiceAccount" && s.namespace === DELIVERY_NS),
  );
  expect(clusterBindings.map((b) => b.roleRef.name)).toEqual(["system:auth-delegator"]);

  // The API server kept every field (a pruned unknown field would be missing here).
  const stack = getJson(["stacks.pulumi.com", CR, "-n", DELIVERY_NS]);
  expect(stack.spec).toMatchObject({
    stack: `organization/pulp/${PULP_STACK}`,
    projectRepo: git.url,
    branch: "main",
    repoDir: ".",
    destroyOnFinalize: false,
    serviceAccountName: SA,
    config: { "pulp:namespace": PULP_NS, "pulp:createNamespace": "false" },
    envRefs: { PULUMI_BACKEND_URL: { type: "Secret", secret: { name: "pulp-delivery-state", key: "url" } } },
    workspaceTemplate: { spec: { pulumiLogLevel: 3, securityProfile: "restricted" } },
  });
  const preview = getJson(["stacks.pulumi.com", `${CR}-preview`, "-n", DELIVERY_NS]);
  expect(preview.spec).toMatchObject({ preview: true, branch: "delivery" });

  // A second up changes nothing.
  expect(pulumi(STACK, ["preview", "--expect-no-changes"], undefined, "stacks").code).toBe(0);
});

test("the API server refuses the seed's spec.pulumiLogLevel and a name over 42 characters, and takes ours", () => {
  const stack = (name: string, spec: Record<string, unknown>) =>
    JSON.stringify({
      apiVersion: "pulumi.com/v1",
      kind: "Stack",
      metadata: { name, namespace: DELIVERY_NS },
      spec: {
        stack: "organization/pulp/x",
        projectRepo: "https://example.com/r.git",
        branch: "main",
        ...spec,
      },
    });
  const seed = kubectlTry(["create", "--dry-run=server", "-f", "-"], stack("seed", { pulumiLogLevel: 10 }));
  expect(seed.ok).toBe(false);
  expect(seed.output).toMatch(/unknown field "spec.pulumiLogLevel"/);
  const ours = kubectlTry(
    ["create", "--dry-run=server", "-f", "-"],
    stack("ours", { workspaceTemplate: { spec: { pulumiLogLevel: 10 } } }),
  );
  expect(ours).toEqual({ ok: true, output: expect.stringMatching(/created \(server dry run\)/) });
  const long = kubectlTry(["create", "--dry-run=server", "-f", "-"], stack("x".repeat(43), {}));
  expect(long.ok).toBe(false);
  expect(long.output).toMatch(/no more than 42 characters/);
});

/** kubectl prints one JSON document per created object, one after another. */
function jsonStream(text: string): any[] {
  const docs: any[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") {
      if (depth++ === 0) start = i;
    } else if (ch === "}" && --depth === 0) docs.push(JSON.parse(text.slice(start, i + 1)));
  }
  return docs;
}

interface Check {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  allowed: boolean;
}

/** One SubjectAccessReview per check, all in one request; returns the checks the API server answered differently. */
function review(checks: Check[]): Check[] {
  const list = {
    apiVersion: "v1",
    kind: "List",
    items: checks.map((c) => ({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: SA_USER,
        // What a ServiceAccount token authenticates as.
        groups: ["system:serviceaccounts", `system:serviceaccounts:${DELIVERY_NS}`, "system:authenticated"],
        resourceAttributes: {
          verb: c.verb,
          group: c.group,
          resource: c.resource,
          subresource: c.subresource ?? "",
          namespace: c.namespace ?? "",
        },
      },
    })),
  };
  const answered = jsonStream(kubectl(["create", "-f", "-", "-o", "json"], JSON.stringify(list)));
  expect(answered).toHaveLength(checks.length);
  return checks.filter((c, i) => answered[i].status.allowed !== c.allowed);
}

test("SubjectAccessReviews: the workspace can do every needed verb in the Pulp namespace and nothing it does not need", () => {
  const can: Check[] = [];
  for (const k of PULP_KINDS) {
    for (const verb of MANAGE_VERBS)
      can.push({ verb, group: k.apiGroup, resource: k.resource, namespace: PULP_NS, allowed: true });
  }
  for (const r of READ_OPERATE) {
    for (const res of r.resources) {
      const [resource, subresource] = res.split("/");
      for (const verb of r.verbs)
        can.push({ verb, group: r.apiGroup, resource, subresource, namespace: PULP_NS, allowed: true });
    }
  }
  const cannot: Check[] = [];
  const deny = (verb: string, group: string, resource: string, namespace?: string, subresource?: string) =>
    cannot.push({ verb, group, resource, namespace, subresource, allowed: false });
  // Secrets anywhere but the Pulp namespace (the delivery namespace holds the backend's).
  for (const ns of [DELIVERY_NS, "default", "kube-system", undefined])
    for (const v of ["get", "list", "watch"]) deny(v, "", "secrets", ns);
  // Managing Pulp's kinds outside its namespace, or cluster-wide.
  for (const ns of ["default", DELIVERY_NS, undefined])
    for (const k of PULP_KINDS) deny("create", k.apiGroup, k.resource, ns);
  // Cluster-scoped kinds it does not need.
  for (const [group, resource] of [
    ["", "namespaces"],
    ["", "nodes"],
    ["", "persistentvolumes"],
    ["rbac.authorization.k8s.io", "clusterroles"],
    ["rbac.authorization.k8s.io", "clusterrolebindings"],
    ["apiextensions.k8s.io", "customresourcedefinitions"],
    ["storage.k8s.io", "storageclasses"],
    ["admissionregistration.k8s.io", "validatingwebhookconfigurations"],
  ]) {
    for (const v of ["create", "delete", "patch"]) deny(v, group, resource);
  }
  deny("get", "storage.k8s.io", "storageclasses"); // only with delivery:readStorageClasses
  deny("delete", "", "namespaces", undefined);
  // Escalation paths inside the Pulp namespace.
  deny("create", "rbac.authorization.k8s.io", "roles", PULP_NS);
  deny("create", "rbac.authorization.k8s.io", "rolebindings", PULP_NS);
  deny("create", "", "pods", PULP_NS);
  deny("create", "", "pods", PULP_NS, "exec");
  deny("create", "", "serviceaccounts", PULP_NS);
  deny("create", "", "serviceaccounts", DELIVERY_NS, "token");
  deny("patch", "apps", "deployments", "default", "scale");
  // Its own Stack: the workspace does not edit what it runs.
  deny("update", "pulumi.com", "stacks", DELIVERY_NS);
  deny("get", "pulumi.com", "stacks", DELIVERY_NS);

  const wrong = review([...can, ...cannot]);
  timings.sarChecks = can.length + cannot.length;
  process.stdout.write(
    `SubjectAccessReviews: ${can.length} allowed as expected, ${cannot.length} denied as expected\n`,
  );
  expect(wrong).toEqual([]);
  expect(can.length).toBeGreaterThanOrEqual(PULP_KINDS.length * MANAGE_VERBS.length);
});

test("the real Pulp program installs, upgrades across a floor and destroys as the workspace's ServiceAccount (impersonated)", () => {
  // The admin kubeconfig with `as:`: every request the provider makes is authorized as the workspace.
  const admin = yaml.load(fs.readFileSync(KUBECONFIG, "utf8")) as {
    users: { user: Record<string, unknown> }[];
  };
  for (const u of admin.users) u.user.as = SA_USER;
  const saKubeconfig = path.join(STATE, "cluster", "kubeconfig-workspace");
  fs.writeFileSync(saKubeconfig, yaml.dump(admin));
  const whoami = JSON.parse(kubectl(["--kubeconfig", saKubeconfig, "auth", "whoami", "-o", "json"]));
  expect(whoami.status.userInfo.username).toBe(SA_USER);

  // The Stack's own config (as the operator would set it), plus the dev stack's install and a CDI import.
  const dev = yaml.load(fs.readFileSync(KWOK_STACK_FILE, "utf8")) as {
    config: Record<string, unknown>;
    encryptionsalt: string;
  };
  const stack = getJson(["stacks.pulumi.com", CR, "-n", DELIVERY_NS]);
  const config: Record<string, unknown> = {
    ...dev.config,
    ...stack.spec.config,
    "pulp:dataVolumes": [{ name: "seed-dump", url: "http://127.0.0.1:1/pulp-db-dump.tar", size: "1Gi" }],
    "kubernetes:kubeconfig": saKubeconfig,
    // Installed below core 0140's guard (3.85): the upgrade to 3.87.0 below is a stop-the-world.
    "pulp:image": "quay.io/pulp/pulp-minimal:3.84.0",
  };
  writeYaml(pulpFile, config, { encryptionsalt: dev.encryptionsalt });
  mustPulumi(PULP_STACK, ["stack", "init"]);

  const up = pulumi(PULP_STACK, ["up", "--yes", "--skip-preview"]);
  timings.pulpUpAsWorkspace = up.seconds;
  const output = up.stdout + up.stderr;
  // The one refusal, a warning: the PVC await reads its StorageClass (cluster-scoped), which is granted
  // only with delivery:readStorageClasses. On this Immediate class the claim binds and the await ends.
  const forbidden = [...new Set(output.match(/is forbidden: [^\n]*/g) ?? [])];
  expect({ code: up.code, forbidden, tail: up.code === 0 ? "" : output.slice(-3000) }).toEqual({
    code: 0,
    forbidden: [
      `is forbidden: User "${SA_USER}" cannot get resource "storageclasses" in API group "storage.k8s.io" at the cluster scope`,
    ],
    tail: "",
  });
  expect(
    items("deployments", PULP_NS)
      .map((d) => `${d.metadata.name} ${d.status.availableReplicas}/${d.spec.replicas}`)
      .sort(),
  ).toEqual(["pulp-api 2/2", "pulp-content 2/2", "pulp-redis 1/1", "pulp-web 2/2", "pulp-worker 2/2"]);
  expect(items("jobs", PULP_NS)[0].status.succeeded).toBe(1);

  // The provider's own requests ran as the workspace: the warning above names it. And the control: the
  // same kubeconfig impersonating an identity without the Role is refused.
  const stranger = yaml.load(fs.readFileSync(saKubeconfig, "utf8")) as {
    users: { user: Record<string, unknown> }[];
  };
  for (const u of stranger.users) u.user.as = `system:serviceaccount:${DELIVERY_NS}:no-such-workspace`;
  const strangerFile = `${saKubeconfig}-stranger`;
  fs.writeFileSync(strangerFile, yaml.dump(stranger));
  const refused = kubectlTry(["--kubeconfig", strangerFile, "get", "deployments", "-n", PULP_NS]);
  fs.rmSync(strangerFile);
  expect(refused.ok).toBe(false);
  expect(refused.output).toMatch(/forbidden/);
  expect(kubectlTry(["--kubeconfig", saKubeconfig, "get", "deployments", "-n", PULP_NS]).ok).toBe(true);

  // A stop-the-world upgrade as the workspace: its dynamic provider scales the Deployments through
  // deployments/scale and watches pods with the same kubeconfig, so the Role must cover those too.
  writeYaml(
    pulpFile,
    { ...config, "pulp:image": "quay.io/pulp/pulp-minimal:3.87.0" },
    { encryptionsalt: dev.encryptionsalt },
  );
  const upgrade = pulumi(PULP_STACK, ["up", "--yes", "--skip-preview"]);
  timings.stopTheWorldAsWorkspace = upgrade.seconds;
  const upgradeOutput = upgrade.stdout + upgrade.stderr;
  expect({
    code: upgrade.code,
    forbidden: [...new Set(upgradeOutput.match(/is forbidden: [^\n]*/g) ?? [])].filter(
      (f) => !f.includes("storageclasses"),
    ),
    tail: upgrade.code === 0 ? "" : upgradeOutput.slice(-3000),
  }).toEqual({ code: 0, forbidden: [], tail: "" });
  expect(upgradeOutput).toMatch(/pulp-stop-the-world-3\.84\.0-to-3\.87\.0 created/);
  expect(
    items("deployments", PULP_NS)
      .filter((d) => d.metadata.name !== "pulp-redis" && d.metadata.name !== "pulp-web")
      .map(
        (d) => `${d.metadata.name} ${d.spec.template.spec.containers[0].image} ${d.status.availableReplicas}`,
      )
      .sort(),
  ).toEqual([
    "pulp-api quay.io/pulp/pulp-minimal:3.87.0 2",
    "pulp-content quay.io/pulp/pulp-minimal:3.87.0 2",
    "pulp-worker quay.io/pulp/pulp-minimal:3.87.0 2",
  ]);

  const down = pulumi(PULP_STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
  timings.pulpDestroyAsWorkspace = down.seconds;
  expect(down.code).toBe(0);
  expect(items("deployments", PULP_NS)).toEqual([]);
});

test("delivery:readStorageClasses adds exactly `get storageclasses`, cluster-wide, and nothing else", () => {
  const config = yaml.load(fs.readFileSync(stacksFile, "utf8")) as { config: Record<string, unknown> };
  writeYaml(stacksFile, { ...config.config, "delivery:readStorageClasses": true });
  const run = mustPulumi(STACK, ["up", "--yes", "--skip-preview"], "stacks");
  expect(run.stdout).toMatch(/\+ 2 created/);
  expect(
    review([
      { verb: "get", group: "storage.k8s.io", resource: "storageclasses", allowed: true },
      { verb: "list", group: "storage.k8s.io", resource: "storageclasses", allowed: false },
      { verb: "create", group: "storage.k8s.io", resource: "storageclasses", allowed: false },
      { verb: "get", group: "", resource: "persistentvolumes", allowed: false },
      { verb: "get", group: "", resource: "secrets", namespace: DELIVERY_NS, allowed: false },
    ]),
  ).toEqual([]);
});
