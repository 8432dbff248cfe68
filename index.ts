// The pulp stack: validates the `pulp:` stack config, decides how to get from the deployed release to the
// configured one, then builds the whole install. Nothing is created when either step refuses.
import * as pulumi from "@pulumi/pulumi";
import { loadConfig } from "./components/config/load";
import { Pulp } from "./components/pulp";
import { readDeployed } from "./components/upgrade/deployed";
import { planUpgrade, UpgradeRefused } from "./components/upgrade/plan";

export = async () => {
  const { config, secrets } = loadConfig();
  const deployed = await readDeployed();
  const plan = planUpgrade(deployed.pulpcoreVersion, config.pulpcoreVersion, {
    deployed: deployed.idle,
    target: config.idle,
  });
  if (plan.kind === "stop-the-world") {
    // Not orchestrated within one update yet; the idle switch gives the same safe sequence in three.
    throw new UpgradeRefused(
      `${plan.summary}\nNothing was changed. Run it in three updates:\n` +
        `  1. pulumi config set pulp:idle true && pulumi up      (every Pulp process stops; data is kept)\n` +
        `  2. wait ${plan.minimumDowntimeSeconds} s, then set the new image and pulumi up  (migrations run with nothing running)\n` +
        `  3. pulumi config set pulp:idle false && pulumi up     (${plan.to} starts)`,
    );
  }
  // A diagnostic, not an output: it shows in every preview and update, and a no-op stays a no-op.
  if (plan.kind !== "none") pulumi.log.info(`Upgrade plan: ${plan.summary}`);

  const pulp = new Pulp(config.instanceName, { config, secrets });
  return {
    namespace: pulp.namespace,
    apiUrl: pulp.apiUrl,
    contentUrl: pulp.contentUrl,
    serviceNames: pulp.serviceNames,
    secretNames: pulp.secretNames,
    migrationJob: pulp.migrationJobName,
    image: config.image,
    // Read back by the next update (components/upgrade/deployed.ts): keep these names.
    pulpcoreVersion: config.pulpcoreVersion,
    idle: config.idle,
  };
};
