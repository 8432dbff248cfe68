// The stack outputs an update leaves for the next one: what was deployed. Written and read here only;
// the names are in components/contract.ts.
import * as pulumi from "@pulumi/pulumi";
import { DEPLOYED_OUTPUTS } from "../contract";

/** What the last successful update of this stack deployed, from its own outputs. */
export interface Deployed {
  /** undefined on a first install (no outputs yet). */
  pulpcoreVersion?: string;
  idle: boolean;
  /** Plugin versions by app label; undefined when the last update did not know them. */
  pluginVersions?: Record<string, string>;
  /** The backup id this install was restored from (components/backup/restore.ts); undefined when none. */
  restoredBackup?: string;
  /**
   * Where the artifacts are (storage/storageMove.ts artifactStorageName), as the history records it;
   * undefined on a new install and where a version of the program before it was recorded made the install.
   */
  artifactStorage?: string;
  /**
   * Where the state keeps the keys the component generated (secrets/pulpSecrets.ts), as the key Secret's
   * annotation says (upgrade/history.ts findInstall): `stash`; `generated-secret` for an install an older
   * version made, whose dynamic GeneratedSecrets the next update moves into Stash resources; undefined
   * where there is no key Secret (a new install).
   */
  keysKeptIn?: KeysKeptIn;
}

/** What an update deploys, as the history and the stack outputs record it. */
export type DeployedRelease = Required<Omit<Deployed, "restoredBackup" | "keysKeptIn" | "artifactStorage">> &
  Pick<Deployed, "restoredBackup" | "artifactStorage">;

/** Where an install's generated keys live in the state (Deployed.keysKeptIn). */
export type KeysKeptIn = "stash" | "generated-secret";

/** Whether the state holds an older version's GeneratedSecrets, which this update moves into Stash resources. */
export function keysInGeneratedSecrets(deployed: Deployed): boolean {
  return deployed.keysKeptIn === "generated-secret";
}

/** A stack that has never been deployed. */
export const FIRST_INSTALL: Deployed = { idle: false };

/**
 * Reads this stack's own last outputs through a StackReference. The one source that is right in a
 * preview (the outputs of the last update), on a first install (none), and in the Pulumi Kubernetes
 * Operator (same backend, same stack); the cluster cannot say what the stack last meant to deploy
 * before the preview has read it, and a config key would go stale.
 */
export async function readDeployed(): Promise<Deployed> {
  const self = new pulumi.StackReference("deployed", {
    name: `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
  });
  const version = await self.getOutputDetails(DEPLOYED_OUTPUTS.pulpcoreVersion);
  const idle = await self.getOutputDetails(DEPLOYED_OUTPUTS.idle);
  const plugins = await self.getOutputDetails(DEPLOYED_OUTPUTS.pluginVersions);
  const restored = await self.getOutputDetails(DEPLOYED_OUTPUTS.restoredBackup);
  return {
    pulpcoreVersion: typeof version.value === "string" ? version.value : undefined,
    idle: idle.value === true,
    pluginVersions: pluginVersionsOf(plugins.value),
    restoredBackup: typeof restored.value === "string" ? restored.value : undefined,
  };
}

/** A non-empty `{app: "x.y.z"}` map, or undefined for anything else (older stacks have no such output). */
export function pluginVersionsOf(value: unknown): Record<string, string> | undefined {
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0 || entries.some(([, v]) => typeof v !== "string")) return undefined;
  return Object.fromEntries(entries) as Record<string, string>;
}

/**
 * The outputs readDeployed reads next time. Gated on the rollout: the engine saves the outputs of a
 * failed update too, and a failed migration must leave the deployed version as it was, or a revert
 * would look like a downgrade.
 */
export function deployedOutputs(
  rolledOut: pulumi.Output<boolean>,
  deployed: DeployedRelease,
): Partial<
  Record<
    (typeof DEPLOYED_OUTPUTS)[keyof typeof DEPLOYED_OUTPUTS],
    pulumi.Output<string | boolean | Record<string, string>>
  >
> {
  return {
    [DEPLOYED_OUTPUTS.pulpcoreVersion]: rolledOut.apply(() => deployed.pulpcoreVersion),
    [DEPLOYED_OUTPUTS.idle]: rolledOut.apply(() => deployed.idle),
    [DEPLOYED_OUTPUTS.pluginVersions]: rolledOut.apply(() => deployed.pluginVersions),
    // Kept once set, so the stack always says which backup it came from.
    ...(deployed.restoredBackup
      ? { [DEPLOYED_OUTPUTS.restoredBackup]: rolledOut.apply(() => deployed.restoredBackup!) }
      : {}),
  };
}
