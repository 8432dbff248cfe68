// The workspace's grants are derived from the kinds table and nothing else: every verb on exactly the
// managed kinds, the read/operate list, no wildcard, and no cluster-scoped grant but the auth-delegator
// binding (plus `get storageclasses` only when opted in).
import { MANAGE_VERBS, PULP_KINDS, READ_OPERATE } from "../../../stacks/kinds";
import { AUTH_DELEGATOR, workspaceRules } from "../../../stacks/rbac";
import { DELIVERY, renderDelivery, STACK_TYPE } from "../helpers/delivery";

// Whole-program renders under mocks: seconds each on a loaded 2-core machine, not the default 5.
jest.setTimeout(60_000);

/** Every (group, resource, verb) a set of rules grants. */
function grants(rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules)
    for (const g of r.apiGroups)
      for (const res of r.resources) for (const v of r.verbs) out.add(`${g}/${res}:${v}`);
  return out;
}

test("the Role grants exactly the table: all verbs on managed kinds, the listed verbs on read/operate", () => {
  const expected = new Set<string>();
  for (const k of PULP_KINDS) for (const v of MANAGE_VERBS) expected.add(`${k.apiGroup}/${k.resource}:${v}`);
  for (const r of READ_OPERATE)
    for (const res of r.resources) for (const v of r.verbs) expected.add(`${r.apiGroup}/${res}:${v}`);
  expect([...grants(workspaceRules())].sort()).toEqual([...expected].sort());
});

test("no wildcard and no resourceNames-free escalation paths (roles, bindings, pods/exec, namespaces)", () => {
  const all = [...grants(workspaceRules())];
  expect(all.filter((g) => g.includes("*"))).toEqual([]);
  const forbidden =
    /^(rbac\.authorization\.k8s\.io\/|\/namespaces:|\/pods\/exec|\/serviceaccounts|\/nodes|apiextensions)/;
  expect(all.filter((g) => forbidden.test(g))).toEqual([]);
  // Pods are read, never created or deleted directly (Deployments and Jobs do that).
  expect(all.filter((g) => g.startsWith("/pods:") && !/:(get|list|watch)$/.test(g))).toEqual([]);
});

test("the rendered RBAC: Role and RoleBinding in the Pulp namespace only, one cluster binding to auth-delegator", async () => {
  const run = await renderDelivery({
    ...DELIVERY,
    pulpNamespace: "pulp-prod",
    deliveryNamespace: "pulp-prod-delivery",
  });
  const [role] = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:Role");
  expect(role.inputs.metadata.namespace).toBe("pulp-prod");
  expect(role.inputs.rules).toEqual(workspaceRules());
  const [binding] = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding");
  expect(binding.inputs.metadata.namespace).toBe("pulp-prod");
  expect(binding.inputs.roleRef).toEqual({
    apiGroup: "rbac.authorization.k8s.io",
    kind: "Role",
    name: role.state.metadata.name,
  });
  expect(binding.inputs.subjects).toEqual([
    { kind: "ServiceAccount", name: "pulp-workspace", namespace: "pulp-prod-delivery" },
  ]);
  expect(run.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")).toEqual([]);
  const clusterBindings = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding");
  expect(clusterBindings.map((b) => b.inputs.roleRef.name)).toEqual([AUTH_DELEGATOR]);
  expect(clusterBindings[0].inputs.subjects).toEqual(binding.inputs.subjects);
  // Nothing else of rbac.authorization.k8s.io, in any namespace.
  expect(
    run.resources
      .filter((r) => r.type.includes("rbac.authorization.k8s.io"))
      .map((r) => r.type.split(":")[2])
      .sort(),
  ).toEqual(["ClusterRoleBinding", "Role", "RoleBinding"]);
});

test("readStorageClasses adds one ClusterRole: get on storageclasses, nothing else", async () => {
  const run = await renderDelivery({ ...DELIVERY, readStorageClasses: true });
  const [reader] = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole");
  expect(reader.inputs.rules).toEqual([
    { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get"] },
  ]);
  expect(
    run
      .ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")
      .map((b) => b.inputs.roleRef.name)
      .sort(),
  ).toEqual([AUTH_DELEGATOR, reader.state.metadata.name].sort());
});

test("Routes with their own certificate: the delivery program lets OpenShift's router read that Secret, not the workspace", async () => {
  const run = await renderDelivery({
    ...DELIVERY,
    pulpNamespace: "pulp-prod",
    pulpConfig: {
      ...(DELIVERY.pulpConfig as object),
      instanceName: "pulp-a",
      ingress: { enabled: true, kind: "Route", host: "pulp.example.com", tlsSecretName: "pulp-tls" },
    },
  });
  const roles = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:Role");
  const router = roles.find((r) => r.inputs.metadata.name === "pulp-a-router-certificate")!;
  expect(router.inputs.metadata.namespace).toBe("pulp-prod");
  expect(router.inputs.rules).toEqual([
    { apiGroups: [""], resources: ["secrets"], resourceNames: ["pulp-tls"], verbs: ["get", "list", "watch"] },
  ]);
  const binding = run
    .ofType("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")
    .find((b) => b.inputs.metadata.name === "pulp-a-router-certificate")!;
  expect(binding.inputs.subjects).toEqual([
    { kind: "ServiceAccount", name: "router", namespace: "openshift-ingress" },
  ]);
  // The workspace, which may not create Roles, is told not to; the Stack starts once the grant exists.
  const [stack] = run.ofType(STACK_TYPE);
  expect(stack.inputs.spec.config["pulp:ingress"]).toEqual({
    enabled: true,
    kind: "Route",
    host: "pulp.example.com",
    tlsSecretName: "pulp-tls",
    routerAccess: false,
  });
  const deps = run.dependenciesOf(stack);
  expect([deps.has(router.urn), deps.has(binding.urn)]).toEqual([true, true]);
});

test("without a Route's certificate the delivery program grants the router nothing", async () => {
  const run = await renderDelivery(DELIVERY);
  const names = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:Role").map((r) => r.inputs.metadata.name);
  expect(names.filter((n) => n?.endsWith("router-certificate"))).toEqual([]);
  const [stack] = run.ofType(STACK_TYPE);
  expect(stack.inputs.spec.config["pulp:ingress"]).toBeUndefined();
});
