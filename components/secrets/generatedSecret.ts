import * as pulumi from "@pulumi/pulumi";

export type { GeneratedValue, SecretKind } from "./keys";
import { generateKey, SecretKind } from "./keys";

/**
 * How versions before 0.2.0 kept the generated keys: generated once, at create, and never again (`diff`
 * reports no change for any input), the value only in the (encrypted) stack state. Kept so that an install
 * made by them moves its keys into Stash resources (secrets/pulpSecrets.ts): a dynamic provider starts a
 * Node.js process of its own on every preview and update, which a Stash (the engine's own) does not.
 */
export const generatedSecretProvider: pulumi.dynamic.ResourceProvider = {
  async create(inputs: { kind: SecretKind }) {
    // Required inside the function: the provider is serialized into the stack state and runs on its own.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const crypto = require("crypto") as typeof import("crypto");
    return { id: crypto.randomUUID(), outs: { kind: inputs.kind, ...generateKey(inputs.kind) } };
  },
  async diff() {
    return { changes: false };
  },
};

export interface GeneratedSecretArgs {
  kind: SecretKind;
}

/** A random secret generated once and kept, encrypted, in the stack state. Protected by default. */
export class GeneratedSecret extends pulumi.dynamic.Resource {
  declare readonly value: pulumi.Output<string>;
  declare readonly publicKey: pulumi.Output<string | undefined>;

  constructor(name: string, args: GeneratedSecretArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      generatedSecretProvider,
      name,
      { kind: args.kind, value: undefined, publicKey: undefined },
      { protect: true, ...opts, additionalSecretOutputs: ["value"] },
      "pulp",
      "GeneratedSecret",
    );
  }
}
