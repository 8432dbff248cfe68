// The pulp stack: validates the `pulp:` stack config, then builds the whole install. The Pulp component
// plans the upgrade from what this stack deployed last; nothing is created when either step refuses.
import { loadConfig } from "./components/config/load";
import { Pulp } from "./components/pulp";
import { providerCluster } from "./components/upgrade/cluster";
import { deployedOutputs, readDeployed } from "./components/upgrade/deployed";

export = async () => {
  const { config, secrets } = loadConfig();
  const pulp = new Pulp(config.instanceName, {
    config,
    secrets,
    deployed: await readDeployed(),
    cluster: providerCluster(),
  });
  return {
    namespace: pulp.namespace,
    apiUrl: pulp.apiUrl,
    contentUrl: pulp.contentUrl,
    serviceNames: pulp.serviceNames,
    secretNames: pulp.secretNames,
    migrationJob: pulp.migrationJobName,
    ...(pulp.backupCronJobName ? { backupCronJob: pulp.backupCronJobName } : {}),
    image: config.image,
    ...deployedOutputs(pulp.rolledOut, {
      pulpcoreVersion: config.pulpcoreVersion,
      idle: config.idle,
      pluginVersions: config.plugins,
      restoredBackup: pulp.restoredBackup,
    }),
  };
};
