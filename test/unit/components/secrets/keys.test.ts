// Unit: the keys the program generates are what Pulp reads (no Pulumi involved).
import * as crypto from "crypto";
import { generateKey } from "../../../../components/secrets/keys";

test("SECRET_KEY: 50 URL-safe characters; a password: 32", () => {
  expect(generateKey("django-secret-key").value).toMatch(/^[A-Za-z0-9_-]{50}$/);
  expect(generateKey("password").value).toMatch(/^[A-Za-z0-9_-]{32}$/);
});

test("DB_ENCRYPTION_KEY: a Fernet key, 32 random bytes in URL-safe base64", () => {
  const { value } = generateKey("fernet-key");
  expect(value).toMatch(/^[A-Za-z0-9_-]{43}=$/);
  expect(Buffer.from(value, "base64url")).toHaveLength(32);
});

test("the token key pair: an ES256 private key and its public key, in PEM", () => {
  const { value, publicKey } = generateKey("ec-p256-keypair");
  const signature = crypto.sign("sha256", Buffer.from("token"), crypto.createPrivateKey(value));
  expect(crypto.verify("sha256", Buffer.from("token"), crypto.createPublicKey(publicKey!), signature)).toBe(
    true,
  );
  expect(crypto.createPrivateKey(value).asymmetricKeyDetails).toEqual({ namedCurve: "prime256v1" });
});

test("every run a new value (only the first one a Stash is created with is kept)", () => {
  expect(generateKey("fernet-key").value).not.toBe(generateKey("fernet-key").value);
});
