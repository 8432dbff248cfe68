// Unit, plain functions (no mocks): the named validators of components/config/validators.ts; the Fernet
// key check against pulpcore's own key readers, run by python3 (part of the toolchain the tests need).
import { execFileSync, spawnSync } from "child_process";
import * as crypto from "crypto";
import {
  dns1035LabelProblem,
  fernetKeyProblem,
  instanceNameProblem,
  nonEmptySecretProblem,
  positiveQuantityProblem,
  tokenKeyPairProblem,
} from "../../../../components/config/validators";

const fernet = () => crypto.randomBytes(32).toString("base64").replace(/\+/g, "-").replace(/\//g, "_");
const pem = () => {
  const pair = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  return {
    priv: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    pub: pair.publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
};

test("DNS-1035: Service names start with a letter and stay within 63 characters", () => {
  expect(dns1035LabelProblem("pulp-api")).toBeUndefined();
  expect(dns1035LabelProblem("1pulp-api")).toMatch(/starting with a letter/);
  expect(dns1035LabelProblem("a".repeat(64))).toMatch(/at most 63/);
  expect(dns1035LabelProblem("Pulp")).toBeDefined();
});

test("the instance name is judged by the names derived from it", () => {
  expect(instanceNameProblem("pulp")).toBeUndefined();
  // A valid DNS-1123 label whose Services would be rejected by the API server.
  expect(instanceNameProblem("1pulp")).toMatch(/derived Service name "1pulp-api"/);
  expect(instanceNameProblem("a".repeat(42))).toBeUndefined();
  expect(instanceNameProblem("a".repeat(43))).toMatch(/db-fields-encryption/);
});

test("quantities that size something must be above zero", () => {
  expect(positiveQuantityProblem("10Gi")).toBeUndefined();
  expect(positiveQuantityProblem("0")).toBeDefined();
  expect(positiveQuantityProblem("0Gi")).toBeDefined();
  expect(positiveQuantityProblem("-1Gi")).toBeDefined();
});

test("secrets: non-empty, one line", () => {
  expect(nonEmptySecretProblem("s3cret")).toBeUndefined();
  expect(nonEmptySecretProblem("")).toBe("not empty");
  expect(nonEmptySecretProblem("pw\n")).toMatch(/line break/);
});

test("Fernet keys: URL-safe base64 of 32 bytes, one per line", () => {
  expect(fernetKeyProblem(fernet())).toBeUndefined();
  expect(fernetKeyProblem(`${fernet()}\n# rotated out next\n${fernet()}\n`)).toBeUndefined();
  expect(fernetKeyProblem("")).toBeDefined();
  expect(fernetKeyProblem(crypto.randomBytes(16).toString("base64"))).toBeDefined();
  // Standard base64 with '+' or '/' is not URL-safe.
  expect(fernetKeyProblem(`${"+".repeat(43)}=`)).toBeDefined();
});

// pulpcore's two readers of DB_ENCRYPTION_KEY, run by python3: the settings check at every start
// (validate_db_encryption_key_hook, pulpcore/app/settings.py@3.116.0: Fernet(key_file.read())) and the key
// loader of encrypted fields (_fernet, pulpcore/app/models/fields.py@3.116.0). Fernet(key) is what
// cryptography's Fernet.__init__ checks: urlsafe_b64decode, then 32 bytes.
const PULPCORE_LOADS_KEYS = `
import base64, binascii, sys
def Fernet(key):
    try:
        key = base64.urlsafe_b64decode(key)
    except binascii.Error as exc:
        raise ValueError("Fernet key must be 32 url-safe base64-encoded bytes.") from exc
    if len(key) != 32:
        raise ValueError("Fernet key must be 32 url-safe base64-encoded bytes.")
data = sys.stdin.buffer.read()
try:
    Fernet(data)
    [Fernet(k.strip()) for k in data.splitlines(keepends=True) if not k.startswith(b"#") and k.strip() != b""]
except ValueError:
    sys.exit(1)
`;
const pulpcoreLoads = (value: string) =>
  spawnSync("python3", ["-c", PULPCORE_LOADS_KEYS], { input: value }).status === 0;

test("Fernet keys: accepted only when pulpcore starts with them; a comment above the first key is refused", () => {
  const [a, b] = [fernet(), fernet()];
  const cases = [
    a,
    `${a}\n${b}\n`,
    `\n\n  ${a}\r\n${b}\r\n`,
    `${a}\n# the old key, until rotate-db-key has run\n${b}\n`,
    `# rotated 2026-11-25\n${a}\n${b}\n`,
    `# key\n${a}`,
    `${a}${b}`,
    `${a}\n${crypto.randomBytes(16).toString("base64url")}`,
  ];
  for (const value of cases) {
    if (fernetKeyProblem(value) === undefined) expect([value, pulpcoreLoads(value)]).toEqual([value, true]);
  }
  // pulpcore refuses to start with the comment first (B18 of the runtime review): so does the config.
  const commented = `# rotated 2026-11-25\n${a}\n${b}\n`;
  expect(pulpcoreLoads(commented)).toBe(false);
  const problem = fernetKeyProblem(commented)!;
  expect(problem).toMatch(/comment above the first key/);
  expect(problem).toContain(
    "pulumi config get pulp:dbFieldsEncryptionKey | grep -v '^[[:space:]]*#' | pulumi config set --secret pulp:dbFieldsEncryptionKey",
  );
  expect(problem).not.toContain(a);
  // The fix's filter leaves what pulpcore starts with.
  const dropped = execFileSync("grep", ["-v", "^[[:space:]]*#"], { input: commented }).toString();
  expect([fernetKeyProblem(dropped), pulpcoreLoads(dropped)]).toEqual([undefined, true]);
});

test("token keys: a PEM EC P-256 pair that belongs together", () => {
  const a = pem();
  const b = pem();
  expect(tokenKeyPairProblem(a.priv, a.pub)).toBeUndefined();
  expect(tokenKeyPairProblem(a.priv, b.pub)).toMatch(/matching pair/);
  expect(tokenKeyPairProblem("not a key", a.pub)).toMatch(/PEM keys/);
  const rsa = crypto.generateKeyPairSync("rsa", { modulusLength: 1024 });
  expect(
    tokenKeyPairProblem(
      rsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      rsa.publicKey.export({ type: "spki", format: "pem" }).toString(),
    ),
  ).toMatch(/P-256/);
});
