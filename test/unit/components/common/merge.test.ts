// Unit: the escape hatch's merge as a plain function (no mocks), then through the program under Pulumi mocks
// (test/unit/helpers/pulumiMocks.ts) for every pod the program creates.
import { parseConfig } from "../../../../components/config/parse";
import { deepMerge } from "../../../../components/common/merge";
import { MINIMAL } from "../../helpers/configs";
import { podSpecs, render } from "../../helpers/render";

const base = {
  containers: [
    {
      name: "api",
      image: "quay.io/pulp/pulp-minimal:3.85.0",
      command: ["pulp-api"],
      env: [{ name: "PULP_SECRET_KEY", valueFrom: { secretKeyRef: { name: "k", key: "k" } } }],
      volumeMounts: [
        { name: "keys", mountPath: "/etc/pulp/keys/a", subPath: "a" },
        { name: "keys", mountPath: "/etc/pulp/keys/b", subPath: "b" },
      ],
      ports: [{ name: "http", containerPort: 24817 }],
      readinessProbe: { httpGet: { path: "/pulp/api/v3/status/", port: 24817 }, periodSeconds: 10 },
    },
  ],
  volumes: [{ name: "keys", secret: { secretName: "keys" } }],
  tolerations: [{ key: "a", operator: "Exists" }],
};

test("adding one env var keeps the container's image, command, mounts, ports and probes", () => {
  const merged = deepMerge(base, { containers: [{ name: "api", env: [{ name: "TZ", value: "UTC" }] }] });
  expect(merged.containers).toEqual([
    { ...base.containers[0], env: [...base.containers[0].env, { name: "TZ", value: "UTC" }] },
  ]);
});

test("an env var with a known name is changed in place, not duplicated", () => {
  const merged = deepMerge(base, {
    containers: [{ name: "api", env: [{ name: "PULP_SECRET_KEY", value: "x" }] }],
  });
  expect(merged.containers[0].env).toHaveLength(1);
  expect(merged.containers[0].env[0]).toMatchObject({ name: "PULP_SECRET_KEY", value: "x" });
});

test("overriding a probe tunes it, and another handler replaces the generated one", () => {
  const tuned = deepMerge(base, { containers: [{ name: "api", readinessProbe: { periodSeconds: 30 } }] });
  expect(tuned.containers[0].readinessProbe).toEqual({
    httpGet: { path: "/pulp/api/v3/status/", port: 24817 },
    periodSeconds: 30,
  });
  const swapped = deepMerge(base, {
    containers: [{ name: "api", readinessProbe: { tcpSocket: { port: 24817 } } }],
  });
  expect(swapped.containers[0].readinessProbe).toEqual({ tcpSocket: { port: 24817 }, periodSeconds: 10 });
});

test("a container with a new name is added as a sidecar; the generated one stays first and whole", () => {
  const sidecar = { name: "log-shipper", image: "docker.io/fluent/fluent-bit:3.2.2" };
  const merged = deepMerge(base, { containers: [sidecar] });
  expect(merged.containers).toEqual([base.containers[0], sidecar]);
});

test("nothing can be removed by accident: short lists add or merge, they never drop items", () => {
  const merged = deepMerge(base, {
    volumes: [{ name: "cache", emptyDir: {} }],
    containers: [{ name: "api", volumeMounts: [{ name: "cache", mountPath: "/cache" }] }],
  });
  expect(merged.volumes.map((v) => v.name)).toEqual(["keys", "cache"]);
  // Mounts merge by mountPath (the API's own key): one volume mounted twice stays mounted twice.
  expect(merged.containers[0].volumeMounts.map((m) => m.mountPath)).toEqual([
    "/etc/pulp/keys/a",
    "/etc/pulp/keys/b",
    "/cache",
  ]);
  // Lists without a key in the API (tolerations, command) are replaced, as the user wrote them.
  expect(deepMerge(base, { tolerations: [] }).tolerations).toEqual([]);
  expect(base.containers[0].env).toHaveLength(1); // the input is not changed
});

test("the config schema rejects an override item without its key, so it cannot become a stray copy", () => {
  expect(() =>
    parseConfig({ ...MINIMAL, api: { podSpecOverrides: { containers: [{ env: [{ name: "TZ" }] }] } } }),
  ).toThrow(/pulp:api\.podSpecOverrides\.containers\[0\]\.name/);
  expect(() =>
    parseConfig({ ...MINIMAL, redis: { podSpecOverrides: { volumes: [{ name: "Bad_Name" }] } } }),
  ).toThrow(/pulp:redis\.podSpecOverrides\.volumes\[0\]\.name: must be a DNS-1123 label/);
});

test("every pod the program creates takes its overrides: api, content, worker, web, Redis, the migration Jobs", async () => {
  const env = (container: string) => ({
    podSpecOverrides: { containers: [{ name: container, env: [{ name: "TZ", value: "UTC" }] }] },
  });
  const run = await render({
    ...MINIMAL,
    api: env("api"),
    content: env("content"),
    worker: env("worker"),
    web: { enabled: true, ...env("web") },
    redis: { enabled: true, ...env("redis") },
    migration: env("migrate"),
  });
  const specs = podSpecs(run);
  expect(specs).toHaveLength(6);
  for (const [what, spec] of specs) {
    const containers = spec.containers as {
      image?: string;
      env?: { name: string }[];
      securityContext?: object;
    }[];
    expect({ what, count: containers.length }).toEqual({ what, count: 1 });
    expect({ what, image: typeof containers[0].image }).toEqual({ what, image: "string" });
    expect({ what, tz: containers[0].env?.some((e) => e.name === "TZ") }).toEqual({ what, tz: true });
    expect(containers[0].securityContext).toMatchObject({ allowPrivilegeEscalation: false });
  }
  const api = run.k8s("Deployment", "pulp-api").inputs.spec.template.spec.containers[0];
  expect(api.command).toEqual(["pulp-api"]);
  expect(api.volumeMounts.length).toBeGreaterThan(3);
  expect(api.readinessProbe.httpGet).toBeDefined();
  expect(api.env.map((e: { name: string }) => e.name)).toContain("PULP_SECRET_KEY");
});

test("a sidecar added through the escape hatch gets the restricted security context too", async () => {
  const run = await render({
    ...MINIMAL,
    worker: {
      podSpecOverrides: { containers: [{ name: "sidecar", image: "docker.io/library/busybox:1.37" }] },
    },
  });
  const containers = run.k8s("Deployment", "pulp-worker").inputs.spec.template.spec.containers;
  expect(containers.map((c: { name: string }) => c.name)).toEqual(["worker", "sidecar"]);
  expect(containers[1].securityContext).toMatchObject({
    runAsNonRoot: true,
    capabilities: { drop: ["ALL"] },
  });
});
