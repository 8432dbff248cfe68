import * as pulumi from "@pulumi/pulumi";
import { parseConfig, PulpConfig } from "./parse";
import { CONFIG_NAMESPACE } from "./problems";
import { SECRET_NAMES, SecretName } from "./rules";

/** Secret values from the stack config; each stays a Pulumi secret end to end. */
export type SuppliedSecrets = Partial<Record<SecretName, pulumi.Output<string>>>;

export interface LoadedConfig {
  config: PulpConfig;
  secrets: SuppliedSecrets;
}

/**
 * Reads the `pulp:` stack config, validates all of it and returns the defaulted install, before any
 * resource exists. Values are strings in the stack config; objects, arrays, numbers and booleans are
 * JSON (`pulumi config set --path` writes them that way).
 */
export function loadConfig(): LoadedConfig {
  const all = pulumi.runtime.allConfig();
  const prefix = `${CONFIG_NAMESPACE}:`;
  const raw: Record<string, unknown> = {};
  const supplied = new Set<SecretName>();
  const secretValues: Partial<Record<SecretName, string>> = {};
  for (const [fullKey, text] of Object.entries(all)) {
    if (!fullKey.startsWith(prefix)) continue;
    const key = fullKey.slice(prefix.length);
    if ((SECRET_NAMES as readonly string[]).includes(key)) {
      supplied.add(key as SecretName);
      secretValues[key as SecretName] = text;
      continue;
    }
    raw[key] = decode(text);
  }
  const config = parseConfig(raw, supplied, secretValues);
  const stackConfig = new pulumi.Config(CONFIG_NAMESPACE);
  const secrets: SuppliedSecrets = {};
  for (const name of supplied) secrets[name] = stackConfig.requireSecret(name);
  return { config, secrets };
}

/** JSON where the text is JSON (objects, arrays, numbers, booleans), else the plain string. */
export function decode(text: string): unknown {
  const trimmed = text.trim();
  if (/^[[{]/.test(trimmed) || /^(true|false|-?\d+(\.\d+)?)$/.test(trimmed)) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return text;
    }
  }
  return text;
}
