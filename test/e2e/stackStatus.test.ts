// Kwok e2e. `npm run stack -- status|retry` against the embedded cluster's API server: for each known failure a
// Stack CR whose status (written through the status subresource, as the operator writes it), Events,
// workspace Pod and Update objects show it; the command must name the cause and the fix. No operator
// runs here (stacks/README.md): these objects stand where its reconcile would leave them.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { CRDS } from "../unit/helpers/delivery";
import { KNOWN_FAILURES } from "../../tools/stack/failures";
import { KUBECONFIG, REPO } from "../../testbed/local/environment";
import { getJson, kubectl, kubectlTry, shippedTool } from "../../testbed/harness";

// Each test runs the CLI a few times; at nice 19 beside real Pulp (.ci/run) one run can take minutes.
jest.setTimeout(20 * 60 * 1000);

const NS = "pulp-status-e2e";
const CRD_FILE = path.join(CRDS, "pulumi.com_stacks.yaml");
const T = (offsetSeconds = 0) =>
  new Date(Date.now() + offsetSeconds * 1000).toISOString().replace(/\.\d+Z$/, "Z");

function stackCommand(args: string[], kubeconfig = KUBECONFIG) {
  const r = shippedTool("stack", args, { env: { KUBECONFIG: kubeconfig }, timeoutMs: 5 * 60 * 1000 });
  if (r.error) throw new Error(`${r.error}\n${r.stdout}${r.stderr}`);
  return { code: r.code ?? 1, out: `${r.stdout}${r.stderr}` };
}

const cond = (type: string, status: string, reason: string, message = "") => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: T(),
});
const failedStatus = (message: string) => ({
  observedGeneration: 1,
  conditions: [
    cond("Ready", "False", "NotReadyInProgress"),
    cond("Reconciling", "True", "RetryingAfterFailure", message.slice(0, 200)),
  ],
  lastUpdate: { state: "failed", generation: 1, name: "", failures: 3, message, type: "up" },
});
const stalledStatus = (reason: string, message: string) => ({
  observedGeneration: 1,
  conditions: [cond("Ready", "False", "NotReadyStalled"), cond("Stalled", "True", reason, message)],
});

interface Stage {
  spec?: Record<string, unknown>;
  /** A function is called after the spec is applied: its times then come after the spec change. */
  status?: Record<string, unknown> | (() => Record<string, unknown>);
  events?: {
    object: "Stack" | "Workspace" | "StatefulSet";
    reason: string;
    message: string;
    /** Seconds before now (default 0). */
    ago?: number;
  }[];
  /** Container status of the workspace pod `<name>-workspace-0`. */
  container?: Record<string, unknown>;
  update?: string;
  expect: { fix: RegExp };
}

const STAGES: Record<string, Stage> = {
  "not-reconciled": { expect: { fix: /pulumi-kubernetes-operator/ } },
  "workspace-oom": {
    status: failedStatus("workspace pod failed"),
    container: {
      ready: false,
      restartCount: 4,
      state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 40s restarting failed container" } },
      lastState: { terminated: { reason: "OOMKilled", exitCode: 137, startedAt: T(), finishedAt: T() } },
    },
    expect: { fix: /workspace\.memoryLimit/ },
  },
  "installation-failure": {
    status: failedStatus("waiting for workspace readiness"),
    events: [
      {
        object: "Workspace",
        reason: "InstallationFailure",
        message: "pulumi install: npm ERR! code ETIMEDOUT",
      },
    ],
    expect: { fix: /kubectl logs -n pulp-status-e2e st-installation-failure-workspace-0 -c pulumi/ },
  },
  "connection-failure": {
    status: failedStatus("waiting for workspace readiness"),
    events: [
      { object: "Workspace", reason: "ConnectionFailure", message: "dial tcp 10.96.0.12:50051: i/o timeout" },
    ],
    expect: { fix: /50051/ },
  },
  "secret-ref-missing": {
    spec: {
      envRefs: {
        PULUMI_BACKEND_URL: { type: "Secret", secret: { name: "state", key: "url" } },
        PULUMI_CONFIG_PASSPHRASE: { type: "Secret", secret: { name: "state", key: "passphrase" } },
      },
    },
    status: failedStatus("error"),
    expect: { fix: /patch secret state --type merge -p '\{"stringData":\{"passphrase":"<value>"\}\}'/ },
  },
  "backend-login": {
    status: failedStatus(
      "failed to create a backend: PULUMI_ACCESS_TOKEN must be set for login during non-interactive CLI sessions",
    ),
    expect: { fix: /PULUMI_BACKEND_URL/ },
  },
  passphrase: {
    status: failedStatus(
      "getting secrets manager: passphrase must be set with PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE",
    ),
    expect: { fix: /envRefs\.PULUMI_CONFIG_PASSPHRASE/ },
  },
  "git-auth": {
    status: stalledStatus("SourceUnavailable", "authentication required"),
    events: [
      { object: "Stack", reason: "StackGitAuthenticationFailure", message: "authentication required" },
    ],
    expect: { fix: /delivery:gitAuth\.accessToken/ },
  },
  "source-unavailable": {
    status: stalledStatus("SourceUnavailable", 'no commits found for branch "nope"'),
    expect: { fix: /git ls-remote/ },
  },
  "spec-invalid": {
    spec: { branch: undefined },
    status: stalledStatus(
      "SpecInvalid",
      "Stack git source needs to specify 'projectRepo' and either 'branch' or 'commit'",
    ),
    events: [
      {
        object: "Stack",
        reason: "StackConfigInvalid",
        message: "Stack git source needs to specify 'projectRepo' and either 'branch' or 'commit'",
      },
    ],
    expect: { fix: /kubectl describe stack st-spec-invalid -n pulp-status-e2e/ },
  },
  "lock-held": {
    status: stalledStatus("UpdateConflict", "conflict with concurrent update, retryOnUpdateConflict not set"),
    events: [
      {
        object: "Stack",
        reason: "StackUpdateConflictDetected",
        message: "Conflict with another concurrent update.",
      },
    ],
    expect: { fix: /pulumi cancel --yes --stack organization\/pulp\/e2e/ },
  },
  "workspace-forbidden": {
    status: failedStatus(
      'deployments.apps "pulp-api" is forbidden: User "system:serviceaccount:pulp-status-e2e:pulp-workspace" cannot patch resource "deployments" in API group "apps" in the namespace "pulp"',
    ),
    expect: { fix: /stacks\/kinds\.ts/ },
  },
  "pulp-config": {
    status: failedStatus(
      "Invalid Pulp stack config (1 problem); nothing was created or changed:\n  - pulp:contentOrigin: is required",
    ),
    expect: { fix: /delivery:pulpConfig/ },
  },
  "image-pull": {
    status: failedStatus("waiting for workspace readiness"),
    container: {
      ready: false,
      restartCount: 0,
      state: {
        waiting: { reason: "ImagePullBackOff", message: 'Back-off pulling image "pulumi/pulumi:nope"' },
      },
    },
    expect: { fix: /workspace\.image/ },
  },
  "pod-security": {
    status: failedStatus("waiting for workspace readiness"),
    events: [
      {
        object: "StatefulSet",
        reason: "FailedCreate",
        message:
          'create Pod st-pod-security-workspace-0 in StatefulSet st-pod-security-workspace failed error: pods "st-pod-security-workspace-0" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true',
      },
    ],
    expect: { fix: /securityProfile: restricted/ },
  },
  "update-failed": {
    status: failedStatus("1 error occurred"),
    update: "Failed: update failed: exit status 255",
    expect: { fix: /npm run stack -- retry st-update-failed -n pulp-status-e2e/ },
  },
};

function stage(id: string, s: Stage): string {
  const name = `st-${id}`;
  const spec: Record<string, unknown> = {
    stack: "organization/pulp/e2e",
    projectRepo: "https://git.example.com/pulp.git",
    branch: "main",
    repoDir: ".",
    serviceAccountName: "pulp-workspace",
    envRefs: { PULUMI_BACKEND_URL: { type: "Secret", secret: { name: "state", key: "url" } } },
    ...s.spec,
  };
  for (const [k, v] of Object.entries(spec)) if (v === undefined) delete spec[k];
  kubectl(
    ["apply", "-f", "-"],
    JSON.stringify({ apiVersion: "pulumi.com/v1", kind: "Stack", metadata: { name, namespace: NS }, spec }),
  );
  let status = typeof s.status === "function" ? s.status() : s.status;
  if (s.update) {
    const update = `${name}-up1`;
    kubectl(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "auto.pulumi.com/v1alpha1",
        kind: "Update",
        metadata: { name: update, namespace: NS },
        spec: { workspaceName: name, stackName: "organization/pulp/e2e", type: "up" },
      }),
    );
    kubectl([
      "patch",
      "updates.auto.pulumi.com",
      update,
      "-n",
      NS,
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({
        status: {
          message: s.update,
          conditions: [
            cond("Failed", "True", "UpdateFailed", s.update),
            cond("Complete", "True", "Complete"),
          ],
        },
      }),
    ]);
    status = { ...status, lastUpdate: { ...(status!.lastUpdate as object), name: update } };
    s.events = [
      ...(s.events ?? []),
      { object: "Stack", reason: "UpdateFailed", message: "Failed to update Stack" },
    ];
  }
  if (status)
    kubectl([
      "patch",
      "stacks.pulumi.com",
      name,
      "-n",
      NS,
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({ status }),
    ]);
  if (s.events?.some((e) => e.object === "Workspace") || s.container) {
    kubectl(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "auto.pulumi.com/v1alpha1",
        kind: "Workspace",
        metadata: { name, namespace: NS },
        spec: { image: "pulumi/pulumi:3.248.0-nonroot" },
      }),
    );
    kubectl([
      "patch",
      "workspaces.auto.pulumi.com",
      name,
      "-n",
      NS,
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({
        status: { conditions: [cond("Ready", "False", "NotReady", "waiting for the workspace pod")] },
      }),
    ]);
  }
  for (const [i, e] of (s.events ?? []).entries()) {
    const objectName = e.object === "StatefulSet" ? `${name}-workspace` : name;
    const apiVersion = {
      Stack: "pulumi.com/v1",
      Workspace: "auto.pulumi.com/v1alpha1",
      StatefulSet: "apps/v1",
    }[e.object];
    kubectl(
      ["create", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: `${name}.${i}`, namespace: NS },
        involvedObject: { apiVersion, kind: e.object, name: objectName, namespace: NS },
        reason: e.reason,
        message: e.message,
        type: e.reason === "StackCreated" ? "Normal" : "Warning",
        firstTimestamp: T(-(e.ago ?? 0)),
        lastTimestamp: T(-(e.ago ?? 0)),
        count: 1,
        source: { component: "pulumi-kubernetes-operator" },
      }),
    );
  }
  if (s.container) {
    const pod = `${name}-workspace-0`;
    // Never scheduled (no node matches), so no kubelet or kwok overwrites the status written here.
    kubectl(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: pod, namespace: NS, labels: { "auto.pulumi.com/workspace-name": name } },
        spec: {
          nodeSelector: { "pulp.example/no-such-node": "true" },
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: "pulumi",
              image: "pulumi/pulumi:3.248.0-nonroot",
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
            },
          ],
        },
      }),
    );
    kubectl([
      "patch",
      "pod",
      pod,
      "-n",
      NS,
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({
        status: {
          phase: "Running",
          containerStatuses: [
            {
              name: "pulumi",
              image: "pulumi/pulumi:3.248.0-nonroot",
              imageID: "",
              started: false,
              ...s.container,
            },
          ],
        },
      }),
    ]);
  }
  return name;
}

beforeAll(
  () => {
    spawnSync("bash", [path.join(REPO, "testbed/cluster/cluster.sh"), "up"], { stdio: "inherit" });
    kubectlTry(["delete", "namespace", NS, "--wait=true"]);
    kubectl(["create", "namespace", NS]);
    kubectl(["label", "namespace", NS, "pod-security.kubernetes.io/enforce=restricted"]);
    kubectl(["create", "secret", "generic", "state", "-n", NS, "--from-literal=url=file:///state"]);
  },
  5 * 60 * 1000,
);

afterAll(() => {
  kubectlTry(["delete", "namespace", NS, "--wait=false"]);
});

test("the CRDs have the status subresource the operator writes through (and this test does)", () => {
  for (const crd of ["stacks.pulumi.com", "workspaces.auto.pulumi.com", "updates.auto.pulumi.com"]) {
    // jsonpath, not the whole CRD: the Stack CRD's JSON is larger than a default pipe buffer.
    const versions = kubectl([
      "get",
      "crd",
      crd,
      "-o",
      'jsonpath={range .spec.versions[*]}{.name}={.subresources}{"\\n"}{end}',
    ])
      .trim()
      .split("\n");
    expect({ crd, versions }).toEqual({
      crd,
      versions: versions.map((v) => v.replace(/=.*/, '={"status":{}}')),
    });
    expect(versions.length).toBeGreaterThan(0);
  }
});

test("every known failure in the table is staged here", () => {
  expect(Object.keys(STAGES).sort()).toEqual(KNOWN_FAILURES.map((f) => f.id).sort());
});

test.each(Object.entries(STAGES))("status names the cause and fix of %s", (id, s) => {
  const name = stage(id, s);
  const { code, out } = stackCommand(["status", name, "-n", NS]);
  const failure = KNOWN_FAILURES.find((f) => f.id === id)!;
  expect({ code, id: out.includes(`[${id}]`), cause: out.includes(failure.cause) }).toEqual({
    code: 2,
    id: true,
    cause: true,
  });
  expect(out).toMatch(s.expect.fix);
  expect(out.split("\n").length).toBeLessThan(60);
});

test("a healthy Stack: exit 0, ready, its pod and events shown", () => {
  const name = stage("healthy", {
    status: {
      observedGeneration: 1,
      conditions: [cond("Ready", "True", "ProcessingCompleted")],
      lastUpdate: {
        state: "succeeded",
        generation: 1,
        name: "st-healthy-up",
        failures: 0,
        lastSuccessfulCommit: "c".repeat(40),
        lastResyncTime: T(),
      },
    },
    events: [{ object: "Stack", reason: "StackCreated", message: "Successfully updated stack." }],
    container: { ready: true, restartCount: 0, state: { running: { startedAt: T() } } },
    expect: { fix: /./ },
  });
  const { code, out } = stackCommand(["status", name, "-n", NS]);
  expect(code).toBe(0);
  expect(out).toMatch(/Ready +True +ProcessingCompleted/);
  expect(out).toMatch(/Last update succeeded/);
  expect(out).toMatch(/StackCreated/);
  expect(out).toMatch(/pod st-healthy-workspace-0 +Running/);
  expect(out).toMatch(/ok: Ready, nothing to fix/);
});

// What PKO v2.9.0 wrote on this cluster (issue 13), then read back through the API server.
const REFUSED = 'parsing "git://127.0.0.1:9418/pulp-pulumi": invalid URL scheme: git';

test("a Ready Stack with an old StackConfigInvalid event: exit 0, the event shown as history", () => {
  const name = stage("ready-after-fix", {
    status: {
      observedGeneration: 1,
      conditions: [
        cond("Ready", "True", "ProcessingCompleted", "the stack has been processed and is up to date"),
      ],
      lastUpdate: { state: "succeeded", type: "up", generation: 1, name: "st-ready-up", lastResyncTime: T() },
    },
    // Ten minutes before the spec this Stack has now (written by `kubectl apply` above).
    events: [{ object: "Stack", reason: "StackConfigInvalid", message: REFUSED, ago: 600 }],
    expect: { fix: /./ },
  });
  const { code, out } = stackCommand(["status", name, "-n", NS]);
  expect({ code, ok: /ok: Ready, nothing to fix/.test(out), stale: out.includes("[spec-invalid]") }).toEqual({
    code: 0,
    ok: true,
    stale: false,
  });
  expect(out).toMatch(/history +StackConfigInvalid/);
});

test("a Stack the operator stalled with observedGeneration 0: spec-invalid, not also not-reconciled", () => {
  const name = stage("stalled-gen0", {
    // Written after the spec, as the operator writes it; no observedGeneration, as PKO 2.9.0 left it.
    status: () => ({
      conditions: [
        cond("Ready", "False", "NotReadyStalled", "reconciliation is stalled"),
        cond("Stalled", "True", "SpecInvalid", REFUSED),
      ],
    }),
    events: [{ object: "Stack", reason: "StackConfigInvalid", message: REFUSED }],
    expect: { fix: /./ },
  });
  expect(getJson(["stacks.pulumi.com", name, "-n", NS]).status.observedGeneration ?? 0).toBe(0);
  const { code, out } = stackCommand(["status", name, "-n", NS]);
  expect({
    code,
    specInvalid: out.includes("[spec-invalid]"),
    notReconciled: out.includes("[not-reconciled]"),
  }).toEqual({
    code: 2,
    specInvalid: true,
    notReconciled: false,
  });
  expect(out).toContain("invalid URL scheme: git");
});

test("retry sets pulumi.com/reconciliation-request to the current time (RFC 3339)", () => {
  const before = Date.now();
  const { code, out } = stackCommand(["retry", "st-lock-held", "-n", NS]);
  expect({ code, out }).toEqual({ code: 0, out: expect.stringMatching(/retry requested/) });
  const value = getJson(["stacks.pulumi.com", "st-lock-held", "-n", NS]).metadata.annotations[
    "pulumi.com/reconciliation-request"
  ];
  expect(value).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
  const at = Date.parse(value);
  expect(at).toBeGreaterThanOrEqual(before - 1000);
  expect(at).toBeLessThanOrEqual(Date.now());
  // A second retry is a new request (a new value), which is what the operator's predicate looks for.
  stackCommand(["retry", "st-lock-held", "-n", NS]);
  expect(
    getJson(["stacks.pulumi.com", "st-lock-held", "-n", NS]).metadata.annotations[
      "pulumi.com/reconciliation-request"
    ],
  ).not.toBe(value);
  // And status shows the request is not yet observed (no operator runs here).
  expect(stackCommand(["status", "st-lock-held", "-n", NS]).out).toMatch(
    /retry requested .* \(observed not yet\)/,
  );
});

test("one-line errors: unknown name, wrong namespace, no cluster, no CRD", () => {
  const unknown = stackCommand(["status", "nope", "-n", NS]);
  expect(unknown.code).toBe(1);
  expect(unknown.out.trim().split("\n")).toHaveLength(1);
  expect(unknown.out).toMatch(
    /no Stack "nope" in namespace "pulp-status-e2e"; Stacks in this cluster: .*st-healthy/,
  );

  const elsewhere = stackCommand(["retry", "st-healthy", "-n", "default"]);
  expect(elsewhere.out.trim()).toBe(
    'no Stack "st-healthy" in namespace "default": it is in pulp-status-e2e; pass -n pulp-status-e2e',
  );

  const dead = path.join(path.dirname(KUBECONFIG), "kubeconfig-dead");
  fs.writeFileSync(
    dead,
    fs
      .readFileSync(KUBECONFIG, "utf8")
      .replace(/server: https:\/\/127\.0\.0\.1:\d+/, "server: https://127.0.0.1:1"),
  );
  const noCluster = stackCommand(["status", "st-healthy", "-n", NS], dead);
  fs.rmSync(dead);
  expect(noCluster.code).toBe(1);
  expect(noCluster.out.trim()).toMatch(
    /^no Kubernetes API server answers \(kubeconfig .*kubeconfig-dead\): start one \(npm run cluster:up\)/,
  );

  // Last: without the CRD (deleted, then put back as cluster.sh applies it).
  kubectl(["delete", "crd", "stacks.pulumi.com", "--wait=true"]);
  try {
    const noCrd = stackCommand(["status", "st-healthy", "-n", NS]);
    expect(noCrd.code).toBe(1);
    expect(noCrd.out.trim()).toMatch(
      /^the Stack CRD \(stacks\.pulumi\.com\) is not installed in this cluster .*: install the Pulumi Kubernetes Operator v2/,
    );
  } finally {
    kubectl(["apply", "--server-side", "--field-manager=pulp-cluster", "-f", CRD_FILE]);
    // `kubectl wait` fails at once while the new CRD has no conditions yet: poll instead.
    const established = () =>
      kubectlTry([
        "get",
        "crd",
        "stacks.pulumi.com",
        "-o",
        'jsonpath={.status.conditions[?(@.type=="Established")].status}',
      ]).output;
    const deadline = Date.now() + 60_000;
    while (established() !== "True" && Date.now() < deadline) spawnSync("sleep", ["1"]);
    expect(established()).toBe("True");
  }
});
