// Unit (Pulumi mocks). Routing: without pulp-web, content paths (and the registry's redirects) go to
// pulp-content and the rest to pulp-api; with it, all to pulp-web. Annotations: what ingress-nginx needs for
// container pushes and slow calls (runtime review B9), the user's winning.
import { parseConfig } from "../../../../components/config/parse";
import { ConfigError } from "../../../../components/config/problems";
import { MINIMAL } from "../../helpers/configs";
import { render } from "../../helpers/render";

const INGRESS = "kubernetes:networking.k8s.io/v1:Ingress";
const ingress = { enabled: true, host: "pulp.example.com", className: "nginx", tlsSecretName: "pulp-tls" };

test("without pulp-web the Ingress splits content from api", async () => {
  const [ing] = (await render({ ...MINIMAL, ingress })).ofType(INGRESS);
  expect(ing.inputs.spec.ingressClassName).toBe("nginx");
  expect(ing.inputs.spec.tls).toEqual([{ hosts: ["pulp.example.com"], secretName: "pulp-tls" }]);
  const paths = ing.inputs.spec.rules[0].http.paths.map((p: any) => [
    p.path,
    p.backend.service.name,
    p.backend.service.port.number,
  ]);
  expect(paths).toEqual([
    ["/pulp/content/", "pulp-content", 24816],
    ["/", "pulp-api", 24817],
    ["/pulp/container/", "pulp-content", 24816],
  ]);
});

test("with pulp-web every path goes through it", async () => {
  const [ing] = (await render({ ...MINIMAL, ingress, web: { enabled: true } })).ofType(INGRESS);
  expect(ing.inputs.spec.rules[0].http.paths.map((p: any) => [p.path, p.backend.service.name])).toEqual([
    ["/", "pulp-web"],
  ]);
});

test("on OpenShift, one Route per path", async () => {
  const run = await render({ ...MINIMAL, ingress: { ...ingress, className: undefined, kind: "Route" } });
  const routes = run.ofType("kubernetes:route.openshift.io/v1:Route");
  expect(routes.map((r) => [r.inputs.spec.path, r.inputs.spec.to.name])).toEqual([
    ["/pulp/content/", "pulp-content"],
    ["/", "pulp-api"],
    ["/pulp/container/", "pulp-content"],
  ]);
  expect(run.ofType(INGRESS)).toHaveLength(0);
});

test("no ingress unless enabled", async () => {
  expect((await render(MINIMAL)).ofType(INGRESS)).toHaveLength(0);
});

const NGINX_DEFAULTS = {
  "nginx.ingress.kubernetes.io/proxy-body-size": "0",
  "nginx.ingress.kubernetes.io/proxy-read-timeout": "600",
  "nginx.ingress.kubernetes.io/proxy-send-timeout": "600",
  "nginx.ingress.kubernetes.io/proxy-connect-timeout": "60",
};

test("for ingress-nginx (class nginx, or the default class) pushes have no body limit and long reads", async () => {
  for (const className of ["nginx", undefined]) {
    for (const web of [{ enabled: false }, { enabled: true }]) {
      const [ing] = (await render({ ...MINIMAL, ingress: { ...ingress, className }, web })).ofType(INGRESS);
      expect(ing.inputs.metadata.annotations).toEqual(NGINX_DEFAULTS);
    }
  }
});

test("the user's annotations win over the nginx defaults", async () => {
  const annotations = {
    "nginx.ingress.kubernetes.io/proxy-body-size": "512m",
    "cert-manager.io/cluster-issuer": "letsencrypt",
  };
  const [ing] = (await render({ ...MINIMAL, ingress: { ...ingress, annotations } })).ofType(INGRESS);
  expect(ing.inputs.metadata.annotations).toEqual({ ...NGINX_DEFAULTS, ...annotations });
});

test("another ingress class gets only the user's annotations; a Route, the router's timeout unless the user's", async () => {
  const annotations = { "traefik.ingress.kubernetes.io/router.tls": "true" };
  const [ing] = (
    await render({ ...MINIMAL, ingress: { ...ingress, className: "traefik", annotations } })
  ).ofType(INGRESS);
  expect(ing.inputs.metadata.annotations).toEqual(annotations);
  const routes = (
    await render({ ...MINIMAL, ingress: { ...ingress, className: undefined, kind: "Route" } })
  ).ofType("kubernetes:route.openshift.io/v1:Route");
  for (const route of routes) {
    expect(route.inputs.metadata.annotations).toEqual({ "haproxy.router.openshift.io/timeout": "600s" });
  }
  const shorter = { "haproxy.router.openshift.io/timeout": "180s" };
  const own = (
    await render({
      ...MINIMAL,
      ingress: { ...ingress, className: undefined, kind: "Route", annotations: shorter },
    })
  ).ofType("kubernetes:route.openshift.io/v1:Route");
  for (const route of own) expect(route.inputs.metadata.annotations).toEqual(shorter);
});

const ROUTE = "kubernetes:route.openshift.io/v1:Route";
const ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role";
const ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding";

test("a Route with its own certificate: the router reads that Secret, and only it, before any Route is admitted", async () => {
  const run = await render({ ...MINIMAL, ingress: { ...ingress, className: undefined, kind: "Route" } });
  const [role] = run.ofType(ROLE);
  expect(role.inputs.metadata.name).toBe("pulp-router-certificate");
  expect(role.inputs.rules).toEqual([
    { apiGroups: [""], resources: ["secrets"], resourceNames: ["pulp-tls"], verbs: ["get", "list", "watch"] },
  ]);
  const [binding] = run.ofType(ROLE_BINDING);
  expect(binding.inputs.roleRef).toEqual({
    apiGroup: "rbac.authorization.k8s.io",
    kind: "Role",
    name: role.state.metadata.name,
  });
  expect(binding.inputs.subjects).toEqual([
    { kind: "ServiceAccount", name: "router", namespace: "openshift-ingress" },
  ]);
  const routes = run.ofType(ROUTE);
  expect(routes).toHaveLength(3);
  for (const route of routes) {
    expect(route.inputs.spec.tls).toEqual({
      termination: "edge",
      insecureEdgeTerminationPolicy: "Redirect",
      externalCertificate: { name: "pulp-tls" },
    });
    const before = run.dependenciesOf(route);
    expect([before.has(role.urn), before.has(binding.urn)]).toEqual([true, true]);
  }
});

test("a Route without a certificate of its own uses the router's, and grants nothing", async () => {
  const run = await render({
    ...MINIMAL,
    ingress: { ...ingress, className: undefined, tlsSecretName: undefined, kind: "Route" },
  });
  for (const route of run.ofType(ROUTE)) {
    expect(route.inputs.spec.tls).toEqual({ termination: "edge", insecureEdgeTerminationPolicy: "Redirect" });
  }
  expect(run.ofType(ROLE)).toEqual([]);
  expect(run.ofType(ROLE_BINDING)).toEqual([]);
});

test("routerAccess false (someone else grants it, as the delivery stack does): the Routes name the Secret, no Role", async () => {
  const run = await render({
    ...MINIMAL,
    ingress: { ...ingress, className: undefined, kind: "Route", routerAccess: false },
  });
  for (const route of run.ofType(ROUTE)) {
    expect(route.inputs.spec.tls.externalCertificate).toEqual({ name: "pulp-tls" });
  }
  expect(run.ofType(ROLE)).toEqual([]);
  expect(run.ofType(ROLE_BINDING)).toEqual([]);
});

test("a class beside kind Route is refused, with the command that removes it: Routes have no class", () => {
  let message = "";
  try {
    parseConfig({ ...MINIMAL, ingress: { ...ingress, kind: "Route" } }, new Set());
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    message = e.message;
  }
  expect(message).toContain("pulp:ingress.className: names an ingress class");
  expect(message).toContain("fix:   pulumi config rm --path 'pulp:ingress.className'");
  // The same class with kind Ingress is what it is for.
  expect(() => parseConfig({ ...MINIMAL, ingress }, new Set())).not.toThrow();
});
