// The pulp stack: validates the `pulp:` stack config, then builds the whole install. The Pulp component
// plans the upgrade from what this stack deployed last; nothing is created when either step refuses.
import * as pulumi from "@pulumi/pulumi";
import { loadConfig } from "./components/config/load";
import { ConfigError } from "./components/config/problems";
import { weakSecretKeyVerdict } from "./components/config/strength";
import { Pulp } from "./components/pulp";
import { providerCluster } from "./components/upgrade/cluster";
import { deployedOutputs, readDeployed } from "./components/upgrade/deployed";

// Pulumi's runtime takes a stack trace for every promise it makes (runtime/debuggable.js), printed only for
// PULUMI_DEBUG_PROMISE_LEAKS. Run by ts-node (the test bed's scripts that run it in their own process), each
// is mapped through source maps, a good part of a preview's time; those are left unmapped, every other trace
// as before. Pulumi runs it through program/typescript.js, which keeps lines in place and maps nothing.
const mapped = Error.prepareStackTrace;
Error.prepareStackTrace = (error, sites) =>
  /[\\/]@pulumi[\\/]pulumi[\\/]runtime[\\/]debuggable\.js$/.test(sites[0]?.getFileName() ?? "")
    ? String(error)
    : mapped
      ? mapped(error, sites)
      : [String(error), ...sites.map((site) => `    at ${site}`)].join("\n");

export = async () => {
  const { config, secrets, secretKey } = loadConfig();
  const cluster = providerCluster();
  // The install's history in the cluster; this stack's outputs where an older version kept it there (read
  // only then: a StackReference costs the engine a read of the stack's state).
  const deployed = await Pulp.history({ config, cluster, deployed: readDeployed });
  const weak = weakSecretKeyVerdict(secretKey, {
    firstInstall: deployed.pulpcoreVersion === undefined,
    restoring: config.restore !== undefined,
  });
  if (weak && "refuse" in weak) throw new ConfigError([weak.refuse]);
  if (weak) pulumi.log.warn(weak.warn);
  const pulp = new Pulp(config.instanceName, {
    config,
    secrets,
    deployed,
    cluster,
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
    ...deployedOutputs(pulp.rolledOut, pulp.deploying),
  };
};
