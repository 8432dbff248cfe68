// Unit (plain parseConfig calls; rendering under Pulumi mocks): pulp:proxy. The proxy's URLs reach the Pulp
// pods, the migration Job and the backup upload from a Secret; NO_PROXY names every in-cluster name Pulp
// uses, short ones included (galaxy-operator #275 sent those to the proxy). On real Pulp:
// test/e2e/real/objectStorage.test.ts.
import { parseConfig } from "../../../../components/config/parse";
import { ConfigError, ConfigProblem, SECRET_GIVEN } from "../../../../components/config/problems";
import { SecretName } from "../../../../components/config/rules";
import { noProxyList } from "../../../../components/proxy/proxy";
import { MINIMAL } from "../../helpers/configs";
import { pulpProcesses, render } from "../../helpers/render";

const PROXY = { httpProxy: "http://proxy.corp.example:3128", httpsProxy: "http://proxy.corp.example:3128" };
const IDENTITY = { instance: "pulp", version: "3.123.1" };

function problemsOf(changes: Record<string, unknown>, secretConfigKeys: string[] = []): ConfigProblem[] {
  try {
    parseConfig({ ...MINIMAL, ...changes }, new Set<SecretName>(), {}, new Set(secretConfigKeys));
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems;
  }
}

const envOf = (container: { env: { name: string; value?: string; valueFrom?: unknown }[] }) =>
  Object.fromEntries(container.env.map((e) => [e.name, e.value ?? e.valueFrom]));

test("NO_PROXY: loopback, Pulp's Services by their short names, the database, every longer Service name, then the user's", () => {
  expect(
    noProxyList({
      identity: IDENTITY,
      namespace: "repos",
      databaseHost: "pulp-db-rw",
      storageEndpoint: "http://minio:9000",
      extra: [".corp.example", "10.0.0.0/8"],
    }),
  ).toEqual([
    "localhost",
    "127.0.0.1",
    "::1",
    "pulp-api",
    "pulp-content",
    "pulp-web",
    "pulp-redis",
    "pulp-db-rw",
    "minio",
    ".repos",
    ".svc",
    ".cluster.local",
    "kubernetes.default",
    "169.254.169.254",
    "169.254.170.23",
    "fd00:ec2::254",
    "metadata.google.internal",
    ".corp.example",
    "10.0.0.0/8",
  ]);
  // An endpoint with a domain is outside the cluster (or under .svc): not listed by its host.
  const outside = noProxyList({
    identity: IDENTITY,
    namespace: "repos",
    databaseHost: "db.corp.example",
    storageEndpoint: "https://s3.eu-west-1.amazonaws.com",
    extra: [],
  });
  expect(outside).not.toContain("s3.eu-west-1.amazonaws.com");
  expect(outside).toContain("db.corp.example");
});

test("every Pulp container, the migration Job and the backup upload get the variables; the URLs come from a Secret", async () => {
  const run = await render({
    ...MINIMAL,
    proxy: PROXY,
    web: { enabled: true },
    storage: { s3: { bucket: "artifacts", endpointUrl: "http://minio:9000" } },
    database: { cloudnativepg: { imageName: "ghcr.io/cloudnative-pg/postgresql:16.4" } },
    backup: { enabled: true, s3: { bucket: "backups" } },
  });
  const secret = run.k8s("Secret", "pulp-proxy");
  expect(secret.inputs.stringData).toEqual({ http: PROXY.httpProxy, https: PROXY.httpsProxy });
  const containers = pulpProcesses(run).map((r) => r.inputs.spec.template.spec.containers[0]);
  const backup = run.k8s("CronJob", "pulp-backup").inputs.spec.jobTemplate.spec.template.spec;
  containers.push(backup.containers.find((c: { name: string }) => c.name === "upload"));
  expect(containers).toHaveLength(5);
  for (const container of containers) {
    const env = envOf(container);
    expect(env.HTTPS_PROXY).toEqual({ secretKeyRef: { name: "pulp-proxy", key: "https" } });
    expect(env.http_proxy).toEqual({ secretKeyRef: { name: "pulp-proxy", key: "http" } });
    expect(env.NO_PROXY).toBe(env.no_proxy);
    expect(String(env.NO_PROXY).split(",")).toEqual(expect.arrayContaining(["pulp-api", "minio", ".svc"]));
  }
  // Not nginx: it makes no call through a proxy.
  const web = run.k8s("Deployment", "pulp-web").inputs.spec.template.spec.containers[0];
  expect(web.env ?? []).toEqual([]);
});

test("unset or {}: no Secret and no variable; a proxy URL with a password must be secret config", async () => {
  const run = await render(MINIMAL);
  expect(run.ofType("kubernetes:core/v1:Secret").map((s) => s.inputs.metadata.name)).not.toContain(
    "pulp-proxy",
  );
  expect(parseConfig({ ...MINIMAL, proxy: {} }).proxy).toBeUndefined();

  const withPassword = { httpProxy: "http://pulp:hunter2@proxy.corp.example:3128" };
  const [problem] = problemsOf({ proxy: withPassword });
  expect(problem).toMatchObject({ key: "pulp:proxy.httpProxy", given: SECRET_GIVEN });
  expect(problem.fix).toBe("pulumi config set --secret --path 'pulp:proxy.httpProxy'");
  expect(JSON.stringify(problem)).not.toContain("hunter2");
  expect(problemsOf({ proxy: withPassword }, ["proxy"])).toEqual([]);
});

test("a proxy that names no URL, a URL that is not http(s), or a NO_PROXY entry with a space is refused", () => {
  expect(problemsOf({ proxy: { noProxy: [".corp.example"] } })[0].message).toMatch(
    /names no proxy: set httpProxy or httpsProxy/,
  );
  expect(problemsOf({ proxy: { httpProxy: "socks5://proxy:1080" } })[0]).toMatchObject({
    key: "pulp:proxy.httpProxy",
  });
  expect(problemsOf({ proxy: { ...PROXY, noProxy: ["a b"] } })[0].key).toBe("pulp:proxy.noProxy[0]");
});

test("a changed proxy URL rolls the Pulp pods: the variables are read when a container starts", async () => {
  const hashOf = async (httpProxy: string) =>
    (await render({ ...MINIMAL, proxy: { httpProxy } })).k8s("Deployment", "pulp-api").inputs.spec.template
      .metadata.annotations["pulp.pulpproject.org/config-hash"];
  const first = await hashOf("http://proxy-a.corp.example:3128");
  expect(await hashOf("http://proxy-b.corp.example:3128")).not.toBe(first);
  expect(await hashOf("http://proxy-a.corp.example:3128")).toBe(first);
});
