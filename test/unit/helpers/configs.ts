// Stack configs for tests: the dev stack as committed, and a minimal valid one.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { decode } from "../../../components/config/load";
import { parseConfig } from "../../../components/config/parse";
import { ConfigError, ConfigProblem } from "../../../components/config/problems";
import { SecretName } from "../../../components/config/rules";

export const REPO = path.resolve(__dirname, "../../..");

/** The `config:` block of Pulumi.<stack>.yaml, keys with their namespace. */
export function stackConfig(stack: string): Record<string, unknown> {
  const doc = yaml.load(fs.readFileSync(path.join(REPO, `Pulumi.${stack}.yaml`), "utf8")) as {
    config: Record<string, unknown>;
  };
  return doc.config;
}

/** The kwok scenarios' base config (test/e2e/kwok.stack.yaml), keys with their namespace. */
export function kwokStackConfig(): Record<string, unknown> {
  const doc = yaml.load(fs.readFileSync(path.join(REPO, "test/e2e/kwok.stack.yaml"), "utf8")) as {
    config: Record<string, unknown>;
  };
  return doc.config;
}

const isSecret = (v: unknown) => typeof v === "object" && v !== null && "secure" in v;

/** Raw config (no `pulp:` prefix) as parseConfig takes it; secrets are not part of it (loadConfig reads them apart). */
export function rawOf(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config)
      .filter(([k, v]) => k.startsWith("pulp:") && !isSecret(v))
      // Pulumi writes scalars as strings ("true"); loadConfig decodes them the same way.
      .map(([k, v]) => [k.slice("pulp:".length), typeof v === "string" ? decode(v) : v]),
  );
}

export const MINIMAL: Record<string, unknown> = {
  contentOrigin: "https://pulp.example.com",
  database: { cloudnativepg: {} },
};

/** The problems parseConfig reports for MINIMAL with `changes` (raw keys), as "key: message"; [] when valid. */
export function problemsOf(changes: Record<string, unknown>): string[] {
  try {
    parseConfig({ ...MINIMAL, ...changes });
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems.map((p) => `${p.key}: ${p.message}`);
  }
}

/** The problems parseConfig reports for MINIMAL with `changes` and the stack's `secrets`, whole; [] when valid. */
export function configProblems(
  changes: Record<string, unknown>,
  secrets: Partial<Record<SecretName, string>> = {},
): ConfigProblem[] {
  try {
    parseConfig({ ...MINIMAL, ...changes }, new Set(Object.keys(secrets) as SecretName[]), secrets);
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems;
  }
}

/** A CA certificate that parses (self-signed, EC, valid until 2126), for pulp:trustedCa. */
export const CA = `-----BEGIN CERTIFICATE-----
MIIBnTCCAUOgAwIBAgIUAcz8AN0oa7dIOWSYVHv0cNWeIjowCgYIKoZIzj0EAwIw
IzEhMB8GA1UEAwwYcHVscC1wdWx1bWkgdW5pdC10ZXN0IENBMCAXDTI2MTEyMzE2
NTcwNVoYDzIxMjYxMDMwMTY1NzA1WjAjMSEwHwYDVQQDDBhwdWxwLXB1bHVtaSB1
bml0LXRlc3QgQ0EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQKsegblVW8Vrhb
TW+nLaY3JzrVdYAfmENcP5FXdJP+Zrsv3sazROoAcCJ47tWcMW71+izIdIWeavni
Yztln2hXo1MwUTAdBgNVHQ4EFgQUer1CDR4MVwoL2It1rf34z0nxZ8UwHwYDVR0j
BBgwFoAUer1CDR4MVwoL2It1rf34z0nxZ8UwDwYDVR0TAQH/BAUwAwEB/zAKBggq
hkjOPQQDAgNIADBFAiAgn6TvjNpfZRmtuJtnbZDYA7V6z7HqktR845PfugkPRQIh
ALaLeDNdCkcyb/gLAnijwI+7T2kHp4zsPd3ZCsBkcftT
-----END CERTIFICATE-----`;
