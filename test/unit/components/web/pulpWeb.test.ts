// Unit under Pulumi mocks: the pulp-web Deployment as the program renders it from `pulp:web` config.
import { configProblems, MINIMAL, problemsOf } from "../../helpers/configs";
import { render } from "../../helpers/render";

const webContainer = async (web: Record<string, unknown>) =>
  (await render({ ...MINIMAL, web: { enabled: true, ...web } })).k8s("Deployment", "pulp-web").inputs.spec
    .template.spec.containers[0];

test("web.probes.startup takes effect: a startup probe on /healthz with the tuning given", async () => {
  const web = await webContainer({ probes: { startup: { failureThreshold: 90, periodSeconds: 5 } } });
  expect(web.startupProbe).toEqual({
    httpGet: { path: "/healthz", port: 8080 },
    periodSeconds: 5,
    timeoutSeconds: 5,
    failureThreshold: 90,
  });
  // The other probes keep theirs.
  expect(web.readinessProbe).toMatchObject({ httpGet: { path: "/healthz" }, periodSeconds: 10 });
  expect(web.livenessProbe).toMatchObject({ httpGet: { path: "/healthz" }, failureThreshold: 5 });
});

test("without startup tuning pulp-web has no startup probe (nginx answers at once; pods unchanged)", async () => {
  const web = await webContainer({ probes: { readiness: { periodSeconds: 3 } } });
  expect(web.startupProbe).toBeUndefined();
  expect(web.readinessProbe).toMatchObject({ periodSeconds: 3 });
});

test("the content cache: its own emptyDir sized to hold it, /tmp sized without it, the config's private headers in nginx.conf", async () => {
  const run = await render({
    ...MINIMAL,
    web: { enabled: true, clientMaxBodySize: "1g", contentCache: { privateHeaders: ["X-Pulp-Entitlement"] } },
  });
  const spec = run.k8s("Deployment", "pulp-web").inputs.spec.template.spec;
  expect(spec.containers[0].volumeMounts).toContainEqual({
    name: "content-cache",
    mountPath: "/var/cache/pulp-content",
  });
  // 1Gi kept and four answers of 32Mi being written.
  expect(spec.volumes).toContainEqual({ name: "content-cache", emptyDir: { sizeLimit: "1152Mi" } });
  // The limit (1g body + 1Gi + 1152Mi) less the cache, and half the rest for logs (at most 512Mi).
  expect(spec.volumes).toContainEqual({ name: "tmp", emptyDir: { sizeLimit: "1536Mi" } });
  const conf = run.ofType("kubernetes:core/v1:ConfigMap").find((c) => c.name.endsWith("-web"))!.inputs.data[
    "nginx.conf"
  ];
  expect(conf).toContain("$http_x_pulp_entitlement");
  expect(conf).toContain("max_size=1073741824");
});

test("without the content cache pulp-web has no cache volume and no proxy_cache", async () => {
  const run = await render({ ...MINIMAL, web: { enabled: true, contentCache: { enabled: false } } });
  const spec = run.k8s("Deployment", "pulp-web").inputs.spec.template.spec;
  expect(spec.volumes.map((v: { name: string }) => v.name)).not.toContain("content-cache");
  const conf = run.ofType("kubernetes:core/v1:ConfigMap").find((c) => c.name.endsWith("-web"))!.inputs.data[
    "nginx.conf"
  ];
  expect(conf).not.toContain("proxy_cache");
});

test("with the content cache pulp-web rolls after content is back (its pods hold the copies a stop serves)", async () => {
  const depends = async (enabled: boolean) => {
    const run = await render({ ...MINIMAL, web: { enabled: true, contentCache: { enabled } } });
    const contentRolledOut = run.resources.find((r) => r.custom && r.name.endsWith("content-rolled-out"))!;
    return run.dependenciesOf(run.k8s("Deployment", "pulp-web")).has(contentRolledOut.urn);
  };
  expect(await depends(true)).toBe(true);
  expect(await depends(false)).toBe(false);
});

test("a maxEntrySize above the cache's size is refused, naming both keys, with fixes that work as printed", () => {
  const [problem, ...rest] = configProblems({
    web: { enabled: true, contentCache: { size: "64Mi", maxEntrySize: "128Mi" } },
  });
  expect(rest).toEqual([]);
  expect(problem.key).toBe("pulp:web.contentCache.maxEntrySize");
  expect(problem.message).toMatch(/larger than the whole cache \(web\.contentCache\.size is 64Mi\)/);
  expect(problem.fix).toBe("pulumi config set --path 'pulp:web.contentCache.maxEntrySize' 64Mi");
  expect(
    problemsOf({ web: { enabled: true, contentCache: { size: "128Mi", maxEntrySize: "128Mi" } } }),
  ).toEqual([]);
});

test("web.podAnnotations go onto the pulp-web pod template beside the config hash; unset, none are added", async () => {
  const template = async (web: Record<string, unknown>) =>
    (await render({ ...MINIMAL, web: { enabled: true, ...web } })).k8s("Deployment", "pulp-web").inputs.spec
      .template.metadata.annotations;
  const annotated = await template({ podAnnotations: { "prometheus.io/scrape": "true" } });
  expect(annotated).toMatchObject({ "prometheus.io/scrape": "true" });
  expect(Object.keys(await template({}))).toEqual(["pulp.pulpproject.org/config-hash"]);
  expect(problemsOf({ web: { podAnnotations: { "bad key!": "x" } } })).toEqual([
    expect.stringMatching(/^pulp:web\.podAnnotations/),
  ]);
});
