// Unit (Pulumi mocks): a Pulp created with a Kubernetes provider of the program's own. Every Kubernetes
// object goes through that provider; the namespace's uid as the provider sees it goes to the job guard,
// which compares it with the cluster the component calls itself (jobGuard.test.ts: two stand-in clusters).
import * as k8s from "@pulumi/kubernetes";
import { parseConfig } from "../../../../components/config/parse";
import { Pulp } from "../../../../components/pulp";
import { MINIMAL } from "../../helpers/configs";
import { MockRun, runWithMocks } from "../../helpers/pulumiMocks";

const KUBECONFIG = "/home/team/.kube/team-cluster";

async function renderWith(createNamespace: boolean): Promise<MockRun> {
  return runWithMocks({ config: {} }, async () => {
    const provider = new k8s.Provider("team-cluster", { kubeconfig: KUBECONFIG });
    const config = parseConfig({ ...MINIMAL, namespace: "team-pulp", createNamespace });
    await Pulp.create("pulp", { config, secrets: {}, cluster: { kubeconfig: KUBECONFIG } }, { provider });
  });
}

test.each([true, false])(
  "createNamespace %s: every Kubernetes object goes through the program's provider; the job guard gets the namespace's uid",
  async (createNamespace) => {
    const run = await renderWith(createNamespace);
    const objects = run.resources.filter(
      (r) => r.custom && r.type.startsWith("kubernetes:") && !r.type.startsWith("pulumi:providers"),
    );
    expect(objects.length).toBeGreaterThan(10);
    expect(objects.filter((r) => !r.provider.includes("::team-cluster::")).map((r) => r.name)).toEqual([]);
    const [guard] = run.ofType("pulumi-nodejs:dynamic/pulp:JobGuard");
    expect(guard.inputs.namespaceUid).toMatch(/^uid-/);
    expect(guard.inputs.kube).toEqual({ kubeconfig: KUBECONFIG });
  },
);
