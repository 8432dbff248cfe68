// An install laid out as pulp-operator 2.0.0 lays one out for a `Pulp` resource with its own PostgreSQL,
// file storage and pulp-web, built on the real node from the test bed's images, without the operator (its
// Go module is not served here): the objects, names, labels, owner, Secret names and keys, settings.py,
// claim, database StatefulSet, migration and admin-password Jobs as a real run of the operator made them
// (a capture kept beside the project's own checkout, not in this repository: what it showed is written out
// here), and, for its own database, controllers/repo_manager at the operator's 2.0.0 tag
// (https://github.com/pulp/pulp-operator). Where the test bed differs: /bin/bash runs the operator's shell
// (its scripts use bash arrays; the images here are Debian's, whose /bin/sh is dash), the database runs
// the test bed's PostgreSQL image as its own user, and the Pulp CRD is a stand-in that only lets a `Pulp`
// resource exist (the operator's CRD is GPL-2.0-or-later), so that ownerReferences point at a real one.
import * as crypto from "crypto";
import { getJson, kubectl } from "../harness";

/**
 * A CPU request for what the operator runs with none (its Jobs and database by default): a pod without one
 * is BestEffort, whose CPU weight (2) loses to every Burstable pod's (51 for 50m) on a busy node. Beside
 * other suites the migration Job ran for over 25 minutes so; alone it takes about two.
 */
const FAIR_SHARE = { requests: { cpu: "50m" } };

/** A Kubernetes object as written here: plain JSON for kubectl apply. */
type Manifest = { metadata: Record<string, unknown> } & Record<string, unknown>;

export const OPERATOR_GROUP = "repo-manager.pulpproject.org";

export interface OperatorInstall {
  namespace: string;
  /** The Pulp resource's name. */
  name: string;
  release: string;
  adminPassword: string;
  /** Where clients reach it: pulp-web's Service, as the operator's settings name it. */
  baseUrl: string;
  /** The Pulp resource's uid: which resource this layout made, when another may have replaced it. */
  uid: string;
}

const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: pulps.${OPERATOR_GROUP}}
spec:
  group: ${OPERATOR_GROUP}
  names: {kind: Pulp, listKind: PulpList, plural: pulps, singular: pulp}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;

/** Labels the operator puts on a component's objects (settings.CommonLabels and the pod labels). */
function labels(name: string, component: string, app = `pulp-${component}`): Record<string, string> {
  return {
    app,
    "app.kubernetes.io/component": component,
    "app.kubernetes.io/instance": `${app}-${name}`,
    "app.kubernetes.io/managed-by": "pulp-operator",
    "app.kubernetes.io/name": app,
    "app.kubernetes.io/part-of": "pulp",
    pulp_cr: name,
  };
}

/** settings.py as the operator renders it into `<name>-server` (no Redis: cache disabled in the CR). */
function settingsPy(name: string, namespace: string, secretKey: string, dbPassword: string): string {
  const web = `http://${name}-web-svc.${namespace}.svc.cluster.local:24880`;
  return [
    "# This file is managed by Pulp operator.",
    "# DO NOT EDIT IT.",
    "ORPHAN_PROTECTION_TIME = 1440",
    `ANSIBLE_API_HOSTNAME = "${web}"`,
    'ANSIBLE_CERTS_DIR = "/etc/pulp/keys/"',
    `CONTENT_ORIGIN = "${web}"`,
    'DB_ENCRYPTION_KEY = "/etc/pulp/keys/database_fields.symmetric.key"',
    'PRIVATE_KEY_PATH = "/etc/pulp/keys/container_auth_private_key.pem"',
    'PUBLIC_KEY_PATH = "/etc/pulp/keys/container_auth_public_key.pem"',
    'STATIC_ROOT = "/var/lib/operator/static/"',
    "TOKEN_AUTH_DISABLED = False",
    'TOKEN_SIGNATURE_ALGORITHM = "ES256"',
    "DATABASES = {",
    "  'default': {",
    `    'HOST': '${name}-database-svc',`,
    "    'ENGINE': 'django.db.backends.postgresql_psycopg2',",
    "    'NAME': 'pulp',",
    "    'USER': 'pulp',",
    `    'PASSWORD': '${dbPassword}',`,
    "    'PORT': '5432',",
    "    'CONN_MAX_AGE': 0,",
    "    'OPTIONS': { 'sslmode': 'prefer' },",
    "  }",
    "}",
    "CACHE_ENABLED = False",
    `TOKEN_SERVER = "http://${name}-api-svc.${namespace}.svc.cluster.local:24817/token/"`,
    `SECRET_KEY = "${secretKey}"`,
    "",
  ].join("\n");
}

/**
 * The nginx.conf of the operator's `<name>-configmap`, as far as routing goes: its own locations, and those
 * of the pulp-web image's plugin snippets it includes (/etc/nginx/pulp/*.conf: the registry's /v2/, /token/
 * and the blobs it redirects to under /pulp/container/).
 */
function nginxConf(name: string): string {
  return `
pid /tmp/nginx.pid;
events { worker_connections 1024; }
http {
  client_max_body_size 10m;
  client_body_temp_path /tmp/client_body;
  proxy_temp_path /tmp/proxy;
  fastcgi_temp_path /tmp/fastcgi;
  uwsgi_temp_path /tmp/uwsgi;
  scgi_temp_path /tmp/scgi;
  access_log /dev/stdout;
  upstream pulp-content { server ${name}-content-svc:24816; }
  upstream pulp-api { server ${name}-api-svc:24817; }
  server {
    listen 8080 default_server;
    location /pulp/content/ { proxy_pass http://pulp-content; proxy_set_header Host $http_host; }
    location /pulp/api/v3/ { proxy_pass http://pulp-api; proxy_set_header Host $http_host; }
    location /v2/ { proxy_pass http://pulp-api; proxy_set_header Host $http_host; }
    location /pulp/container/ { proxy_pass http://pulp-content; proxy_set_header Host $http_host; }
    location /token/ { proxy_pass http://pulp-api; proxy_set_header Host $http_host; }
    location / { proxy_pass http://pulp-api; proxy_set_header Host $http_host; }
  }
}
`;
}

/** Secrets: the keys named and laid out as the operator names them (secret.go, database.go). */
function secrets(name: string, namespace: string, values: Record<string, Record<string, string>>) {
  return Object.entries(values).map(([suffix, stringData]) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: `${name}-${suffix}`, namespace, labels: labels(name, "secrets", "pulp") },
    type: "Opaque",
    stringData,
  }));
}

/**
 * Lays out the install in `namespace` under a Pulp resource `name`, runs its migration and admin-password
 * Jobs to completion, and waits until pulp-web answers `status/`.
 */
export function layOutOperatorInstall(
  namespace: string,
  name: string,
  images: { pulp: string; web: string; postgresql: string },
  release: string,
): OperatorInstall {
  kubectl(["apply", "-f", "-"], CRD);
  kubectl(["wait", "--for=condition=Established", `crd/pulps.${OPERATOR_GROUP}`, "--timeout=60s"]);
  kubectl(["create", "namespace", namespace]);
  const image = images.pulp.slice(0, images.pulp.lastIndexOf(":"));
  const webImage = images.web.slice(0, images.web.lastIndexOf(":"));
  kubectl(
    ["apply", "-f", "-"],
    JSON.stringify({
      apiVersion: `${OPERATOR_GROUP}/v1`,
      kind: "Pulp",
      metadata: { name, namespace },
      // The fixture's CR, with the operator's own PostgreSQL and no Redis.
      spec: {
        admin_password_secret: `${name}-admin`,
        pulp_secret_key: `${name}-secret-key`,
        db_fields_encryption_secret: `${name}-db-fields-encryption`,
        container_token_secret: `${name}-container-auth`,
        container_auth_private_key_name: "container_auth_private_key.pem",
        container_auth_public_key_name: "container_auth_public_key.pem",
        image,
        image_version: release,
        image_web: webImage,
        image_web_version: release,
        file_storage_access_mode: "ReadWriteMany",
        file_storage_size: "2Gi",
        file_storage_storage_class: "standard",
        cache: { enabled: false },
        api: { replicas: 1 },
        content: { replicas: 1 },
        worker: { replicas: 1 },
        web: { replicas: 1 },
      },
    }),
  );
  const uid = getJson(["pulp", name, "-n", namespace]).metadata.uid as string;
  const owned = (o: Manifest) => ({
    ...o,
    metadata: {
      ...o.metadata,
      ownerReferences: [
        {
          apiVersion: `${OPERATOR_GROUP}/v1`,
          kind: "Pulp",
          name,
          uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
  });

  const random = (bytes: number) => crypto.randomBytes(bytes).toString("base64url");
  const adminPassword = random(18);
  const secretKey = random(40);
  const dbPassword = random(24);
  const keyPair = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const objects: Manifest[] = [
    ...secrets(name, namespace, {
      admin: { password: adminPassword },
      "secret-key": { secret_key: secretKey },
      // A Fernet key: 32 bytes, URL-safe base64.
      "db-fields-encryption": {
        "database_fields.symmetric.key": crypto.randomBytes(32).toString("base64url") + "=",
      },
      "container-auth": {
        "container_auth_private_key.pem": keyPair.privateKey.export({
          type: "sec1",
          format: "pem",
        }) as string,
        "container_auth_public_key.pem": keyPair.publicKey.export({ type: "spki", format: "pem" }) as string,
      },
      "postgres-configuration": {
        password: dbPassword,
        username: "pulp",
        database: "pulp",
        port: "5432",
        host: `${name}-database-svc`,
        sslmode: "prefer",
        type: "managed",
      },
      server: { "settings.py": settingsPy(name, namespace, secretKey, dbPassword) },
    }),
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `${name}-configmap`, namespace, labels: labels(name, "webserver", "pulp-web") },
      data: { "nginx.conf": nginxConf(name) },
    },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name, namespace, labels: labels(name, "serviceaccount", "pulp") },
    },
    {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: `${name}-file-storage`, namespace, labels: labels(name, "storage", "pulp") },
      spec: {
        accessModes: ["ReadWriteMany"],
        storageClassName: "standard",
        resources: { requests: { storage: "2Gi" } },
      },
    },
    databaseStatefulSet(name, namespace, images.postgresql),
    // Headless, as the operator's (database.go serviceForDatabase): DNS answers with the ready pod's address.
    service(name, namespace, "database", 5432, 5432, { app: "postgresql", pulp_cr: name }, true),
    service(name, namespace, "api", 24817, 24817),
    service(name, namespace, "content", 24816, 24816),
    service(name, namespace, "web", 24880, 8080),
    ...jobs(name, namespace, images.pulp),
  ].map(owned);
  const apply = (items: Manifest[]) =>
    kubectl(["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items }));
  apply(objects);
  for (const job of ["pulpcore-migration", "reset-admin-password"]) {
    kubectl(["wait", "-n", namespace, "--for=condition=complete", `job/${name}-${job}`, "--timeout=600s"]);
  }
  // The Deployments once the migration is done, where the operator applies them beside it: their init
  // containers (wait_on_database_migrations.sh) start Pulp's manager every few seconds until it is, which
  // on a busy node took more CPU than the migration and slowed it (a CI rehearsal: the layout did not come
  // up in 600 s). The takeover reads what is there once the install serves, not the order it came in.
  apply(
    ["api", "content", "worker", "web"].map((c) =>
      owned(deployment(name, namespace, c, c === "web" ? images.web : images.pulp)),
    ),
  );
  for (const c of ["api", "content", "worker", "web"]) {
    kubectl(["rollout", "status", "-n", namespace, `deployment/${name}-${c}`, "--timeout=600s"]);
  }
  const ip = getJson(["service", `${name}-web-svc`, "-n", namespace]).spec.clusterIP;
  return { namespace, name, release, adminPassword, baseUrl: `http://${ip}:24880`, uid };
}

function service(
  name: string,
  namespace: string,
  component: string,
  port: number,
  target: number,
  selector?: Record<string, string>,
  headless = false,
) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: `${name}-${component}-svc`, namespace, labels: labels(name, component) },
    spec: {
      ...(headless ? { clusterIP: "None" } : {}),
      selector: selector ?? { "app.kubernetes.io/component": component, pulp_cr: name },
      ports: [{ name: `${component}-${port}`, port, targetPort: target, protocol: "TCP" }],
    },
  };
}

/** A key of `<name>-postgres-configuration`, the Secret the operator's pods read the database from. */
const dbConfig = (name: string, key: string) => ({
  secretKeyRef: { name: `${name}-postgres-configuration`, key },
});

/** The volumes and mounts every Pulp container of the operator's has (settings.py, the fields key, data). */
function pulpVolumes(name: string, withData = true) {
  const secret = (suffix: string, key: string, path = key) => ({
    name: `${name}-${suffix}`,
    secret: { secretName: `${name}-${suffix}`, items: [{ key, path }] },
  });
  return {
    volumes: [
      secret("server", "settings.py"),
      secret("db-fields-encryption", "database_fields.symmetric.key"),
      ...(withData
        ? [{ name: "file-storage", persistentVolumeClaim: { claimName: `${name}-file-storage` } }]
        : []),
    ],
    mounts: [
      { name: `${name}-server`, mountPath: "/etc/pulp/settings.py", subPath: "settings.py", readOnly: true },
      {
        name: `${name}-db-fields-encryption`,
        mountPath: "/etc/pulp/keys/database_fields.symmetric.key",
        subPath: "database_fields.symmetric.key",
        readOnly: true,
      },
      ...(withData ? [{ name: "file-storage", mountPath: "/var/lib/pulp" }] : []),
    ],
  };
}

const env = (name: string) => [
  { name: "POSTGRES_SERVICE_HOST", valueFrom: dbConfig(name, "host") },
  { name: "POSTGRES_SERVICE_PORT", valueFrom: dbConfig(name, "port") },
];

/** The init container's wait, as the operator runs it before every Pulp process. */
const WAIT = "/usr/bin/wait_on_postgres.py\n/usr/bin/wait_on_database_migrations.sh";

/**
 * The operator's readiness timing for api and content (controllers/deployment.go, setReadinessProbe):
 * ten seconds to answer, one miss takes the pod out of its Service. A 1 s probe on the busy node took the
 * operator's api out for 10 s in the middle of a takeover (CI), where the operator's own would not.
 */
const OPERATOR_PROBE_TIMING = {
  initialDelaySeconds: 3,
  periodSeconds: 10,
  timeoutSeconds: 10,
  failureThreshold: 1,
};

/** The operator's shell for api and content: its entry point with its gunicorn options. */
const gunicorn = (process: string, port: number, workersVar: string) =>
  `if which pulpcore-${process}\nthen\n  ENTRYPOINT=("pulpcore-${process}")\nelse\n  exit 1\nfi\n` +
  `exec "\${ENTRYPOINT[@]}" --bind "[::]:${port}" --timeout "\${PULP_GUNICORN_TIMEOUT}" ` +
  `--workers "\${${workersVar}}" --access-logfile -`;

function deployment(name: string, namespace: string, component: string, image: string) {
  const { volumes, mounts } = pulpVolumes(name);
  /** api and content: the operator's gunicorn shell, its env, port and readiness check. */
  const server = (process: "api" | "content", port: number, probe: string, extraMounts: object[] = []) => {
    const workers = `PULP_${process.toUpperCase()}_WORKERS`;
    return {
      command: ["/bin/bash", "-c", gunicorn(process, port, workers)],
      env: [{ name: "PULP_GUNICORN_TIMEOUT", value: "90" }, { name: workers, value: "2" }, ...env(name)],
      ports: [{ containerPort: port, protocol: "TCP" }],
      readinessProbe: { exec: { command: ["/usr/bin/readyz.py", probe] }, ...OPERATOR_PROBE_TIMING },
      volumeMounts: [...mounts, ...extraMounts],
    };
  };
  const tokenKey = (file: string) => ({
    name: `${name}-container-auth-certs`,
    mountPath: `/etc/pulp/keys/${file}`,
    subPath: file,
    readOnly: true,
  });
  const containers: Record<string, Record<string, unknown>> = {
    api: server("api", 24817, "/pulp/api/v3/status/", [
      tokenKey("container_auth_private_key.pem"),
      tokenKey("container_auth_public_key.pem"),
    ]),
    content: server("content", 24816, "/pulp/content/"),
    worker: { command: ["/usr/bin/pulp-worker"], env: env(name), volumeMounts: mounts },
    web: {
      ports: [{ containerPort: 8080, protocol: "TCP" }],
      readinessProbe: {
        httpGet: { path: "/pulp/api/v3/status/", port: 8080 },
        ...OPERATOR_PROBE_TIMING,
        failureThreshold: 2,
      },
      volumeMounts: [
        { name: `${name}-nginx-conf`, mountPath: "/etc/nginx/nginx.conf", subPath: "nginx.conf" },
      ],
    },
  };
  const isWeb = component === "web";
  const podLabels = labels(name, component);
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: `${name}-${component}`, namespace, labels: podLabels },
    spec: {
      replicas: 1,
      selector: { matchLabels: podLabels },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
      template: {
        metadata: { labels: podLabels },
        spec: {
          serviceAccountName: name,
          nodeSelector: { "pulp-testbed/node-kind": "real" },
          securityContext: { runAsUser: 700, fsGroup: 700 },
          ...(isWeb
            ? {}
            : {
                initContainers: [
                  {
                    name: "init-container",
                    image,
                    imagePullPolicy: "IfNotPresent",
                    command: ["/bin/bash"],
                    args: [
                      "-c",
                      (component === "api" ? "mkdir -p /var/lib/pulp/{media,assets,tmp}\n" : "") + WAIT,
                    ],
                    env: env(name),
                    volumeMounts: mounts,
                  },
                ],
              }),
          containers: [
            {
              name: component,
              image,
              imagePullPolicy: "IfNotPresent",
              resources: { requests: { cpu: "50m", memory: "256Mi" }, limits: { memory: "1Gi" } },
              ...containers[component],
            },
          ],
          volumes: isWeb
            ? [
                {
                  name: `${name}-nginx-conf`,
                  configMap: {
                    name: `${name}-configmap`,
                    items: [{ key: "nginx.conf", path: "nginx.conf" }],
                  },
                },
              ]
            : [
                ...volumes,
                ...(component === "api"
                  ? [
                      {
                        name: `${name}-container-auth-certs`,
                        secret: {
                          secretName: `${name}-container-auth`,
                          items: [
                            { key: "container_auth_public_key.pem", path: "container_auth_public_key.pem" },
                            { key: "container_auth_private_key.pem", path: "container_auth_private_key.pem" },
                          ],
                        },
                      },
                    ]
                  : []),
              ],
        },
      },
    },
  };
}

/** The migration Job and the admin-password Job, as the operator runs them (job.go). */
function jobs(name: string, namespace: string, image: string) {
  const { volumes, mounts } = pulpVolumes(name, false);
  const job = (suffix: string, script: string, extra: { volumes: object[]; mounts: object[] }) => ({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: `${name}-${suffix}`, namespace, labels: labels(name, suffix, "pulp") },
    spec: {
      backoffLimit: 6,
      template: {
        spec: {
          restartPolicy: "Never",
          serviceAccountName: name,
          nodeSelector: { "pulp-testbed/node-kind": "real" },
          securityContext: { runAsUser: 700, fsGroup: 700 },
          containers: [
            {
              name: suffix === "pulpcore-migration" ? "migration" : "reset-admin-password",
              image,
              imagePullPolicy: "IfNotPresent",
              command: ["/bin/bash", "-c", script],
              env: env(name),
              resources: FAIR_SHARE,
              volumeMounts: [...mounts, ...extra.mounts],
            },
          ],
          volumes: [...volumes, ...extra.volumes],
        },
      },
    },
  });
  return [
    job(
      "pulpcore-migration",
      "/usr/bin/wait_on_postgres.py\n/usr/local/bin/pulpcore-manager migrate --noinput",
      {
        volumes: [],
        mounts: [],
      },
    ),
    job(
      "reset-admin-password",
      `${WAIT}\n` +
        '/usr/local/bin/pulpcore-manager reset-admin-password --password "$(cat /etc/pulp/pulp-admin-password)"',
      {
        volumes: [
          {
            name: `${name}-admin`,
            secret: { secretName: `${name}-admin`, items: [{ key: "password", path: "admin-password" }] },
          },
        ],
        mounts: [
          {
            name: `${name}-admin`,
            mountPath: "/etc/pulp/pulp-admin-password",
            subPath: "admin-password",
            readOnly: true,
          },
        ],
      },
    ),
  ];
}

/**
 * The operator's PostgreSQL: StatefulSet `<name>-database`, its data on the claim its template makes, the
 * role and database from `<name>-postgres-configuration` (database.go; the image's own init replaced by the
 * test bed's, as testbed/real/database.ts starts it).
 */
function databaseStatefulSet(name: string, namespace: string, image: string) {
  const podLabels = { app: "postgresql", pulp_cr: name, "app.kubernetes.io/component": "database" };
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: `${name}-database`, namespace, labels: labels(name, "database", "postgresql") },
    spec: {
      replicas: 1,
      serviceName: `${name}-database-svc`,
      selector: { matchLabels: podLabels },
      template: {
        metadata: { labels: podLabels },
        spec: {
          nodeSelector: { "pulp-testbed/node-kind": "real" },
          securityContext: { runAsUser: 26, runAsGroup: 26, fsGroup: 26 },
          containers: [
            {
              name: "postgres",
              image,
              imagePullPolicy: "IfNotPresent",
              resources: FAIR_SHARE,
              env: [
                { name: "POSTGRESQL_DATABASE", valueFrom: dbConfig(name, "database") },
                { name: "POSTGRESQL_USER", valueFrom: dbConfig(name, "username") },
                { name: "POSTGRESQL_PASSWORD", valueFrom: dbConfig(name, "password") },
                { name: "PGDATA", value: "/var/lib/pgsql/data/userdata" },
              ],
              command: ["/bin/sh", "-c"],
              args: [
                [
                  "set -e",
                  'if [ ! -s "$PGDATA/PG_VERSION" ]; then',
                  '  initdb -D "$PGDATA" -U postgres --auth-local=trust --auth-host=scram-sha-256',
                  '  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"',
                  "  mkdir -p /tmp/init",
                  `  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/tmp/init" -w start`,
                  '  psql -h /tmp/init -U postgres -v ON_ERROR_STOP=1 -c "CREATE ROLE \\"$POSTGRESQL_USER\\" LOGIN PASSWORD \'$POSTGRESQL_PASSWORD\'" -c "CREATE DATABASE \\"$POSTGRESQL_DATABASE\\" OWNER \\"$POSTGRESQL_USER\\""',
                  '  pg_ctl -D "$PGDATA" -m fast -w stop',
                  "fi",
                  `exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp`,
                ].join("\n"),
              ],
              ports: [{ containerPort: 5432, name: "postgres" }],
              // The operator's probe (database.go): ten seconds apart, five to answer, six misses before the
              // pod leaves the Service, so a busy node does not take the database away from Pulp.
              readinessProbe: {
                exec: { command: ["pg_isready", "-U", "postgres", "-h", "127.0.0.1", "-p", "5432"] },
                initialDelaySeconds: 5,
                periodSeconds: 10,
                timeoutSeconds: 5,
                failureThreshold: 6,
              },
              volumeMounts: [{ name: "postgres", mountPath: "/var/lib/pgsql/data", subPath: "data" }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: "postgres" },
          spec: {
            accessModes: ["ReadWriteOnce"],
            storageClassName: "standard",
            resources: { requests: { storage: "2Gi" } },
          },
        },
      ],
    },
  };
}
