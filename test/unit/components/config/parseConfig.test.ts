// Every bad input named in the program issue gives a message that names the key, the value and the fix,
// and nothing is created: parseConfig runs before any resource.
import { ConfigError, ConfigProblem, SECRET_GIVEN } from "../../../../components/config/problems";
import { parseConfig } from "../../../../components/config/parse";
import { SecretName } from "../../../../components/config/rules";
import { MINIMAL } from "../../helpers/configs";

function problemsOf(raw: Record<string, unknown>, secrets: SecretName[] = []): ConfigProblem[] {
  try {
    parseConfig(raw, new Set(secrets));
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error("expected a ConfigError, but the config was accepted");
}

const cases: [string, Record<string, unknown>, string, RegExp][] = [
  ["negative replicas", { api: { replicas: -1 } }, "pulp:api.replicas", /whole number from 0/],
  ["fractional replicas", { worker: { replicas: 1.5 } }, "pulp:worker.replicas", /whole number/],
  [
    "typo in a key",
    { api: { replica: 3 } },
    "pulp:api.replica",
    /unknown key "replica"; did you mean "replicas"/,
  ],
  [
    "unknown top-level key",
    { contentOrign: "https://x" },
    "pulp:contentOrign",
    /did you mean "contentOrigin"/,
  ],
  [
    "RWO storage",
    { storage: { pvc: { accessMode: "ReadWriteOnce" } } },
    "pulp:storage.pvc.accessMode",
    /Multi-Attach/,
  ],
  ["image tag latest", { image: "quay.io/pulp/pulp-minimal:latest" }, "pulp:image", /floating tag "latest"/],
  [
    "image without tag",
    { image: "quay.io/pulp/pulp-minimal" },
    "pulp:image",
    /pinned to a version tag or a digest/,
  ],
  [
    "floating tag stable",
    { image: "quay.io/pulp/pulp-minimal:stable" },
    "pulp:image",
    /floating tag "stable"/,
  ],
  ["invalid namespace", { namespace: "Pulp_NS" }, "pulp:namespace", /DNS-1123 label/],
  ["invalid instance name", { instanceName: "-pulp" }, "pulp:instanceName", /DNS-1123 label/],
  ["quantity 1GB", { storage: { pvc: { size: "1GB" } } }, "pulp:storage.pvc.size", /Kubernetes quantity/],
  [
    "quantity -1Gi",
    { api: { resources: { requests: { memory: "-1Gi" } } } },
    "pulp:api.resources.requests.memory",
    /Kubernetes quantity/,
  ],
  [
    "request above limit",
    { content: { resources: { requests: { memory: "2Gi" }, limits: { memory: "1Gi" } } } },
    "pulp:content.resources.requests.memory",
    /above the limit 1Gi/,
  ],
  [
    "origin with a path",
    { contentOrigin: "https://pulp.example.com/pulp" },
    "pulp:contentOrigin",
    /scheme:\/\/host\[:port\]/,
  ],
  [
    "origin with trailing slash",
    { contentOrigin: "https://pulp.example.com/" },
    "pulp:contentOrigin",
    /no path or trailing slash/,
  ],
  ["origin without scheme", { contentOrigin: "pulp.example.com" }, "pulp:contentOrigin", /scheme:\/\/host/],
  ["apiRoot without slashes", { apiRoot: "pulp" }, "pulp:apiRoot", /starts and ends with "\/"/],
  [
    "contentPathPrefix without end slash",
    { contentPathPrefix: "/pulp/content" },
    "pulp:contentPathPrefix",
    /starts and ends/,
  ],
  [
    "checksums without sha256",
    { allowedContentChecksums: ["sha512"] },
    "pulp:allowedContentChecksums",
    /must contain "sha256"/,
  ],
  ["cache without redis", { cacheEnabled: true }, "pulp:cacheEnabled", /needs Redis/],
  ["redis workers without redis", { workerType: "redis" }, "pulp:workerType", /needs Redis/],
  [
    "both databases",
    { database: { cloudnativepg: {}, external: { host: "db.example.com" } } },
    "pulp:database",
    /both database.external and database.cloudnativepg/,
  ],
  ["no database", { database: {} }, "pulp:database", /names no database/],
  [
    "PDB that blocks every eviction",
    { api: { replicas: 2, podDisruptionBudget: { minAvailable: 2 } } },
    "pulp:api.podDisruptionBudget.minAvailable",
    /allows no eviction/,
  ],
  [
    "PDB maxUnavailable 0",
    { worker: { podDisruptionBudget: { maxUnavailable: 0 } } },
    "pulp:worker.podDisruptionBudget.maxUnavailable",
    /maxUnavailable 0 would block/,
  ],
  [
    "probe period out of range",
    { api: { probes: { readiness: { periodSeconds: 0 } } } },
    "pulp:api.probes.readiness.periodSeconds",
    /from 1 to 300/,
  ],
  [
    "probe threshold out of range",
    { content: { probes: { liveness: { failureThreshold: 5000 } } } },
    "pulp:content.probes.liveness.failureThreshold",
    /from 1 to 1000/,
  ],
  [
    "digest image without version",
    { image: `quay.io/pulp/pulp-minimal@sha256:${"a".repeat(64)}` },
    "pulp:pulpcoreVersion",
    /say which pulpcore version/,
  ],
  [
    "version that contradicts the tag",
    { pulpcoreVersion: "3.84.0" },
    "pulp:pulpcoreVersion",
    /image tag says 3.123.1/,
  ],
  ["ingress without host", { ingress: { enabled: true } }, "pulp:ingress.host", /needs the host/],
  [
    "router access without a Route's own certificate",
    { ingress: { enabled: true, host: "pulp.example.com", routerAccess: false } },
    "pulp:ingress.routerAccess",
    /needs ingress.kind Route and ingress.tlsSecretName/,
  ],
  [
    "managed setting in extraSettings",
    { extraSettings: { SECRET_KEY: "x" } },
    "pulp:extraSettings.SECRET_KEY",
    /set by the program/,
  ],
  ["lower-case setting name", { extraSettings: { debug: true } }, "pulp:extraSettings.debug", /UPPER_CASE/],
  [
    "external database without password",
    { database: { external: { host: "db.example.com" } } },
    "pulp:database.external",
    /pulp:databasePassword/,
  ],
  [
    "s3 without secret",
    { storage: { s3: { bucket: "pulp", accessKeyId: "AK" } } },
    "pulp:storage.s3.accessKeyId",
    /s3SecretAccessKey/,
  ],
  ["maintenance and idle", { maintenance: true, idle: true }, "pulp:idle", /contradict/],
  [
    "data volume from a registry",
    { dataVolumes: [{ name: "seed", url: "docker://quay.io/x", size: "1Gi" }] },
    "pulp:dataVolumes[0].url",
    /http\(s\) URL/,
  ],
  [
    "duplicate data volume names",
    {
      dataVolumes: [
        { name: "seed", url: "http://h/a.tar", size: "1Gi" },
        { name: "seed", url: "http://h/b.tar", size: "1Gi" },
      ],
    },
    "pulp:dataVolumes[1].name",
    /used by an earlier data volume/,
  ],
  [
    "quota without room for the import's scratch space",
    {
      namespaceQuota: { requestsStorage: "69Gi" },
      storage: { pvc: { size: "50Gi" } },
      database: { cloudnativepg: { instances: 1, storageSize: "10Gi" } },
      dataVolumes: [{ name: "seed", url: "http://h/a.tar", size: "5Gi" }],
    },
    "pulp:namespaceQuota.requestsStorage",
    /69Gi is less than the storage this install requests: 70.0Gi \(artifacts 50.0Gi \+ database 10.0Gi \+ import seed 2 x 5Gi\)/,
  ],
];

describe("parseConfig rejects", () => {
  test.each(cases)("%s", (_label, override, key, message) => {
    const problems = problemsOf({ ...MINIMAL, ...override });
    const problem = problems.find((p) => p.key === key);
    expect(problem).toBeDefined();
    expect(problem!.message).toMatch(message);
    expect(problem!.fix).toMatch(/pulumi config (set|rm)/);
  });
});

test("a database password beside CloudNativePG is refused: it would never reach Pulp", () => {
  const [problem] = problemsOf(MINIMAL, ["databasePassword"]);
  expect(problem).toMatchObject({
    key: "pulp:databasePassword",
    given: SECRET_GIVEN, // set, not shown (it said "(not set)")
    fix: "pulumi config rm pulp:databasePassword",
  });
  expect(problem.message).toMatch(/CloudNativePG makes the database password itself/);
});

test("a missing contentOrigin is named as required", () => {
  const [problem] = problemsOf({ database: { cloudnativepg: {} } });
  expect(problem).toMatchObject({ key: "pulp:contentOrigin", given: undefined });
  expect(problem.message).toMatch(/is required/);
});

test("every problem is reported at once, each with the value given", () => {
  const problems = problemsOf({ ...MINIMAL, api: { replicas: -2 }, image: "pulp:latest", apiRoot: "x" });
  expect(problems.map((p) => p.key).sort()).toEqual(["pulp:api.replicas", "pulp:apiRoot", "pulp:image"]);
  expect(problems.find((p) => p.key === "pulp:api.replicas")!.given).toBe(-2);
});

test("the error reads as a config mistake, without a stack trace", () => {
  let error: unknown;
  try {
    parseConfig({ ...MINIMAL, api: { replicas: -1 } });
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ConfigError);
  // RunError is what the Pulumi Node.js runtime prints as a message alone.
  expect((error as Error & { __pulumiRunError?: boolean }).__pulumiRunError).toBe(true);
  expect((error as Error).message).toContain(
    "Invalid Pulp stack config (1 problem); nothing was created or changed",
  );
  expect((error as Error).message).toContain("given: -1");
  // The default applies once the bad value is gone: a command that works as printed.
  expect((error as Error).message).toContain("fix:   pulumi config rm --path 'pulp:api.replicas'");
});

test("a minimal config gets every default", () => {
  const config = parseConfig(MINIMAL);
  expect(config).toMatchObject({
    namespace: "pulp",
    image: "quay.io/pulp/pulp-minimal:3.123.1",
    pulpcoreVersion: "3.123.1",
    api: {
      replicas: 2,
      podDisruptionBudget: { maxUnavailable: 1 },
      resources: { requests: { cpu: "250m" } },
    },
    worker: { terminationGracePeriodSeconds: 3600 },
    storage: { pvc: { size: "50Gi", accessMode: "ReadWriteMany" } },
    database: { cloudnativepg: { instances: 3, storageSize: "10Gi" } },
    web: { enabled: false, clientMaxBodySize: "10g" },
  });
});

test("replicas 0 is allowed (a scaled-down component), and object storage needs no RWX", () => {
  const config = parseConfig(
    { ...MINIMAL, worker: { replicas: 0 }, storage: { s3: { bucket: "pulp", accessKeyId: "AK" } } },
    new Set(["s3SecretAccessKey"]),
  );
  expect(config.worker.replicas).toBe(0);
  expect(config.storage.pvc).toBeUndefined();
});

test("a digest-pinned image is accepted with an explicit version", () => {
  const image = `quay.io/pulp/pulp-minimal@sha256:${"b".repeat(64)}`;
  expect(parseConfig({ ...MINIMAL, image, pulpcoreVersion: "3.85.0" }).pulpcoreVersion).toBe("3.85.0");
});
