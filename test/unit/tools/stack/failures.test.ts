// Unit. One case per known failure (tools/stack/failures.ts): the snapshot that shows it is recognised,
// with its cause and fix; a healthy Stack shows none. A table entry without a case fails here.
import { upgradePlanMessage, UPGRADE_REFUSED_MARKER } from "../../../../components/contract";
import { diagnose, KNOWN_FAILURES } from "../../../../tools/stack/failures";
import { render } from "../../../../tools/stack/render";
import { parseArgs } from "../../../../tools/stack/main";
import { podSummary, StackSnapshot } from "../../../../tools/stack/snapshot";

const NOW = new Date("2026-11-22T03:00:00Z");
const T = "2026-11-22T02:55:00Z";

function healthy(): StackSnapshot {
  return {
    stack: {
      metadata: { name: "pulp", namespace: "pulp-delivery", generation: 2 },
      spec: {
        stack: "organization/pulp/prod",
        projectRepo: "https://git.example.com/pulp.git",
        branch: "main",
        repoDir: ".",
        envRefs: { PULUMI_BACKEND_URL: { type: "Secret", secret: { name: "state", key: "url" } } },
      },
      status: {
        observedGeneration: 2,
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "ProcessingCompleted",
            message: "",
            lastTransitionTime: T,
          },
        ],
        lastUpdate: {
          state: "succeeded",
          generation: 2,
          name: "pulp-abc",
          failures: 0,
          lastSuccessfulCommit: "a".repeat(40),
        },
      },
    },
    events: [
      {
        type: "Normal",
        reason: "StackCreated",
        message: "Successfully updated stack.",
        object: "Stack/pulp",
        count: 1,
        last: T,
      },
    ],
    workspace: { name: "pulp", conditions: [{ type: "Ready", status: "True", reason: "Ready" }] },
    pods: [
      podSummary({
        metadata: { name: "pulp-workspace-0" },
        status: {
          phase: "Running",
          containerStatuses: [{ name: "pulumi", ready: true, restartCount: 0, state: { running: {} } }],
        },
      }),
    ],
    updates: [],
    secretRefs: [{ use: "envRefs.PULUMI_BACKEND_URL", secret: "state", key: "url", found: "ok" }],
    now: NOW,
  };
}

/** `healthy()` changed by `change`. */
function snapshot(change: (s: StackSnapshot) => void): StackSnapshot {
  const s = healthy();
  change(s);
  return s;
}

const failed = (s: StackSnapshot, message: string) => {
  s.stack.status!.conditions = [
    { type: "Ready", status: "False", reason: "NotReadyInProgress", message: "", lastTransitionTime: T },
    { type: "Reconciling", status: "True", reason: "RetryingAfterFailure", message, lastTransitionTime: T },
  ];
  s.stack.status!.lastUpdate = { state: "failed", generation: 2, name: "pulp-def", failures: 3, message };
};
const stalled = (s: StackSnapshot, reason: string, message: string) => {
  s.stack.status!.conditions = [
    { type: "Ready", status: "False", reason: "NotReadyStalled", message: "", lastTransitionTime: T },
    { type: "Stalled", status: "True", reason, message, lastTransitionTime: T },
  ];
};
const event = (s: StackSnapshot, type: string, reason: string, message: string) =>
  s.events.push({ type, reason, message, object: "Stack/pulp", count: 1, last: T });
const container = (s: StackSnapshot, status: Record<string, unknown>) => {
  s.pods = [
    podSummary({
      metadata: { name: "pulp-workspace-0" },
      status: { phase: "Running", containerStatuses: [{ name: "pulumi", ...status }] },
    }),
  ];
};

const CASES: Record<string, [(s: StackSnapshot) => void, RegExp, RegExp]> = {
  "not-reconciled": [(s) => delete s.stack.status, /no status at all/, /pulumi-kubernetes-operator/],
  "workspace-oom": [
    (s) => {
      failed(s, "workspace failed");
      container(s, {
        ready: false,
        restartCount: 3,
        state: { waiting: { reason: "CrashLoopBackOff" } },
        lastState: { terminated: { reason: "OOMKilled", exitCode: 137 } },
      });
    },
    /OOMKilled, 3 restart/,
    /workspace\.memoryLimit/,
  ],
  "installation-failure": [
    (s) => event(s, "Warning", "InstallationFailure", "pulumi install failed: npm ERR! code ERESOLVE"),
    /event InstallationFailure/,
    /kubectl logs -n pulp-delivery pulp-workspace-0 -c pulumi/,
  ],
  "connection-failure": [
    (s) => event(s, "Warning", "ConnectionFailure", "dial tcp 10.0.0.5:50051: i/o timeout"),
    /ConnectionFailure/,
    /50051/,
  ],
  "secret-ref-missing": [
    (s) =>
      (s.secretRefs = [
        { use: "envRefs.PULUMI_CONFIG_PASSPHRASE", secret: "state", key: "passphrase", found: "missing key" },
      ]),
    /PULUMI_CONFIG_PASSPHRASE -> Secret state key passphrase: missing key/,
    /patch secret state --type merge -p '\{"stringData":\{"passphrase":"<value>"\}\}'/,
  ],
  "backend-login": [
    (s) =>
      failed(
        s,
        "failed to create a backend: PULUMI_ACCESS_TOKEN must be set for login during non-interactive CLI sessions",
      ),
    /PULUMI_ACCESS_TOKEN/,
    /PULUMI_BACKEND_URL/,
  ],
  passphrase: [
    (s) =>
      failed(
        s,
        'constructing secrets manager of type "passphrase": passphrase must be set with PULUMI_CONFIG_PASSPHRASE',
      ),
    /passphrase must be set/,
    /envRefs\.PULUMI_CONFIG_PASSPHRASE/,
  ],
  "git-auth": [
    (s) => event(s, "Warning", "StackGitAuthenticationFailure", "authentication required"),
    /StackGitAuthenticationFailure/,
    /delivery:gitAuth\.accessToken/,
  ],
  "source-unavailable": [
    (s) => stalled(s, "SourceUnavailable", "no commits found for branch nope"),
    /Stalled\/SourceUnavailable/,
    /git ls-remote/,
  ],
  "spec-invalid": [
    (s) =>
      stalled(
        s,
        "SpecInvalid",
        "Stack git source needs to specify 'projectRepo' and either 'branch' or 'commit'",
      ),
    /Stalled\/SpecInvalid/,
    /kubectl describe stack pulp -n pulp-delivery/,
  ],
  "lock-held": [
    (s) => stalled(s, "UpdateConflict", "conflict with concurrent update, retryOnUpdateConflict not set"),
    /Stalled\/UpdateConflict/,
    /pulumi cancel --yes --stack organization\/pulp\/prod/,
  ],
  "workspace-forbidden": [
    (s) =>
      failed(
        s,
        'deployments.apps is forbidden: User "system:serviceaccount:pulp-delivery:pulp-workspace" cannot create resource "deployments" in API group "apps" in the namespace "default"',
      ),
    /is forbidden/,
    /stacks\/kinds\.ts/,
  ],
  "pulp-config": [
    (s) => failed(s, "Invalid Pulp stack config (1 problem); nothing was created or changed:"),
    /Invalid Pulp stack config/,
    /delivery:pulpConfig/,
  ],
  "image-pull": [
    (s) =>
      container(s, {
        ready: false,
        restartCount: 0,
        state: { waiting: { reason: "ImagePullBackOff", message: "Back-off pulling image" } },
      }),
    /ImagePullBackOff/,
    /workspace\.image/,
  ],
  "pod-security": [
    (s) =>
      event(
        s,
        "Warning",
        "FailedCreate",
        'create Pod pulp-workspace-0 failed: pods "pulp-workspace-0" is forbidden: violates PodSecurity "restricted:latest"',
      ),
    /violates PodSecurity/,
    /securityProfile: restricted/,
  ],
  "update-failed": [
    (s) => failed(s, "error: update failed: 1 error occurred"),
    /lastUpdate failed \(3 failure/,
    /npm run stack -- retry pulp -n pulp-delivery/,
  ],
};

test("every known failure has a case here, and every case names a known failure", () => {
  expect(Object.keys(CASES).sort()).toEqual(KNOWN_FAILURES.map((f) => f.id).sort());
});

test.each(Object.entries(CASES))(
  "%s is recognised, with its evidence and fix",
  (id, [change, evidence, fix]) => {
    const s = snapshot(change);
    const found = diagnose(s).find((d) => d.failure.id === id);
    expect(found).toBeDefined();
    expect(found!.evidence).toMatch(evidence);
    expect(found!.failure.fix(s)).toMatch(fix);
    // And the screen shows it.
    const screen = render(s, diagnose(s));
    expect(screen).toContain(`[${id}]`);
    expect(screen).toContain(found!.failure.cause);
  },
);

test("a healthy Stack has no diagnosis and says so", () => {
  expect(diagnose(healthy())).toEqual([]);
  expect(render(healthy(), [])).toMatch(/ok: Ready, nothing to fix/);
});

test("the generic update-failed line gives way to a specific cause", () => {
  const s = snapshot((x) => failed(x, "passphrase must be set with PULUMI_CONFIG_PASSPHRASE"));
  expect(diagnose(s).map((d) => d.failure.id)).toEqual(["passphrase"]);
});

test("the screen shows conditions, last and current update, events, the workspace pod and secrets", () => {
  const s = snapshot((x) => {
    failed(x, "boom");
    x.stack.status!.currentUpdate = { name: "pulp-ghi", generation: 2, commit: "b".repeat(40) };
    container(x, {
      ready: false,
      restartCount: 2,
      state: { running: {} },
      lastState: { terminated: { reason: "OOMKilled", exitCode: 137 } },
    });
  });
  const screen = render(s, diagnose(s));
  for (const part of [
    "Stack pulp-delivery/pulp -> pulumi stack organization/pulp/prod",
    "branch main  dir .",
    "Reconciling  True    RetryingAfterFailure",
    "Last update failed",
    "failures 3",
    "Current update  pulp-ghi  generation 2  commit bbbbbbbbbbbb",
    "StackCreated",
    "pod pulp-workspace-0  Running",
    "last: terminated: OOMKilled (exit 137)",
    "envRefs.PULUMI_BACKEND_URL",
  ])
    expect(screen).toContain(part);
  expect(screen.split("\n").length).toBeLessThan(50);
});

test("arguments: name, -n, and one-line errors for the rest", () => {
  expect(parseArgs(["status", "pulp"])).toEqual({
    command: "status",
    name: "pulp",
    namespace: "pulp-delivery",
    kubeconfig: undefined,
  });
  expect(parseArgs(["retry", "pulp", "-n", "ops"])).toMatchObject({ command: "retry", namespace: "ops" });
  expect(() => parseArgs(["stauts", "pulp"])).toThrow(/unknown command "stauts"; usage/);
  expect(() => parseArgs(["status"])).toThrow(/which Stack\?/);
});

test("a missing Secret (not just a key) is created, not patched", () => {
  const s = snapshot(
    (x) =>
      (x.secretRefs = [
        { use: "envRefs.PULUMI_BACKEND_URL", secret: "state", key: "url", found: "missing secret" },
      ]),
  );
  const [d] = diagnose(s);
  expect(d.failure.fix(s)).toMatch(
    /^kubectl -n pulp-delivery create secret generic state --from-literal=url=<value>/,
  );
});

// What PKO v2.9.0 wrote on the embedded cluster (issue 13): the dev Stack was created with a git:// URL
// (the operator refused it with a StackConfigInvalid event and Stalled/SpecInvalid, observedGeneration
// left at 0), then its spec was corrected and it went Ready.
const REFUSED = 'parsing "git://127.0.0.1:9418/pulp-pulumi": invalid URL scheme: git';
const CREATED = "2026-11-22T02:40:00Z";
const REFUSED_AT = "2026-11-22T02:40:02Z";
const FIXED = "2026-11-22T02:50:00Z";
const specManager = (time: string) => ({
  manager: "pulumi-resource-kubernetes",
  operation: "Apply",
  time,
  fieldsV1: { "f:spec": { "f:projectRepo": {} } },
});
const operatorStatus = (time: string) => ({
  manager: "pulumi-kubernetes-operator",
  operation: "Apply",
  subresource: "status",
  time,
  fieldsV1: { "f:status": {} },
});

function stalledByOperator(): StackSnapshot {
  return snapshot((s) => {
    s.stack.metadata = {
      ...s.stack.metadata,
      generation: 1,
      creationTimestamp: CREATED,
      managedFields: [specManager(CREATED), operatorStatus(REFUSED_AT)],
    };
    s.stack.status = {
      observedGeneration: 0,
      conditions: [
        {
          type: "Ready",
          status: "False",
          reason: "NotReadyStalled",
          message: "reconciliation is stalled",
          lastTransitionTime: REFUSED_AT,
        },
        {
          type: "Stalled",
          status: "True",
          reason: "SpecInvalid",
          message: REFUSED,
          lastTransitionTime: REFUSED_AT,
        },
      ],
    };
    s.events = [
      {
        type: "Warning",
        reason: "StackConfigInvalid",
        message: REFUSED,
        object: "Stack/pulp",
        count: 1,
        last: REFUSED_AT,
      },
    ];
    s.workspace = undefined;
    s.pods = [];
  });
}

function readyAfterFix(): StackSnapshot {
  const s = stalledByOperator();
  s.stack.metadata.generation = 2;
  s.stack.metadata.managedFields = [specManager(FIXED), operatorStatus("2026-11-22T02:51:40Z")];
  s.stack.spec.projectRepo = "https://127.0.0.1:9443/local/pulp-pulumi.git";
  s.stack.status = {
    observedGeneration: 2,
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "ProcessingCompleted",
        message: "the stack has been processed and is up to date",
        lastTransitionTime: "2026-11-22T02:51:40Z",
      },
    ],
    lastUpdate: {
      state: "succeeded",
      type: "up",
      generation: 2,
      name: "pulp-dev-abcde",
      lastResyncTime: "2026-11-22T02:51:40Z",
      lastSuccessfulCommit: "a".repeat(40),
    },
  };
  s.events.push({
    type: "Normal",
    reason: "UpdateSucceeded",
    message: "Successfully updated stack.",
    object: "Stack/pulp",
    count: 1,
    last: "2026-11-22T02:51:40Z",
  });
  return s;
}

test("a Ready Stack prints no stale failure: the StackConfigInvalid from before the fix is history", () => {
  const s = readyAfterFix();
  expect(diagnose(s)).toEqual([]);
  const screen = render(s, []);
  expect(screen).toMatch(/ok: Ready, nothing to fix/);
  expect(screen).toMatch(/history +StackConfigInvalid/);
  expect(screen).toMatch(/Normal +UpdateSucceeded/);
  // Ready alone (no managedFields, no lastUpdate) is enough to make the old event history.
  const readyOnly = readyAfterFix();
  delete readyOnly.stack.metadata.managedFields;
  delete readyOnly.stack.status!.lastUpdate;
  expect(diagnose(readyOnly)).toEqual([]);
  // Control: the same event after the fix is a current failure, even while Ready says True.
  const again = readyAfterFix();
  again.events.push({ ...again.events[0], last: "2026-11-22T02:55:00Z" });
  expect(diagnose(again).map((d) => d.failure.id)).toEqual(["spec-invalid"]);
});

test("a Stack the operator stalled is not also 'not reconciled' (observedGeneration 0 < generation 1)", () => {
  const s = stalledByOperator();
  expect(diagnose(s).map((d) => [d.failure.id, d.evidence])).toEqual([
    ["spec-invalid", `Stalled/SpecInvalid: ${REFUSED}`],
  ]);
  const screen = render(s, diagnose(s));
  expect(screen).not.toContain("[not-reconciled]");
  // The same stall with no managedFields to date the spec: the Stalled condition is the operator's answer.
  const undated = stalledByOperator();
  delete undated.stack.metadata.managedFields;
  delete undated.stack.metadata.creationTimestamp;
  expect(diagnose(undated).map((d) => d.failure.id)).toEqual(["spec-invalid"]);
});

test("a spec changed after the operator's last condition is not reconciled (yet)", () => {
  const s = stalledByOperator();
  s.stack.metadata.generation = 2;
  s.stack.metadata.managedFields = [specManager(FIXED), operatorStatus(REFUSED_AT)];
  const ids = diagnose(s).map((d) => d.failure.id);
  expect(ids).toContain("not-reconciled");
  expect(diagnose(s).find((d) => d.failure.id === "not-reconciled")!.evidence).toBe(
    `observedGeneration 0 < generation 2, no condition since the spec changed ${FIXED}`,
  );
  // The Stalled condition is still what the operator last said, so it stays in the diagnosis.
  expect(ids).toEqual(["not-reconciled", "spec-invalid"]);
});

test("an OOMKill before the last success is history, one after it is not", () => {
  const oom = (finishedAt: string) => {
    const s = readyAfterFix();
    s.pods = [
      podSummary({
        metadata: { name: "pulp-workspace-0" },
        status: {
          phase: "Running",
          containerStatuses: [
            {
              name: "pulumi",
              ready: true,
              restartCount: 1,
              state: { running: {} },
              lastState: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt } },
            },
          ],
        },
      }),
    ];
    return diagnose(s).map((d) => d.failure.id);
  };
  expect(oom("2026-11-22T02:45:00Z")).toEqual([]);
  expect(oom("2026-11-22T02:58:00Z")).toEqual(["workspace-oom"]);
  // Crash-looping after an old OOMKill is current, whatever the time.
  const looping = readyAfterFix();
  container(looping, {
    ready: false,
    restartCount: 4,
    state: { waiting: { reason: "CrashLoopBackOff" } },
    lastState: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt: "2026-11-22T02:45:00Z" } },
  });
  expect(diagnose(looping).map((d) => d.failure.id)).toEqual(["workspace-oom"]);
});

// Wrong answer fixed: the stop-the-world plan is a warning of an update that succeeds, yet its words
// ("NEEDS DOWNTIME") made the CLI report the program as refusing. Only the refusal marker counts now.
test("pulp-config: the stop-the-world plan's warning is no refusal; the refusal marker is", () => {
  const warned = healthy();
  failed(warned, upgradePlanMessage("stop-the-world", "upgrade 3.84.0 -> 3.85.0 NEEDS DOWNTIME: ..."));
  expect(diagnose(warned).map((d) => d.failure.id)).not.toContain("pulp-config");
  const refused = healthy();
  failed(refused, `UpgradeRefused: ${UPGRADE_REFUSED_MARKER} pulpcore 3.84.0 is deployed ...`);
  expect(diagnose(refused).map((d) => d.failure.id)).toContain("pulp-config");
});
