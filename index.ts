// The pulp stack: reads and validates the `pulp:` stack config, then builds the whole install.
import { loadConfig } from "./components/config/load";
import { Pulp } from "./components/pulp";

const { config, secrets } = loadConfig();
const pulp = new Pulp(config.instanceName, { config, secrets });

export const namespace = pulp.namespace;
export const apiUrl = pulp.apiUrl;
export const contentUrl = pulp.contentUrl;
export const serviceNames = pulp.serviceNames;
export const secretNames = pulp.secretNames;
export const migrationJob = pulp.migrationJobName;
export const pulpcoreVersion = config.pulpcoreVersion;
export const image = config.image;
