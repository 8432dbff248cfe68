// Unit. delivery:adoptPulpNamespace: the Pulp namespace is imported (the `import` resource option), not
// created, and keeps its labels; the delivery namespace is created as always; nothing is ever deleted.
import { parseDeliveryConfig } from "../../../stacks/config";
import { DELIVERY, renderDelivery } from "../helpers/delivery";

jest.setTimeout(60_000);

const NAMESPACE = "kubernetes:core/v1:Namespace";

test("off by default: both namespaces are created, retained on delete", async () => {
  expect(parseDeliveryConfig(DELIVERY).adoptPulpNamespace).toBe(false);
  const run = await renderDelivery(DELIVERY);
  const namespaces = run.ofType(NAMESPACE);
  expect(namespaces.map((n) => [n.inputs.metadata.name, n.importId, n.retainOnDelete])).toEqual([
    ["pulp", "", true],
    ["pulp-delivery", "", true],
  ]);
});

test("adoptPulpNamespace: true imports the existing Pulp namespace by name, labels untouched", async () => {
  const run = await renderDelivery({ ...DELIVERY, pulpNamespace: "pulp-dev", adoptPulpNamespace: true });
  const [pulp, delivery] = run.ofType(NAMESPACE);
  expect(pulp).toMatchObject({
    importId: "pulp-dev",
    retainOnDelete: true,
    ignoreChanges: ["metadata.labels", "metadata.annotations"],
  });
  expect(pulp.inputs.metadata.name).toBe("pulp-dev");
  // The delivery namespace is new: created, not imported.
  expect(delivery).toMatchObject({ importId: "", ignoreChanges: [], retainOnDelete: true });
  // The Stack still tells the Pulp program not to manage the namespace: its next update drops the
  // Namespace from the Pulp state (retainOnDelete there too), without a cluster-scoped grant.
  const stack = run.ofType("kubernetes:pulumi.com/v1:Stack")[0];
  expect(stack.inputs.spec.config["pulp:createNamespace"]).toBe("false");
});

test("adoptPulpNamespace must be a boolean, named with its fix", () => {
  expect(() => parseDeliveryConfig({ ...DELIVERY, adoptPulpNamespace: "yes" })).toThrow(
    /delivery:adoptPulpNamespace: .*boolean[\s\S]*fix: +pulumi config set delivery:adoptPulpNamespace/,
  );
});
