// The pulp stack: validates the `pulp:` stack config, decides how to get from the deployed release to the
// configured one, then builds the whole install. Nothing is created when either step refuses.
import * as pulumi from "@pulumi/pulumi";
import { loadConfig } from "./components/config/load";
import { Pulp } from "./components/pulp";
import { readDeployed } from "./components/upgrade/deployed";
import { planUpgrade } from "./components/upgrade/plan";

export = async () => {
  const { config, secrets } = loadConfig();
  const deployed = await readDeployed();
  const plan = planUpgrade(deployed.pulpcoreVersion, config.pulpcoreVersion, {
    deployed: deployed.idle,
    target: config.idle,
  });
  // Diagnostics, not outputs: they show in every preview and update, and a no-op stays a no-op.
  if (plan.kind === "stop-the-world") {
    pulumi.log.warn(
      `Upgrade plan: ${plan.summary} Running tasks finish first: workers get up to ` +
        `${config.worker.terminationGracePeriodSeconds} s to stop.`,
    );
  } else if (plan.kind !== "none") {
    pulumi.log.info(`Upgrade plan: ${plan.summary}`);
  }

  const kubernetes = new pulumi.Config("kubernetes");
  const pulp = new Pulp(config.instanceName, {
    config,
    secrets,
    upgrade: plan,
    kube: pulumi
      .all([kubernetes.getSecret("kubeconfig"), kubernetes.get("context")])
      .apply(([kubeconfig, context]) => ({ kubeconfig, context })),
  });
  return {
    namespace: pulp.namespace,
    apiUrl: pulp.apiUrl,
    contentUrl: pulp.contentUrl,
    serviceNames: pulp.serviceNames,
    secretNames: pulp.secretNames,
    migrationJob: pulp.migrationJobName,
    image: config.image,
    // Read back by the next update (components/upgrade/deployed.ts): keep these names. Gated on the
    // rollout: the engine saves the outputs of a failed update too, and a failed migration must leave
    // the deployed version as it was, or a revert would look like a downgrade.
    pulpcoreVersion: pulp.rolledOut.apply(() => config.pulpcoreVersion),
    idle: pulp.rolledOut.apply(() => config.idle),
  };
};
