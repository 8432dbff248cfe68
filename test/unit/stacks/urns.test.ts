// Unit (Pulumi mocks). A URN is urn:pulumi:<stack>::<project>::<type chain>::<name>: the delivery stacks
// already in users' backends keep their state only while the project name (stacks/Pulumi.yaml), every
// component type token and every logical name stay as they are. The folder is named neither in a URN nor in
// the state, so it could move (delivery/ -> stacks/); these tests fail when something that IS in a URN
// changes. Renaming one on purpose needs an alias (as pulp:operator:* -> pulp:delivery:* has) and a new
// expectation here.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import * as pulumi from "@pulumi/pulumi";
import { DELIVERY_NAMESPACE, loadDeliveryConfig } from "../../../stacks/config";
import { StackDeployment } from "../../../stacks/stackDeployment";
import { REPO } from "../helpers/configs";
import { DELIVERY } from "../helpers/delivery";
import { runWithMocks } from "../helpers/pulumiMocks";

// Whole-program renders under mocks: seconds each on a loaded 2-core machine, not the default 5.
jest.setTimeout(60_000);

test("the Pulumi project is still pulp-delivery and its config namespace still delivery", () => {
  const project = yaml.load(fs.readFileSync(path.join(REPO, "stacks/Pulumi.yaml"), "utf8")) as {
    name: string;
  };
  expect(project.name).toBe("pulp-delivery");
  // Not in a URN, but every existing stack's Pulumi.<stack>.yaml spells its keys `delivery:...`.
  expect(DELIVERY_NAMESPACE).toBe("delivery");
});

/**
 * The program under mocks with every option on, and each resource's URN the way the engine makes it:
 * `<type chain>::<name>`, the chain being every ancestor's type joined with `$`. (The SDK's mock monitor
 * keeps only the parent's own type in a child's URN, so its URNs cannot be compared with real ones.)
 */
async function urnTails(): Promise<{ tails: string[]; componentTypes: string[] }> {
  const raw: Record<string, unknown> = {
    ...DELIVERY,
    stackName: "pulp",
    preview: { enabled: true, branch: "pr-head" },
    readStorageClasses: true,
  };
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) config[`delivery:${k}`] = v;
  // mock URN -> [parent's mock URN, type, name], recorded beside the shared helper's own wrapper.
  const registered = new Map<string, [string, string, string]>();
  const run = await runWithMocks({ config }, () => {
    const monitor = pulumi.runtime.getMonitor() as any;
    const register = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req: any, callback: unknown) => {
      const urn = monitor.newUrn(req.getParent(), req.getType(), req.getName());
      registered.set(urn, [req.getParent() ?? "", req.getType(), req.getName()]);
      return register(req, callback);
    };
    const loaded = loadDeliveryConfig();
    new StackDeployment(loaded.stackName, { config: loaded });
  });
  const chain = (urn: string): string => {
    const [parent, type] = registered.get(urn)!;
    return parent ? `${chain(parent)}$${type}` : type;
  };
  const tails = [...registered.entries()].map(([urn, [, , name]]) => `${chain(urn)}::${name}`).sort();
  const componentTypes = [...new Set(run.resources.filter((r) => !r.custom).map((r) => r.type))].sort();
  return { tails, componentTypes };
}

test("every resource's type chain and name (its URN after the project) are unchanged, every option on", async () => {
  const { tails, componentTypes } = await urnTails();
  expect(tails).toEqual([
    "pulp:delivery:StackDeployment$kubernetes:core/v1:Namespace::pulp-delivery-namespace",
    "pulp:delivery:StackDeployment$kubernetes:core/v1:Namespace::pulp-pulp-namespace",
    "pulp:delivery:StackDeployment$kubernetes:pulumi.com/v1:Stack::pulp-preview",
    "pulp:delivery:StackDeployment$kubernetes:pulumi.com/v1:Stack::pulp-stack",
    "pulp:delivery:StackDeployment$pulp:delivery:WorkspaceAccess$kubernetes:core/v1:ServiceAccount::pulp-workspace-sa",
    "pulp:delivery:StackDeployment$pulp:delivery:WorkspaceAccess$kubernetes:rbac.authorization.k8s.io/v1:ClusterRole::pulp-workspace-storageclasses",
    "pulp:delivery:StackDeployment$pulp:delivery:WorkspaceAccess$kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding::pulp-workspace-auth-delegator",
    "pulp:delivery:StackDeployment$pulp:delivery:WorkspaceAccess$kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding::pulp-workspace-storageclasses",
    "pulp:delivery:StackDeployment$pulp:delivery:WorkspaceAccess$kubernetes:rbac.authorization.k8s.io/v1:Role::pulp-workspace-pulp",
    "pulp:delivery:StackDeployment$pulp:delivery:WorkspaceAccess$kubernetes:rbac.authorization.k8s.io/v1:RoleBinding::pulp-workspace-pulp",
    "pulp:delivery:StackDeployment$pulp:delivery:WorkspaceAccess::pulp-workspace",
    "pulp:delivery:StackDeployment::pulp",
  ]);
  // The component type tokens alone, so a failure names the token that moved.
  expect(componentTypes).toEqual(["pulp:delivery:StackDeployment", "pulp:delivery:WorkspaceAccess"]);
});
