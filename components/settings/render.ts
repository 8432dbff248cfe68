// settings.py as text, from plain values and Python expressions the program composes (PythonCode): the
// same input gives byte-identical output, so a re-run changes nothing and rolls nothing (pulp-operator
// #1649 rewrote it in random order and restarted every pod on every reconcile). Secrets never appear
// here: pods get them as PULP_* env.

import { AZURE_WORKLOAD_IDENTITY } from "./azureIdentity";

export const SETTINGS_PATH = "/etc/pulp/settings.py";
export const KEYS_DIR = "/etc/pulp/keys";
export const DB_FIELDS_KEY_FILE = "database_fields.symmetric.key";
export const TOKEN_PRIVATE_KEY_FILE = "container_auth_private_key.pem";
export const TOKEN_PUBLIC_KEY_FILE = "container_auth_public_key.pem";
export const PULP_DATA_DIR = "/var/lib/pulp";
/** Where the Pulp images collect static files at build time (pulp-operator and compose use the same). */
export const STATIC_ROOT = "/var/lib/operator/static/";

/**
 * The directory the database's CA certificate is mounted in, whole (not a subPath, which would never see
 * a renewed certificate): libpq reads the file at every connection.
 */
export const DATABASE_CA_DIR = "/etc/pulp/database-ca";
export const DATABASE_CA_FILE = `${DATABASE_CA_DIR}/ca.crt`;

export interface DatabaseSettings {
  host: string;
  port: number;
  name: string;
  user: string;
  sslmode: string;
  /** The CA the server's certificate is verified against (sslrootcert), from a Secret's key. */
  ca?: { secretName: string; key: string };
}

export interface S3Settings {
  bucket: string;
  endpointUrl?: string;
  region?: string;
  /** Unset: no static key; boto3 takes the pods' identity (pulp:serviceAccount) or the node's. */
  accessKeyId?: string;
}

/**
 * With a key, the key reaches the pods in a connection string from a Secret (storage/artifactStorage.ts).
 * Without one (`identity`), the pods sign in as a workload identity (azureIdentity.ts) at the endpoint
 * django-storages builds from the account and `suffix` (https://<account>.blob.<suffix>).
 */
export interface AzureSettings {
  accountName: string;
  container: string;
  location?: string;
  identity?: { suffix?: string };
}

/** Without a key the redirects are signed by IAM signBlob; a key (pulp:gcsCredentials) signs them itself. */
export interface GcsSettings {
  bucket: string;
  location?: string;
  projectId?: string;
  signingServiceAccount?: string;
  /** Whether a service account key is mounted (GOOGLE_APPLICATION_CREDENTIALS names it). */
  keyed: boolean;
}

export interface SettingsInput {
  contentOrigin: string;
  apiRoot: string;
  contentPathPrefix: string;
  allowedContentChecksums: readonly string[];
  database: DatabaseSettings;
  s3?: S3Settings;
  azure?: AzureSettings;
  gcs?: GcsSettings;
  redis?: { host: string; port: number };
  cacheEnabled: boolean;
  workerType: "pulpcore" | "redis";
  tokenAuth?: { server: string };
  /** pulpcore's OpenTelemetry metrics (pulp:metrics); the exporter's endpoint reaches the pods as env. */
  metrics?: boolean;
  /** Settings of other components (pulp:ldap's), rendered after the program's own and before `extra`. */
  components?: Record<string, unknown>;
  extra: Record<string, unknown>;
}

/**
 * libpq's limits on a dead database (its defaults: no connect timeout, keepalive after two hours, retransmits
 * for about 15 min). pulpcore ends a process whose heartbeat fails, by design (app/entrypoint.py,
 * content/__init__.py); a heartbeat stuck on a connection whose server vanished (a deleted or failed-over
 * instance) would end it minutes after the database is back, mid-request. With these it fails within
 * about 30 s, while the database is away, and a waiting worker notices a lost primary within a minute.
 */
const CONNECTION_LIMITS = {
  connect_timeout: 10,
  keepalives: 1,
  keepalives_idle: 30,
  keepalives_interval: 10,
  keepalives_count: 3,
  tcp_user_timeout: 30_000,
};

export function settingsValues(input: SettingsInput): Record<string, unknown> {
  const settings: Record<string, unknown> = {
    CONTENT_ORIGIN: input.contentOrigin,
    API_ROOT: input.apiRoot,
    CONTENT_PATH_PREFIX: input.contentPathPrefix,
    ALLOWED_CONTENT_CHECKSUMS: [...input.allowedContentChecksums].sort(),
    DATABASES: {
      default: {
        ENGINE: "django.db.backends.postgresql",
        HOST: input.database.host,
        PORT: input.database.port,
        NAME: input.database.name,
        USER: input.database.user,
        CONN_MAX_AGE: 0,
        OPTIONS: {
          sslmode: input.database.sslmode,
          ...(input.database.ca ? { sslrootcert: DATABASE_CA_FILE } : {}),
          ...CONNECTION_LIMITS,
        },
      },
    },
    DB_ENCRYPTION_KEY: `${KEYS_DIR}/${DB_FIELDS_KEY_FILE}`,
    // Pulp's storage docs: with object storage MEDIA_ROOT must be empty.
    MEDIA_ROOT: input.s3 || input.azure || input.gcs ? "" : `${PULP_DATA_DIR}/media`,
    STATIC_ROOT,
    FILE_UPLOAD_TEMP_DIR: `${PULP_DATA_DIR}/tmp`,
    WORKING_DIRECTORY: `${PULP_DATA_DIR}/tmp`,
    STORAGES: {
      default: input.s3
        ? {
            BACKEND: "storages.backends.s3.S3Storage",
            OPTIONS: {
              bucket_name: input.s3.bucket,
              ...(input.s3.accessKeyId ? { access_key: input.s3.accessKeyId } : {}),
              ...(input.s3.endpointUrl ? { endpoint_url: input.s3.endpointUrl } : {}),
              ...(input.s3.region ? { region_name: input.s3.region } : {}),
              default_acl: "private",
              signature_version: "s3v4",
              addressing_style: "path",
            },
          }
        : input.azure
          ? {
              BACKEND: "storages.backends.azure_storage.AzureStorage",
              OPTIONS: {
                account_name: input.azure.accountName,
                azure_container: input.azure.container,
                ...(input.azure.location ? { location: input.azure.location } : {}),
                ...(input.azure.identity
                  ? {
                      token_credential: azureWorkloadIdentity(),
                      ...(input.azure.identity.suffix
                        ? { endpoint_suffix: input.azure.identity.suffix }
                        : {}),
                    }
                  : {}),
                // As pulpcore's storage docs: the content app's redirects carry a SAS valid this long.
                expiration_secs: 60,
                overwrite_files: true,
              },
            }
          : input.gcs
            ? {
                BACKEND: "storages.backends.gcloud.GoogleCloudStorage",
                OPTIONS: {
                  bucket_name: input.gcs.bucket,
                  ...(input.gcs.location ? { location: input.gcs.location } : {}),
                  ...(input.gcs.projectId ? { project_id: input.gcs.projectId } : {}),
                  // Signed redirects valid this long, as Azure's SAS; without a key, IAM signs them.
                  expiration: 60,
                  ...(input.gcs.keyed ? {} : { iam_sign_blob: true }),
                  ...(input.gcs.signingServiceAccount ? { sa_email: input.gcs.signingServiceAccount } : {}),
                  file_overwrite: true,
                },
              }
            : { BACKEND: "pulpcore.app.models.storage.FileSystem" },
      staticfiles: { BACKEND: "django.contrib.staticfiles.storage.StaticFilesStorage" },
    },
    CACHE_ENABLED: input.cacheEnabled,
    WORKER_TYPE: input.workerType,
    // Plugins build client-facing URLs from these; their defaults name the api pod itself.
    ANSIBLE_API_HOSTNAME: input.contentOrigin,
    PYPI_API_HOSTNAME: input.contentOrigin,
    // pulp_container defaults to token auth; without TOKEN_SERVER its 401 challenge fails with a 500.
    TOKEN_AUTH_DISABLED: !input.tokenAuth,
  };
  // Only when asked: an install without pulp:metrics keeps its settings (and its pods).
  if (input.metrics) settings.OTEL_ENABLED = true;
  if (input.redis) {
    settings.REDIS_HOST = input.redis.host;
    settings.REDIS_PORT = input.redis.port;
  }
  if (input.tokenAuth) {
    settings.TOKEN_SERVER = input.tokenAuth.server;
    settings.TOKEN_SIGNATURE_ALGORITHM = "ES256";
    settings.PRIVATE_KEY_PATH = `${KEYS_DIR}/${TOKEN_PRIVATE_KEY_FILE}`;
    settings.PUBLIC_KEY_PATH = `${KEYS_DIR}/${TOKEN_PUBLIC_KEY_FILE}`;
  }
  return { ...settings, ...input.components, ...input.extra };
}

export function renderSettings(input: SettingsInput): string {
  const values = settingsValues(input);
  const lines = Object.keys(values)
    .sort()
    .map((key) => `${key} = ${toPython(values[key])}`);
  return [
    "# Rendered by the pulp Pulumi program from the stack config. Do not edit: run `pulumi up`.",
    ...importLines(Object.values(values)),
    ...definitions(Object.values(values)),
    ...lines,
    "",
  ].join("\n");
}

/**
 * A Python expression the program composes from its own names and validated values (each rendered with
 * toPython): never text taken from the config. `modules` are what it names; `need` says, in the error a
 * process gets when its image lacks them, which key wants what.
 */
export class PythonCode {
  constructor(
    readonly code: string,
    readonly modules: readonly string[],
    readonly need: string,
    /** Program text the expression names (a class), rendered once before the settings. */
    readonly definition?: string,
  ) {}
}

/** The workload identity's credential (azureIdentity.ts). */
const azureWorkloadIdentity = () => {
  const { code, modules, need, definition } = AZURE_WORKLOAD_IDENTITY;
  return new PythonCode(code, modules, need, definition);
};

/** `module.name`, such as ldap.SCOPE_SUBTREE. */
export const pythonName = (module: string, name: string, need: string) =>
  new PythonCode(`${module}.${name}`, [module], need);

/** `module.fn(args..., key=value...)`, keyword arguments sorted. */
export function pythonCall(
  module: string,
  fn: string,
  need: string,
  args: unknown[],
  kwargs: Record<string, unknown> = {},
): PythonCode {
  const parts = [
    ...args.map(toPython),
    ...Object.keys(kwargs)
      .sort()
      .map((k) => `${k}=${toPython(kwargs[k])}`),
  ];
  const nested = args.filter((a): a is PythonCode => a instanceof PythonCode).flatMap((a) => a.modules);
  return new PythonCode(`${module}.${fn}(${parts.join(", ")})`, [module, ...nested], need);
}

function codeIn(value: unknown): PythonCode[] {
  if (value instanceof PythonCode) return [value];
  if (Array.isArray(value)) return value.flatMap(codeIn);
  if (value && typeof value === "object") return Object.values(value).flatMap(codeIn);
  return [];
}

/**
 * The imports the expressions need, in one try: an image without them fails every process at start with
 * what is missing and why, instead of a bare ModuleNotFoundError. Nothing when no value is code, so the
 * file of an install without such keys is unchanged.
 */
function importLines(values: unknown[]): string[] {
  const code = values.flatMap(codeIn);
  if (code.length === 0) return [];
  const modules = [...new Set(code.flatMap((c) => c.modules))].sort();
  const needs = [...new Set(code.map((c) => c.need))].sort().join("; ");
  return [
    "try:",
    ...modules.map((m) => `    import ${m}`),
    "except ImportError as error:",
    `    raise ImportError(f"this image lacks the Python module {error.name}: ${pyFString(needs)}") from error`,
  ];
}

/** The definitions the expressions name, each once, in a stable order. */
function definitions(values: unknown[]): string[] {
  const texts = [...new Set(values.flatMap(codeIn).flatMap((c) => (c.definition ? [c.definition] : [])))];
  return texts.sort().flatMap((text) => ["", text, ""]);
}

/** Text inside a double-quoted f-string: quotes, backslashes and braces escaped. */
const pyFString = (text: string) =>
  JSON.stringify(text)
    .slice(1, -1)
    .replace(/[{}]/g, (b) => b + b);

/** A Python literal for a JSON-like value, with dict keys sorted. */
export function toPython(value: unknown): string {
  if (value instanceof PythonCode) return value.code;
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`settings cannot hold the number ${value}`);
    return String(value);
  }
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(toPython).join(", ")}]`;
  if (typeof value === "object") {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}: ${toPython((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(", ")}}`;
  }
  throw new Error(`settings cannot hold a ${typeof value}`);
}
