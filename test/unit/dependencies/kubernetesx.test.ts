// Evidence for the README's Dependencies section: why workloads are not built on @pulumi/kubernetesx.
import * as k8s from "@pulumi/kubernetes";
import * as kx from "@pulumi/kubernetesx";
import * as pulumi from "@pulumi/pulumi";

/** Whether an output is known (false: a preview shows it as "output<...>"). */
const isKnown = (o: pulumi.Output<unknown>) => (o as unknown as { isKnown: Promise<boolean> }).isKnown;

beforeAll(async () => {
  // A preview in which a Secret's name is not known yet, as on a first install.
  await pulumi.runtime.setMocks(
    {
      newResource: (a) => ({ id: a.name, state: a.type.includes("Secret") ? {} : a.inputs }),
      call: (a) => a.inputs,
    },
    "pulp",
    "test",
    true,
  );
});

test("PodBuilder turns the whole Deployment spec unknown when one field is", async () => {
  const secret = new k8s.core.v1.Secret("settings", {});
  const builder = new kx.PodBuilder({
    containers: [{ image: "quay.io/pulp/pulp-minimal:3.85.0", env: { SETTINGS: secret.metadata.name } }],
  });
  const spec = builder.asDeploymentSpec({ replicas: 2 });
  // One unknown env value hides replicas, image, probes, everything: a pull-request preview shows nothing.
  expect(await isKnown(spec)).toBe(false);
  expect(await isKnown(spec.apply((s) => s.replicas))).toBe(false);
});

test("PodBuilder gives pods of one image the same `app` selector", async () => {
  const image = "quay.io/pulp/pulp-minimal:3.85.0";
  const api = new kx.PodBuilder({ containers: [{ image, command: ["pulp-api"] }] }).asDeploymentSpec();
  const worker = new kx.PodBuilder({ containers: [{ image, command: ["pulp-worker"] }] }).asDeploymentSpec();
  const selectors = await new Promise<unknown[]>((resolve) =>
    pulumi.all([api.selector, worker.selector]).apply((s) => resolve(s as unknown[])),
  );
  // Both select app=pulp: each Service and PodDisruptionBudget would take the other's pods.
  expect(selectors[0]).toEqual({ matchLabels: { app: "pulp" } });
  expect(selectors[1]).toEqual(selectors[0]);
});
