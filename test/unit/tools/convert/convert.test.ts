// Unit test (no Pulumi engine, no cluster): convertPulpCr, the pure conversion of a pulp-operator Pulp CR
// (test/fixtures/pulp-operator/) into this program's stack config. Proves the exact config and secret
// sources of each sample CR; that each config passes parseConfig, or fails with exactly the one problem the
// CR cannot settle; which fields get a note and what some notes say; and that what cannot be converted (a
// missing Secret or ConfigMap, the CR's own instance name) is refused, every reason at once.
import { parseConfig } from "../../../../components/config/parse";
import { SecretName } from "../../../../components/config/rules";
import { CONTENT_PORT as PULP_CONTENT_PORT } from "../../../../components/workload/pulpProcess";
import { convertPulpCr, ldapGroupType, ldapSearch } from "../../../../tools/convert/convert";
import { CONTENT_PORT, ConvertError } from "../../../../tools/convert/operator";
import { convertSample, load } from "./samples";

const fields = (c: { notes: { field: string }[] }) => c.notes.map((n) => n.field);
const noteOf = (c: { notes: { field: string; text: string }[] }, field: string) =>
  c.notes.filter((n) => n.field === field).map((n) => n.text);

const RESOURCES = { requests: { cpu: "50m", memory: "256Mi" }, limits: { memory: "1Gi" } };

test("the CR pulp-operator 2.0.0 ran: external database, file storage, Redis, pulp-web, no ingress", () => {
  const c = convertSample("example-2.0.0");
  expect(c.config).toEqual({
    namespace: "pulp",
    createNamespace: false,
    instanceName: "example-pulumi",
    image: "quay.io/pulp/pulp-minimal:3.121.3",
    web: { image: "quay.io/pulp/pulp-web:3.121.3", enabled: true, replicas: 2 },
    contentOrigin: "http://example-pulumi-web.pulp.svc.cluster.local:8080",
    api: { replicas: 2, resources: RESOURCES },
    content: { replicas: 2, resources: RESOURCES },
    worker: { replicas: 1, resources: RESOURCES },
    storage: { pvc: { existingClaim: "example-file-storage" } },
    database: {
      external: {
        host: "example-pg.pulp.svc.cluster.local",
        port: 5432,
        name: "pulp",
        user: "pulp",
        sslmode: "disable",
      },
    },
    redis: { enabled: true, image: "docker.io/library/redis:7.0.15-1_deb12u7", resources: RESOURCES },
    cacheEnabled: true,
    tokenAuth: true,
    migration: { resources: RESOURCES },
    extraSettings: { ORPHAN_PROTECTION_TIME: 1440 },
  });
  expect(c.secrets).toEqual({
    adminPassword: { secret: "example-admin", key: "password" },
    secretKey: { secret: "example-secret-key", key: "secret_key" },
    dbFieldsEncryptionKey: { secret: "example-db-fields-encryption", key: "database_fields.symmetric.key" },
    databasePassword: { secret: "example-external-db", key: "POSTGRES_PASSWORD" },
  });
  expect(fields(c)).toEqual([
    "container_token_secret",
    "database.external_db_secret",
    "file_storage_storage_class",
    "image_pull_policy",
    "ingress_type",
  ]);
  expect(noteOf(c, "ingress_type")[0]).toContain(
    "the operator's was http://example-web-svc.pulp.svc.cluster.local:24880",
  );
  expect(noteOf(c, "file_storage_storage_class")[0]).toContain(
    "the operator's claim example-file-storage, which this install mounts in place",
  );
  expect(c.problems).toEqual([]);
});

test("an Ingress with TLS, S3, an external database, settings, per-component placement and env", () => {
  const c = convertSample("ingress-s3");
  const toleration = { key: "dedicated", operator: "Equal", value: "pulp", effect: "NoSchedule" };
  expect(c.config).toEqual({
    namespace: "pulp-prod",
    createNamespace: false,
    instanceName: "alpha-pulumi",
    image: "registry.example.com/pulp/pulp-minimal:3.123.1",
    web: {
      image: "registry.example.com/pulp/pulp-web:3.123.1",
      enabled: true,
      listenIPv6: false,
      clientMaxBodySize: "512m",
      replicas: 2,
      resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "512Mi" } },
      podSpecOverrides: { nodeSelector: { "pulp-role": "web" } },
      service: { annotations: { "external-dns.alpha.kubernetes.io/hostname": "pulp.example.com" } },
    },
    ingress: {
      enabled: true,
      kind: "Ingress",
      host: "pulp.example.com",
      className: "traefik",
      tlsSecretName: "pulp-example-tls",
      annotations: { "cert-manager.io/cluster-issuer": "letsencrypt" },
    },
    contentOrigin: "https://pulp.example.com",
    api: {
      replicas: 3,
      resources: { requests: { cpu: "1", memory: "1Gi" }, limits: { memory: "2Gi" } },
      podDisruptionBudget: { maxUnavailable: 1 },
      probes: {
        liveness: { periodSeconds: 20, failureThreshold: 5 },
        readiness: { initialDelaySeconds: 10, timeoutSeconds: 5 },
      },
      podSpecOverrides: {
        affinity: {
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 100,
                podAffinityTerm: {
                  topologyKey: "kubernetes.io/hostname",
                  labelSelector: { matchLabels: { "app.kubernetes.io/component": "api" } },
                },
              },
            ],
          },
        },
        containers: [
          {
            name: "api",
            env: [
              { name: "PULP_GALAXY_REQUIRE_CONTENT_APPROVAL", value: "false" },
              {
                name: "LDAP_BIND_PASSWORD",
                valueFrom: { secretKeyRef: { name: "alpha-ldap", key: "bind-password" } },
              },
            ],
          },
        ],
        nodeSelector: { "pulp-role": "api" },
      },
    },
    content: {
      replicas: 2,
      podDisruptionBudget: { minAvailable: 1 },
      podSpecOverrides: { nodeSelector: { "pulp-role": "content" } },
    },
    worker: { replicas: 4, podSpecOverrides: { nodeSelector: { "pulp-role": "worker" } } },
    scheduling: { tolerations: [toleration] },
    serviceAccount: { annotations: { "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/pulp" } },
    // The operator's service names, so repositories keep them; its container script has no kind here.
    signing: {
      services: [
        { name: "collection-signing-service", kind: "detached" },
        { name: "apt-signing-service", kind: "apt" },
      ],
    },
    storage: {
      s3: {
        bucket: "pulp-artifacts",
        endpointUrl: "https://s3.example.com",
        region: "eu-west-1",
        accessKeyId: "AKIAEXAMPLE",
      },
    },
    database: {
      external: {
        host: "db.example.com",
        port: 5433,
        name: "pulp_prod",
        user: "pulp_app",
        sslmode: "verify-full",
      },
    },
    redis: { enabled: true },
    cacheEnabled: true,
    tokenAuth: true,
    allowedContentChecksums: ["sha224", "sha256", "sha512"],
    imagePullSecrets: ["registry-example"],
    trustedCa: { configMap: "corp-ca-bundle" },
    migration: {
      resources: { requests: { cpu: "500m", memory: "1Gi" }, limits: { memory: "4Gi" } },
      podSpecOverrides: { containers: [{ name: "migrate", env: [{ name: "TZ", value: "UTC" }] }] },
    },
    apiRoot: "/repo/",
    extraSettings: {
      ORPHAN_PROTECTION_TIME: 1440,
      ALLOWED_EXPORT_PATHS: ["/exports", "/srv/exports"],
      REMOTE_USER_ENVIRON_NAME: "HTTP_REMOTE_USER",
      LOGGING: { dynaconf_merge: true, loggers: { "": { handlers: ["console"], level: "DEBUG" } } },
      HIDE_GUARDED_DISTRIBUTIONS: true,
      REDIRECT_TO_OBJECT_STORAGE: true,
    },
  });
  expect(c.secrets).toEqual({
    adminPassword: { secret: "alpha-admin", key: "password" },
    secretKey: { secret: "alpha-django-key", key: "secret_key" },
    dbFieldsEncryptionKey: { secret: "alpha-fernet", key: "database_fields.symmetric.key" },
    databasePassword: { secret: "alpha-db", key: "POSTGRES_PASSWORD" },
    s3SecretAccessKey: { secret: "alpha-s3", key: "s3-secret-access-key" },
    signingKey: { secret: "alpha-signing", key: "signing_service.gpg" },
  });
  expect(noteOf(c, "signing_scripts")).toEqual([
    "container_script.sh: container manifest signing is not offered here; the operator's container-signing-service stays in Pulp as it was registered, with the operator's script path",
    "the program's scripts replace the operator's: the first `up` updates each service in place (same name, so repositories keep it) after a test signature with the key",
  ]);
  expect(fields(c)).toEqual([
    "api.env_vars API_TOKEN",
    "api.gunicorn_workers",
    "api.hpa",
    "api.livenessProbe",
    "api.readinessProbe",
    "api.resource_requirements",
    "api.strategy",
    "api.topology_spread_constraints",
    "cache.redis_image",
    "cache.redis_port",
    "container_token_secret",
    "content.gunicorn_timeout",
    "custom_pulp_settings AUTH_LDAP_BIND_PASSWORD",
    "custom_pulp_settings DATABASES",
    "custom_pulp_settings TELEMETRY_HOOK",
    "database.external_db_secret",
    "image_pull_policy",
    "nginx_proxy_read_timeout",
    "node_selector",
    "pulp_settings",
    "route_host",
    "signing_scripts",
    "signing_scripts",
    "telemetry",
    "worker.deployment_annotations",
    "worker.pdb",
  ]);
  expect(noteOf(c, "pulp_settings")).toEqual([
    "not a field of pulp-operator 2.0.0's Pulp CRD (another release's, or a typo the API server would have dropped): not converted",
  ]);
  expect(noteOf(c, "worker.pdb")[0]).toMatch(/^\{"maxUnavailable":"50%"\}: here a budget is a whole/);
  expect(noteOf(c, "api.topology_spread_constraints")[0]).toContain(
    "`api.podSpecOverrides.topologySpreadConstraints`",
  );
  expect(c.problems).toEqual([]);
});

test("a Route, a ReadWriteOnce volume, the operator's PostgreSQL, floating tags and the CR's PulpBackups", () => {
  const c = convertSample("route-file-storage");
  expect(c.config).toEqual({
    namespace: "pulp-ocp",
    createNamespace: false,
    instanceName: "beta-pulumi",
    ingress: {
      enabled: true,
      kind: "Route",
      annotations: {
        "haproxy.router.openshift.io/balance": "roundrobin",
        "haproxy.router.openshift.io/timeout": "300s",
      },
      tlsSecretName: "beta-route-tls-tls",
      host: "pulp.apps.example.com",
    },
    contentOrigin: "https://pulp.apps.example.com",
    web: { enabled: false },
    api: { replicas: 2 },
    content: { replicas: 2 },
    worker: { replicas: 2 },
    scheduling: {
      nodeSelector: { "node-role.kubernetes.io/infra": "" },
      tolerations: [{ key: "node-role.kubernetes.io/infra", operator: "Exists", effect: "NoSchedule" }],
    },
    // The operator's claim and PostgreSQL, in place (the Secret is not in the file: the operator's values).
    storage: { pvc: { existingClaim: "beta-file-storage" } },
    database: {
      external: { host: "beta-database-svc", port: 5432, name: "pulp", user: "pulp", sslmode: "require" },
    },
    tokenAuth: true,
    // beta-nightly's; gamma-nightly backs up another CR.
    backup: { enabled: true, volume: { size: "500Gi", storageClass: "cephfs" } },
  });
  // No Secret in the file: the operator's default names.
  expect(c.secrets).toEqual({
    adminPassword: { secret: "beta-admin-password", key: "password" },
    secretKey: { secret: "beta-secret-key", key: "secret_key" },
    dbFieldsEncryptionKey: { secret: "beta-db-fields-encryption", key: "database_fields.symmetric.key" },
    databasePassword: { secret: "beta-postgres-configuration", key: "password" },
  });
  expect(fields(c)).toEqual([
    "PulpBackup beta-nightly",
    "PulpBackup beta-nightly backup_pvc",
    "PulpBackup beta-nightly postgres_configuration_secret",
    "PulpRestore beta-restore",
    "database",
    "database.postgres_extra_args",
    "database.postgres_image",
    "database.postgres_resource_requirements",
    "database.postgres_storage_class",
    "database.postgres_storage_requirements",
    "file_storage_access_mode",
    "file_storage_storage_class",
    "image_version",
    "ingress_host",
    "mount_trusted_ca",
    "route_tls_secret",
    "web",
  ]);
  expect(noteOf(c, "image_version")).toEqual([
    '"stable" is a floating tag, refused here (nodes could pull different builds): pin the release the ' +
      "operator's pods run, pulumi config set pulp:image 'quay.io/pulp/pulp-minimal:<version>'; until then " +
      "the program's default image applies",
  ]);
  // The operator's Secret (certificate, key) copied into the kubernetes.io/tls Secret the router reads.
  expect(noteOf(c, "route_tls_secret")).toEqual([
    "the Routes read their certificate from the kubernetes.io/tls Secret beta-route-tls-tls; make it from the " +
      "operator's before the switch: kubectl -n pulp-ocp create secret tls beta-route-tls-tls " +
      "--cert=<(kubectl -n pulp-ocp get secret beta-route-tls -o jsonpath='{.data.certificate}' | base64 -d) " +
      "--key=<(kubectl -n pulp-ocp get secret beta-route-tls -o jsonpath='{.data.key}' | base64 -d) " +
      "(its caCertificate is not carried: the router serves the Secret's certificate alone)",
  ]);
  expect(noteOf(c, "file_storage_access_mode")[0]).toMatch(
    /^ReadWriteOnce: the program refuses a claim that is not ReadWriteMany/,
  );
  expect(noteOf(c, "file_storage_storage_class")).toEqual([
    "the artifacts stay in the operator's claim beta-file-storage, which this install mounts in place " +
      "(storage.pvc.existingClaim) and never deletes. It belongs to the Pulp CR: delete the CR with " +
      "--cascade=orphan before pulumi up, which refuses an owned claim (docs/migrate-from-pulp-operator.md)",
  ]);
  // A PulpRestore: the commands for a new stack, which this config (the install in place) is not.
  expect(noteOf(c, "PulpRestore beta-restore")).toEqual([
    "moving by backup: in a new stack with a database of its own, not this config (it takes the install over " +
      "in place, where a restore is refused): pulumi config set --path pulp:restore.backup <status.backupDirectory " +
      "of the PulpBackup, without /backups/>; pulumi config set --path pulp:restore.claim <status.backupClaim of " +
      "the PulpBackup> (in the new install's namespace; or the directory as a tar over pulp:restore.http); npm run " +
      "backup -- keys <status.backupDirectory of the PulpBackup, without /backups/> --archive <a tar of the " +
      "directory> (docs/migrate-from-pulp-operator.md, Moving by backup)",
  ]);
  // What the CR cannot say: the pg_dump image for backups.
  expect(c.problems).toEqual([
    {
      key: "pulp:backup.image",
      given: undefined,
      message: expect.stringMatching(/^backups run pg_dump, and no PostgreSQL image is known/),
      fix: "pulumi config set --path 'pulp:backup.image' ghcr.io/cloudnative-pg/postgresql:17",
    },
  ]);
});

test("the operator's defaults behind an nginx Ingress: no pulp-web, an emptyDir's artifacts, its own PostgreSQL", () => {
  const c = convertSample("nginx-ingress");
  expect(c.config).toEqual({
    namespace: "pulp",
    createNamespace: false,
    instanceName: "pulp-pulumi",
    ingress: { enabled: true, kind: "Ingress", host: "pulp.internal.example.com" },
    contentOrigin: "http://pulp.internal.example.com",
    web: { enabled: false },
    api: { replicas: 1 },
    content: { replicas: 1 },
    worker: { replicas: 1 },
    database: {
      external: { host: "pulp-database-svc", port: 5432, name: "pulp", user: "pulp", sslmode: "prefer" },
    },
    tokenAuth: true,
  });
  expect(c.secrets.databasePassword).toEqual({ secret: "pulp-postgres-configuration", key: "password" });
  expect(fields(c)).toEqual(["database", "file_storage_storage_class", "image_version"]);
  expect(noteOf(c, "file_storage_storage_class")[0]).toMatch(
    /^no storage given: the operator kept artifacts in an emptyDir/,
  );
  expect(c.problems).toEqual([]);
});

test("parseConfig takes each converted config with its secrets, as a stack will hold them", () => {
  for (const sample of ["example-2.0.0", "ingress-s3", "nginx-ingress"] as const) {
    const c = convertSample(sample);
    expect(() => parseConfig(c.config, new Set(Object.keys(c.secrets) as SecretName[]))).not.toThrow();
  }
  // Without the database password the external database is refused: the secrets count.
  const c = convertSample("example-2.0.0");
  expect(() => parseConfig(c.config, new Set<SecretName>(["adminPassword"]))).toThrow(
    /pulp:databasePassword/,
  );
});

test("the instance is <name>-pulumi; the CR's own name is refused, another is taken", () => {
  expect(convertSample("nginx-ingress", () => {}, { instanceName: "pulp2" }).config.instanceName).toBe(
    "pulp2",
  );
  expect(() => convertSample("nginx-ingress", () => {}, { instanceName: "pulp" })).toThrow(
    new ConvertError([
      "the instance name pulp is the Pulp CR's own: in namespace pulp the program's Deployments and Secrets " +
        "(pulp-api, pulp-secret-key, ...) would be the operator's, which it still manages: choose another with --instance",
    ]),
  );
});

test("the Secrets and the ConfigMap that hold config must be given, all named at once", () => {
  let error: unknown;
  try {
    convertSample("ingress-s3", (input) => {
      input.secrets = {};
      input.configMaps = {};
    });
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ConvertError);
  expect((error as ConvertError).reasons).toEqual([
    "custom_pulp_settings names the ConfigMap alpha-settings, which holds settings: convert from the cluster, " +
      "or add it to the file (kubectl get configmap -n pulp-prod alpha-settings -o yaml)",
    "object_storage_s3_secret names the Secret alpha-s3, which holds config (s3-bucket-name): convert from the " +
      "cluster, or add the Secret to the file (kubectl get secret -n pulp-prod alpha-s3 -o yaml)",
    "database.external_db_secret names the Secret alpha-db, which holds config (POSTGRES_HOST): convert from the " +
      "cluster, or add the Secret to the file (kubectl get secret -n pulp-prod alpha-db -o yaml)",
    "signing_scripts names the Secret alpha-signing-scripts, which holds config (the names of the scripts it " +
      "holds): convert from the cluster, or add the Secret to the file (kubectl get secret -n pulp-prod " +
      "alpha-signing-scripts -o yaml)",
  ]);
});

test("a Secret that is known must hold the key a secret comes from", () => {
  expect(() =>
    convertSample("example-2.0.0", (input) => {
      input.secrets["example-admin"] = { keys: ["pass"], values: {} };
    }),
  ).toThrow(new ConvertError(["admin_password_secret: the Secret example-admin has no key password"]));
});

test("a bucket reached without a key: noted, and no s3SecretAccessKey to copy", () => {
  const c = convertSample("ingress-s3", (input) => {
    input.secrets["alpha-s3"] = {
      keys: ["s3-bucket-name", "s3-region"],
      values: { "s3-bucket-name": "b1", "s3-region": "r1" },
    };
  });
  expect(c.config.storage).toEqual({ s3: { bucket: "b1", region: "r1" } });
  expect(c.secrets.s3SecretAccessKey).toBeUndefined();
  expect(noteOf(c, "object_storage_s3_secret")).toEqual([
    "the Secret alpha-s3 has no s3-access-key-id: the operator's pods reached the bucket with their own identity " +
      "(sa_annotations, converted to pulp:serviceAccount.annotations, or the node's role); without it, give this " +
      "install's pods an identity (pulp:serviceAccount) or a static key",
  ]);
});

test("custom_pulp_settings: CONTENT_ORIGIN and TOKEN_AUTH_DISABLED become keys and win over the CR's fields", () => {
  const c = convertSample("nginx-ingress", (input) => {
    input.cr.spec!.custom_pulp_settings = "s";
    input.configMaps.s = {
      content_origin: '"https://pulp.example.org"',
      token_auth_disabled: "True",
      worker_type: "'redis'",
      media_root: "'/elsewhere'",
      none_value: "None",
    };
  });
  expect(c.config).toMatchObject({
    contentOrigin: "https://pulp.example.org",
    tokenAuth: false,
    workerType: "redis",
  });
  expect(c.config.extraSettings).toBeUndefined();
  expect(noteOf(c, "custom_pulp_settings MEDIA_ROOT")).toEqual([
    "set by the program from its own keys; not copied",
  ]);
  expect(noteOf(c, "custom_pulp_settings NONE_VALUE")[0]).toMatch(
    /^not a Python literal this converter reads \(or None/,
  );
  // The redis worker type needs Redis, which this CR does not run: parseConfig says so.
  expect(c.problems.map((p) => p.key)).toEqual(["pulp:workerType"]);
});

test("an unmapped field with the operator's own default value gets no note", () => {
  const c = convertSample("nginx-ingress", (input) => {
    input.cr.spec!.container_auth_private_key_name = "container_auth_private_key.pem";
    input.cr.spec!.container_auth_public_key_name = "my.pem";
  });
  expect(fields(c)).toContain("container_auth_public_key_name");
  expect(fields(c)).not.toContain("container_auth_private_key_name");
});

test("nothing but a Pulp CR with a name and a namespace is converted", () => {
  expect(() => convertPulpCr({ kind: "PulpBackup", metadata: { name: "b", namespace: "n" } })).toThrow(
    /the object is a PulpBackup, not a Pulp/,
  );
  expect(() => convertPulpCr({ kind: "Pulp", metadata: { name: "p" } })).toThrow(
    /no metadata.name or metadata.namespace/,
  );
});

test("the in-cluster content origin uses the ports this program's Services have", () => {
  expect(CONTENT_PORT).toBe(PULP_CONTENT_PORT);
  const noWeb = convertSample("nginx-ingress", (input) => {
    delete input.cr.spec!.ingress_type;
  });
  expect(noWeb.config.contentOrigin).toBe(
    `http://pulp-pulumi-content.pulp.svc.cluster.local:${PULP_CONTENT_PORT}`,
  );
  expect(load("nginx-ingress").cr.spec!.ingress_type).toBe("ingress");
});

test("a node port: pulp-web's Service as a NodePort with the CR's port and web annotations; the address is asked for", () => {
  const c = convertSample("node-port");
  expect(c.config.web).toEqual({
    image: "quay.io/pulp/pulp-web:3.85.0",
    enabled: true,
    replicas: 1,
    service: { type: "NodePort", nodePort: 30880, annotations: { "example.com/team": "repos" } },
  });
  expect(c.config.contentOrigin).toBeUndefined();
  expect(noteOf(c, "ingress_type")).toEqual([
    "nodeport: set contentOrigin to the address clients reach pulp-web at (a node's address and the node " +
      "port): pulumi config set pulp:contentOrigin http://<address>:<port>",
  ]);
  expect(noteOf(c, "api.service_annotations")).toEqual([
    "the api Service has no annotations option here (pulp-web's has: web.service.annotations); not converted",
  ]);
});

test("a load balancer: pulp-web's Service as a LoadBalancer on the CR's port; HTTPS at the balancer is noted", () => {
  const c = convertSample("load-balancer");
  expect(c.config.web).toMatchObject({
    enabled: true,
    service: {
      type: "LoadBalancer",
      port: 443,
      annotations: { "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal" },
    },
  });
  expect(noteOf(c, "loadbalancer_protocol")[0]).toMatch(
    /^pulp-web serves plain HTTP: for `https`, terminate TLS/,
  );
  // Once the address is set, the config is one the program takes.
  const secrets = new Set(Object.keys(c.secrets) as SecretName[]);
  expect(() =>
    parseConfig({ ...c.config, contentOrigin: "https://pulp.example.com" }, secrets),
  ).not.toThrow();
});

test("LDAP: the operator's auth_ldap_* Secret becomes pulp:ldap, read not run; the bind password a secret, the CA trusted", () => {
  const c = convertSample("ldap");
  expect(c.config.ldap).toEqual({
    serverUri: "ldap://ldap.example.org",
    startTls: true,
    bindDn: "cn=admin,dc=example,dc=org",
    userSearch: { baseDn: "ou=users,dc=example,dc=org", scope: "subtree", filter: "(uid=%(user)s)" },
    groups: {
      baseDn: "ou=groups,dc=example,dc=org",
      type: "posixGroup",
      scope: "subtree",
      mirror: true,
      require: "cn=pulp-users,ou=groups,dc=example,dc=org",
      superuser: "cn=pulp-admins,ou=groups,dc=example,dc=org",
    },
  });
  expect(c.secrets.ldapBindPassword).toEqual({ secret: "delta-ldap", key: "auth_ldap_bind_password" });
  expect(
    String(c.config.trustedCa && (c.config.trustedCa as { certificates: string }).certificates),
  ).toContain("-----BEGIN CERTIFICATE-----");
  expect(noteOf(c, "ldap.config auth_ldap_user_flags_by_group")[0]).toMatch(/only is_superuser is mapped/);
  expect(noteOf(c, "ldap.config auth_ldap_global_options")[0]).toMatch(/^not converted/);
  expect(noteOf(c, "ldap.config auth_ldap_ca_file")[0]).toMatch(/pulp:trustedCa/);
  expect(c.problems).toEqual([]);
  expect(JSON.stringify(c)).not.toContain("CANARY");
});

test("LDAP: without auth_ldap_mirror_groups the operator mirrored nothing, and neither does the conversion; unreadable Python is refused", () => {
  const without = convertSample("ldap", (input) => {
    delete input.secrets["delta-ldap"].values.auth_ldap_mirror_groups;
  });
  expect((without.config.ldap as { groups: { mirror: boolean } }).groups.mirror).toBe(false);
  expect(() =>
    convertSample("ldap", (input) => {
      input.secrets["delta-ldap"].values.auth_ldap_user_search =
        'LDAPSearch(BASE, ldap.SCOPE_SUBTREE, "(uid=%(user)s)")';
    }),
  ).toThrow(
    /ldap\.config auth_ldap_user_search: not LDAPSearch\("<base DN>", ldap\.SCOPE_<scope>, "<filter>"\); set pulp:ldap by hand/,
  );
  expect(() =>
    convertSample("ldap", (input) => {
      input.secrets["delta-ldap"].values.auth_ldap_group_type = "MemberDNGroupType(member_attr='member')";
    }),
  ).toThrow(/ldap\.config auth_ldap_group_type: not one of GroupOfNamesType\(\)/);
});

test("LDAPSearch and group types as the operator's users write them are read, in either quoting", () => {
  expect(ldapSearch(`LDAPSearch('ou=u,dc=x', ldap.SCOPE_ONELEVEL, '(mail=%(user)s)')`)).toEqual({
    baseDn: "ou=u,dc=x",
    scope: "onelevel",
    filter: "(mail=%(user)s)",
  });
  expect(
    ldapSearch(`django_auth_ldap.config.LDAPSearch("dc=x",ldap.SCOPE_BASE,"(uid=%(user)s)")`)?.scope,
  ).toBe("base");
  expect(ldapSearch(`LDAPSearch("dc=x", 2, "(uid=%(user)s)")`)).toBeUndefined();
  expect(ldapGroupType("GroupOfNamesType()")).toEqual({ key: "groupOfNames", nameAttr: "cn" });
  expect(ldapGroupType(`NestedActiveDirectoryGroupType(name_attr="sAMAccountName")`)).toEqual({
    key: "nestedActiveDirectory",
    nameAttr: "sAMAccountName",
  });
  expect(ldapGroupType("GroupOfNamesType(); import os")).toBeUndefined();
});

test("sso_secret: each Keycloak key becomes a setting read from the same Secret; no value is copied", () => {
  const c = convertSample("ldap");
  expect(c.config.secretSettings).toEqual({
    KEYCLOAK_ADMIN_ROLE: { secretName: "delta-sso", key: "keycloak_admin_role" },
    KEYCLOAK_HOST: { secretName: "delta-sso", key: "keycloak_host" },
    KEYCLOAK_PORT: { secretName: "delta-sso", key: "keycloak_port" },
    KEYCLOAK_PROTOCOL: { secretName: "delta-sso", key: "keycloak_protocol" },
    KEYCLOAK_REALM: { secretName: "delta-sso", key: "keycloak_realm" },
    SOCIAL_AUTH_KEYCLOAK_KEY: { secretName: "delta-sso", key: "social_auth_keycloak_key" },
    SOCIAL_AUTH_KEYCLOAK_PUBLIC_KEY: { secretName: "delta-sso", key: "social_auth_keycloak_public_key" },
    SOCIAL_AUTH_KEYCLOAK_SECRET: { secretName: "delta-sso", key: "social_auth_keycloak_secret" },
  });
  const unseen = convertSample("ldap", (input) => {
    delete input.secrets["delta-sso"];
  });
  expect(Object.keys(unseen.config.secretSettings as object)).toHaveLength(7);
  expect(noteOf(unseen, "sso_secret")[0]).toMatch(/keycloak_admin_role, keycloak_group_token_claim/);
});

test("Azure Blob storage: the same account, container and folder, and the key copied as a secret, never printed", () => {
  const c = convertSample("azure-blob");
  expect(c.config.storage).toEqual({
    azure: { accountName: "pulpartifacts", container: "pulp", location: "prod/pulp" },
  });
  expect(c.secrets.azureAccountKey).toEqual({ secret: "epsilon-azure", key: "azure-account-key" });
  expect(JSON.stringify(c)).not.toContain("CANARY");
  // A Secret with a connection string instead of a key: a note says which of its fields to set.
  const viaString = convertSample("azure-blob", (input) => {
    input.secrets["epsilon-azure"] = {
      keys: ["azure-account-name", "azure-container", "azure-connection-string"],
      values: { "azure-account-name": "pulpartifacts", "azure-container": "pulp" },
    };
  });
  expect(viaString.secrets.azureAccountKey).toBeUndefined();
  expect(noteOf(viaString, "object_storage_azure_secret")).toEqual([
    "the Secret epsilon-azure gives a connection string (azure-connection-string), not an account key: set " +
      "pulp:azureAccountKey to its AccountKey field (pulumi config set --secret pulp:azureAccountKey), and, when it " +
      "names a BlobEndpoint other than https://<account>.blob.core.windows.net, storage.azure.endpointUrl to it",
  ]);
});

test("Google Cloud Storage: the same bucket, reached as the same Workload Identity, with no key", () => {
  const c = convertSample("gcs");
  expect(c.config.storage).toEqual({ gcs: { bucket: "pulp-artifacts" } });
  expect(c.config.serviceAccount).toEqual({
    annotations: { "iam.gke.io/gcp-service-account": "pulp@pulp-project.iam.gserviceaccount.com" },
  });
  expect(c.secrets.gcsCredentials).toBeUndefined();
  expect(noteOf(c, "object_storage_gcs_secret")).toEqual([
    "gcs-querystring-auth false: the operator's redirects were unsigned (a public bucket); here they are signed " +
      "for 60 s, by IAM without a key (roles/iam.serviceAccountTokenCreator on the account itself)",
  ]);
  // Without sa_annotations the operator's pods had the node's identity: a note says what to give these.
  const nodeIdentity = convertSample("gcs", (input) => {
    delete input.cr.spec!.sa_annotations;
  });
  expect(noteOf(nodeIdentity, "object_storage_gcs_secret")[1]).toMatch(
    /^no sa_annotations: .*pulumi config set --secret pulp:gcsCredentials < key\.json\)$/,
  );
  // A Secret without the bucket is an error that names it.
  expect(() =>
    convertSample("gcs", (input) => {
      input.secrets["zeta-gcs"] = { keys: [], values: {} };
    }),
  ).toThrow(/object_storage_gcs_secret: the Secret zeta-gcs has no gcs-bucket-name/);
});
