import * as pulumi from "@pulumi/pulumi";

/** What the last successful update of this stack deployed, from its own outputs. */
export interface Deployed {
  /** undefined on a first install (no outputs yet). */
  pulpcoreVersion?: string;
  idle: boolean;
}

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
  const version = await self.getOutputDetails("pulpcoreVersion");
  const idle = await self.getOutputDetails("idle");
  return {
    pulpcoreVersion: typeof version.value === "string" ? version.value : undefined,
    idle: idle.value === true,
  };
}
