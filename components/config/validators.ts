// Small named validators for values that end up in Kubernetes objects or in Pulp's key files, each a pure
// function returning a reason a person can act on (or undefined), tested as plain functions. None of them
// ever puts the value it checks into its reason: some of them check secrets.
import * as crypto from "crypto";
import { dnsLabelProblem, parseQuantity } from "./formats";

/** Services need DNS-1035 labels (a letter first), which is stricter than the DNS-1123 labels of most names. */
export function dns1035LabelProblem(value: string, maxLength = 63): string | undefined {
  if (value.length <= maxLength && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(value)) return undefined;
  return `a DNS-1035 label: lower-case letters, digits and '-', starting with a letter and ending alphanumeric, at most ${maxLength} characters`;
}

/** The Services the program names `<instance>-<suffix>` (components/pulp.ts, redis, web, CloudNativePG's `-db-rw`, the Pooler's). */
export const SERVICE_SUFFIXES = [
  "api",
  "content",
  "web",
  "redis",
  "db-rw",
  "db-ro",
  "db-r",
  "db-pooler",
] as const;
/** The longest other derived name: `<instance>-db-fields-encryption` (a Secret, DNS-1123 subdomain). */
const LONGEST_SUFFIX = "db-fields-encryption";

/** The instance name, judged by every name derived from it (Service names are the strictest). */
export function instanceNameProblem(instance: string): string | undefined {
  for (const suffix of SERVICE_SUFFIXES) {
    const name = `${instance}-${suffix}`;
    if (dns1035LabelProblem(name)) {
      return `usable in the derived Service name "${name}", which must be ${dns1035LabelProblem(name)}`;
    }
  }
  return dnsLabelProblem(`${instance}-${LONGEST_SUFFIX}`)
    ? `short enough for "${instance}-${LONGEST_SUFFIX}" to stay a DNS-1123 label of at most 63 characters`
    : undefined;
}

/** A quantity that must be more than zero (a volume size, a quota). */
export function positiveQuantityProblem(value: string): string | undefined {
  const parsed = parseQuantity(value);
  if (parsed !== undefined && parsed > 0) return undefined;
  return 'a Kubernetes quantity above zero, such as "10Gi" or "500Mi"';
}

/** Non-empty, and no line break (a value pasted with its newline breaks env vars and settings). */
export function nonEmptySecretProblem(value: string): string | undefined {
  if (value.length === 0) return "not empty";
  if (/[\r\n]/.test(value)) return "a single line (the value contains a line break)";
  return undefined;
}

/**
 * A storage account key as Azure shows it (Access keys): the base64 of 64 bytes, 88 characters. It goes into
 * a connection string, where anything else (a ";") would change what the string says.
 */
export function azureAccountKeyProblem(value: string): string | undefined {
  if (/^[A-Za-z0-9+/]{86}==$/.test(value) && Buffer.from(value, "base64").length === 64) return undefined;
  return "a storage account key as the portal or `az storage account keys list` shows it: 88 characters of base64";
}

/**
 * A service account key as Google Cloud gives it (`gcloud iam service-accounts keys create`): JSON of type
 * "service_account" with its email and private key, which google-auth reads from the mounted file.
 */
export function gcsCredentialsProblem(value: string): string | undefined {
  const expected =
    'a service account key file\'s JSON (type "service_account", with client_email and private_key), as `gcloud iam service-accounts keys create` writes it';
  let key: unknown;
  try {
    key = JSON.parse(value);
  } catch {
    return `${expected}; the value is not JSON`;
  }
  const k = key as Record<string, unknown> | null;
  if (!k || typeof k !== "object" || k.type !== "service_account")
    return `${expected}; its "type" is not "service_account"`;
  const missing = ["client_email", "private_key", "token_uri"].filter(
    (f) => typeof k[f] !== "string" || !k[f],
  );
  if (missing.length) return `${expected}; it has no ${missing.join(", ")}`;
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(String(k.private_key)))
    return `${expected}; its private_key is not a PEM key`;
  return undefined;
}

/** Drops the `#` lines of the supplied key without showing it (`pulumi config set` reads a piped value). */
export const DROP_FERNET_COMMENTS =
  "pulumi config get pulp:dbFieldsEncryptionKey | grep -v '^[[:space:]]*#' | pulumi config set --secret pulp:dbFieldsEncryptionKey";

/**
 * DB_ENCRYPTION_KEY: Fernet keys, one per line (the first encrypts, all decrypt), each the URL-safe base64
 * of 32 bytes (44 characters). Pulp's key loader skips `#` lines, but its settings check decodes the file
 * itself as one key (`Fernet(key_file.read())`, pulpcore/app/settings.py@3.116.0): base64 skips line
 * breaks and stops at the first key's '=', so a comment is fatal before the first key and harmless after.
 */
export function fernetKeyProblem(value: string): string | undefined {
  const lines = value
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l);
  const keys = lines.filter((l) => !l.startsWith("#"));
  const valid = (k: string) =>
    /^[A-Za-z0-9_-]{43}=$/.test(k) &&
    Buffer.from(k.replace(/-/g, "+").replace(/_/g, "/"), "base64").length === 32;
  if (keys.length === 0 || !keys.every(valid)) {
    return "a Fernet key: the URL-safe base64 of 32 random bytes, 44 characters ending in '=' (one key per line)";
  }
  if (lines[0].startsWith("#")) {
    return (
      "Fernet keys with a key first: Pulp will not start with a '#' comment above the first key (its settings " +
      `check reads the file's start as the key); to drop the comments: ${DROP_FERNET_COMMENTS}`
    );
  }
  return undefined;
}

/** The container token-signing pair: PEM EC P-256 private and public keys that belong together. */
export function tokenKeyPairProblem(privatePem: string, publicPem: string): string | undefined {
  let priv: crypto.KeyObject;
  let pub: crypto.KeyObject;
  try {
    priv = crypto.createPrivateKey(privatePem);
    pub = crypto.createPublicKey(publicPem);
  } catch {
    return "PEM keys: a private key (BEGIN PRIVATE KEY or BEGIN EC PRIVATE KEY) and a public key (BEGIN PUBLIC KEY)";
  }
  if (
    priv.asymmetricKeyDetails?.namedCurve !== "prime256v1" ||
    pub.asymmetricKeyDetails?.namedCurve !== "prime256v1"
  ) {
    return "EC keys on the P-256 curve (prime256v1): Pulp signs container tokens with ES256";
  }
  const derived = crypto.createPublicKey(priv).export({ type: "spki", format: "der" });
  if (!derived.equals(pub.export({ type: "spki", format: "der" }))) {
    return "a matching pair: the public key is not the one of this private key";
  }
  return undefined;
}

/** PEM CA certificates, one or more: each BEGIN CERTIFICATE block must parse (node's X.509 reader). */
export function caCertificatesProblem(pem: string): string | undefined {
  const blocks: string[] = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const reason =
    "PEM certificates: one or more blocks from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----";
  if (blocks.length === 0) return reason;
  for (const [i, block] of blocks.entries()) {
    try {
      new crypto.X509Certificate(block);
    } catch {
      return `${reason} (certificate ${i + 1} of ${blocks.length} does not parse)`;
    }
  }
  return undefined;
}

/**
 * The signing key as `gpg --armor --export-secret-keys` prints it: one ASCII-armored private key block. A
 * public key, a binary export or a fingerprint would only fail later, in the Job that registers the services.
 * Whether it holds exactly one key without a passphrase is checked there, by gpg itself.
 */
export function signingKeyProblem(value: string): string | undefined {
  const begin = "-----BEGIN PGP PRIVATE KEY BLOCK-----";
  const end = "-----END PGP PRIVATE KEY BLOCK-----";
  const text = value.trim();
  if (text.includes("-----BEGIN PGP PUBLIC KEY BLOCK-----") && !text.includes(begin)) {
    return "the private key (gpg --armor --export-secret-keys <fingerprint>), not the public key";
  }
  if (!text.startsWith(begin) || !text.endsWith(end)) {
    return `one ASCII-armored private key, as gpg --armor --export-secret-keys <fingerprint> prints it (${begin} ... ${end})`;
  }
  if (text.split(begin).length !== 2) return "one private key block, not several";
  return undefined;
}
