// Unit (plain parseConfig calls; rendering under Pulumi mocks): pulp-web's Service, the one entry to the API
// and the content, reached in the cluster (ClusterIP), on every node (NodePort) or through a cloud's load
// balancer (LoadBalancer). What would never reach a pod, or silently admit every client, is refused.
import { parseConfig } from "../../../../components/config/parse";
import { ConfigError, ConfigProblem } from "../../../../components/config/problems";
import { MINIMAL } from "../../helpers/configs";
import { render } from "../../helpers/render";

const SERVICE = "kubernetes:core/v1:Service";
const INGRESS = "kubernetes:networking.k8s.io/v1:Ingress";

function problemsOf(changes: Record<string, unknown>): ConfigProblem[] {
  try {
    parseConfig({ ...MINIMAL, ...changes });
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems;
  }
}

test("unset, it stays out of the config, and the web Service is ClusterIP on 8080 as before", async () => {
  expect(parseConfig({ ...MINIMAL, web: { enabled: true } }).web.service).toBeUndefined();
  const run = await render({ ...MINIMAL, web: { enabled: true } });
  const web = run.k8s("Service", "pulp-web");
  expect(web.inputs.spec.type).toBe("ClusterIP");
  expect(web.inputs.spec.ports).toEqual([{ name: "http", port: 8080, targetPort: 8080, protocol: "TCP" }]);
  expect(web.inputs.metadata.annotations).toBeUndefined();
});

test("NodePort: the given port on every node, the user's annotations on the Service", async () => {
  const web = {
    enabled: true,
    service: { type: "NodePort", nodePort: 30080, annotations: { "example.com/team": "repos" } },
  };
  const run = await render({ ...MINIMAL, web });
  const service = run.k8s("Service", "pulp-web");
  expect(service.inputs.spec.type).toBe("NodePort");
  expect(service.inputs.spec.ports).toEqual([
    { name: "http", port: 8080, targetPort: 8080, protocol: "TCP", nodePort: 30080 },
  ]);
  expect(service.inputs.metadata.annotations).toEqual({ "example.com/team": "repos" });
  // Only pulp-web's Service changes: api and content stay in the cluster.
  for (const name of ["pulp-api", "pulp-content"]) {
    expect(run.k8s("Service", name).inputs.spec.type).toBe("ClusterIP");
  }
});

test("LoadBalancer on port 80 for the given networks; an Ingress in front follows the port", async () => {
  const web = {
    enabled: true,
    service: {
      type: "LoadBalancer",
      port: 80,
      annotations: { "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal" },
      loadBalancerSourceRanges: ["10.0.0.0/8", "fd00::/8"],
    },
  };
  const ingress = { enabled: true, host: "pulp.example.com" };
  const run = await render({ ...MINIMAL, web, ingress });
  const service = run.k8s("Service", "pulp-web");
  expect(service.inputs.spec).toMatchObject({
    type: "LoadBalancer",
    ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
    loadBalancerSourceRanges: ["10.0.0.0/8", "fd00::/8"],
  });
  expect(service.inputs.metadata.annotations).toEqual({
    "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
  });
  const [ing] = run.ofType(INGRESS);
  expect(ing.inputs.spec.rules[0].http.paths[0].backend.service).toEqual({
    name: "pulp-web",
    port: { number: 80 },
  });
});

test("idle: the user's annotations and the skip-await the idle Service needs, together", async () => {
  const web = { enabled: true, service: { annotations: { "example.com/team": "repos" } } };
  const run = await render({ ...MINIMAL, idle: true, web });
  expect(run.k8s("Service", "pulp-web").inputs.metadata.annotations).toEqual({
    "example.com/team": "repos",
    "pulumi.com/skipAwait": "true",
  });
  expect(run.ofType(SERVICE).length).toBeGreaterThan(1);
});

test("a Service for pulp-web while pulp-web is off is refused: it would reach no pod", () => {
  const [problem] = problemsOf({ web: { service: { type: "NodePort" } } });
  expect(problem.key).toBe("pulp:web.service");
  expect(problem.message).toMatch(/pulp-web is off/);
  expect(problem.fix).toBe("pulumi config set --path 'pulp:web.enabled' true");
  expect(problem.alternatives).toEqual(["pulumi config rm --path 'pulp:web.service'"]);
});

test("a node port on a ClusterIP Service, and source ranges without a load balancer, are refused", () => {
  const nodePort = problemsOf({ web: { enabled: true, service: { nodePort: 30080 } } });
  expect(nodePort.map((p) => [p.key, p.fix])).toEqual([
    ["pulp:web.service.nodePort", "pulumi config set --path 'pulp:web.service.type' NodePort"],
  ]);
  const ranges = problemsOf({
    web: { enabled: true, service: { type: "NodePort", loadBalancerSourceRanges: ["10.0.0.0/8"] } },
  });
  expect(ranges.map((p) => p.key)).toEqual(["pulp:web.service.loadBalancerSourceRanges"]);
  expect(ranges[0].message).toMatch(/would admit every client/);
});

test("a type, a port or a network that is not one is refused, naming the key", () => {
  const keys = (changes: Record<string, unknown>) =>
    problemsOf({ web: { enabled: true, service: changes } }).map((p) => [p.key, p.message]);
  expect(keys({ type: "External" })[0][0]).toBe("pulp:web.service.type");
  expect(keys({ type: "NodePort", nodePort: 70000 })[0][0]).toBe("pulp:web.service.nodePort");
  const [[key, message]] = keys({ type: "LoadBalancer", loadBalancerSourceRanges: ["10.0.0.0/33"] });
  expect(key).toBe("pulp:web.service.loadBalancerSourceRanges[0]");
  expect(message).toMatch(/must be a CIDR such as "203.0.113.0\/24"/);
});
