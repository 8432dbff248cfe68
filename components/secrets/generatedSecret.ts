import * as pulumi from "@pulumi/pulumi";

/**
 * What to generate. Each kind is what Pulp reads:
 * - `django-secret-key`: 50 characters for SECRET_KEY;
 * - `fernet-key`: 32 random bytes, URL-safe base64, for DB_ENCRYPTION_KEY (losing it loses encrypted fields);
 * - `password`: 32 URL-safe characters;
 * - `ec-p256-keypair`: PEM private and public key for container token signing (ES256).
 */
export type SecretKind = "django-secret-key" | "fernet-key" | "password" | "ec-p256-keypair";

export interface GeneratedValue {
  value: string;
  /** Only for `ec-p256-keypair`. */
  publicKey?: string;
}

/**
 * Generates once, at create, and never again: `diff` reports no change for any input, so no config
 * change can regenerate a key, and the value lives only in the (encrypted) stack state.
 *
 * A dynamic provider rather than @pulumi/random: its plugin ships inside @pulumi/pulumi, so nothing
 * else has to be built or downloaded for the CLI, CI or the in-cluster operator.
 */
export const generatedSecretProvider: pulumi.dynamic.ResourceProvider = {
  async create(inputs: { kind: SecretKind }) {
    // Required inside the function: the provider is serialized into the stack state and runs on its own.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const crypto = require("crypto") as typeof import("crypto");
    const urlSafe = (bytes: Buffer) => bytes.toString("base64").replace(/\+/g, "-").replace(/\//g, "_");
    let outs: GeneratedValue;
    switch (inputs.kind) {
      case "django-secret-key":
        outs = { value: urlSafe(crypto.randomBytes(48)).replace(/=+$/, "").slice(0, 50) };
        break;
      case "fernet-key":
        outs = { value: urlSafe(crypto.randomBytes(32)) };
        break;
      case "password":
        outs = { value: urlSafe(crypto.randomBytes(24)) };
        break;
      case "ec-p256-keypair": {
        const pair = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
        outs = {
          value: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
          publicKey: pair.publicKey.export({ type: "spki", format: "pem" }).toString(),
        };
        break;
      }
      default:
        throw new Error(`unknown secret kind ${JSON.stringify(inputs.kind)}`);
    }
    return { id: crypto.randomUUID(), outs: { kind: inputs.kind, ...outs } };
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
