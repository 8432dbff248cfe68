// The pod spec of a Pulp process (api, content, worker, or the migration Job): one image, the process
// chosen by command, settings.py and keys mounted from Secrets, secrets as PULP_* env.
import { identityEnv, identityMounts, identityVolumes, PodIdentityRuntime } from "../identity/podIdentity";
import * as k8s from "@pulumi/kubernetes";
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { compareVersions, parseVersion } from "../config/formats";
import { ProbeTuning, ResourcesConfig } from "../config/schema";
import { scratchSize, TINY } from "../config/ephemeral";
import { SecretKeyRef } from "../secrets/pulpSecrets";
import { databaseCaMounts, databaseCaVolumes } from "../database/database";
import { proxyEnv, ProxyRuntime } from "../proxy/proxy";
import { gcsEnv, gcsMounts, GcsRuntime, gcsVolumes } from "../storage/gcs";
import {
  DatabaseSettings,
  DB_FIELDS_KEY_FILE,
  KEYS_DIR,
  PULP_DATA_DIR,
  SETTINGS_PATH,
  TOKEN_PRIVATE_KEY_FILE,
  TOKEN_PUBLIC_KEY_FILE,
} from "../settings/render";

type Probe = k8s.types.input.core.v1.Probe;
type Container = k8s.types.input.core.v1.Container;

export type PulpProcess = "api" | "content" | "worker";

export const API_PORT = 24817;
export const CONTENT_PORT = 24816;

/** What every Pulp container reads. */
export interface PulpRuntime {
  image: string;
  settingsSecretName: pulumi.Input<string>;
  secretKey: SecretKeyRef;
  dbFieldsKey: SecretKeyRef;
  databasePassword: SecretKeyRef;
  /** Where the database is; its CA, when it has one, is mounted for libpq. */
  database?: DatabaseSettings;
  s3SecretKey?: SecretKeyRef;
  /** storage.azure: the connection string with the account's key. */
  azureConnection?: SecretKeyRef;
  /** storage.gcs: the key file and the endpoint, when there are. */
  gcs?: GcsRuntime;
  tokenKeysSecret?: string;
  dataVolume: k8s.types.input.core.v1.Volume;
  apiRoot: string;
  contentPathPrefix: string;
  /** The release the image runs ("" when unknown): some probes depend on it. */
  pulpcoreVersion: string;
  /** The tasking system: the "pulpcore" workers' check wakes stranded tasks (workerCheck.py). */
  workerType: "pulpcore" | "redis";
  /** The identity the pods run as (pulp:serviceAccount), for object storage without static keys. */
  podIdentity?: PodIdentityRuntime;
  /** pulp:proxy: the proxy variables, their URLs from a Secret. */
  proxy?: ProxyRuntime;
  /** pulp:secretSettings: settings from the user's Secrets, by setting name. */
  secretSettings?: Record<string, SecretKeyRef>;
}

/** Sets $py to the interpreter Pulp itself runs with (pulpcore-manager's shebang). */
export const PULP_PYTHON = 'py=$(sed -n "1s/^#!//p" /usr/local/bin/pulpcore-manager)';

/**
 * The worker's startup and readiness check; with --wake it wakes the workers for stranded tasks. It goes
 * into the probe without its docstring, which explains it here, not in every pod's description.
 */
export const WORKER_CHECK_SCRIPT = fs
  .readFileSync(path.join(__dirname, "workerCheck.py"), "utf8")
  .replace(/^"""[\s\S]*?"""\n/, "# Pulp on Kubernetes, components/workload/workerCheck.py\n");

/**
 * The content app's startup check: HEAD on its distribution listing, which answers before the listing
 * query. With DOMAIN_ENABLED the listing is only at <prefix><domain>/ and the bare prefix is a 404
 * (pulpcore/content/__init__.py@3.116.0), so the default domain's listing is asked next.
 * Arguments: the port, then the paths to try.
 */
export const CONTENT_CHECK_SCRIPT = `import http.client, sys
status = "no answer"
for path in sys.argv[2:]:
    try:
        c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=4)
        c.request("HEAD", path)
        status = c.getresponse().status
    except OSError as e:
        status = e
        break
    if status < 300:
        sys.exit(0)
    if status != 404:
        break
print("content app: HEAD", path, "->", status)
sys.exit(1)
`;

/** From 3.112.0 on, `livez` skips the domain lookup, so it answers while the database is down. */
const LIVEZ_WITHOUT_DATABASE = parseVersion("3.112.0")!;

function livezIsDatabaseFree(version: string): boolean {
  const running = parseVersion(version);
  return running !== undefined && compareVersions(running, LIVEZ_WITHOUT_DATABASE) >= 0;
}

/**
 * A secret as a Pulp setting. dynaconf reads PULP_* values as TOML ("123456" becomes a number, "true" a
 * bool), so the value reaches it as `@str <value>`: Kubernetes expands `$(VAR)` from the variable read
 * from the Secret, whose name dynaconf ignores (no PULP_ prefix).
 */
export const secretSetting = (setting: string, ref: SecretKeyRef): k8s.types.input.core.v1.EnvVar[] => [
  { name: `SECRET_${setting}`, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } },
  { name: `PULP_${setting}`, value: `@str $(SECRET_${setting})` },
];

export function pulpEnv(rt: PulpRuntime): k8s.types.input.core.v1.EnvVar[] {
  return [
    ...secretSetting("SECRET_KEY", rt.secretKey),
    // dynaconf merges `__`-nested env keys into DATABASES["default"], so the password never sits in settings.py.
    ...secretSetting("DATABASES__default__PASSWORD", rt.databasePassword),
    ...(rt.s3SecretKey ? secretSetting("STORAGES__default__OPTIONS__secret_key", rt.s3SecretKey) : []),
    ...(rt.azureConnection
      ? secretSetting("STORAGES__default__OPTIONS__connection_string", rt.azureConnection)
      : []),
    ...gcsEnv(rt.gcs),
    ...identityEnv(rt.podIdentity),
    ...proxyEnv(rt.proxy),
    ...Object.keys(rt.secretSettings ?? {})
      .sort()
      .flatMap((setting) => secretSetting(setting, rt.secretSettings![setting])),
  ];
}

/**
 * The pod's volumes. /tmp gets what the container's ephemeral-storage limit leaves beside the working
 * directory (an emptyDir with object storage) and its logs (config/ephemeral.ts scratchSize).
 */
export function pulpVolumes(rt: PulpRuntime, resources: ResourcesConfig): k8s.types.input.core.v1.Volume[] {
  const workDir = (rt.dataVolume.emptyDir as { sizeLimit?: string } | undefined)?.sizeLimit;
  return [
    { name: "settings", secret: { secretName: rt.settingsSecretName, defaultMode: 0o440 } },
    { name: "db-fields-key", secret: { secretName: rt.dbFieldsKey.name, defaultMode: 0o440 } },
    ...(rt.tokenKeysSecret
      ? [{ name: "token-keys", secret: { secretName: rt.tokenKeysSecret, defaultMode: 0o440 } }]
      : []),
    rt.dataVolume,
    { name: "tmp", emptyDir: { sizeLimit: scratchSize(resources.limits["ephemeral-storage"], workDir) } },
    ...gcsVolumes(rt.gcs),
    ...identityVolumes(rt.podIdentity),
    ...(rt.database ? databaseCaVolumes(rt.database) : []),
  ];
}

export function pulpVolumeMounts(rt: PulpRuntime): k8s.types.input.core.v1.VolumeMount[] {
  const key = (file: string, volume: string) => ({
    name: volume,
    mountPath: `${KEYS_DIR}/${file}`,
    subPath: file,
    readOnly: true,
  });
  return [
    { name: "settings", mountPath: SETTINGS_PATH, subPath: "settings.py", readOnly: true },
    key(DB_FIELDS_KEY_FILE, "db-fields-key"),
    ...(rt.tokenKeysSecret
      ? [key(TOKEN_PRIVATE_KEY_FILE, "token-keys"), key(TOKEN_PUBLIC_KEY_FILE, "token-keys")]
      : []),
    { name: String(rt.dataVolume.name), mountPath: PULP_DATA_DIR },
    { name: "tmp", mountPath: "/tmp" },
    ...gcsMounts(rt.gcs),
    ...identityMounts(rt.podIdentity),
    ...(rt.database ? databaseCaMounts(rt.database) : []),
  ];
}

/** Creates the directories Pulp expects before it starts (a missing tmp crashed workers, pulp-operator #1338). */
export function initDirsContainer(rt: PulpRuntime): Container {
  return {
    name: "init-dirs",
    image: rt.image,
    command: ["/bin/sh", "-c", `mkdir -p ${PULP_DATA_DIR}/media ${PULP_DATA_DIR}/tmp`],
    volumeMounts: [{ name: String(rt.dataVolume.name), mountPath: PULP_DATA_DIR }],
    resources: {
      requests: { cpu: "10m", memory: "32Mi", "ephemeral-storage": TINY.request },
      limits: { memory: "64Mi", "ephemeral-storage": TINY.limit },
    },
  };
}

type ProbeTunings = { startup: ProbeTuning; readiness: ProbeTuning; liveness: ProbeTuning };

const tuned = (base: Probe, tuning: ProbeTuning): Probe => ({ ...base, ...tuning });

/**
 * One check used twice: as the startup probe, patient enough for the entrypoint's waits on the database
 * and on migrations (10 minutes), then as the readiness probe (unless another is given). Liveness is
 * separate, or absent.
 */
function probeSet(
  check: Probe,
  liveness: Probe | undefined,
  tuning: ProbeTunings,
  readinessPeriodSeconds = 10,
  readiness: Probe = check,
): Pick<Container, "startupProbe" | "readinessProbe" | "livenessProbe"> {
  return {
    startupProbe: tuned(
      { ...check, periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 60 },
      tuning.startup,
    ),
    readinessProbe: tuned(
      { ...readiness, periodSeconds: readinessPeriodSeconds, timeoutSeconds: 10, failureThreshold: 3 },
      tuning.readiness,
    ),
    livenessProbe: liveness && tuned(liveness, tuning.liveness),
  };
}

/**
 * Probes per process: liveness never depends on the database, or a database outage would restart every
 * pod. Before 3.112.0 `livez` reads the database (DomainMiddleware), so the api is then probed by TCP.
 */
export function pulpProbes(process: PulpProcess, rt: PulpRuntime, tuning: ProbeTunings) {
  const patient = { periodSeconds: 20, timeoutSeconds: 10, failureThreshold: 5 };
  switch (process) {
    case "api":
      return probeSet(
        { httpGet: { path: `${rt.apiRoot}api/v3/status/`, port: API_PORT } },
        livezIsDatabaseFree(rt.pulpcoreVersion)
          ? { httpGet: { path: `${rt.apiRoot}api/v3/livez/`, port: API_PORT }, ...patient }
          : { tcpSocket: { port: API_PORT }, ...patient },
        tuning,
      );
    case "content": {
      // Started once the app answers its distribution listing (readyz.py cannot tell: it picks its check
      // from PID 1's command line, which after exec names neither pulp-api nor pulp-content). Ready while it
      // accepts connections: every request, HEAD included, looks its domain up in the database
      // (pulpcore/content/authentication.py validate_domain), so an HTTP readiness check would take every
      // pod out of the Service for a database blip, in which no request can be served anyway.
      const command = ["/bin/sh", "-c", `${PULP_PYTHON}\nexec "$py" -c "$@"`, "content-check"];
      const paths = [rt.contentPathPrefix, `${rt.contentPathPrefix}default/`];
      const args = [CONTENT_CHECK_SCRIPT, String(CONTENT_PORT), ...paths];
      const tcp = { tcpSocket: { port: CONTENT_PORT } };
      return probeSet(
        { exec: { command: [...command, ...args] } },
        { ...tcp, periodSeconds: 20, timeoutSeconds: 5, failureThreshold: 5 },
        tuning,
        10,
        tcp,
      );
    }
    case "worker": {
      // No HTTP port; a worker busy with a long task must not be killed, so there is no liveness probe.
      // The script travels as an argument: nothing to mount, and a change to it rolls the workers.
      const command = ["/bin/sh", "-c", `${PULP_PYTHON}\nexec "$py" -c "$@"`, "worker-check"];
      const args = [WORKER_CHECK_SCRIPT, ...(rt.workerType === "pulpcore" ? ["--wake"] : [])];
      return probeSet({ exec: { command: [...command, ...args] } }, undefined, tuning, 30);
    }
  }
}

export const PROCESS_COMMAND: Record<PulpProcess, string[]> = {
  api: ["pulp-api"],
  content: ["pulp-content"],
  worker: ["pulp-worker"],
};

/**
 * From 3.81.0 on, pulpcore-api and pulpcore-content bind [::] only where an IPv6 socket binds to ::1, and
 * 0.0.0.0 elsewhere (pulpcore/app/netutil.py has_ipv6, the --bind default in app/ and content/
 * entrypoint.py); the images' entry scripts pass no --bind, so they start on nodes without IPv6.
 */
const BINDS_WITHOUT_IPV6 = parseVersion("3.81.0")!;

/**
 * Before 3.81.0 the default is [::] on every node, and without IPv6 gunicorn fails ("[Errno 97] Address
 * family not supported by protocol"). There, at start, with pulpcore's own test failing, the entry script
 * finds first on PATH a pulpcore-api (pulpcore-content) that adds --bind 0.0.0.0:<port>; with IPv6 it runs
 * as the image has it. Arguments: the entry script, the gunicorn entry point, the port.
 */
const BIND_IPV4_WITHOUT_IPV6 = `${PULP_PYTHON}
if ! "$py" -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null &&
  real=$(command -v "$2") && dir=$(mktemp -d) &&
  printf '#!/bin/sh\\nexec %s --bind 0.0.0.0:%s "$@"\\n' "$real" "$3" > "$dir/$2" && chmod 755 "$dir/$2"; then
  echo "no IPv6 here: $2 binds 0.0.0.0:$3"
  PATH="$dir:$PATH"
fi
exec "$1"`;

/** The container's command: the image's entry script, which waits for the database and migrations. */
export function processCommand(process: PulpProcess, rt: PulpRuntime): string[] {
  const running = parseVersion(rt.pulpcoreVersion);
  if (process === "worker" || !running || compareVersions(running, BINDS_WITHOUT_IPV6) >= 0) {
    return PROCESS_COMMAND[process];
  }
  const [entry, port] = process === "api" ? ["pulpcore-api", API_PORT] : ["pulpcore-content", CONTENT_PORT];
  return ["/bin/sh", "-c", BIND_IPV4_WITHOUT_IPV6, "bind", ...PROCESS_COMMAND[process], entry, String(port)];
}

export function pulpContainer(
  process: PulpProcess,
  rt: PulpRuntime,
  resources: ResourcesConfig,
  probes: ProbeTunings,
): Container {
  const port = process === "api" ? API_PORT : process === "content" ? CONTENT_PORT : undefined;
  return {
    name: process,
    image: rt.image,
    imagePullPolicy: "IfNotPresent",
    command: processCommand(process, rt),
    env: pulpEnv(rt),
    ports: port ? [{ name: "http", containerPort: port, protocol: "TCP" }] : undefined,
    volumeMounts: pulpVolumeMounts(rt),
    resources,
    ...pulpProbes(process, rt, probes),
    // The web servers: let the endpoint removal reach every proxy before the process stops taking requests.
    lifecycle: port ? { preStop: { exec: { command: ["/bin/sh", "-c", "sleep 10"] } } } : undefined,
  };
}

/** The container with `env` appended (unchanged when there is none, so its template stays the same). */
export function withEnv(env: k8s.types.input.core.v1.EnvVar[], c: Container): Container {
  if (env.length === 0) return c;
  return { ...c, env: [...((c.env as k8s.types.input.core.v1.EnvVar[] | undefined) ?? []), ...env] };
}
