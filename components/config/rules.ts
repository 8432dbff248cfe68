// Rules that involve more than one key. Each names every key involved and the way out.
import { compareVersions, FLOATING_TAGS, parseImage, parseQuantity, parseVersion } from "./formats";
import {
  ConfigProblem,
  keyOf,
  removeCommand,
  SECRET_GIVEN,
  secretSetCommand,
  setCommand,
  valueAt,
} from "./problems";
import { adminPasswordProblem } from "./strength";
import {
  azureAccountKeyProblem,
  gcsCredentialsProblem,
  fernetKeyProblem,
  nonEmptySecretProblem,
  signingKeyProblem,
} from "./validators";
import { ParsedConfig, webService } from "./schema";
import { ephemeralStorageProblems } from "./ephemeral";
import { OPERATOR_PARAMETERS } from "../database/parameters";
import { AZURE_CLIENT_ID_ANNOTATION, azureEndpointParts } from "../storage/azure";

/** Secret config keys, read with `getSecret` so their values stay encrypted in state and logs. */
export const SECRET_NAMES = [
  "adminPassword",
  "secretKey",
  "dbFieldsEncryptionKey",
  "databasePassword",
  "s3SecretAccessKey",
  "azureAccountKey",
  "gcsCredentials",
  "backupS3SecretAccessKey",
  "restoreS3SecretAccessKey",
  "signingKey",
  "ldapBindPassword",
] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

/** The keys a restore takes from its backup (the token key pair is regenerated: tokens are short-lived). */
export const RESTORE_KEYS = [
  "dbFieldsEncryptionKey",
  "secretKey",
  "adminPassword",
] as const satisfies readonly SecretName[];

/** What each secret must be for Pulp to start with it. */
const SECRET_RULES: Record<SecretName, (value: string) => string | undefined> = {
  adminPassword: adminPasswordProblem,
  // Its strength is warned about, not refused (loadConfig): see weakSecretKeyWarning.
  secretKey: nonEmptySecretProblem,
  dbFieldsEncryptionKey: fernetKeyProblem,
  databasePassword: nonEmptySecretProblem,
  s3SecretAccessKey: nonEmptySecretProblem,
  azureAccountKey: azureAccountKeyProblem,
  gcsCredentials: gcsCredentialsProblem,
  backupS3SecretAccessKey: nonEmptySecretProblem,
  restoreS3SecretAccessKey: nonEmptySecretProblem,
  signingKey: signingKeyProblem,
  ldapBindPassword: nonEmptySecretProblem,
};

/**
 * Sets pulp:signingKey from gpg: a key of many lines cannot be typed at the prompt `pulumi config set
 * --secret` shows, and a pipe keeps it out of the shell's history.
 */
export const SET_SIGNING_KEY =
  'gpg --armor --export-secret-keys "$SIGNING_KEY_ID" | pulumi config set --secret pulp:signingKey';
/** The key file as gcloud writes it (`gcloud iam service-accounts keys create key.json --iam-account ...`). */
export const SET_GCS_KEY = "pulumi config set --secret pulp:gcsCredentials < key.json";
/** Secrets set from a file or a pipe, whose value a prompt would mangle (several lines). */
const PIPED_SET: Partial<Record<SecretName, string>> = {
  signingKey: SET_SIGNING_KEY,
  gcsCredentials: SET_GCS_KEY,
};

/**
 * The supplied secret values, each checked for the format and strength Pulp needs. The problems never
 * contain the value: `given` is a marker, and the fixes remove the key (the program then generates one) or
 * ask for a new value at a prompt.
 */
export function checkSecrets(values: Partial<Record<SecretName, string>>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const name of SECRET_NAMES) {
    const value = values[name];
    if (value === undefined) continue;
    const reason = SECRET_RULES[name](value);
    if (!reason) continue;
    const generated = ["adminPassword", "secretKey", "dbFieldsEncryptionKey"].includes(name);
    problems.push({
      key: keyOf([name]),
      given: SECRET_GIVEN,
      message:
        `must be ${reason}` +
        (name === "dbFieldsEncryptionKey"
          ? "; on an install that already encrypted data, set the key it was created with"
          : ""),
      // Removing a generated secret lets the program generate one; the others prompt for the value, or read
      // it from a file or pipe (PIPED_SET).
      fix: generated ? removeCommand(keyOf([name])) : (PIPED_SET[name] ?? secretSetCommand(keyOf([name]))),
      ...(generated && name !== "dbFieldsEncryptionKey"
        ? { alternatives: [secretSetCommand(keyOf([name]))] }
        : {}),
    });
  }
  return problems;
}

/** Settings the program owns; setting them through extraSettings would fight the program. */
const MANAGED_SETTINGS = [
  "SECRET_KEY",
  "DATABASES",
  "DB_ENCRYPTION_KEY",
  "CONTENT_ORIGIN",
  "API_ROOT",
  "CONTENT_PATH_PREFIX",
  "ALLOWED_CONTENT_CHECKSUMS",
  "STORAGES",
  "MEDIA_ROOT",
  "CACHE_ENABLED",
  "WORKER_TYPE",
  "REDIS_HOST",
  "REDIS_PORT",
  "TOKEN_AUTH_DISABLED",
  "TOKEN_SERVER",
  "TOKEN_SIGNATURE_ALGORITHM",
  "PUBLIC_KEY_PATH",
  "PRIVATE_KEY_PATH",
];

/**
 * The key that writes a setting, when one set in this config does: pulp:ldap (components/ldap/ldap.ts) and
 * pulp:metrics. With it set, nothing else may set that setting.
 */
function writtenBy(config: ParsedConfig, name: string): string | undefined {
  if (config.ldap && (name === "AUTHENTICATION_BACKENDS" || name.startsWith("AUTH_LDAP_")))
    return "pulp:ldap";
  if (config.metrics && name === "OTEL_ENABLED") return "pulp:metrics";
  return undefined;
}

/**
 * The web servers' preStop delay in seconds (the `sleep 10` of pulpContainer in
 * components/workload/pulpProcess.ts; a unit test keeps the two equal). Endpoint removal reaches every proxy
 * in it, and only after it does the server get SIGTERM.
 */
export const PRE_STOP_SECONDS = 10;

/** Pulp's oldest PostgreSQL (pulpcore CHANGES.md, 3.85: "PostgreSQL >= 14 is required"; Django 5.2's too). */
export const MINIMUM_POSTGRESQL = 14;

/**
 * The PostgreSQL major version of an image whose tag is a plain version ("16", "15.6", "17.2-3",
 * "16.4-bookworm"); undefined for any other tag or a digest.
 */
export function postgresMajorOf(image: string): number | undefined {
  const tag = parseImage(image)?.tag;
  const match = tag ? /^(\d+)(\.\d+)*(-[A-Za-z0-9.-]+)?$/.exec(tag) : null;
  return match ? Number(match[1]) : undefined;
}

/** Query parameters that carry a credential: presigned S3 and GCS URLs, Azure SAS, bearer tokens. */
const CREDENTIAL_PARAMS =
  /^(x-amz-(signature|credential|security-token)|signature|awsaccesskeyid|x-goog-(signature|credential)|sig|token|access_token)$/i;

/** Whether a URL carries a credential (user info, or a signature or token in its query). */
export function urlHasCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (
      parsed.username !== "" ||
      parsed.password !== "" ||
      [...parsed.searchParams.keys()].some((k) => CREDENTIAL_PARAMS.test(k))
    );
  } catch {
    return false;
  }
}

/**
 * @param secretConfigKeys the top-level keys (without `pulp:`) the stack config holds as secrets, in whole or
 *   in part (`pulumi config set --secret --path` marks the whole top-level key); undefined when the caller
 *   cannot know (plain calls), which skips the checks that a credential is not in plain text
 */
export function checkRules(
  config: ParsedConfig,
  raw: Record<string, unknown>,
  suppliedSecrets: ReadonlySet<SecretName>,
  secretConfigKeys?: ReadonlySet<string>,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  // A secret key's value is not in `raw` (the secrets come apart): it is given, but never shown.
  const given = (path: PropertyKey[]) =>
    path.length === 1 && suppliedSecrets.has(path[0] as SecretName) ? SECRET_GIVEN : valueAt(raw, path);
  const add = (path: PropertyKey[], message: string, fix: string, ...alternatives: string[]) =>
    problems.push({
      key: keyOf(path),
      given: given(path),
      message,
      fix,
      ...(alternatives.length ? { alternatives } : {}),
    });

  // Database: exactly one source.
  const { external, cloudnativepg } = config.database;
  if (external && cloudnativepg) {
    problems.push({
      key: keyOf(["database"]),
      given: given(["database"]),
      message: "sets both database.external and database.cloudnativepg; Pulp uses one database",
      fix: removeCommand("pulp:database.external"),
      alternatives: [removeCommand("pulp:database.cloudnativepg")],
    });
  } else if (!external && !cloudnativepg) {
    problems.push({
      key: keyOf(["database"]),
      given: given(["database"]),
      message:
        "names no database; choose one: pulp:database.cloudnativepg (an in-cluster PostgreSQL that the " +
        "CloudNativePG operator runs) or pulp:database.external (a PostgreSQL 14 or newer you run, with its " +
        "password in pulp:databasePassword)",
      fix: setCommand("pulp:database.cloudnativepg.instances", 3),
      alternatives: [setCommand("pulp:database.external.host", "db.example.com")],
    });
  }
  if (external && !suppliedSecrets.has("databasePassword")) {
    add(
      ["database", "external"],
      "an external database needs its password in the secret key pulp:databasePassword",
      secretSetCommand("pulp:databasePassword"),
    );
  }
  if (cloudnativepg && !external && suppliedSecrets.has("databasePassword")) {
    add(
      ["databasePassword"],
      "is set, but CloudNativePG makes the database password itself (Secret <name>-db-app): this one would never reach Pulp",
      removeCommand("pulp:databasePassword"),
    );
  }

  // Storage: exactly one place for artifacts, and never RWO under several pods.
  const { pvc, s3, azure, gcs } = config.storage;
  const places = (["pvc", "s3", "azure", "gcs"] as const).filter(
    (place) => config.storage[place] !== undefined,
  );
  if (places.length > 1) {
    problems.push({
      key: keyOf(["storage"]),
      given: given(["storage"]),
      message: `sets ${places.map((place) => `storage.${place}`).join(" and ")}; artifacts live in one place`,
      fix: removeCommand(`pulp:storage.${places[0]}`),
      alternatives: places.slice(1).map((place) => removeCommand(`pulp:storage.${place}`)),
    });
  } else if (places.length === 0) {
    add(["storage"], "names no artifact storage", setCommand("pulp:storage.pvc.size", "50Gi"));
  }
  // Azure without the account's key: the pods sign in as a workload identity (settings/azureIdentity.ts).
  const azureIdentity = config.serviceAccount?.azureWorkloadIdentity;
  if (azure && !suppliedSecrets.has("azureAccountKey")) {
    if (!azureIdentity && config.serviceAccount?.annotations[AZURE_CLIENT_ID_ANNOTATION] === undefined) {
      add(
        ["storage", "azure"],
        "has no key (pulp:azureAccountKey), and the pods have no Azure workload identity to sign in with: " +
          "set the key, or name the identity AKS's webhook gives them (its client ID, in pulp:serviceAccount's annotations)",
        secretSetCommand("pulp:azureAccountKey"),
        setCommand(
          `pulp:serviceAccount.annotations["${AZURE_CLIENT_ID_ANNOTATION}"]`,
          "4a1c2d3e-0000-4000-8000-00000000abcd",
        ),
      );
    }
    if (azureEndpointParts(azure) === undefined) {
      add(
        ["storage", "azure", "endpointUrl"],
        `must be https://${azure.accountName}.blob.<suffix> without a key: django-storages then builds the endpoint ` +
          "from the account's name and a suffix, and a token is sent over https only",
        setCommand("pulp:storage.azure.endpointUrl", `https://${azure.accountName}.blob.core.windows.net`),
        secretSetCommand("pulp:azureAccountKey"),
      );
    }
    if (config.restore) {
      // As with S3 and GCS: the restore's check Job reads the container with the key.
      add(
        ["storage", "azure"],
        "a restore into object storage reads the container with the account's key, and pulp:azureAccountKey is not set (a restore does not use pulp:serviceAccount yet)",
        secretSetCommand("pulp:azureAccountKey"),
      );
    }
  }
  if (azureIdentity && !azure) {
    add(
      ["serviceAccount", "azureWorkloadIdentity"],
      "is set, but pulp:storage.azure is not: nothing signs in with it",
      removeCommand("pulp:serviceAccount.azureWorkloadIdentity"),
    );
  }
  if (azureIdentity && azure && suppliedSecrets.has("azureAccountKey")) {
    add(
      ["serviceAccount", "azureWorkloadIdentity"],
      "is set, but so is pulp:azureAccountKey, and the pods sign in with the key",
      removeCommand("pulp:serviceAccount.azureWorkloadIdentity"),
      removeCommand("pulp:azureAccountKey"),
    );
  }
  if (!azure && suppliedSecrets.has("azureAccountKey")) {
    add(["azureAccountKey"], "is set, but pulp:storage.azure is not", removeCommand("pulp:azureAccountKey"));
  }
  if (!gcs && suppliedSecrets.has("gcsCredentials")) {
    add(["gcsCredentials"], "is set, but pulp:storage.gcs is not", removeCommand("pulp:gcsCredentials"));
  }
  if (gcs?.signingServiceAccount && suppliedSecrets.has("gcsCredentials")) {
    add(
      ["storage", "gcs", "signingServiceAccount"],
      "names who signs the redirects without a key, but pulp:gcsCredentials is a key: the redirects are signed with it",
      removeCommand("pulp:storage.gcs.signingServiceAccount"),
    );
  }
  if (pvc?.existingClaim) {
    // The claim is the user's: what it holds, and how, is its own spec's.
    for (const field of ["size", "storageClass"] as const) {
      if (valueAt(raw, ["storage", "pvc", field]) === undefined) continue;
      add(
        ["storage", "pvc", field],
        `describes a claim the program would create, but pulp:storage.pvc.existingClaim names one that exists ` +
          `(${pvc.existingClaim}): its ${field} is its own`,
        removeCommand(`pulp:storage.pvc.${field}`),
      );
    }
  }
  if (s3?.accessKeyId !== undefined && !suppliedSecrets.has("s3SecretAccessKey")) {
    add(
      ["storage", "s3", "accessKeyId"],
      "a static key needs its secret, pulp:s3SecretAccessKey (or leave the key out: the pods' identity, pulp:serviceAccount)",
      secretSetCommand("pulp:s3SecretAccessKey"),
      removeCommand("pulp:storage.s3.accessKeyId"),
    );
  }
  if (s3 && s3.accessKeyId === undefined && config.restore) {
    // The restore's check and copy Jobs read the bucket with the static key; they do not run as the pods'
    // identity yet.
    add(
      ["storage", "s3", "accessKeyId"],
      "a restore into object storage reads the bucket with a static key, and none is set (a restore does not use pulp:serviceAccount yet)",
      setCommand("pulp:storage.s3.accessKeyId", "AKIAEXAMPLE"),
    );
  }
  if (gcs && config.restore && !suppliedSecrets.has("gcsCredentials")) {
    // As with S3: the restore's check Job reads the bucket with the key, not as the pods' identity.
    add(
      ["storage", "gcs"],
      "a restore into object storage reads the bucket with a service account key, and pulp:gcsCredentials is not set (a restore does not use pulp:serviceAccount yet)",
      SET_GCS_KEY,
    );
  }
  if (s3 && s3.accessKeyId === undefined && suppliedSecrets.has("s3SecretAccessKey")) {
    add(
      ["storage", "s3", "accessKeyId"],
      "pulp:s3SecretAccessKey is set, but not the key it belongs to",
      setCommand("pulp:storage.s3.accessKeyId", "AKIAEXAMPLE"),
      removeCommand("pulp:s3SecretAccessKey"),
    );
  }
  // Signing: the services and their key go together.
  if (config.signing && !suppliedSecrets.has("signingKey")) {
    add(
      ["signing"],
      "names signing services, but their key, pulp:signingKey, is not set",
      SET_SIGNING_KEY,
      removeCommand("pulp:signing"),
    );
  }
  if (!config.signing && suppliedSecrets.has("signingKey")) {
    add(
      ["signingKey"],
      "is set, but pulp:signing names no service to sign with it",
      `pulumi config set --path 'pulp:signing.services[0].name' rpm-metadata && pulumi config set --path 'pulp:signing.services[0].kind' detached`,
      removeCommand("pulp:signingKey"),
    );
  }
  // LDAP: the bind DN and its password go together; without a DN the server is asked anonymously.
  if (config.ldap?.bindDn !== undefined && !suppliedSecrets.has("ldapBindPassword")) {
    add(
      ["ldap", "bindDn"],
      "names the account Pulp searches the directory as, but its password, pulp:ldapBindPassword, is not set",
      secretSetCommand("pulp:ldapBindPassword"),
      removeCommand("pulp:ldap.bindDn"),
    );
  }
  if (config.ldap?.bindDn === undefined && suppliedSecrets.has("ldapBindPassword")) {
    add(
      ["ldapBindPassword"],
      config.ldap
        ? "is set, but pulp:ldap.bindDn, the account it belongs to, is not"
        : "is set, but pulp:ldap is not",
      config.ldap
        ? setCommand("pulp:ldap.bindDn", "cn=pulp,ou=services,dc=example,dc=com")
        : removeCommand("pulp:ldapBindPassword"),
      ...(config.ldap ? [removeCommand("pulp:ldapBindPassword")] : []),
    );
  }
  // A setting from a Secret: not one the program sets, and not also in extraSettings (which would win).
  for (const name of Object.keys(config.secretSettings ?? {})) {
    const top = name.split("__")[0];
    const own = MANAGED_SETTINGS.includes(top) || writtenBy(config, top) !== undefined;
    if (own || top in config.extraSettings) {
      add(
        ["secretSettings", name],
        own
          ? `${name} is set by the program from its own keys (its secrets are pulp: secret config); setting it here would fight them`
          : `${name} is also in pulp:extraSettings; keep it in one place (a credential here, from its Secret)`,
        removeCommand(keyOf(["secretSettings", name])),
        ...(own ? [] : [removeCommand(keyOf(["extraSettings", top]))]),
      );
    }
  }
  for (const name of Object.keys(config.extraSettings)) {
    const by = writtenBy(config, name);
    if (by) {
      add(
        ["extraSettings", name],
        `${name} is set by ${by}; setting it here as well would override it`,
        removeCommand(keyOf(["extraSettings", name])),
      );
    }
  }
  if (config.backup.s3?.accessKeyId !== undefined && !suppliedSecrets.has("backupS3SecretAccessKey")) {
    add(
      ["backup", "s3", "accessKeyId"],
      "a static key needs its secret, pulp:backupS3SecretAccessKey (or leave the key out: the pods' identity, pulp:serviceAccount)",
      secretSetCommand("pulp:backupS3SecretAccessKey"),
      removeCommand("pulp:backup.s3.accessKeyId"),
    );
  }
  if (
    config.backup.s3 &&
    config.backup.s3.accessKeyId === undefined &&
    suppliedSecrets.has("backupS3SecretAccessKey")
  ) {
    add(
      ["backup", "s3", "accessKeyId"],
      "pulp:backupS3SecretAccessKey is set, but not the key it belongs to",
      setCommand("pulp:backup.s3.accessKeyId", "AKIAEXAMPLE"),
      removeCommand("pulp:backupS3SecretAccessKey"),
    );
  }
  if (config.restore?.s3 && config.restore.s3.accessKeyId === undefined) {
    add(
      ["restore", "s3", "accessKeyId"],
      "a restore reads the backup's bucket with a static key (it does not use pulp:serviceAccount yet)",
      setCommand("pulp:restore.s3.accessKeyId", "AKIAEXAMPLE"),
    );
  }
  if (config.backup.s3 && !config.backup.enabled) {
    add(
      ["backup", "s3"],
      "says where backups go, but pulp:backup.enabled is not true: nothing takes them",
      setCommand("pulp:backup.enabled", true),
    );
  }
  if (pvc && !s3 && pvc.accessMode === "ReadWriteOnce") {
    const pods = config.api.replicas + config.content.replicas + config.worker.replicas;
    add(
      ["storage", "pvc", "accessMode"],
      `ReadWriteOnce attaches the volume to one node, but api, content and worker pods (${pods} now, more during a ` +
        'rolling update) all mount /var/lib/pulp: pods on another node fail with "Multi-Attach error" and every ' +
        "upgrade stalls. Use a storage class that serves ReadWriteMany (NFS, CephFS, EFS, Azure Files...; " +
        "pulp:storage.pvc.storageClass names it) or object storage (pulp:storage.s3)",
      setCommand("pulp:storage.pvc.accessMode", "ReadWriteMany"),
    );
  }

  // Backups run pg_dump from a PostgreSQL image: it must be at least the server's major version.
  if ((config.backup.enabled || config.restore) && !config.backup.image && !cloudnativepg?.imageName) {
    add(
      ["backup", "image"],
      `${config.backup.enabled ? "backups run pg_dump" : "a restore runs pg_restore"}, and no PostgreSQL image is known: set one whose major version is at least the ` +
        "database server's (the default is database.cloudnativepg.imageName, which is not set)",
      setCommand("pulp:backup.image", "ghcr.io/cloudnative-pg/postgresql:17"),
    );
  }

  // One place the backup comes from: a volume in the namespace (claim), an http(s) archive, the bucket.
  const sources = (["claim", "http", "s3"] as const).filter((k) => config.restore?.[k] !== undefined);
  if (sources.length > 1) {
    const [first, ...others] = sources;
    problems.push({
      key: keyOf(["restore", first]),
      given: given(["restore", first]),
      message: `and ${others.map((k) => `pulp:restore.${k}`).join(" and ")} each say where the backup is: keep one`,
      fix: removeCommand(`pulp:restore.${first}`),
      alternatives: others.map((k) => removeCommand(`pulp:restore.${k}`)),
    });
  }
  if (config.restore?.s3 && !suppliedSecrets.has("restoreS3SecretAccessKey")) {
    add(
      ["restore", "s3"],
      "reads the backup from the bucket with the secret key pulp:restoreS3SecretAccessKey, which is not set",
      secretSetCommand("pulp:restoreS3SecretAccessKey"),
    );
  }

  // The overwrite confirmation names the backup it is for: a later change of backup needs a new one.
  if (config.restore?.overwrite && config.restore.overwrite !== config.restore.backup) {
    add(
      ["restore", "overwrite"],
      `confirms an overwrite with backup ${config.restore.overwrite}, but pulp:restore.backup is ${config.restore.backup}`,
      setCommand("pulp:restore.overwrite", config.restore.backup),
    );
  }

  // Redis-backed features need Redis.
  if (!config.redis.enabled) {
    if (config.cacheEnabled) {
      add(
        ["cacheEnabled"],
        "the content cache needs Redis, and redis.enabled is false",
        setCommand("pulp:redis.enabled", true),
      );
    }
    if (config.workerType === "redis") {
      add(
        ["workerType"],
        'the "redis" worker type needs Redis, and redis.enabled is false',
        setCommand("pulp:redis.enabled", true),
      );
    }
  }

  // pulp-web's Service: only pulp-web has one entry for the API and the content.
  if (!config.web.enabled && valueAt(raw, ["web", "service"]) !== undefined) {
    add(
      ["web", "service"],
      "sets pulp-web's Service, but pulp-web is off (web.enabled is false): it would reach no pod",
      setCommand("pulp:web.enabled", true),
      removeCommand("pulp:web.service"),
    );
  }
  // The content cache keeps answers up to maxEntrySize: one above the whole cache would never be kept.
  const cache = config.web.contentCache;
  if (cache.enabled && (parseQuantity(cache.maxEntrySize) ?? 0) > (parseQuantity(cache.size) ?? 0)) {
    add(
      ["web", "contentCache", "maxEntrySize"],
      `is larger than the whole cache (web.contentCache.size is ${cache.size}): such an answer would never be kept`,
      setCommand("pulp:web.contentCache.maxEntrySize", cache.size),
      setCommand("pulp:web.contentCache.size", cache.maxEntrySize),
    );
  }
  const service = webService(config.web);
  if (service.nodePort !== undefined && service.type === "ClusterIP") {
    add(
      ["web", "service", "nodePort"],
      "is a port on every node, which only a NodePort or LoadBalancer Service opens (web.service.type is ClusterIP)",
      setCommand("pulp:web.service.type", "NodePort"),
      removeCommand("pulp:web.service.nodePort"),
    );
  }
  if (service.loadBalancerSourceRanges.length > 0 && service.type !== "LoadBalancer") {
    add(
      ["web", "service", "loadBalancerSourceRanges"],
      `limits the clients of a load balancer, and web.service.type is ${service.type}: it would admit every client`,
      setCommand("pulp:web.service.type", "LoadBalancer"),
      removeCommand("pulp:web.service.loadBalancerSourceRanges"),
    );
  }

  // Disruption budgets that would block every node drain.
  const budgets = [
    ["api", config.api.replicas, config.api.podDisruptionBudget],
    ["content", config.content.replicas, config.content.podDisruptionBudget],
    ["worker", config.worker.replicas, config.worker.podDisruptionBudget],
    ["web", config.web.enabled ? config.web.replicas : 0, config.web.podDisruptionBudget],
  ] as const;
  for (const [component, replicas, budget] of budgets) {
    if ("minAvailable" in budget && replicas > 0 && budget.minAvailable >= replicas) {
      const path = [component, "podDisruptionBudget", "minAvailable"];
      problems.push({
        key: keyOf(path),
        given: given(path),
        message: `minAvailable ${budget.minAvailable} with ${replicas} replica(s) allows no eviction: node drains and cluster upgrades would hang`,
        fix: setCommand(keyOf(path), Math.max(0, replicas - 1)),
        alternatives: [
          `${removeCommand(keyOf(path))} && ${setCommand(keyOf([component, "podDisruptionBudget", "maxUnavailable"]), 1)}`,
        ],
      });
    }
  }

  // The pulpcore version drives migrations and upgrade plans, so it must be known.
  const image = parseImage(config.image);
  const tagVersion = image?.tag && /^\d+\.\d+\.\d+$/.test(image.tag) ? image.tag : undefined;
  if (config.pulpcoreVersion && tagVersion && config.pulpcoreVersion !== tagVersion) {
    add(
      ["pulpcoreVersion"],
      `says ${config.pulpcoreVersion} but the image tag says ${tagVersion}`,
      removeCommand("pulp:pulpcoreVersion"),
    );
  }
  if (!config.pulpcoreVersion && !tagVersion && image && !FLOATING_TAGS.includes(image.tag as never)) {
    add(
      ["pulpcoreVersion"],
      `cannot be read from the image "${config.image}" (its tag is not a version): say which pulpcore version the image runs`,
      setCommand("pulp:pulpcoreVersion", "3.85.0"),
    );
  }

  problems.push(...versionProblems(config, raw, config.pulpcoreVersion ?? tagVersion));

  if (config.maintenance && config.idle) {
    add(
      ["idle"],
      "idle (everything at zero) and maintenance (content keeps serving) contradict each other",
      removeCommand("pulp:maintenance"),
    );
  }

  if (config.ingress.enabled && !config.ingress.host) {
    add(
      ["ingress", "host"],
      "an enabled ingress needs the host name it serves",
      setCommand("pulp:ingress.host", "pulp.example.com"),
    );
  }

  // A Route has no class: OpenShift's router serves every Route it admits. Kept, the key would say the
  // Routes go through a controller they never reach.
  if (config.ingress.kind === "Route" && config.ingress.className !== undefined) {
    add(
      ["ingress", "className"],
      "names an ingress class, and ingress.kind Route makes OpenShift Routes, which have none: the router " +
        "serves them whatever the class says",
      removeCommand("pulp:ingress.className"),
    );
  }

  if (
    config.ingress.routerAccess !== undefined &&
    !(config.ingress.kind === "Route" && config.ingress.tlsSecretName)
  ) {
    add(
      ["ingress", "routerAccess"],
      "grants OpenShift's router access to a Route's own certificate, and there is none: it needs " +
        "ingress.kind Route and ingress.tlsSecretName",
      removeCommand("pulp:ingress.routerAccess"),
    );
  }

  for (const name of Object.keys(config.extraSettings)) {
    if (MANAGED_SETTINGS.includes(name)) {
      add(
        ["extraSettings", name],
        `${name} is set by the program from its own keys; setting it here would fight them`,
        removeCommand(keyOf(["extraSettings", name])),
      );
    }
  }

  // A grace period no longer than the preStop sleep: the kubelet kills the web server before, or as, it
  // is told to stop, and every open request or download is cut.
  for (const [component, settings] of [
    ["api", config.api],
    ["content", config.content],
  ] as const) {
    if (settings.terminationGracePeriodSeconds <= PRE_STOP_SECONDS) {
      const fallback = component === "api" ? 60 : 45;
      add(
        [component, "terminationGracePeriodSeconds"],
        `${settings.terminationGracePeriodSeconds} s is no longer than the ${PRE_STOP_SECONDS} s preStop delay ` +
          `of the ${component} pods: the kubelet would kill the server before it could finish open requests. ` +
          `Allow the ${PRE_STOP_SECONDS} s and the server's own graceful stop (30 s)`,
        setCommand(keyOf([component, "terminationGracePeriodSeconds"]), fallback),
      );
    }
  }

  problems.push(...autoscalingProblems(config, raw));
  problems.push(...postgresProblems(config, raw));
  problems.push(...dataVolumeProblems(config, raw));
  problems.push(...ephemeralStorageProblems(config, raw));
  if (secretConfigKeys) problems.push(...plainCredentialProblems(config, secretConfigKeys));
  return problems;
}

/** An autoscaled process: the count is the autoscaler's, within bounds it can keep, on a measure it can read. */
function autoscalingProblems(config: ParsedConfig, raw: Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const process of ["api", "content", "worker", "web"] as const) {
    const autoscaling = config[process].autoscaling;
    if (!autoscaling) continue;
    const at = (...path: string[]) => [process, ...path];
    if (valueAt(raw, at("replicas")) !== undefined) {
      problems.push({
        key: keyOf(at("replicas")),
        given: valueAt(raw, at("replicas")),
        message:
          `is set, but pulp:${process}.autoscaling decides how many ${process} pods run: this count would ` +
          `never be used (the pods start at autoscaling.minReplicas)`,
        fix: removeCommand(keyOf(at("replicas"))),
        alternatives: [removeCommand(keyOf(at("autoscaling")))],
      });
    }
    if (autoscaling.minReplicas > autoscaling.maxReplicas) {
      problems.push({
        key: keyOf(at("autoscaling", "minReplicas")),
        given: autoscaling.minReplicas,
        message: `is above pulp:${process}.autoscaling.maxReplicas (${autoscaling.maxReplicas})`,
        fix: setCommand(keyOf(at("autoscaling", "maxReplicas")), autoscaling.minReplicas),
      });
    }
    // The HorizontalPodAutoscaler measures CPU use as a share of the request: without one it has no measure.
    if (process !== "worker" && config[process].resources.requests.cpu === undefined) {
      problems.push({
        key: keyOf(at("resources", "requests", "cpu")),
        given: undefined,
        message:
          `is not set, and pulp:${process}.autoscaling.cpuUtilization is a share of it: the autoscaler ` +
          `could not measure the pods' use`,
        fix: setCommand(keyOf(at("resources", "requests", "cpu")), "250m"),
      });
    }
  }
  if (config.web.autoscaling && !config.web.enabled) {
    problems.push({
      key: keyOf(["web", "autoscaling"]),
      given: valueAt(raw, ["web", "autoscaling"]),
      message: "is set, but pulp-web does not run (pulp:web.enabled is false): nothing would be scaled",
      fix: setCommand("pulp:web.enabled", true),
      alternatives: [removeCommand("pulp:web.autoscaling")],
    });
  }
  return problems;
}

/** PostgreSQL older than Pulp supports, where the config says which it is. */
function postgresProblems(config: ParsedConfig, raw: Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const image = config.database.cloudnativepg?.imageName;
  const major = image ? postgresMajorOf(image) : undefined;
  if (image && major !== undefined && major < MINIMUM_POSTGRESQL) {
    const path = ["database", "cloudnativepg", "imageName"];
    problems.push({
      key: keyOf(path),
      given: valueAt(raw, path),
      message: `runs PostgreSQL ${major} (its tag says so), and Pulp needs PostgreSQL ${MINIMUM_POSTGRESQL} or newer`,
      fix: setCommand(keyOf(path), "ghcr.io/cloudnative-pg/postgresql:17"),
      alternatives: [removeCommand(keyOf(path))],
    });
  }
  // Settings the operator sets itself: its webhook refuses the Cluster, after the pods may have rolled.
  for (const name of Object.keys(config.database.cloudnativepg?.parameters ?? {})) {
    if (!OPERATOR_PARAMETERS.has(name)) continue;
    const path = ["database", "cloudnativepg", "parameters", name];
    problems.push({
      key: keyOf(path),
      given: valueAt(raw, path),
      message:
        "is set by CloudNativePG itself (ports, TLS, replication, archiving and logging are the operator's), " +
        "and it refuses a value for it",
      fix: removeCommand(keyOf(path)),
    });
  }
  const external = config.database.external?.version;
  if (external !== undefined && external < MINIMUM_POSTGRESQL) {
    const path = ["database", "external", "version"];
    problems.push({
      key: keyOf(path),
      given: valueAt(raw, path),
      message:
        `says the external database runs PostgreSQL ${external}, and Pulp needs PostgreSQL ${MINIMUM_POSTGRESQL} ` +
        "or newer: upgrade the server first (pg_upgrade or a dump into a new one), then set its version here",
      fix: setCommand(keyOf(path), MINIMUM_POSTGRESQL),
    });
  }
  return problems;
}

/**
 * URLs that carry a credential must be secret config: a backup's URL (usually presigned: whoever has it
 * reads the backup, keys included) always, a data volume's when it carries one. In plain text they sit in
 * Pulumi.<stack>.yaml, the repository that holds it, and every preview's log.
 */
function plainCredentialProblems(
  config: ParsedConfig,
  secretConfigKeys: ReadonlySet<string>,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (config.restore?.http && !secretConfigKeys.has("restore")) {
    const key = keyOf(["restore", "http", "url"]);
    problems.push({
      key,
      given: SECRET_GIVEN,
      message:
        "is in the stack config in plain text: a backup's URL is usually presigned, a credential that reads the " +
        "whole backup (its keys included). Set it as a secret; the command asks for the URL and does not echo it",
      fix: secretSetCommand(key),
    });
  }
  if (config.proxy && !secretConfigKeys.has("proxy")) {
    for (const field of ["httpProxy", "httpsProxy"] as const) {
      const url = config.proxy[field];
      if (!url || !urlHasCredentials(url)) continue;
      const key = keyOf(["proxy", field]);
      problems.push({
        key,
        given: SECRET_GIVEN,
        message:
          "carries the proxy's user and password, and is in the stack config in plain text. Set it as a " +
          "secret; the command asks for the URL and does not echo it",
        fix: secretSetCommand(key),
      });
    }
  }
  if (!secretConfigKeys.has("dataVolumes")) {
    config.dataVolumes.forEach((dv, i) => {
      if (!urlHasCredentials(dv.url)) return;
      const key = keyOf(["dataVolumes", i, "url"]);
      problems.push({
        key,
        given: SECRET_GIVEN,
        message:
          "carries a credential (user info, or a signature or token in its query) and is in the stack config in " +
          "plain text. Set it as a secret; the command asks for the URL and does not echo it",
        fix: secretSetCommand(key),
      });
    });
  }
  return problems;
}

/**
 * Settings pulpcore reads only from some release on: below it they are silently ignored, so the install
 * would run without what the config asked for.
 */
const MINIMUM_PULPCORE: readonly {
  path: PropertyKey[];
  applies: (config: ParsedConfig) => boolean;
  version: string;
  why: string;
  fix: string;
}[] = [
  {
    path: ["workerType"],
    applies: (c) => c.workerType === "redis",
    version: "3.108.0",
    why: 'the "redis" worker type (setting WORKER_TYPE) arrived in pulpcore 3.108.0',
    fix: setCommand("pulp:workerType", "pulpcore"),
  },
  {
    path: ["storage", "s3"],
    applies: (c) => c.storage.s3 !== undefined,
    version: "3.70.0",
    why: "pulpcore reads object storage from the STORAGES setting from 3.70.0 on; older releases would keep artifacts in the pod",
    fix: removeCommand("pulp:storage.s3"),
  },
];

function versionProblems(
  config: ParsedConfig,
  raw: Record<string, unknown>,
  version?: string,
): ConfigProblem[] {
  const running = version ? parseVersion(version) : undefined;
  if (!running) return [];
  return MINIMUM_PULPCORE.filter(
    (rule) => rule.applies(config) && compareVersions(running, parseVersion(rule.version)!) < 0,
  ).map((rule) => ({
    key: keyOf(rule.path),
    given: valueAt(raw, rule.path),
    message: `needs pulpcore >= ${rule.version}, and the image runs ${version}: ${rule.why}; or use a newer image`,
    fix: rule.fix,
    alternatives: [setCommand("pulp:image", `quay.io/pulp/pulp-minimal:${rule.version}`)],
  }));
}

/** CDI imports: unique names, and room in the namespace quota for the scratch space an import needs. */
function dataVolumeProblems(config: ParsedConfig, raw: Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  config.dataVolumes.forEach((dv, i) => {
    if (seen.has(dv.name)) {
      problems.push({
        key: keyOf(["dataVolumes", i, "name"]),
        given: dv.name,
        message: "is used by an earlier data volume; each DataVolume names its own PVC",
        fix: setCommand(keyOf(["dataVolumes", i, "name"]), `${dv.name}-${i + 1}`),
      });
    }
    seen.add(dv.name);
  });

  const limit = config.namespaceQuota.requestsStorage;
  const quota = limit === undefined ? undefined : parseQuantity(limit);
  if (quota === undefined) return problems;
  const gi = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)}Gi`;
  let needed = 0;
  const parts: string[] = [];
  // A claim of the user's is there already: the quota counts it among what is used, not what is asked.
  if (config.storage.pvc && !config.storage.s3 && !config.storage.pvc.existingClaim) {
    const size = parseQuantity(config.storage.pvc.size) ?? 0;
    needed += size;
    parts.push(`artifacts ${gi(size)}`);
  }
  if (config.database.cloudnativepg) {
    const size =
      (parseQuantity(config.database.cloudnativepg.storageSize) ?? 0) *
      config.database.cloudnativepg.instances;
    needed += size;
    parts.push(`database ${gi(size)}`);
  }
  const restoreImport = config.restore?.http && { name: "restore", size: config.restore.http.size };
  for (const dv of [...config.dataVolumes, ...(restoreImport ? [restoreImport] : [])]) {
    // CDI imports through a scratch PVC as large as the target, so an import needs twice its size.
    const size = 2 * (parseQuantity(dv.size) ?? 0);
    needed += size;
    parts.push(`import ${dv.name} 2 x ${dv.size}`);
  }
  if (needed > quota) {
    problems.push({
      key: keyOf(["namespaceQuota", "requestsStorage"]),
      given: valueAt(raw, ["namespaceQuota", "requestsStorage"]),
      message:
        `${limit} is less than the storage this install requests: ${gi(needed)} (${parts.join(" + ")}). ` +
        "CDI importers would fail with an exceeded-quota error and leave the DataVolume pending",
      fix: setCommand("pulp:namespaceQuota.requestsStorage", `${Math.ceil(needed / 2 ** 30)}Gi`),
    });
  }
  return problems;
}
