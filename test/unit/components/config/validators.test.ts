// Unit, plain functions (no mocks): the named validators of components/config/validators.ts.
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
  expect(fernetKeyProblem(`# rotated\n${fernet()}\n${fernet()}\n`)).toBeUndefined();
  expect(fernetKeyProblem("")).toBeDefined();
  expect(fernetKeyProblem(crypto.randomBytes(16).toString("base64"))).toBeDefined();
  // Standard base64 with '+' or '/' is not URL-safe.
  expect(fernetKeyProblem(`${"+".repeat(43)}=`)).toBeDefined();
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
