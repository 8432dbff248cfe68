// The keys Pulp needs, made in the program's own process. Kept by a Stash (secrets/pulpSecrets.ts): the
// first value is stored on create and never replaced, so generating one on every run costs nothing.
import * as crypto from "crypto";

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

/** A new random value of `kind`. */
export function generateKey(kind: SecretKind): GeneratedValue {
  const urlSafe = (bytes: Buffer) => bytes.toString("base64").replace(/\+/g, "-").replace(/\//g, "_");
  switch (kind) {
    case "django-secret-key":
      return { value: urlSafe(crypto.randomBytes(48)).replace(/=+$/, "").slice(0, 50) };
    case "fernet-key":
      return { value: urlSafe(crypto.randomBytes(32)) };
    case "password":
      return { value: urlSafe(crypto.randomBytes(24)) };
    case "ec-p256-keypair": {
      const pair = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
      return {
        value: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
        publicKey: pair.publicKey.export({ type: "spki", format: "pem" }).toString(),
      };
    }
    default:
      throw new Error(`unknown secret kind ${JSON.stringify(kind)}`);
  }
}
