// Unit: what every pod shares, `pulp:scheduling` and `pulp:imagePullSecrets`, validated as plain parseConfig
// calls (no mocks), then rendered under Pulumi mocks (test/unit/helpers/pulumiMocks.ts): every pod the
// program creates, and the CloudNativePG Cluster, get it.
import { MINIMAL, problemsOf } from "../../helpers/configs";
import { CNPG, podSpecs, render } from "../../helpers/render";

/** What the kwok scenarios of the test bed set: simulated nodes carry this taint and label. */
const KWOK = {
  nodeSelector: { type: "kwok" },
  tolerations: [{ key: "kwok.x-k8s.io/node", operator: "Equal", value: "fake", effect: "NoSchedule" }],
};

const problems = (scheduling: unknown) => problemsOf({ scheduling });

test("every pod and the database Cluster get nodeSelector and tolerations", async () => {
  const run = await render({
    ...MINIMAL,
    web: { enabled: true },
    redis: { enabled: true },
    backup: { enabled: true, image: "ghcr.io/cloudnative-pg/postgresql:16.4" },
    scheduling: KWOK,
  });
  const specs = podSpecs(run);
  // api, content, worker, web, redis, the migration Job, backup
  expect(specs.map(([what]) => what).length).toBe(7);
  for (const [what, spec] of specs) {
    expect({ what, nodeSelector: spec.nodeSelector, tolerations: spec.tolerations }).toEqual({
      what,
      ...KWOK,
    });
  }
  const cluster = run.ofType(CNPG)[0].inputs.spec;
  expect(cluster.affinity).toEqual({ nodeSelector: KWOK.nodeSelector, tolerations: KWOK.tolerations });
});

test("without scheduling config no pod or Cluster carries an empty constraint", async () => {
  const run = await render(MINIMAL);
  for (const [, spec] of podSpecs(run)) {
    expect(spec.nodeSelector).toBeUndefined();
    expect(spec.tolerations).toBeUndefined();
    expect(spec.affinity).toBeUndefined();
  }
  expect(run.ofType(CNPG)[0].inputs.spec.affinity).toBeUndefined();
});

test("a component's podSpecOverrides changes its own scheduling only", async () => {
  const run = await render({
    ...MINIMAL,
    scheduling: KWOK,
    worker: { podSpecOverrides: { nodeSelector: { pool: "workers" } } },
  });
  expect(run.k8s("Deployment", "pulp-worker").inputs.spec.template.spec.nodeSelector).toEqual({
    type: "kwok",
    pool: "workers",
  });
  expect(run.k8s("Deployment", "pulp-api").inputs.spec.template.spec.nodeSelector).toEqual({ type: "kwok" });
});

test("node affinity reaches the pods and the Cluster", async () => {
  const nodeAffinity = {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: "type", operator: "In", values: ["kwok"] }] }],
    },
  };
  const run = await render({ ...MINIMAL, scheduling: { affinity: { nodeAffinity } } });
  expect(run.k8s("Deployment", "pulp-api").inputs.spec.template.spec.affinity).toEqual({ nodeAffinity });
  expect(run.ofType(CNPG)[0].inputs.spec.affinity).toEqual({ nodeAffinity });
});

test("keys, values and enums follow the API server's rules, each problem reported", () => {
  expect(problems(KWOK)).toEqual([]);
  expect(problems({ tolerations: [{ operator: "Exists" }] })).toEqual([]);
  expect(
    problems({ nodeSelector: { "-bad": "x", "example.com/ok": "not valid!", ["a".repeat(64)]: "x" } }),
  ).toEqual([
    expect.stringMatching(/^pulp:scheduling\.nodeSelector\["-bad"\]: .*label key/),
    expect.stringMatching(/^pulp:scheduling\.nodeSelector\["example\.com\/ok"\]: must be a label value/),
    expect.stringMatching(/label key/),
  ]);
  expect(
    problems({
      tolerations: [
        { key: "a", operator: "Matches" },
        { key: "a", effect: "NoRun" },
        { operator: "Exists", key: "a", value: "v" },
        { value: "v" },
        { key: "a", effect: "NoSchedule", tolerationSeconds: 5 },
      ],
    }),
  ).toEqual([
    expect.stringMatching(/^pulp:scheduling\.tolerations\[0\]\.operator: must be one of "Exists", "Equal"/),
    expect.stringMatching(/^pulp:scheduling\.tolerations\[1\]\.effect: must be one of "NoSchedule"/),
    expect.stringMatching(/^pulp:scheduling\.tolerations\[2\]\.value: must be empty/),
    expect.stringMatching(/^pulp:scheduling\.tolerations\[3\]\.operator: must be "Exists"/),
    expect.stringMatching(/^pulp:scheduling\.tolerations\[4\]\.tolerationSeconds: .*NoExecute/),
  ]);
});

test("image pull secrets reach every pod (the migration Job, Redis, web and backups included) and the Cluster", async () => {
  const run = await render({
    ...MINIMAL,
    web: { enabled: true },
    redis: { enabled: true },
    backup: { enabled: true, image: "ghcr.io/cloudnative-pg/postgresql:16.4" },
    imagePullSecrets: ["registry-a", "registry-b"],
  });
  const specs = podSpecs(run);
  expect(specs.map(([what]) => what).length).toBe(7);
  for (const [what, spec] of specs) {
    expect({ what, secrets: spec.imagePullSecrets }).toEqual({
      what,
      secrets: [{ name: "registry-a" }, { name: "registry-b" }],
    });
  }
  expect(run.ofType(CNPG)[0].inputs.spec.imagePullSecrets).toEqual([
    { name: "registry-a" },
    { name: "registry-b" },
  ]);
  const plain = await render(MINIMAL);
  for (const [, spec] of podSpecs(plain)) expect(spec.imagePullSecrets).toBeUndefined();
  expect(plain.ofType(CNPG)[0].inputs.spec.imagePullSecrets).toBeUndefined();
});

test("an image pull secret that is no Secret name is named with the rule", () => {
  const [problem] = problemsOf({ imagePullSecrets: ["ok", "Bad_Name"] });
  expect(problem).toMatch(/^pulp:imagePullSecrets\[1\]: must be a DNS-1123 subdomain/);
});
