// Unit (plain parseConfig and decideInstall calls; rendering under Pulumi mocks): pulp:<process>.autoscaling.
// api, content and pulp-web get a HorizontalPodAutoscaler on CPU; the workers a KEDA ScaledObject on the
// task queue. The Deployments leave spec.replicas to them, except in the updates that must set it. On real
// Pulp, with KEDA and metrics-server on the real node: test/e2e/real/autoscaling.test.ts.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { TASK_QUEUE_QUERY, scalerConnection } from "../../../../components/autoscaling/autoscaling";
import { parseConfig } from "../../../../components/config/parse";
import { SecretName } from "../../../../components/config/rules";
import { decideInstall } from "../../../../components/decide";
import { Deployed, FIRST_INSTALL } from "../../../../components/upgrade/deployed";
import { configProblems, MINIMAL, REPO } from "../../helpers/configs";
import { DEPLOYMENT, render } from "../../helpers/render";

const HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler";
const SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject";
const TRIGGER_AUTH = "kubernetes:keda.sh/v1alpha1:TriggerAuthentication";
const NONE = new Set<SecretName>();

const AUTOSCALED = {
  api: { autoscaling: { minReplicas: 2, maxReplicas: 6 } },
  content: { autoscaling: { minReplicas: 3, maxReplicas: 9, cpuUtilization: 60 } },
  worker: { autoscaling: { minReplicas: 0, maxReplicas: 5, cooldownSeconds: 120 } },
  web: { enabled: true, autoscaling: { minReplicas: 2, maxReplicas: 4 } },
};

const decide = (changes: Record<string, unknown>, deployed: Deployed = FIRST_INSTALL) =>
  decideInstall(parseConfig({ ...MINIMAL, ...changes }, NONE, {}), deployed, NONE);
const live = (version: string, idle = false): Deployed => ({ idle, pulpcoreVersion: version });

test("a replica count beside autoscaling, min above max, and CPU autoscaling without a CPU request are refused", () => {
  const problems = configProblems({
    api: { replicas: 3, autoscaling: { minReplicas: 4, maxReplicas: 2 } },
    content: { resources: { requests: { memory: "256Mi" } }, autoscaling: { maxReplicas: 4 } },
    web: { autoscaling: { maxReplicas: 3 } },
  });
  expect(problems).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        key: "pulp:api.replicas",
        given: 3,
        fix: "pulumi config rm --path 'pulp:api.replicas'",
      }),
      expect.objectContaining({
        key: "pulp:api.autoscaling.minReplicas",
        given: 4,
        message: "is above pulp:api.autoscaling.maxReplicas (2)",
        fix: "pulumi config set --path 'pulp:api.autoscaling.maxReplicas' 4",
      }),
      expect.objectContaining({
        key: "pulp:content.resources.requests.cpu",
        fix: "pulumi config set --path 'pulp:content.resources.requests.cpu' 250m",
      }),
      expect.objectContaining({
        key: "pulp:web.autoscaling",
        fix: "pulumi config set --path 'pulp:web.enabled' true",
      }),
    ]),
  );
  expect(configProblems({ worker: { autoscaling: { minReplicas: 0 } } })).toEqual([
    expect.objectContaining({ key: "pulp:worker.autoscaling.maxReplicas" }),
  ]);
  // Workers may go to zero; a HorizontalPodAutoscaler may not.
  expect(configProblems({ api: { autoscaling: { minReplicas: 0, maxReplicas: 2 } } })).toEqual([
    expect.objectContaining({ key: "pulp:api.autoscaling.minReplicas", given: 0 }),
  ]);
  expect(configProblems(AUTOSCALED)).toEqual([]);
});

test("the decision: autoscaled processes start at their minimum and leave the count to the autoscaler", () => {
  const d = decide(AUTOSCALED, live("3.123.1"));
  expect(d.replicas).toEqual({ api: 2, content: 3, worker: 0, web: 2, redis: 1 });
  expect(d.autoscaling).toEqual({
    api: { leaveReplicas: true, paused: false },
    content: { leaveReplicas: true, paused: false },
    worker: { leaveReplicas: true, paused: false },
    web: { leaveReplicas: true, paused: false },
  });
  expect(decide({}).autoscaling).toEqual({});
});

test("the decision: idle and maintenance hold the count at zero and pause KEDA; back from idle, the HPAs' Deployments are set again", () => {
  const idle = decide({ ...AUTOSCALED, idle: true }, live("3.123.1"));
  expect(idle.replicas).toEqual({ api: 0, content: 0, worker: 0, web: 0, redis: 0 });
  for (const p of ["api", "content", "worker", "web"] as const) {
    expect(idle.autoscaling[p]).toEqual({ leaveReplicas: false, paused: true });
  }
  const maintenance = decide({ ...AUTOSCALED, maintenance: true }, live("3.123.1"));
  expect(maintenance.autoscaling.worker).toEqual({ leaveReplicas: false, paused: true });
  expect(maintenance.autoscaling.api).toEqual({ leaveReplicas: true, paused: false });
  // An HPA takes a Deployment at zero as "autoscaling off" and never raises it: the update sets the minimum.
  const woken = decide(AUTOSCALED, live("3.123.1", true));
  expect(woken.autoscaling.api).toEqual({ leaveReplicas: false, paused: false });
  expect(woken.autoscaling.web).toEqual({ leaveReplicas: false, paused: false });
  // KEDA brings the workers back itself once unpaused.
  expect(woken.autoscaling.worker).toEqual({ leaveReplicas: true, paused: false });
});

test("the decision: a stop-the-world upgrade pauses KEDA before the scale-down, and sets api and content back after it", () => {
  const d = decide({ ...AUTOSCALED, image: "quay.io/pulp/pulp-minimal:3.89.2" }, live("3.85.34"));
  expect(d.upgrade.kind).toBe("stop-the-world");
  expect(d.stop?.scaledObjects).toEqual(["pulp-worker"]);
  expect(d.autoscaling.api).toEqual({ leaveReplicas: false, paused: false });
  expect(d.autoscaling.content).toEqual({ leaveReplicas: false, paused: false });
  // pulp-web does not heartbeat: the stop leaves it running.
  expect(d.autoscaling.web).toEqual({ leaveReplicas: true, paused: false });
  expect(
    decide({ image: "quay.io/pulp/pulp-minimal:3.89.2" }, live("3.85.34")).stop?.scaledObjects,
  ).toBeUndefined();
});

test("rendered: HPAs on CPU for api, content and web; the Deployments ignore spec.replicas and start at the minimum", async () => {
  const run = await render({ ...MINIMAL, ...AUTOSCALED });
  const hpas = Object.fromEntries(run.ofType(HPA).map((h) => [h.inputs.metadata.name, h.inputs.spec]));
  expect(Object.keys(hpas).sort()).toEqual(["pulp-api", "pulp-content", "pulp-web"]);
  expect(hpas["pulp-content"]).toEqual({
    scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "pulp-content" },
    minReplicas: 3,
    maxReplicas: 9,
    metrics: [
      {
        type: "Resource",
        resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } },
      },
    ],
  });
  for (const d of run.ofType(DEPLOYMENT).filter((d) => d.inputs.metadata.name !== "pulp-redis")) {
    expect([d.inputs.metadata.name, d.ignoreChanges]).toEqual([d.inputs.metadata.name, ["spec.replicas"]]);
  }
  expect(run.k8s("Deployment", "pulp-content").inputs.spec.replicas).toBe(3);
  expect(run.k8s("Deployment", "pulp-worker").inputs.spec.replicas).toBe(0);
  // Without autoscaling nothing changes: the count is set, and no autoscaler exists.
  const fixed = await render({ ...MINIMAL, web: { enabled: true } });
  expect(fixed.ofType(HPA)).toEqual([]);
  expect(fixed.ofType(SCALED_OBJECT)).toEqual([]);
  for (const d of fixed.ofType(DEPLOYMENT)) expect(d.ignoreChanges).toEqual([]);
});

test("rendered: the workers' ScaledObject reads the task queue with Pulp's database password, unpaused after the workers roll", async () => {
  const run = await render({
    ...MINIMAL,
    ...AUTOSCALED,
    database: { cloudnativepg: { imageName: "ghcr.io/cloudnative-pg/postgresql:16.4" } },
  });
  const auth = run.ofType(TRIGGER_AUTH)[0].inputs;
  expect(auth.metadata.name).toBe("pulp-worker-queue");
  expect(auth.spec.secretTargetRef).toEqual([
    { parameter: "password", name: "pulp-db-app", key: "password" },
  ]);
  const so = run.ofType(SCALED_OBJECT)[0];
  expect(so.inputs.metadata.annotations["autoscaling.keda.sh/paused"]).toBe("false");
  expect(so.inputs.spec).toMatchObject({
    scaleTargetRef: { name: "pulp-worker" },
    minReplicaCount: 0,
    maxReplicaCount: 5,
    pollingInterval: 15,
    cooldownPeriod: 120,
    advanced: {
      horizontalPodAutoscalerConfig: { behavior: { scaleDown: { stabilizationWindowSeconds: 120 } } },
    },
    triggers: [
      {
        type: "postgresql",
        metadata: {
          host: "pulp-db-rw.pulp.svc",
          port: "5432",
          userName: "pulp",
          dbName: "pulp",
          sslmode: "require",
          query: TASK_QUEUE_QUERY,
          targetQueryValue: "1",
          activationTargetQueryValue: "0",
        },
        authenticationRef: { name: "pulp-worker-queue" },
      },
    ],
  });
  // Applied after the workers' rollout (its annotation waits for it): that apply ends a stop's pause.
  const rolledOut = run
    .ofType("kubernetes:apps/v1:DeploymentPatch")
    .find((p) => p.name.endsWith("worker-rolled-out"))!;
  expect(so.dependencies).toContain(rolledOut.urn);
  expect(so.inputs.metadata.annotations).not.toHaveProperty(["autoscaling.keda.sh/paused-replicas"]);
  expect(so.inputs.metadata.annotations).not.toHaveProperty(["pulumi.com/waitFor"]);
});

test("rendered: held at zero (idle, maintenance), KEDA holds the workers at zero itself and confirms it before they go", async () => {
  for (const held of [{ idle: true }, { maintenance: true }]) {
    const run = await render({ ...MINIMAL, ...AUTOSCALED, ...held }, {}, false, live("3.123.1"));
    const so = run.ofType(SCALED_OBJECT)[0];
    expect(so.inputs.metadata.annotations).toMatchObject({
      "autoscaling.keda.sh/paused": "true",
      // Paused alone keeps whatever count KEDA set last: a worker it woke for a waiting task meanwhile.
      "autoscaling.keda.sh/paused-replicas": "0",
      "pulumi.com/waitFor": "condition=Paused",
    });
    expect(so.inputs.spec.scaleTargetRef).toEqual({ name: "pulp-worker" });
    const workers = run.k8s("Deployment", "pulp-worker");
    expect(workers.inputs.spec.replicas).toBe(0);
    expect(workers.ignoreChanges).toEqual([]);
    // The workers go to zero only once KEDA says it is paused: the Deployment waits for the ScaledObject.
    expect(workers.dependencies).toContain(so.urn);
    expect(so.dependencies).not.toContain(workers.urn);
  }
});

test("KEDA's connection: a short host gets the namespace, a verifying TLS mode becomes require, others stay", async () => {
  const resolved = (v: unknown) =>
    new Promise((r) => (v as { apply(f: (x: unknown) => void): void }).apply(r));
  const base = { host: "pulp-db-rw", port: 5432, name: "pulp", user: "pulp", sslmode: "verify-full" };
  const short = scalerConnection(base, "repos");
  expect(await resolved(short.host)).toBe("pulp-db-rw.repos.svc");
  expect(short.sslmode).toBe("require");
  const external = scalerConnection({ ...base, host: "db.corp.example", sslmode: "disable" }, "repos");
  expect(external).toMatchObject({ host: "db.corp.example", sslmode: "disable", port: "5432" });
});

test("the production example's commented worker autoscaling is valid config when it replaces replicas", () => {
  const text = fs.readFileSync(path.join(REPO, "examples/production/Pulumi.production.yaml"), "utf8");
  const line = text.split("\n").find((l) => /^ {4}# autoscaling: /.test(l))!;
  const { autoscaling } = yaml.load(line.replace(/^ {4}# /, "")) as { autoscaling: Record<string, unknown> };
  expect(autoscaling).toEqual({ minReplicas: 1, maxReplicas: 8 });
  expect(configProblems({ worker: { autoscaling } })).toEqual([]);
});
