// The configuration reference: what each top-level `pulp:` key is, in one place. docs/configuration.md's
// table is generated from it (`npm run docs:config`); test/unit/docs/configReference.test.ts fails when
// the file is stale or a default here is not the schema's, and the type below fails to compile when the
// schema has a key this does not document.
import { configSchema } from "./schema";

export type ConfigKey = keyof typeof configSchema.shape;

/** A row of the reference; `sameAs` shares the row of another key (api, content and worker). */
export type KeyDoc = { type: string; default: string; meaning: string } | { sameAs: ConfigKey };

export const CONFIG_REFERENCE: Record<ConfigKey, KeyDoc> = {
  namespace: { type: "string", default: "`pulp`", meaning: "namespace (DNS label)" },
  createNamespace: {
    type: "boolean",
    default: "`true`",
    meaning: "create it, labelled for Pod Security `restricted`",
  },
  instanceName: {
    type: "string",
    default: "`pulp`",
    meaning: "prefix of every name, `app.kubernetes.io/instance`",
  },
  image: {
    type: "string",
    default: "`quay.io/pulp/pulp-minimal:3.123.1`",
    meaning:
      "Pulp image; a version tag or a digest (`latest`, `stable`, `nightly`, `main` and no tag are refused)",
  },
  pulpcoreVersion: {
    type: "string",
    default: "from the tag",
    meaning: "required when the image is pinned by digest only",
  },
  plugins: {
    type: "object",
    default: "`{}` (unknown)",
    meaning:
      'plugin versions the image carries, by app label (`{ansible: "0.30.3", rpm: "3.39.4"}`): the upgrade plan checks plugin migrations for these, and a change re-runs the migration Job under the same tag.',
  },
  contentOrigin: { type: "string", default: "required", meaning: "`CONTENT_ORIGIN`, `scheme://host[:port]`" },
  apiRoot: { type: "string", default: "`/pulp/`", meaning: "`API_ROOT`, starts and ends with `/`" },
  contentPathPrefix: {
    type: "string",
    default: "`/pulp/content/`",
    meaning: "`CONTENT_PATH_PREFIX`, starts and ends with `/`",
  },
  allowedContentChecksums: {
    type: "string[]",
    default: "`[sha224, sha256, sha384, sha512]`",
    meaning: "must contain `sha256`",
  },
  cacheEnabled: { type: "boolean", default: "`false`", meaning: "content cache (needs `redis.enabled`)" },
  workerType: {
    type: "string",
    default: "`pulpcore`",
    meaning: "`pulpcore` or `redis` (needs `redis.enabled` and pulpcore >= 3.108.0)",
  },
  tokenAuth: {
    type: "boolean",
    default: "`false`",
    meaning: "container token auth with a generated ES256 key pair",
  },
  maintenance: {
    type: "boolean",
    default: "`false`",
    meaning: "workers at zero (no new tasks run); api and content keep serving",
  },
  idle: {
    type: "boolean",
    default: "`false`",
    meaning: "every Deployment at zero; data, keys and database kept",
  },
  api: { type: "object", default: "see below", meaning: "one Deployment each" },
  content: { sameAs: "api" },
  worker: { sameAs: "api" },
  web: {
    type: "object",
    default: "`{enabled: false}`",
    meaning:
      "pulp-web nginx: `enabled`, `image` (`quay.io/pulp/pulp-web:3.123.1`), `replicas` (2), `autoscaling` (as api's), `resources` (ephemeral-storage limit unless set: `clientMaxBodySize` + 1Gi, as nginx buffers each upload whole in /tmp, + the content cache's volume), `clientMaxBodySize` (`10g`; `/v2/` has no limit), `listenIPv6` (`true`; turn off where nodes have IPv6 disabled), `contentCache`: `{enabled, size, maxEntrySize, privateHeaders}` (`true`, `1Gi`, `32Mi`, `[]`), a copy in each pulp-web pod of content answers up to `maxEntrySize` to requests without credentials, served only while no content app answers (a stop-the-world upgrade; docs/upgrades.md); list in `privateHeaders` any header a content guard of yours reads, `podDisruptionBudget`, `probes`, `topologySpread`, `podSpecOverrides`, `podAnnotations` (as api's), `service`: `{type, port, nodePort, annotations, loadBalancerSourceRanges}`, how clients reach it: `ClusterIP` (default, through `ingress`), `NodePort` (`nodePort` on every node; unset, the cluster picks one) or `LoadBalancer` (configured by the cloud's `annotations`; `loadBalancerSourceRanges` limits its clients); `port` is the Service's (8080)",
  },
  redis: {
    type: "object",
    default: "`{enabled: false}`",
    meaning: "`enabled`, `image` (`docker.io/library/redis:7.4.2-alpine`), `resources`, `podSpecOverrides`",
  },
  database: {
    type: "object",
    default: "required",
    meaning:
      "exactly one of `external: {host, port (5432), name (pulp), user (pulp), sslmode (prefer), version}` or `cloudnativepg: {instances (3), storageSize (10Gi), storageClass, imageName, resources, parameters, pooler}` (Pulp, the migration Job and backups reach it over TLS and verify the server against the operator's CA: `verify-full`); unset, the preview names both with a command for each. Pulp needs PostgreSQL 14 or newer: an `imageName` whose tag is a plain version below 14 is refused, and so is an external `version` (the server's major, optional: nothing else tells the version at preview). `parameters`: PostgreSQL settings for every instance (`max_connections`, `shared_buffers`, `work_mem`; see [PostgreSQL settings](operations.md#postgresql-settings)); the ones CloudNativePG sets itself (ports, TLS, replication, archiving, logging) are refused, and a server-wide `statement_timeout` or `lock_timeout` is warned about. A new `imageName` is checked against the live Cluster: a major downgrade, an in-place upgrade to PostgreSQL 15 or older, and a new image with new `parameters` are refused; a major upgrade is warned about (the database stops while `pg_upgrade` runs: [Upgrading PostgreSQL](operations.md#upgrading-postgresql)). `pooler: {instances (2), imageName, resources, parameters}`: CloudNativePG's Pooler (PgBouncer, session mode) in front of the primary, Service `<instance>-db-pooler`, whose names the server certificate then carries; Pulp's processes and the migration Job connect through it, backups, restores and the task-queue scaler go to the primary. `parameters`: PgBouncer settings over the program's (`max_client_conn` and `default_pool_size` 1000, `server_login_retry` 1); names CloudNativePG does not accept, and `pool_mode`, are refused; a `query_timeout`, `idle_transaction_timeout` or `client_idle_timeout`, or a `server_reset_query` other than `DISCARD ALL`, is warned about (see [A connection pooler](operations.md#a-connection-pooler))",
  },
  storage: {
    type: "object",
    default: "`{pvc: {size: 50Gi, accessMode: ReadWriteMany}}`",
    meaning:
      "exactly one of `pvc: {size, storageClass, accessMode}` (or `pvc: {existingClaim}`: a ReadWriteMany claim of yours in the namespace, owned by nothing, mounted in place and never created, changed or deleted here; checked before anything changes) or `s3: {bucket, endpointUrl, region, accessKeyId (unset: the pods' identity, `serviceAccount`), workingDirectorySize}` (`workingDirectorySize`, 20Gi: the node disk, an emptyDir's sizeLimit, each api, content, worker and migration pod may fill with Pulp's working directory: uploads, downloads and task files before they go to the bucket) or `azure: {accountName, container, location, endpointUrl, workingDirectorySize}` (Azure Blob Storage with the account's key, `pulp:azureAccountKey`, or without one as the pods' workload identity, through `serviceAccount`, with redirects carrying a user delegation SAS; `location` a folder in the container; `endpointUrl` unset: `https://<accountName>.blob.core.windows.net`, and without a key it must have that shape, `https://<accountName>.blob.<suffix>`; see [Azure Blob Storage](install.md#azure-blob-storage)) or `gcs: {bucket, location, projectId, signingServiceAccount, endpointUrl, workingDirectorySize}` (Google Cloud Storage as the pods' identity, GKE Workload Identity through `serviceAccount`, with redirects signed by IAM signBlob; or with a service account's key, `pulp:gcsCredentials`; `endpointUrl` unset: `https://storage.googleapis.com`; see [Google Cloud Storage](install.md#google-cloud-storage)); `ReadWriteOnce` is refused (why: [operations.md](operations.md)). Once installed, the artifacts stay where they are: a config that names another place is refused (Pulp would find none of them) until `movedFrom` names the old place as the refusal prints it (`claim <name>`, `s3://<bucket>`, `azure://<account>/<container>[/<location>]`, `gs://<bucket>[/<location>]`), once you copied every file or object over (see [Moving the artifacts](operations.md#moving-the-artifacts))",
  },
  ingress: {
    type: "object",
    default: "`{enabled: false}`",
    meaning:
      "`enabled`, `kind` (`Ingress` or `Route`), `host`, `className` (an Ingress's; refused with `kind: Route`, which has none), `tlsSecretName` (a `kubernetes.io/tls` Secret; for a Route, its own certificate, which OpenShift's router reads from the Secret (`spec.tls.externalCertificate`) under a Role that lets it read that Secret only; `routerAccess: false` when someone else grants that), `annotations` (yours win over the program's: for ingress-nginx, class `nginx` or none, no body limit and 600 s reads and sends; for a Route, the router's `haproxy.router.openshift.io/timeout: 600s`; see [Reaching Pulp](install.md#reaching-pulp))",
  },
  dataVolumes: {
    type: "object[]",
    default: "`[]`",
    meaning:
      "CDI imports: `{name, url (http/https tar), size, storageClass, waitForFirstConsumer}`; a `url` that carries a credential (user info, a signature or token in its query: a presigned URL) must be secret config (`pulumi config set --secret --path 'pulp:dataVolumes[0].url'`), and every DataVolume's spec is a secret in the state",
  },
  restore: {
    type: "object",
    default: "none",
    meaning:
      "restore a backup into this new install: `backup` (an id), `claim` (the PVC in the namespace that holds it; default `<instance>-backups`) or `http: {url, size, storageClass, waitForFirstConsumer}` (the exported archive, through a CDI DataVolume; `url` is secret config, refused in plain text) or `s3: {bucket, prefix, endpointUrl, region, accessKeyId, size, storageClass}` (the archive in the bucket backups go to, fetched with `pulp:restoreS3SecretAccessKey`); needs the backup's keys (`npm run backup -- keys <id>`, `--archive <id>.keys.tar` for http); refused on a live install unless `overwrite` names the same backup (see [Restore](backup-restore.md#restore))",
  },
  backup: {
    type: "object",
    default: "`{enabled: false}`",
    meaning:
      "backups into a volume of their own (see [Backups](backup-restore.md#backups)): `enabled`, `schedule` (cron, e.g. `0 3 * * *`; unset: on demand only), `keep` (7 complete backups), `image` (a PostgreSQL image whose `pg_dump` is at least the server's major; default `database.cloudnativepg.imageName`, else required), `volume: {size (100Gi), storageClass}`, `resources`, `s3: {bucket, prefix (<namespace>/<instance>/), endpointUrl, region, accessKeyId (unset: the pods' identity, `serviceAccount`)}` (each backup also to object storage, with `keep` there too)",
  },
  namespaceQuota: {
    type: "object",
    default: "`{}`",
    meaning:
      "`{requestsStorage}`: checked against everything this install requests, imports counted twice (scratch space)",
  },
  migration: {
    type: "object",
    default: "`{}`",
    meaning:
      '`resources`, `backoffLimit` (2), `timeout` (`"6h"`: how long `up` awaits the restore Job and the migration Job, each; past it `up` fails, the Job runs on, and the next `up` refuses, naming the `kubectl wait` to run, until it has finished), `podAnnotations` (e.g. `sidecar.istio.io/inject: "false"`: a Job whose pod keeps a sidecar never completes), `podSpecOverrides` (the migrate container is named `migrate`; they apply to the signing services\' Job too)',
  },
  scheduling: {
    type: "object",
    default: "`{}`",
    meaning:
      "where every pod runs (api, content, worker, web, Redis, the migration Job, and the CloudNativePG Cluster's `spec.affinity`): `nodeSelector` (label keys and values by the API server's rules), `tolerations` (`operator` `Exists`/`Equal`, `effect` `NoSchedule`/`PreferNoSchedule`/`NoExecute`, `tolerationSeconds` only with `NoExecute`), `affinity` (pods: as in a pod spec; the Cluster takes `nodeAffinity`). A component's `podSpecOverrides` changes its own.",
  },
  imagePullSecrets: {
    type: "list of Secret names",
    default: "`[]`",
    meaning:
      "Secrets (type `kubernetes.io/dockerconfigjson`) every pod pulls its image with: api, content, worker, web, Redis, the migration Job, and the CloudNativePG Cluster. They must exist in the namespace before the pods start: with `createNamespace: false`, create the namespace and `kubectl create secret docker-registry <name> ...` first",
  },
  serviceAccount: {
    type: "object",
    default: "none",
    meaning:
      "the identity api, content, worker and migration pods run as, for object storage without a static key (leave out `storage.s3.accessKeyId`): a ServiceAccount `<instance>-pulp` with `annotations` (EKS IRSA `eks.amazonaws.com/role-arn`, GKE `iam.gke.io/gcp-service-account`, AKS `azure.workload.identity/client-id`), and/or `awsWebIdentity: {roleArn, audience (sts.amazonaws.com), stsEndpointUrl}`, the projected token and `AWS_ROLE_ARN` that EKS's webhook would add, for a cluster without it, or `azureWorkloadIdentity: {clientId, tenantId, authorityHost (https://login.microsoftonline.com/), audience (api://AzureADTokenExchange)}`, the projected token and `AZURE_*` variables AKS's webhook would add (see [Object storage without keys](install.md#object-storage-without-keys))",
  },
  proxy: {
    type: "object",
    default: "none",
    meaning:
      "`{httpProxy, httpsProxy, noProxy}`: `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` for api, content, worker, the migration Job and the backup upload: what reads them goes through the proxy (object storage and STS through boto3, requests, urllib), with `NO_PROXY` listing loopback, Pulp's Services by their short names, the database host, `.<namespace>`, `.svc`, `.cluster.local` and `kubernetes.default`, then `noProxy`. A URL with a password must be secret config (`pulumi config set --secret --path pulp:proxy.httpProxy`). Syncs do not read these variables (pulpcore's downloader): set `proxy_url` on the remote",
  },
  signing: {
    type: "object",
    default: "none",
    meaning:
      '`{services: [{name, kind}]}`: Pulp signing services the program registers with the key in the secret `pulp:signingKey` (one ASCII-armored private key without a passphrase: `gpg --armor --export-secret-keys "$SIGNING_KEY_ID" | pulumi config set --secret pulp:signingKey`). `kind` `detached` (`core:AsciiArmoredDetachedSigningService`: rpm repository metadata, ansible collections) or `apt` (`deb:AptReleaseSigningService`: `Release.gpg` and `InRelease`). Only the workers and the Job `<instance>-signing-services` hold the key; a new key updates each service in place, so repositories keep their service and sign with the new key (see [Signing services](operations.md#signing-services))',
  },
  ldap: {
    type: "object",
    default: "none",
    meaning:
      "login against an LDAP directory beside Pulp's own users (django-auth-ldap, in the quay.io/pulp images): `{serverUri, startTls, bindDn, userSearch: {baseDn, filter, scope}, userAttributes, groups: {baseDn, type, filter, scope, mirror, require, deny, superuser}}`. `serverUri` `ldaps://` or `ldap://` (with `startTls: true`; a private CA goes in `trustedCa`). `bindDn` with the secret `pulp:ldapBindPassword` (`pulumi config set --secret pulp:ldapBindPassword`), or neither for an anonymous search; only the api holds the password. `userSearch.filter` default `(uid=%(user)s)`, `scope` `subtree` (or `onelevel`, `base`). `groups.type` `groupOfNames` (default), `nestedGroupOfNames`, `groupOfUniqueNames`, `posixGroup`, `activeDirectory` or `nestedActiveDirectory`; with `mirror` (default true) a user's directory groups become Pulp groups at each login, so a role granted to a group applies to its members. `require`/`deny`: a group's DN that admits or refuses; `superuser`: a group whose members are Pulp admins. Pulp's own users (admin) still log in (see [LDAP login](operations.md#ldap-login))",
  },
  metrics: {
    type: "object",
    default: "none",
    meaning:
      "pulpcore's own OpenTelemetry metrics, sent over OTLP/HTTP (protobuf) to a collector you run: `{otlpEndpoint (the collector's base URL, e.g. `http://otel-collector.monitoring.svc:4318`; the exporter posts to `/v1/metrics`), exportIntervalSeconds (60)}`. The api's `api.request_duration` and the content app's `content.request_duration` (histograms), the workers' `tasks_unblocked_queue` and `tasks_longest_unblocked_time` (gauges). Sets `OTEL_ENABLED` (refused in `extraSettings` beside it); see [Metrics](operations.md#metrics)",
  },
  trustedCa: {
    type: "object",
    default: "none",
    meaning:
      "certificate authorities the api, content and worker processes trust besides the image's own, for remotes behind a private CA. `certificates`: PEM text (`pulumi config set --path pulp:trustedCa.certificates < ca.crt`: a multi-line value comes in on standard input), kept in the ConfigMap `<instance>-trusted-ca`; a change rolls the pods. Or `configMap`: an existing ConfigMap whose every key is PEM (read at pod start: roll the pods after changing it). An init container appends them to the image's bundle and `SSL_CERT_FILE`/`REQUESTS_CA_BUNDLE` point at the result; the migration Job does not get them (it fetches nothing), so a change does not re-run migrations",
  },
  secretSettings: {
    type: "object",
    default: "none",
    meaning:
      "Pulp settings whose values are credentials, each from a Secret you keep in the namespace: `{SETTING_NAME: {secretName, key}}` (`pulumi config set --path 'pulp:secretSettings.SOCIAL_AUTH_KEYCLOAK_SECRET.secretName' keycloak`). Every Pulp process (api, content, worker, the Jobs) gets it as `PULP_SETTING_NAME` env, read as a string; `__` nests (`STORAGES__default__OPTIONS__sas_token`). Never in settings.py or the stack config. Settings the program sets, and one also in `extraSettings`, are refused. A pod reads the value when it starts: roll the pods after changing the Secret (`kubectl rollout restart`)",
  },
  extraSettings: {
    type: "object",
    default: "`{}`",
    meaning: "further `settings.py` entries (UPPER_CASE); settings the program owns are refused",
  },
};

/** The reference as the Markdown table docs/configuration.md holds, rows in the order above. */
export function configReferenceTable(): string {
  const rows: { keys: ConfigKey[]; doc: Exclude<KeyDoc, { sameAs: ConfigKey }> }[] = [];
  for (const [key, doc] of Object.entries(CONFIG_REFERENCE) as [ConfigKey, KeyDoc][]) {
    if ("sameAs" in doc) rows.find((r) => r.keys[0] === doc.sameAs)!.keys.push(key);
    else rows.push({ keys: [key], doc });
  }
  return [
    "| key | type | default | meaning |",
    "| --- | --- | --- | --- |",
    ...rows.map(
      ({ keys, doc }) =>
        `| ${keys.map((k) => `\`${k}\``).join(", ")} | ${doc.type} | ${doc.default} | ${doc.meaning} |`,
    ),
  ].join("\n");
}
