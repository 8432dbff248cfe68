// Every pod the install makes passes Pod Security "restricted". The API server's own admission is
// checked end to end (test/e2e); this pins the specs down without a cluster.
import type * as k8s from "@pulumi/kubernetes";
import { restricted, restrictedViolations } from "../../../../components/workload/podSecurity";
import { MINIMAL } from "../../helpers/configs";
import { podSpecs, render } from "../../helpers/render";

/** web, Redis and backups on: every kind of pod the program makes. */
const EVERYTHING = {
  ...MINIMAL,
  web: { enabled: true },
  redis: { enabled: true },
  backup: { enabled: true, image: "ghcr.io/cloudnative-pg/postgresql:16.4" },
};

type Container = k8s.types.input.core.v1.Container & {
  securityContext?: { readOnlyRootFilesystem?: boolean };
};

test.each([
  ["minimal", MINIMAL],
  ["everything enabled", { ...EVERYTHING, tokenAuth: true }],
])("every pod spec passes the restricted profile (%s)", async (_label, raw) => {
  const specs = podSpecs(await render(raw));
  expect(specs.length).toBeGreaterThanOrEqual(4);
  for (const [name, spec] of specs) {
    expect({ name, violations: restrictedViolations(spec) }).toEqual({ name, violations: [] });
  }
});

test("Pulp pods and the backup pod run as uid/gid 700 with fsGroup 700", async () => {
  for (const [name, spec] of podSpecs(await render({ ...MINIMAL, backup: EVERYTHING.backup }))) {
    expect({ name, ctx: spec.securityContext }).toMatchObject({
      name,
      ctx: { runAsUser: 700, runAsGroup: 700, fsGroup: 700, runAsNonRoot: true },
    });
  }
});

test("every container's root filesystem is read-only, unless an override turns it off for one", async () => {
  const everything = { ...EVERYTHING, trustedCa: { configMap: "ca" } };
  for (const [name, spec] of podSpecs(await render(everything))) {
    const { containers, initContainers = [] } = spec as {
      containers: Container[];
      initContainers?: Container[];
    };
    for (const c of [...containers, ...initContainers]) {
      expect({ name, container: c.name, readOnly: c.securityContext?.readOnlyRootFilesystem }).toEqual({
        name,
        container: c.name,
        readOnly: true,
      });
    }
  }
  const sidecar = { name: "sidecar", image: "busybox", securityContext: { readOnlyRootFilesystem: false } };
  const run = await render({ ...MINIMAL, api: { podSpecOverrides: { containers: [sidecar] } } });
  const [, api] = podSpecs(run).find(([name]) => name === "Deployment pulp-api")!;
  const byName = Object.fromEntries((api.containers as Container[]).map((c) => [c.name, c.securityContext]));
  expect(byName).toMatchObject({
    api: { readOnlyRootFilesystem: true },
    sidecar: { readOnlyRootFilesystem: false },
  });
});

test("the checker catches what the API server would reject", () => {
  const bad = {
    hostNetwork: true,
    containers: [{ name: "c", securityContext: { privileged: true, capabilities: { add: ["SYS_ADMIN"] } } }],
    volumes: [{ name: "h", hostPath: { path: "/" } }],
  };
  expect(restrictedViolations(bad)).toEqual(
    expect.arrayContaining([
      "host namespaces",
      "volume h of type hostPath",
      "container c: privileged",
      "container c: allowPrivilegeEscalation != false",
      "container c: capabilities.drop lacks ALL",
      "container c: adds capability SYS_ADMIN",
      "container c: runAsNonRoot != true",
      "container c: seccompProfile not set",
    ]),
  );
  expect(
    restrictedViolations(restricted({ containers: [{ name: "c" }] }) as unknown as Record<string, unknown>),
  ).toEqual([]);
});

test("podSpecOverrides reach the pod spec without dropping the security context", async () => {
  const run = await render({
    ...MINIMAL,
    api: { podSpecOverrides: { priorityClassName: "pulp-high", nodeSelector: { pool: "infra" } } },
  });
  const [, api] = podSpecs(run).find(([name]) => name === "Deployment pulp-api")!;
  expect(api).toMatchObject({ priorityClassName: "pulp-high", nodeSelector: { pool: "infra" } });
  expect(restrictedViolations(api)).toEqual([]);
});

test("no pod gets service-link env: dynaconf would read PULP_REDIS_PORT=tcp://... as a setting", async () => {
  const everything = { ...EVERYTHING, cacheEnabled: true };
  for (const [name, spec] of podSpecs(await render(everything))) {
    expect({ name, links: spec.enableServiceLinks }).toEqual({ name, links: false });
  }
});
