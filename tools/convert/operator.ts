// What pulp-operator 2.0.0 makes and reads, as the converter needs it: the shapes of its objects, the Secrets
// a Pulp CR names and their keys (controllers/repo_manager/secret.go), the settings its settings.py holds
// that this program sets itself, and the few helpers the converter's steps share.
import { ConfigProblem } from "../../components/config/problems";
import { SecretName } from "../../components/config/rules";

export const COMPONENTS = ["api", "content", "worker", "web"] as const;
export type Component = (typeof COMPONENTS)[number];

/** The keys of the operator's Secrets (controllers/repo_manager/secret.go, 2.0.0). */
export const OPERATOR_SECRETS = {
  adminPassword: { field: "admin_password_secret", suffix: "admin-password", key: "password" },
  secretKey: { field: "pulp_secret_key", suffix: "secret-key", key: "secret_key" },
  dbFieldsEncryptionKey: {
    field: "db_fields_encryption_secret",
    suffix: "db-fields-encryption",
    key: "database_fields.symmetric.key",
  },
} as const;
/** The keys of `database.external_db_secret` that are config: `database.external.*` (secret.go databaseSettings). */
export const EXTERNAL_DB = {
  host: "POSTGRES_HOST",
  port: "POSTGRES_PORT",
  name: "POSTGRES_DB_NAME",
  user: "POSTGRES_USERNAME",
  sslmode: "POSTGRES_SSLMODE",
} as const;
export const EXTERNAL_DB_PASSWORD = "POSTGRES_PASSWORD";
/**
 * The operator's own PostgreSQL (no `external_db_secret`): the StatefulSet `<name>-database` behind the
 * Service `<name>-database-svc`, and the Secret `<name>-postgres-configuration` Pulp reads it from, with
 * these config keys and their values at 2.0.0 (controllers/repo_manager/database.go databaseConfigSecret:
 * only the password is random, the sslmode is `postgres_ssl_mode`, default prefer).
 */
export const MANAGED_DB = {
  host: { key: "host", made: (name: string) => `${name}-database-svc` },
  port: { key: "port", made: () => "5432" },
  name: { key: "database", made: () => "pulp" },
  user: { key: "username", made: () => "pulp" },
  sslmode: { key: "sslmode", made: () => "prefer" },
} as const;
export const MANAGED_DB_PASSWORD = "password";
export const managedDbSecret = (name: string): string => `${name}-postgres-configuration`;
/** The keys of `object_storage_s3_secret` that are config (secret.go s3Settings), and its secret one. */
export const S3 = {
  bucket: "s3-bucket-name",
  endpointUrl: "s3-endpoint",
  region: "s3-region",
  accessKeyId: "s3-access-key-id",
  addressingStyle: "s3-addressing-style",
} as const;
export const S3_SECRET_KEY = "s3-secret-access-key";
/** The keys of `object_storage_azure_secret` that are config (secret.go azureSettings). */
export const AZURE = {
  accountName: "azure-account-name",
  container: "azure-container",
  location: "azure-container-path",
} as const;
/** Its secret keys: the account key, or a connection string (which holds one). */
export const AZURE_ACCOUNT_KEY = "azure-account-key";
export const AZURE_CONNECTION_STRING = "azure-connection-string";
/** Its GCS Secret's keys (controllers/repo_manager/secret.go gcsSettings): no key, the pods' identity. */
export const GCS = {
  bucket: "gcs-bucket-name",
  iamSignBlob: "gcs-iam-sign-blob",
  querystringAuth: "gcs-querystring-auth",
  fileOverwrite: "gcs-file-overwrite",
} as const;

/** A Kubernetes object as a YAML file or kubectl gives it. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: Record<string, unknown>;
}

/** What the converter knows of a Secret: its key names, and the values of the keys that are config. */
export interface SecretView {
  keys: string[];
  values: Record<string, string>;
}

/** The Secrets (and the ConfigMap) a CR names, and which of their keys hold config rather than secrets. */
export interface References {
  secrets: { name: string; configKeys: string[]; why: string }[];
  configMaps: { name: string; why: string }[];
}

/** Where a secret config key's value comes from: a key of a Secret in the CR's namespace. */
export interface SecretSource {
  secret: string;
  key: string;
}

export interface Note {
  /** The CR field, e.g. `image_version`, `api.hpa`, `custom_pulp_settings AUTH_LDAP_BIND_PASSWORD`. */
  field: string;
  text: string;
}

export interface Conversion {
  /** Raw stack config, keys without `pulp:` (parseConfig's and parseArgs' input). */
  config: Record<string, unknown>;
  secrets: Partial<Record<SecretName, SecretSource>>;
  notes: Note[];
  /** What parseConfig finds wrong with `config` (and the secrets it names): fixed in the stack afterwards. */
  problems: ConfigProblem[];
}

export interface ConvertOptions {
  /** The ConfigMaps the CR names, by name: their data. */
  configMaps?: Record<string, Record<string, string>>;
  /** PulpBackup and PulpRestore objects of the CR's namespace; those of other Pulp CRs are left alone. */
  backups?: KubeObject[];
  restores?: KubeObject[];
  /** `pulp:instanceName`; default `<name>-pulumi`. */
  instanceName?: string;
}

/** Nothing can be converted: each reason says what is missing and how to give it. */
export class ConvertError extends Error {
  constructor(readonly reasons: string[]) {
    super(
      reasons.length === 1 ? reasons[0] : `cannot convert:\n${reasons.map((r) => `  - ${r}`).join("\n")}`,
    );
    this.name = "ConvertError";
  }
}

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
export const obj = (v: unknown): Obj => (isObj(v) ? v : {});

/** Whether a field holds something (unset, empty and false are the operator's "not set"). */
export function isSet(v: unknown): boolean {
  if (v === undefined || v === null || v === "" || v === false) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isObj(v)) return Object.keys(v).length > 0;
  return true;
}

/** The default Secret names the operator gives a CR that names none. */
export function secretName(spec: Obj, name: string, which: keyof typeof OPERATOR_SECRETS): string {
  const s = OPERATOR_SECRETS[which];
  return text(spec[s.field]) ?? `${name}-${s.suffix}`;
}

/** The Secrets and the ConfigMap a CR names, for a reader to fetch (read.ts). */
export function references(cr: KubeObject): References {
  const spec = obj(cr.spec);
  const name = cr.metadata?.name ?? "";
  const out: References = { secrets: [], configMaps: [] };
  for (const which of Object.keys(OPERATOR_SECRETS) as (keyof typeof OPERATOR_SECRETS)[]) {
    out.secrets.push({
      name: secretName(spec, name, which),
      configKeys: [],
      why: OPERATOR_SECRETS[which].field,
    });
  }
  const external = text(obj(spec.database).external_db_secret);
  if (external) {
    out.secrets.push({
      name: external,
      configKeys: Object.values(EXTERNAL_DB),
      why: "database.external_db_secret",
    });
  } else {
    out.secrets.push({
      name: managedDbSecret(name),
      configKeys: Object.values(MANAGED_DB).map((k) => k.key),
      why: "database",
    });
  }
  const s3 = text(spec.object_storage_s3_secret);
  if (s3) {
    out.secrets.push({ name: s3, configKeys: Object.values(S3), why: "object_storage_s3_secret" });
  }
  const azure = text(spec.object_storage_azure_secret);
  if (azure) {
    out.secrets.push({ name: azure, configKeys: Object.values(AZURE), why: "object_storage_azure_secret" });
  }
  const gcs = text(spec.object_storage_gcs_secret);
  if (gcs) out.secrets.push({ name: gcs, configKeys: Object.values(GCS), why: "object_storage_gcs_secret" });

  const signingScripts = text(spec.signing_scripts);
  if (signingScripts && text(spec.signing_secret)) {
    out.secrets.push({ name: text(spec.signing_secret)!, configKeys: [], why: "signing_secret" });
    out.secrets.push({ name: signingScripts, configKeys: [], why: "signing_scripts" });
  }
  const sso = text(spec.sso_secret);
  if (sso) out.secrets.push({ name: sso, configKeys: [], why: "sso_secret" });
  const ldap = obj(spec.ldap);
  if (text(ldap.config)) {
    const configKeys = LDAP_CONFIG_KEYS.flatMap((k) => [k, k.toUpperCase()]);
    out.secrets.push({ name: text(ldap.config)!, configKeys, why: "ldap.config" });
  }
  if (text(ldap.ca)) out.secrets.push({ name: text(ldap.ca)!, configKeys: ["ca.crt"], why: "ldap.ca" });
  const settings = text(spec.custom_pulp_settings);
  if (settings) out.configMaps.push({ name: settings, why: "custom_pulp_settings" });
  return out;
}

/**
 * The keys of pulp-operator's LDAP Secret (`ldap.config`) whose values are config: the operator writes each
 * `auth_ldap_*` key (any case) into settings.py upper-cased (controllers/repo_manager/ldap.go). The bind
 * password is a secret, read as one.
 */
export const LDAP_CONFIG_KEYS = [
  "auth_ldap_server_uri",
  "auth_ldap_start_tls",
  "auth_ldap_bind_dn",
  "auth_ldap_user_search",
  "auth_ldap_user_attr_map",
  "auth_ldap_group_search",
  "auth_ldap_group_type",
  "auth_ldap_mirror_groups",
  "auth_ldap_require_group",
  "auth_ldap_deny_group",
  "auth_ldap_user_flags_by_group",
];

/** The settings the program sets from its own keys (rules.ts MANAGED_SETTINGS), and those it derives. */
export const PROGRAM_SETTINGS = new Set([
  "SECRET_KEY",
  "DATABASES",
  "DB_ENCRYPTION_KEY",
  "STORAGES",
  "MEDIA_ROOT",
  "CACHE_ENABLED",
  "REDIS_HOST",
  "REDIS_PORT",
  "REDIS_PASSWORD",
  "REDIS_DB",
  "TOKEN_SERVER",
  "TOKEN_SIGNATURE_ALGORITHM",
  "PUBLIC_KEY_PATH",
  "PRIVATE_KEY_PATH",
  "ANSIBLE_API_HOSTNAME",
  "PYPI_API_HOSTNAME",
  "STATIC_ROOT",
  "ANSIBLE_CERTS_DIR",
  "FILE_UPLOAD_TEMP_DIR",
  "WORKING_DIRECTORY",
]);
/** Settings that become keys of their own (custom_pulp_settings wins over the CR's field, as in the operator). */
export const SETTING_KEYS: Record<string, string> = {
  CONTENT_ORIGIN: "contentOrigin",
  API_ROOT: "apiRoot",
  CONTENT_PATH_PREFIX: "contentPathPrefix",
  ALLOWED_CONTENT_CHECKSUMS: "allowedContentChecksums",
  WORKER_TYPE: "workerType",
};
/** A name that looks like a credential: its literal value is not copied into plain-text stack config. */
export const CREDENTIAL_NAME = /PASSWORD|PASSWD|SECRET|TOKEN|CREDENTIAL|PRIVATE|_KEY$|^KEY$/i;

/** The operator's CONTENT_PORT (components/workload/pulpProcess.ts; a unit test keeps them equal). */
export const CONTENT_PORT = 24816;

/** Whether `pulumi config set --path` can write the value: no null, no empty list or map anywhere. */
export function settable(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0 && value.every(settable);
  if (isObj(value)) return Object.keys(value).length > 0 && Object.values(value).every(settable);
  return true;
}
