// Two Pulp instances, each in a namespace of its own, on a cluster this program reaches through a
// Kubernetes provider of its own: what a platform team's program holds. Each instance keeps its upgrade
// history in its namespace, so changing one instance's image upgrades that one only.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { parseConfig, Pulp } from "pulp-pulumi";

export = async () => {
  const config = new pulumi.Config();
  // The cluster's kubeconfig (its content). In a platform program it is often another resource's output,
  // an EKS, GKE or AKS cluster's: the provider and the instances take it as it comes.
  const kubeconfig = config.requireSecret("kubeconfig");
  const provider = new k8s.Provider("cluster", { kubeconfig });

  // One instance per entry, by name: any `pulp:` keys (docs/configuration.md, without the prefix) over
  // these defaults. The keys are checked before anything is created; a problem names the key and a fix.
  const instances = config.requireObject<Record<string, Record<string, unknown>>>("instances");
  const apiUrls: Record<string, string> = {};
  for (const [name, keys] of Object.entries(instances)) {
    const pulp = await Pulp.create(
      name,
      {
        config: parseConfig({
          instanceName: name,
          namespace: `pulp-${name}`,
          database: { cloudnativepg: {} },
          web: { enabled: true },
          ...keys,
        }),
        secrets: {},
        // The same cluster, for the few calls the component makes itself (the stop-the-world step, the job
        // guard, the import watch); the job guard refuses when it is not the provider's.
        cluster: kubeconfig.apply((content) => ({ kubeconfig: content })),
      },
      { provider },
    );
    apiUrls[name] = pulp.apiUrl;
  }
  return { apiUrls };
};
