// Every custom resource the delivery program renders passes the real PKO v2 CRD schema, with the API
// server's strict field validation (an unknown field is an error, not silently pruned).
import { previewName } from "../../../stacks/stackSpec";
import { POD_SECURITY_LABELS } from "../../../components/namespace/namespace";
import {
  crdSchema,
  DELIVERY,
  devDelivery,
  renderDelivery,
  STACK_TYPE,
  strict,
  validator,
} from "../helpers/delivery";

// Whole-program renders under mocks: seconds each on a loaded 2-core machine, not the default 5.
jest.setTimeout(60_000);

const stackSchema = crdSchema("pulumi.com_stacks.yaml", "v1");
const validStack = validator(strict(stackSchema));

/** The CRD's one CEL rule (x-kubernetes-validations), which JSON schema cannot express. */
const nameRule = (cr: Record<string, any>) => (cr.metadata.name as string).length <= 42;

test.each([
  ["the smallest config", DELIVERY],
  ["stacks/Pulumi.dev.yaml", devDelivery()],
  [
    "KMS secrets, pinned commit, git token, extra env",
    {
      ...DELIVERY,
      branch: undefined,
      commit: "0123456789abcdef0123456789abcdef01234567",
      secretsProvider: { provider: "awskms://alias/pulp?region=eu-west-1" },
      gitAuth: { accessToken: { secretName: "git", key: "token" } },
      env: { AWS_ACCESS_KEY_ID: { secretName: "aws", key: "id" } },
      preview: { enabled: true, branch: "pr-head" },
      stackName: "a-very-long-stack-name-of-exactly-42-chars",
    },
  ],
])("every Stack CR passes the CRD schema (%s)", async (_label, raw) => {
  const run = await renderDelivery(raw as Record<string, unknown>);
  const stacks = run.ofType(STACK_TYPE);
  expect(stacks.length).toBeGreaterThanOrEqual(1);
  for (const s of stacks) {
    const ok = validStack(s.inputs);
    expect({ name: s.inputs.metadata.name, errors: validStack.errors ?? [] }).toEqual({
      name: s.inputs.metadata.name,
      errors: [],
    });
    expect(ok).toBe(true);
    expect(nameRule(s.inputs)).toBe(true);
  }
});

test("the seed's spec.pulumiLogLevel is rejected by the CRD; workspaceTemplate.spec.pulumiLogLevel is accepted", () => {
  const base = {
    apiVersion: "pulumi.com/v1",
    kind: "Stack",
    metadata: { name: "random-yaml" },
    spec: {
      stack: "org/random-yaml/dev",
      projectRepo: "https://github.com/pulumi/examples",
      branch: "master",
    },
  };
  expect(validStack({ ...base, spec: { ...base.spec, pulumiLogLevel: 10 } })).toBe(false);
  expect(JSON.stringify(validStack.errors)).toMatch(/pulumiLogLevel/);
  expect(
    validStack({ ...base, spec: { ...base.spec, workspaceTemplate: { spec: { pulumiLogLevel: 10 } } } }),
  ).toBe(true);
  // And a type error inside it is caught too.
  expect(
    validStack({ ...base, spec: { ...base.spec, workspaceTemplate: { spec: { pulumiLogLevel: "10" } } } }),
  ).toBe(false);
});

test("the production Stack: source, secrets by reference only, workspace sizing, never destroy on delete", async () => {
  const run = await renderDelivery({ ...DELIVERY, workspace: { pulumiLogLevel: 3 } });
  const [cr] = run.ofType(STACK_TYPE);
  expect(cr.inputs.metadata).toMatchObject({ name: "pulp", namespace: "pulp-delivery" });
  expect(cr.inputs.spec).toMatchObject({
    stack: "organization/pulp/prod",
    projectRepo: "https://git.example.com/infra/pulp-pulumi.git",
    branch: "main",
    repoDir: ".",
    destroyOnFinalize: false,
    serviceAccountName: "pulp-workspace",
    resyncFrequencySeconds: 300,
    envRefs: {
      PULUMI_BACKEND_URL: { type: "Secret", secret: { name: "pulp-state", key: "url" } },
      PULUMI_CONFIG_PASSPHRASE: { type: "Secret", secret: { name: "pulp-state", key: "passphrase" } },
    },
    config: {
      "pulp:namespace": "pulp",
      "pulp:createNamespace": "false",
      "pulp:contentOrigin": "https://pulp.example.com",
      "pulp:database": { cloudnativepg: {} },
    },
    workspaceTemplate: {
      spec: {
        securityProfile: "restricted",
        pulumiLogLevel: 3,
        resources: { requests: { cpu: "500m", memory: "1536Mi" }, limits: { memory: "3Gi" } },
        env: [{ name: "NODE_OPTIONS", value: "--max-old-space-size=2560" }],
      },
    },
  });
  expect(cr.inputs.spec.preview).toBeUndefined();
  // No literal values anywhere in envRefs: every one is a Secret reference.
  for (const ref of Object.values(cr.inputs.spec.envRefs) as { type: string }[])
    expect(ref.type).toBe("Secret");
  expect(JSON.stringify(cr.inputs)).not.toMatch(/"literal"/);
});

test("the preview Stack runs only previews, from the PR branch, with the same workspace identity", async () => {
  const run = await renderDelivery({ ...DELIVERY, preview: { enabled: true, branch: "pr-42" } });
  const [prod, preview] = run.ofType(STACK_TYPE);
  expect(preview.inputs.metadata.name).toBe("pulp-preview");
  expect(preview.inputs.spec).toMatchObject({
    preview: true,
    branch: "pr-42",
    stack: prod.inputs.spec.stack,
  });
  expect(preview.inputs.spec.serviceAccountName).toBe(prod.inputs.spec.serviceAccountName);
  expect(previewName("x".repeat(42))).toHaveLength(42);
});

test("the Stack waits for the workspace's RBAC; both namespaces are restricted and kept on delete", async () => {
  const run = await renderDelivery(DELIVERY);
  const [cr] = run.ofType(STACK_TYPE);
  const deps = run.dependenciesOf(cr);
  for (const t of ["RoleBinding", "ClusterRoleBinding", "ServiceAccount"]) {
    const [r] = run.resources.filter((x) => x.type.endsWith(`:${t}`));
    expect({ t, dependedOn: deps.has(r.urn) }).toEqual({ t, dependedOn: true });
  }
  const namespaces = run.ofType("kubernetes:core/v1:Namespace");
  expect(namespaces.map((n) => n.inputs.metadata.name).sort()).toEqual(["pulp", "pulp-delivery"]);
  for (const ns of namespaces) {
    expect(ns.inputs.metadata.labels).toMatchObject(POD_SECURITY_LABELS);
    expect(ns.retainOnDelete).toBe(true);
  }
});
