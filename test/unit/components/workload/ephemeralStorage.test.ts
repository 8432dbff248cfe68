// Unit (Pulumi mocks and plain calls): every container the program creates states an ephemeral-storage
// request and limit, and every emptyDir a sizeLimit its pod's limit can hold (components/config/ephemeral.ts).
// That the kubelet enforces them on a real node is for the real tests (test/e2e/real): every pod changes.
import type * as k8s from "@pulumi/kubernetes";
import {
  ephemeralDefaults,
  nginxSize,
  scratchSize,
  toQuantity,
} from "../../../../components/config/ephemeral";
import { parseQuantity } from "../../../../components/config/formats";
import { parseConfig } from "../../../../components/config/parse";
import { ConfigError, ConfigProblem } from "../../../../components/config/problems";
import { SecretName } from "../../../../components/config/rules";
import { MINIMAL, rawOf, stackConfig } from "../../helpers/configs";
import { podSpecs, render } from "../../helpers/render";

type Container = k8s.types.input.core.v1.Container & {
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
};
type Volume = { name: string; emptyDir?: { sizeLimit?: string } };
type Spec = { containers: Container[]; initContainers?: Container[]; volumes?: Volume[] };

const ID = "20261124T031500Z";
const KEYS = {
  adminPassword: "old-admin-Pw1",
  secretKey: "restore-test-secret-key-0123456789abcdefghijklmnop",
  dbFieldsEncryptionKey: "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
};
const S3 = { bucket: "pulp-artifacts", accessKeyId: "AKIA0" };
/** Object storage, backups to a bucket, a restore from one, web, Redis and trusted CAs: every kind of pod. */
const S3_EVERYTHING = {
  ...MINIMAL,
  database: { cloudnativepg: { imageName: "localhost/postgresql:15" } },
  storage: { s3: S3 },
  web: { enabled: true },
  redis: { enabled: true },
  trustedCa: { configMap: "corp-ca" },
  backup: { enabled: true, s3: { bucket: "pulp-backups", accessKeyId: "AKIA1" } },
  restore: { backup: ID, s3: { bucket: "pulp-backups", accessKeyId: "AKIA1", size: "20Gi" } },
};
const S3_SECRETS = {
  ...KEYS,
  s3SecretAccessKey: "s3-secret",
  backupS3SecretAccessKey: "backup-secret",
  restoreS3SecretAccessKey: "restore-secret",
};

const bytes = (q: string | undefined) => (q === undefined ? NaN : parseQuantity(q)!);

/**
 * What is wrong with a pod's ephemeral storage: a container without a request or limit, a request above its
 * limit, an emptyDir without a sizeLimit, or emptyDirs the pod's limit cannot hold (the kubelet's pod limit:
 * the sum of its containers', or its largest init container's).
 */
function ephemeralProblems(spec: Spec): string[] {
  const problems: string[] = [];
  const limitOf = (c: Container) => bytes(c.resources?.limits?.["ephemeral-storage"]);
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    const request = c.resources?.requests?.["ephemeral-storage"];
    const limit = c.resources?.limits?.["ephemeral-storage"];
    if (request === undefined || limit === undefined)
      problems.push(`container ${c.name}: request ${request}, limit ${limit}`);
    else if (bytes(request) > bytes(limit))
      problems.push(`container ${c.name}: request ${request} > limit ${limit}`);
  }
  let dirs = 0;
  for (const v of spec.volumes ?? []) {
    if (!v.emptyDir) continue;
    if (v.emptyDir.sizeLimit === undefined) problems.push(`emptyDir ${v.name} has no sizeLimit`);
    dirs += bytes(v.emptyDir.sizeLimit);
  }
  const podLimit = Math.max(
    spec.containers.reduce((sum, c) => sum + limitOf(c), 0),
    ...(spec.initContainers ?? []).map(limitOf),
  );
  if (dirs >= podLimit)
    problems.push(`emptyDirs ${toQuantity(dirs)} >= the pod's limit ${toQuantity(podLimit)}`);
  return problems;
}

test.each([
  ["the dev stack", rawOf(stackConfig("dev")), {}],
  [
    "object storage, backups to and a restore from a bucket, web, Redis, trusted CAs",
    S3_EVERYTHING,
    S3_SECRETS,
  ],
])(
  "every container of every pod states ephemeral-storage; every emptyDir a sizeLimit (%s)",
  async (_l, raw, secrets) => {
    const specs = podSpecs(await render(raw, secrets));
    const names = specs.map(([name]) => name);
    expect(names.length).toBeGreaterThanOrEqual(6);
    for (const [name, spec] of specs) {
      expect({ name, problems: ephemeralProblems(spec as unknown as Spec) }).toEqual({ name, problems: [] });
    }
  },
);

test("the S3 config renders every kind of pod the program makes", async () => {
  const names = podSpecs(await render(S3_EVERYTHING, S3_SECRETS)).map(([name]) =>
    name.replace(/-[0-9a-f]{8}$/, ""),
  );
  expect(names).toEqual(
    expect.arrayContaining([
      "Deployment pulp-api",
      "Deployment pulp-content",
      "Deployment pulp-worker",
      "Deployment pulp-web",
      "Deployment pulp-redis",
      "Job pulp-migrate",
      `Job pulp-restore-fetch-${ID.toLowerCase()}`,
      `Job pulp-restore-check-${ID.toLowerCase()}`,
      `Job pulp-restore-${ID.toLowerCase()}`,
      "CronJob pulp-backup",
    ]),
  );
});

const s3Config = (changes: Record<string, unknown> = {}, s3: Record<string, unknown> = {}) => ({
  ...MINIMAL,
  storage: { s3: { ...S3, ...s3 } },
  ...changes,
});

test.each([
  [undefined, "20Gi", "21Gi"],
  ["50Gi", "50Gi", "51Gi"],
])(
  "with object storage the working directory (workingDirectorySize %s) is an emptyDir of that size, and the Pulp containers' limit is it and 1Gi",
  async (size, sizeLimit, limit) => {
    const run = await render(s3Config({}, size ? { workingDirectorySize: size } : {}), {
      s3SecretAccessKey: "x",
    });
    const specs = Object.fromEntries(
      podSpecs(run).map(([name, spec]) => [name.replace(/-[0-9a-f]{8}$/, ""), spec as unknown as Spec]),
    );
    for (const name of [
      "Deployment pulp-api",
      "Deployment pulp-content",
      "Deployment pulp-worker",
      "Job pulp-migrate",
    ]) {
      const spec = specs[name];
      const volumes = Object.fromEntries((spec.volumes ?? []).map((v) => [v.name, v.emptyDir?.sizeLimit]));
      expect({ name, data: volumes["pulp-data"], tmp: volumes.tmp }).toEqual({
        name,
        data: sizeLimit,
        tmp: "512Mi",
      });
      expect({ name, limit: spec.containers[0].resources.limits?.["ephemeral-storage"] }).toEqual({
        name,
        limit,
      });
    }
    expect(specs["Deployment pulp-worker"].containers[0].resources.requests?.["ephemeral-storage"]).toBe(
      "1Gi",
    );
  },
);

test("with a volume for artifacts, Pulp's containers keep 64Mi and 1Gi, /tmp 512Mi, and the data volume is the PVC", async () => {
  const [, spec] = podSpecs(await render(MINIMAL)).find(([name]) => name === "Deployment pulp-worker")!;
  const s = spec as unknown as Spec;
  expect(s.containers[0].resources).toMatchObject({
    requests: { "ephemeral-storage": "64Mi" },
    limits: { "ephemeral-storage": "1Gi" },
  });
  expect(s.volumes?.find((v) => v.name === "tmp")?.emptyDir).toEqual({ sizeLimit: "512Mi" });
  expect(s.volumes?.find((v) => v.name === "pulp-data")).not.toHaveProperty("emptyDir");
});

/** The problems parseConfig reports for `raw`, with the given secret keys supplied. */
function problems(
  raw: Record<string, unknown>,
  secrets: SecretName[] = ["s3SecretAccessKey"],
): ConfigProblem[] {
  try {
    parseConfig(raw, new Set(secrets));
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems;
  }
}

test("a Pulp container's limit below the working directory is refused, with a fix that works as printed", () => {
  const limit = { resources: { limits: { "ephemeral-storage": "10Gi" } } };
  expect(problems(s3Config({ worker: limit }))).toEqual([
    {
      key: "pulp:worker.resources.limits.ephemeral-storage",
      given: "10Gi",
      message: expect.stringContaining(
        "10Gi is below storage.s3.workingDirectorySize (20Gi) and 256Mi for /tmp and logs",
      ),
      fix: "pulumi config set --path 'pulp:worker.resources.limits.ephemeral-storage' 21Gi",
      alternatives: [
        "pulumi config rm --path 'pulp:worker.resources.limits.ephemeral-storage'",
        "pulumi config set --path 'pulp:storage.s3.workingDirectorySize' 9Gi",
      ],
    },
  ]);
  // The fix, and each alternative, leave a valid config.
  const fixed = { resources: { limits: { "ephemeral-storage": "21Gi" } } };
  expect(problems(s3Config({ worker: fixed }))).toEqual([]);
  expect(problems(s3Config({ worker: { resources: {} } }))).toEqual([]);
  expect(problems(s3Config({ worker: limit }, { workingDirectorySize: "9Gi" }))).toEqual([]);
  // The migration's limit too; with a volume, only a limit too small for /tmp and logs.
  expect(problems(s3Config({ migration: limit })).map((p) => p.key)).toEqual([
    "pulp:migration.resources.limits.ephemeral-storage",
  ]);
  expect(problems({ ...MINIMAL, worker: limit })).toEqual([]);
  expect(
    problems({ ...MINIMAL, api: { resources: { limits: { "ephemeral-storage": "100Mi" } } } }).map(
      (p) => p.fix,
    ),
  ).toEqual(["pulumi config set --path 'pulp:api.resources.limits.ephemeral-storage' 1Gi"]);
});

test("a user's limit is kept, and /tmp gets what it leaves beside the working directory", async () => {
  const raw = s3Config({ worker: { resources: { limits: { "ephemeral-storage": "30Gi" } } } });
  const config = parseConfig(raw, new Set(["s3SecretAccessKey"]));
  expect(config.worker.resources).toEqual({
    requests: { "ephemeral-storage": "1Gi" },
    limits: { "ephemeral-storage": "30Gi" },
  });
  const [, spec] = podSpecs(await render(raw, { s3SecretAccessKey: "x" })).find(
    ([name]) => name === "Deployment pulp-worker",
  )!;
  expect((spec as unknown as Spec).volumes?.find((v) => v.name === "tmp")?.emptyDir).toEqual({
    sizeLimit: "9728Mi",
  });
});

test("an ephemeral-storage request above the limit is refused, whether the limit is set or the program's", () => {
  const both = {
    resources: { requests: { "ephemeral-storage": "2Gi" }, limits: { "ephemeral-storage": "1Gi" } },
  };
  expect(problems({ ...MINIMAL, api: both })).toEqual([
    {
      key: "pulp:api.resources.requests.ephemeral-storage",
      given: "2Gi",
      message:
        "request 2Gi is above the limit 1Gi; Kubernetes rejects such a pod. Lower the request or raise limits.ephemeral-storage",
      fix: "pulumi config rm --path 'pulp:api.resources.requests.ephemeral-storage'",
    },
  ]);
  const requestOnly = { resources: { requests: { "ephemeral-storage": "2Gi" } } };
  expect(problems({ ...MINIMAL, redis: requestOnly })).toEqual([
    {
      key: "pulp:redis.resources.requests.ephemeral-storage",
      given: "2Gi",
      message:
        "request 2Gi is above the limit the program sets (1Gi); Kubernetes rejects such a pod. Set the limit too",
      fix: "pulumi config set --path 'pulp:redis.resources.limits.ephemeral-storage' 2Gi",
      alternatives: ["pulumi config rm --path 'pulp:redis.resources.requests.ephemeral-storage'"],
    },
  ]);
  expect(
    problems({
      ...MINIMAL,
      redis: { resources: { ...requestOnly.resources, limits: { "ephemeral-storage": "2Gi" } } },
    }),
  ).toEqual([]);
});

test("web's limit holds one request body of clientMaxBodySize (nginx buffers it in /tmp); a smaller one is refused", () => {
  const noCache = { contentCache: { enabled: false } };
  const web = (w: Record<string, unknown>) =>
    parseConfig({ ...MINIMAL, web: { enabled: true, ...noCache, ...w } }).web.resources;
  expect(web({}).limits["ephemeral-storage"]).toBe("11Gi");
  expect(web({ clientMaxBodySize: "512m" }).limits["ephemeral-storage"]).toBe("1536Mi");
  // No limit on bodies: room for one of 10Gi.
  expect(web({ clientMaxBodySize: "0" }).limits["ephemeral-storage"]).toBe("11Gi");
  const small = { enabled: true, ...noCache, resources: { limits: { "ephemeral-storage": "2Gi" } } };
  expect(problems({ ...MINIMAL, web: small }).map((p) => [p.key, p.fix])).toEqual([
    [
      "pulp:web.resources.limits.ephemeral-storage",
      "pulumi config set --path 'pulp:web.resources.limits.ephemeral-storage' 11Gi",
    ],
  ]);
  expect(problems({ ...MINIMAL, web: { ...small, clientMaxBodySize: "1g" } })).toEqual([]);
});

test("web's limit also holds the content cache (its size and four answers being written); a smaller one is refused", () => {
  const web = (w: Record<string, unknown>) =>
    parseConfig({ ...MINIMAL, web: { enabled: true, clientMaxBodySize: "1g", ...w } }).web.resources;
  // 1g body + 1Gi + (1Gi cache + 4 x 32Mi answers).
  expect(web({}).limits["ephemeral-storage"]).toBe("3200Mi");
  expect(web({ contentCache: { size: "4Gi", maxEntrySize: "64Mi" } }).limits["ephemeral-storage"]).toBe(
    "6400Mi",
  );
  expect(web({ contentCache: { enabled: false } }).limits["ephemeral-storage"]).toBe("2Gi");
  const set = (limit: string, w: Record<string, unknown> = {}) =>
    problems({
      ...MINIMAL,
      web: {
        enabled: true,
        clientMaxBodySize: "1g",
        resources: { limits: { "ephemeral-storage": limit } },
        ...w,
      },
    });
  const [problem] = set("2Gi");
  expect(problem.key).toBe("pulp:web.resources.limits.ephemeral-storage");
  expect(problem.message).toMatch(
    /the content cache \(1152Mi: web\.contentCache\.size and answers being written\)/,
  );
  expect(problem.fix).toBe("pulumi config set --path 'pulp:web.resources.limits.ephemeral-storage' 3200Mi");
  expect(problem.alternatives).toContain("pulumi config set --path 'pulp:web.contentCache.enabled' false");
  expect(set("3200Mi")).toEqual([]);
  expect(set("2Gi", { contentCache: { enabled: false } })).toEqual([]);
  // Unbounded bodies: the limit is checked against the cache alone.
  expect(set("1Gi", { clientMaxBodySize: "0" }).map((p) => p.key)).toEqual([
    "pulp:web.resources.limits.ephemeral-storage",
  ]);
  expect(set("2Gi", { clientMaxBodySize: "0" })).toEqual([]);
});

test("resources set without ephemeral-storage still get it (the dev stack sets cpu and memory only)", () => {
  const config = parseConfig(rawOf(stackConfig("dev")));
  for (const c of ["api", "content", "worker", "migration", "web", "redis", "backup"] as const) {
    expect({ c, r: config[c].resources }).toMatchObject({
      c,
      r: { requests: { "ephemeral-storage": "64Mi" }, limits: { "ephemeral-storage": expect.any(String) } },
    });
  }
  expect(config.api.resources.requests).toEqual({ cpu: "50m", memory: "256Mi", "ephemeral-storage": "64Mi" });
});

test("sizes (plain calls)", () => {
  expect([toQuantity(2 ** 30), toQuantity(1536 * 2 ** 20), toQuantity(4096), toQuantity(1000)]).toEqual([
    "1Gi",
    "1536Mi",
    "4Ki",
    "1000",
  ]);
  // Half of what is left for logs, at most 512Mi; never under 1Mi.
  expect([
    scratchSize("1Gi"),
    scratchSize("256Mi"),
    scratchSize("21Gi", "20Gi"),
    scratchSize("11Gi"),
  ]).toEqual(["512Mi", "128Mi", "512Mi", "10752Mi"]);
  expect(scratchSize("1Mi")).toBe("1Mi");
  expect([nginxSize("10g"), nginxSize("512m"), nginxSize("64k"), nginxSize("0")]).toEqual([
    10 * 2 ** 30,
    512 * 2 ** 20,
    65536,
    0,
  ]);
  const defaults = ephemeralDefaults(parseConfig({ ...MINIMAL }));
  expect(defaults.worker).toEqual({ request: "64Mi", limit: "1Gi" });
});
