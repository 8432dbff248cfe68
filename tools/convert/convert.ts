// A pulp-operator `Pulp` custom resource (and the Secrets and ConfigMap it names, and its PulpBackups) as
// this project's stack config: convertPulpCr, a pure function, and the two tables that say what becomes of
// every field of the operator's CRDs (2.0.0): MAPPED and UNMAPPED. A field set in a CR that is in neither is
// reported as unknown; test/unit/tools/convert/coverage.test.ts fails when the CRDs' field list
// (test/fixtures/pulp-operator/crd-fields.yaml) has a name the tables lack, and when a mapped field changes
// nothing. Secret values are never read here: a Secret is known by its key names and the values of the keys
// that are config (a database's host, a bucket's name), and a secret config key by where it comes from.
import { parseConfig } from "../../components/config/parse";
import { ConfigError, ConfigProblem, keyOf, setCommand } from "../../components/config/problems";
import { SecretName } from "../../components/config/rules";
import { LDAP_GROUP_TYPES, LdapGroupType, SigningKind } from "../../components/config/schema";
import { FLOATING_TAGS, imageProblem } from "../../components/config/formats";
import { WEB_PORT } from "../../components/web/nginx";
import {
  Component,
  COMPONENTS,
  CONTENT_PORT,
  Conversion,
  ConvertError,
  ConvertOptions,
  CREDENTIAL_NAME,
  EXTERNAL_DB,
  EXTERNAL_DB_PASSWORD,
  MANAGED_DB,
  MANAGED_DB_PASSWORD,
  managedDbSecret,
  isObj,
  isSet,
  KubeObject,
  LDAP_CONFIG_KEYS,
  Note,
  Obj,
  obj,
  PROGRAM_SETTINGS,
  AZURE,
  AZURE_ACCOUNT_KEY,
  AZURE_CONNECTION_STRING,
  GCS,
  S3,
  S3_SECRET_KEY,
  SecretSource,
  SecretView,
  secretName,
  settable,
  SETTING_KEYS,
  text,
  OPERATOR_SECRETS,
} from "./operator";
import { pythonLiteral } from "./python";

/** The scopes of the operator's fields: the Pulp spec, the four components' objects, and so on. */
export type Scope =
  "Pulp" | "Pulp.<component>" | "Pulp.database" | "Pulp.cache" | "PulpBackup" | "PulpRestore";

/**
 * The fields this converter maps, with what they become (docs/migrate-from-pulp-operator.md's key map is
 * generated from these two tables). `<component>` stands for api, content, worker and web.
 */
export const MAPPED: Record<Scope, Record<string, string>> = {
  Pulp: {
    admin_password_secret:
      "secret `adminPassword`, from the key `password` of that Secret (default `<name>-admin-password`)",
    allowed_content_checksums: "`allowedContentChecksums`",
    api: "`api.*`: the `<component>` fields",
    cache: "`redis.*` and `cacheEnabled`: the `cache` fields",
    content: "`content.*`: the `<component>` fields",
    custom_pulp_settings:
      "`extraSettings`: each entry of that ConfigMap, its name upper-cased and its value read as a Python literal (the operator writes them into settings.py so); `CONTENT_ORIGIN`, `API_ROOT`, `CONTENT_PATH_PREFIX`, `ALLOWED_CONTENT_CHECKSUMS`, `WORKER_TYPE` and `TOKEN_AUTH_DISABLED` become their own keys; settings the program sets itself, and names that look like credentials, are not copied (a note names them)",
    database:
      "`database.external`, the same database in place (the operator's own PostgreSQL, or the external one): the `database` fields",
    db_fields_encryption_secret:
      "secret `dbFieldsEncryptionKey`, from the key `database_fields.symmetric.key` of that Secret (default `<name>-db-fields-encryption`)",
    enable_debugging: "`extraSettings.LOGGING`: DEBUG for every logger, as the operator sets it",
    signing_secret:
      "secret `signingKey`, from the key `signing_service.gpg` of that Secret, when `signing_scripts` names a service",
    signing_scripts:
      "`signing.services`, by the scripts that Secret holds: collection_script.sh and rpm_script.sh become `detached` services, apt_script.sh an `apt` one, under the operator's names (collection-, rpm-, apt-signing-service), so repositories keep them; the program's own scripts replace the operator's; container_script.sh is not converted",
    pvc: "`storage.pvc.existingClaim`: your claim, mounted in place",
    file_storage_access_mode:
      "`storage.pvc.existingClaim` (with the other `file_storage_*` fields): the operator's claim `<name>-file-storage`, taken over in place; a mode other than `ReadWriteMany` gets a note (refused here: the api, content and worker pods of several nodes mount the claim)",
    file_storage_size:
      "`storage.pvc.existingClaim` (with the other `file_storage_*` fields): the operator's claim `<name>-file-storage`, whose size is its own",
    file_storage_storage_class:
      "`storage.pvc.existingClaim` (with the other `file_storage_*` fields): the operator's claim `<name>-file-storage`, whose class is its own",
    haproxy_timeout:
      'with `ingress_type: route`, `ingress.annotations["haproxy.router.openshift.io/timeout"]`',
    hide_guarded_distributions:
      "`extraSettings.HIDE_GUARDED_DISTRIBUTIONS` when true (the operator writes it only then)",
    image: "`image`, `<image>:<image_version>`",
    image_pull_secrets: "`imagePullSecrets`",
    ldap: "`ldap`, from the `auth_ldap_*` keys of the Secret `ldap.config` (server URI, StartTLS, bind DN, the user and group `LDAPSearch`es, the group type, mirroring, require/deny groups, the superuser group, the attribute map); `auth_ldap_bind_password` becomes the secret `ldapBindPassword`; the CA of `ldap.ca` joins `trustedCa.certificates`. The operator's default of no group mirroring is kept (`groups.mirror: false`); connection options are not converted (a note names them)",
    sso_secret:
      "`secretSettings`: each Keycloak key of that Secret (`social_auth_keycloak_*`, `keycloak_*`, as the operator reads them), upper-cased, from the same Secret, so the values stay in it and out of the stack config",
    sa_annotations:
      "`serviceAccount.annotations`: the identity (IRSA, GKE Workload Identity) the Pulp pods reach object storage with, on a ServiceAccount of this install's own",
    image_version:
      "the tag of `image`; a floating tag (`stable`, the operator's default, or `latest`) is refused here: `image` is left out, and a note asks for the version",
    image_web: "`web.image`, `<image_web>:<image_web_version>`, when pulp-web is deployed",
    image_web_version: "the tag of `web.image`; a floating tag as for `image_version`",
    ingress_annotations: "`ingress.annotations`, with `ingress_type: ingress`",
    ingress_class_name: "`ingress.className`, with `ingress_type: ingress`",
    ingress_host:
      "`ingress.host`, and `contentOrigin` (`https://` with a TLS Secret, else `http://`), with `ingress_type: ingress`",
    ingress_tls_secret: "`ingress.tlsSecretName`, with `ingress_type: ingress`",
    ingress_type:
      "`ingress`: `ingress.enabled` and `ingress.kind: Ingress`; `route`: `ingress.enabled` and `ingress.kind: Route`; `none` or unset: no ingress, and `contentOrigin` is this install's in-cluster URL; `loadbalancer` and `nodeport`: `web.service.type` LoadBalancer or NodePort (pulp-web's Service), and a note to set `contentOrigin` to the address clients use",
    ipv6_disabled: "`web.listenIPv6: false`",
    loadbalancer_port: "`web.service.port`, with `ingress_type: loadbalancer`",
    nodeport_port: "`web.service.nodePort`, with `ingress_type: nodeport`",
    is_nginx_ingress:
      "`web.enabled: false`: the Ingress sends content paths to content and the rest to api, as the operator's nginx Ingress does",
    migration_job:
      "`migration.resources`, and the env of the `migrate` container (`migration.podSpecOverrides`); its `image` is not used (the Job runs `image`)",
    mount_trusted_ca:
      "with `mount_trusted_ca_configmap_key`, `trustedCa.configMap`; without it (OpenShift's injected bundle), a note",
    mount_trusted_ca_configmap_key:
      "`trustedCa.configMap`: the ConfigMap's name, before `:`; here every key of that ConfigMap is read as PEM",
    nginx_client_max_body_size: "`web.clientMaxBodySize` (lower-cased)",
    object_storage_azure_secret:
      "`storage.azure.{accountName,container,location}` from that Secret's `azure-account-name`, `azure-container` and `azure-container-path`, and secret `azureAccountKey` from its `azure-account-key`; a Secret with only `azure-connection-string` gets a note (its `AccountKey` and `BlobEndpoint` are set by hand)",
    object_storage_gcs_secret:
      "`storage.gcs.bucket` from that Secret's `gcs-bucket-name`, reached as the pods' identity as the operator's were (`sa_annotations`); `gcs-querystring-auth` false and `gcs-file-overwrite` get a note (here redirects are signed and files overwritten)",
    object_storage_s3_secret:
      "`storage.s3.{bucket,endpointUrl,region,accessKeyId}` from that Secret's `s3-bucket-name`, `s3-endpoint`, `s3-region` and `s3-access-key-id`, and secret `s3SecretAccessKey` from its `s3-secret-access-key`",
    pulp_secret_key:
      "secret `secretKey`, from the key `secret_key` of that Secret (default `<name>-secret-key`)",
    redirect_to_object_storage: "`extraSettings.REDIRECT_TO_OBJECT_STORAGE` when true",
    route_annotations: "`ingress.annotations`, with `ingress_type: route`",
    route_host: "`ingress.host`, and `contentOrigin` `https://<route_host>`, with `ingress_type: route`",
    route_tls_secret:
      "`ingress.tlsSecretName: <route_tls_secret>-tls`, with `ingress_type: route`, and a note with the command that copies the operator's Secret (keys `certificate`, `key`) into a `kubernetes.io/tls` Secret of that name, which the router reads",
    web: "`web.*`: the `<component>` fields; `web.enabled` unless `ingress_type: route` or `is_nginx_ingress` (the operator's rule)",
    worker: "`worker.*`: the `<component>` fields",
  },
  "Pulp.<component>": {
    affinity: "`<component>.podSpecOverrides.affinity`",
    service_annotations:
      "web's: `web.service.annotations`; api's and content's Services have no annotations option (a note)",
    env_vars:
      "`<component>.podSpecOverrides.containers[0].env`, in the container `<component>`; a literal value whose name looks like a credential is not copied (a note names it)",
    livenessProbe:
      "`<component>.probes.liveness`: `initialDelaySeconds`, `periodSeconds`, `timeoutSeconds`, `failureThreshold`; the check itself stays the program's",
    node_selector:
      "`scheduling.nodeSelector` when api, content, worker (and web, when deployed) give the same; else `<component>.podSpecOverrides.nodeSelector`, with a note",
    pdb: "`<component>.podDisruptionBudget`: a whole-number `maxUnavailable` (1 or more) or `minAvailable`; a percentage, `selector` and `unhealthyPodEvictionPolicy` are noted",
    readinessProbe:
      "`<component>.probes.readiness`: `initialDelaySeconds`, `periodSeconds`, `timeoutSeconds`, `failureThreshold`; the check itself stays the program's",
    replicas: "`<component>.replicas`; 1 when not set (the CRD's default)",
    resource_requirements:
      "`<component>.resources` (`cpu`, `memory`, `ephemeral-storage`; other resources are noted)",
    tolerations:
      "`scheduling.tolerations` when api, content and worker give the same (the CRD gives web none); else `<component>.podSpecOverrides.tolerations`, with a note",
  },
  "Pulp.database": {
    external_db_secret:
      "`database.external.{host,port,name,user,sslmode}` from that Secret's `POSTGRES_HOST`, `POSTGRES_PORT`, `POSTGRES_DB_NAME`, `POSTGRES_USERNAME` and `POSTGRES_SSLMODE`, and secret `databasePassword` from its `POSTGRES_PASSWORD`; without it, the operator's own PostgreSQL in place: `database.external` from the keys `host`, `port`, `database`, `username` and `sslmode` of the Secret `<name>-postgres-configuration`, and `databasePassword` from its `password`",
    postgres_ssl_mode:
      "`database.external.sslmode`, when the Secret `<name>-postgres-configuration` is not at hand (it records the same)",
  },
  "Pulp.cache": {
    enabled:
      "`redis.enabled` and `cacheEnabled` (true unless false: the CRD's default once `cache` is given)",
    redis_image:
      "`redis.image` when pinned; the operator's default, `redis:latest`, floats: the program's pinned default applies",
    redis_resource_requirements: "`redis.resources`",
  },
  PulpBackup: {
    backup_storage_class: "`backup.volume.storageClass`",
    backup_storage_requirements: "`backup.volume.size`",
    deployment_name:
      "which Pulp CR: a PulpBackup of the converted CR turns on `backup.enabled` (backups on demand, `npm run backup -- now`)",
  },
  PulpRestore: {},
};

const NO_PLACEMENT = "follows `pulp:scheduling` (global here)";
const TOKEN_KEYS =
  "token auth stays on (`tokenAuth: true`, as the operator runs it), but the key pair is not carried over: the program generates its own, and tokens the operator's install signed (they last minutes) stop being accepted at the switch";
const NGINX_LIMITS =
  "the program's own nginx and Ingress limits apply (no body limit, reads and sends 600 s, connects 60 s); change them with `ingress.annotations`";
const SERVICE_ACCOUNT =
  "no labels for the ServiceAccount: the program's ServiceAccount `<instance>-pulp` carries its own (its annotations: sa_annotations)";
/** pulp-operator's signing scripts (its Secret `signing_scripts`) and the services it registers for each. */
const OPERATOR_SIGNING: Record<string, { name: string; kind: SigningKind } | undefined> = {
  "collection_script.sh": { name: "collection-signing-service", kind: "detached" },
  "rpm_script.sh": { name: "rpm-signing-service", kind: "detached" },
  "apt_script.sh": { name: "apt-signing-service", kind: "apt" },
  "container_script.sh": undefined,
};
const GUNICORN = "the program runs the image's entry points with their own gunicorn settings: no option";
const OPERATOR_DB =
  "describes the operator's PostgreSQL StatefulSet, which this install uses in place (`database.external`) and does not manage: it keeps running as it is";
/** A PulpRestore restores into a new install, which the converted config (the install in place) is not. */
const RESTORE_ELSEWHERE =
  "a restore goes into a new stack with a database of its own, not this config (it takes the install over in place, where a restore is refused): the note on the PulpRestore gives the commands (docs/migrate-from-pulp-operator.md, Moving by backup)";

/** The fields with no equivalent here, each with the reason and what to do instead. */
export const UNMAPPED: Record<Scope, Record<string, string>> = {
  Pulp: {
    admin_password_job:
      "the program's migration Job sets the admin password (again whenever `adminPassword` changes): nothing to convert",
    container_auth_private_key_name: TOKEN_KEYS,
    container_auth_public_key_name: TOKEN_KEYS,
    container_token_secret: TOKEN_KEYS,
    disable_migrations:
      "migrations always run here, in a Job that `pulumi up` awaits before any Deployment changes",
    image_pull_policy: "the program pulls `IfNotPresent`: its images are pinned by version or digest",
    inhibit_version_constraint: "nothing to do: `web.image` is not checked against `image` here",
    loadbalancer_protocol:
      "pulp-web serves plain HTTP: for `https`, terminate TLS at the load balancer (its `web.service.annotations`) or use `ingress.*` with a TLS Secret",
    nginx_proxy_body_size: NGINX_LIMITS,
    nginx_proxy_connect_timeout: NGINX_LIMITS,
    nginx_proxy_read_timeout: NGINX_LIMITS,
    nginx_proxy_send_timeout: NGINX_LIMITS,
    route_labels: "no labels option for the Routes: they carry the program's labels",
    sa_labels: SERVICE_ACCOUNT,
    signing_job:
      "the program registers the signing services in its Job `<instance>-signing-services`, with `pulp:migration`'s resources, pod annotations and podSpecOverrides",
    telemetry:
      "no OpenTelemetry sidecar option: add a collector with `podSpecOverrides.containers`, and the `OTEL_*` env",
    unmanaged: "no equivalent: the program changes the install only when `pulumi up` runs",
  },
  "Pulp.<component>": {
    deployment_annotations:
      "no option for the Deployment's own annotations; the pods' are `<component>.podAnnotations` (api, content, worker)",
    gunicorn_access_logformat: GUNICORN,
    gunicorn_timeout: GUNICORN,
    gunicorn_workers: GUNICORN,
    hpa: "no autoscaler: `<component>.replicas`",
    init_container:
      "the program's pods have their own init steps; add a container with `<component>.podSpecOverrides.initContainers`",
    pod_labels: "the pods carry the program's labels (`app.kubernetes.io/*`): no option",
    strategy:
      "the program's rolling update (`maxUnavailable: 0`, workers first) is how it upgrades without downtime",
    tls_termination_mechanism: "pulp-web serves plain HTTP behind the Ingress, or the Route (edge TLS)",
    topology_spread_constraints:
      "the program spreads the pods over zones and nodes itself (`<component>.topologySpread`); yours can replace its constraints through `<component>.podSpecOverrides.topologySpreadConstraints`",
  },
  "Pulp.database": {
    affinity: OPERATOR_DB,
    livenessProbe: OPERATOR_DB,
    node_selector: OPERATOR_DB,
    pod_labels: OPERATOR_DB,
    postgres_data_path: OPERATOR_DB,
    postgres_extra_args: OPERATOR_DB,
    postgres_host_auth_method: OPERATOR_DB,
    postgres_image: OPERATOR_DB,
    postgres_initdb_args: OPERATOR_DB,
    postgres_port: OPERATOR_DB,
    postgres_resource_requirements: OPERATOR_DB,
    postgres_storage_class: OPERATOR_DB,
    postgres_storage_requirements: OPERATOR_DB,
    pvc: OPERATOR_DB,
    readinessProbe: OPERATOR_DB,
    tolerations: OPERATOR_DB,
    version: OPERATOR_DB,
  },
  "Pulp.cache": {
    affinity: `Redis ${NO_PLACEMENT}, or \`redis.podSpecOverrides\``,
    deployment_annotations: "the program's Redis has no such option",
    external_cache_secret: "no external Redis: the program runs its own (`redis.enabled`)",
    livenessProbe: "the program's Redis has no such option",
    node_selector: `Redis ${NO_PLACEMENT}, or \`redis.podSpecOverrides\``,
    pod_labels: "the program's Redis has no such option",
    pvc: "the program's Redis keeps no volume: it holds only the cache",
    readinessProbe: "the program's Redis has no such option",
    redis_port: "Redis listens on 6379 here",
    redis_storage_class: "the program's Redis keeps no volume: it holds only the cache",
    strategy: "the program's Redis has no such option",
    tolerations: `Redis ${NO_PLACEMENT}, or \`redis.podSpecOverrides\``,
  },
  PulpBackup: {
    admin_password_secret: "a backup here takes the install's own keys and database: nothing to name",
    affinity: `backup pods: ${NO_PLACEMENT}`,
    backup_pvc: "backups go to the program's own volume, `<instance>-backups` (`backup.volume`)",
    backup_pvc_namespace: "backups stay in the install's namespace",
    postgres_configuration_secret: "a backup here takes the install's own keys and database: nothing to name",
    pulp_secret_key: "a backup here takes the install's own keys and database: nothing to name",
  },
  PulpRestore: {
    backup_dir: `\`restore.backup\`, the directory's name (\`openshift-backup-…\`, without \`/backups/\`): ${RESTORE_ELSEWHERE}`,
    backup_name: `the PulpBackup whose \`status.backupDirectory\` and \`status.backupClaim\` name the backup: ${RESTORE_ELSEWHERE}`,
    backup_pvc: `\`restore.claim\`, in the new install's namespace (or the directory as a tar over \`restore.http\`): ${RESTORE_ELSEWHERE}`,
    deployment_name: `which Pulp CR: ${RESTORE_ELSEWHERE}`,
    keep_replicas: "the new install's replicas are its stack config's",
  },
};

/** Values the operator writes into every CR (its defaults): an unmapped field holding one needs no note. */
const OPERATOR_DEFAULTS: Record<string, unknown> = {
  container_auth_private_key_name: "container_auth_private_key.pem",
  container_auth_public_key_name: "container_auth_public_key.pem",
};

/** The stack config this program would need to run what the CR describes, and what it cannot say. */
export function convertPulpCr(
  cr: KubeObject,
  secrets: Record<string, SecretView> = {},
  options: ConvertOptions = {},
): Conversion {
  return new Converter(cr, secrets, options).run();
}

class Converter {
  private readonly config: Obj = {};
  private readonly secretSources: Partial<Record<SecretName, SecretSource>> = {};
  private readonly notes: Note[] = [];
  private readonly errors: string[] = [];
  private readonly spec: Obj;
  private readonly name: string;
  private readonly namespace: string;
  private readonly instance: string;
  /** Settings from custom_pulp_settings, by upper-case name. */
  private readonly settings: Record<string, unknown> = {};
  private readonly webDeployed: boolean;

  constructor(
    private readonly cr: KubeObject,
    private readonly secretViews: Record<string, SecretView>,
    private readonly options: ConvertOptions,
  ) {
    this.spec = obj(cr.spec);
    this.name = cr.metadata?.name ?? "";
    this.namespace = cr.metadata?.namespace ?? "";
    this.instance = options.instanceName ?? `${this.name}-pulumi`;
    const type = this.ingressType();
    this.webDeployed = type !== "route" && this.spec.is_nginx_ingress !== true;
  }

  run(): Conversion {
    if (this.cr.kind !== undefined && this.cr.kind !== "Pulp") {
      throw new ConvertError([
        `the object is a ${this.cr.kind}, not a Pulp (repo-manager.pulpproject.org/v1)`,
      ]);
    }
    if (!this.name || !this.namespace) {
      throw new ConvertError(["the Pulp CR has no metadata.name or metadata.namespace: give both"]);
    }
    if (this.instance === this.name) {
      throw new ConvertError([
        `the instance name ${this.instance} is the Pulp CR's own: in namespace ${this.namespace} the program's ` +
          `Deployments and Secrets (${this.name}-api, ${this.name}-secret-key, ...) would be the operator's, ` +
          "which it still manages: choose another with --instance",
      ]);
    }
    this.set(["namespace"], this.namespace);
    // The operator's namespace exists: the program must not create it, nor delete it on destroy.
    this.set(["createNamespace"], false);
    this.set(["instanceName"], this.instance);

    this.customSettings();
    this.images();
    this.exposure();
    for (const c of COMPONENTS) this.component(c);
    this.placement();
    this.storage();
    this.database();
    this.cache();
    this.keys();
    this.signing();
    this.ldap();
    this.sso();
    this.pulpSettings();
    this.backups();
    this.fieldNotes();
    if (this.errors.length > 0) throw new ConvertError(this.errors);

    const notes = [...this.notes].sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
    return { config: this.config, secrets: this.secretSources, notes, problems: this.validate() };
  }

  /** parseConfig's verdict on the config and the secrets it will have. */
  private validate(): ConfigProblem[] {
    try {
      parseConfig(this.config, new Set(Object.keys(this.secretSources) as SecretName[]));
      return [];
    } catch (e) {
      if (e instanceof ConfigError) return e.problems;
      throw e;
    }
  }

  private set(path: string[], value: unknown): void {
    let at = this.config;
    for (const part of path.slice(0, -1)) {
      if (!isObj(at[part])) at[part] = {};
      at = at[part] as Obj;
    }
    at[path[path.length - 1]] = value;
  }

  private note(field: string, text: string): void {
    this.notes.push({ field, text });
  }

  private ingressType(): string {
    return (text(this.spec.ingress_type) ?? "none").toLowerCase();
  }

  /** A Secret the CR names: its view, or an error when its config is needed and it was not given. */
  private secret(name: string, why: string, needed: string[]): SecretView | undefined {
    const view = this.secretViews[name];
    if (!view && needed.length > 0) {
      this.errors.push(
        `${why} names the Secret ${name}, which holds config (${needed.join(", ")}): convert from the cluster, ` +
          `or add the Secret to the file (kubectl get secret -n ${this.namespace} ${name} -o yaml)`,
      );
    }
    return view;
  }

  /** A secret config key from a key of a Secret; a Secret that is known must hold that key. */
  private secretFrom(key: SecretName, secret: string, secretKey: string, why: string): void {
    const view = this.secretViews[secret];
    if (view && !view.keys.includes(secretKey)) {
      this.errors.push(`${why}: the Secret ${secret} has no key ${secretKey}`);
      return;
    }
    this.secretSources[key] = { secret, key: secretKey };
  }

  /** `<image>:<tag>` unless the tag floats (or is no tag); then a note and nothing: the default applies. */
  private image(field: string, image: string, tag: string, key: string[], runs: string): void {
    const ref = `${image}:${tag}`;
    const floating = (FLOATING_TAGS as readonly string[]).includes(tag);
    const problem = imageProblem(ref);
    if (!floating && !problem) {
      this.set(key, ref);
      return;
    }
    this.note(
      field,
      `${floating ? `"${tag}" is a floating tag, refused here (nodes could pull different builds)` : `${ref} must be ${problem}`}: ` +
        `pin the release ${runs} run, ${setCommand(keyOf(key), `${image}:<version>`)}; until then the program's default image applies`,
    );
  }

  private images(): void {
    const pulp = text(this.spec.image) ?? "quay.io/pulp/pulp-minimal";
    this.image(
      "image_version",
      pulp,
      text(this.spec.image_version) ?? "stable",
      ["image"],
      "the operator's pods",
    );
    if (!this.webDeployed) return;
    const web = text(this.spec.image_web) ?? "quay.io/pulp/pulp-web";
    this.image(
      "image_web_version",
      web,
      text(this.spec.image_web_version) ?? "stable",
      ["web", "image"],
      "the operator's pulp-web pods",
    );
  }

  /** The operator's Ingress, Route or neither, and the content origin it derives (getRootURL). */
  private exposure(): void {
    const type = this.ingressType();
    const s = this.spec;
    const origin = text(this.settings.CONTENT_ORIGIN);
    if (type === "ingress") {
      this.set(["ingress", "enabled"], true);
      this.set(["ingress", "kind"], "Ingress");
      if (text(s.ingress_host)) this.set(["ingress", "host"], s.ingress_host);
      if (text(s.ingress_class_name)) this.set(["ingress", "className"], s.ingress_class_name);
      if (text(s.ingress_tls_secret)) this.set(["ingress", "tlsSecretName"], s.ingress_tls_secret);
      if (isSet(s.ingress_annotations)) this.set(["ingress", "annotations"], s.ingress_annotations);
      const scheme = text(s.ingress_tls_secret) ? "https" : "http";
      if (!origin && text(s.ingress_host)) this.set(["contentOrigin"], `${scheme}://${s.ingress_host}`);
    } else if (type === "route") {
      this.set(["ingress", "enabled"], true);
      this.set(["ingress", "kind"], "Route");
      const annotations: Obj = { ...obj(s.route_annotations) };
      if (text(s.haproxy_timeout)) annotations["haproxy.router.openshift.io/timeout"] = s.haproxy_timeout;
      if (isSet(annotations)) this.set(["ingress", "annotations"], annotations);
      if (text(s.route_tls_secret)) {
        // The operator copies the certificate into its Routes; the program's name a kubernetes.io/tls
        // Secret, which the router reads (spec.tls.externalCertificate).
        const tls = `${s.route_tls_secret}-tls`;
        const read = (key: string) =>
          `<(kubectl -n ${this.namespace} get secret ${s.route_tls_secret} -o jsonpath='{.data.${key}}' | base64 -d)`;
        this.set(["ingress", "tlsSecretName"], tls);
        this.note(
          "route_tls_secret",
          `the Routes read their certificate from the kubernetes.io/tls Secret ${tls}; make it from the ` +
            `operator's before the switch: kubectl -n ${this.namespace} create secret tls ${tls} ` +
            `--cert=${read("certificate")} --key=${read("key")} (its caCertificate is not carried: ` +
            "the router serves the Secret's certificate alone)",
        );
      }
      if (text(s.route_host)) {
        this.set(["ingress", "host"], s.route_host);
        if (!origin) this.set(["contentOrigin"], `https://${s.route_host}`);
      } else {
        this.note(
          "route_host",
          'not set: the operator named the Route "example.com"; set the host clients use: ' +
            "pulumi config set --path 'pulp:ingress.host' <host> and pulumi config set pulp:contentOrigin https://<host>",
        );
      }
    } else {
      if (type === "loadbalancer" || type === "nodeport") {
        this.set(["web", "service", "type"], type === "loadbalancer" ? "LoadBalancer" : "NodePort");
        if (type === "nodeport" && typeof s.nodeport_port === "number") {
          this.set(["web", "service", "nodePort"], s.nodeport_port);
        }
        if (type === "loadbalancer" && typeof s.loadbalancer_port === "number") {
          this.set(["web", "service", "port"], s.loadbalancer_port);
        }
        if (!origin) {
          this.note(
            "ingress_type",
            `${type}: set contentOrigin to the address clients reach pulp-web at (${
              type === "loadbalancer" ? "the load balancer's" : "a node's address and the node port"
            }): pulumi config set pulp:contentOrigin http://<address>:<port>`,
          );
        }
      } else if (!origin) {
        const service = this.webDeployed
          ? `${this.instance}-web.${this.namespace}.svc.cluster.local:${WEB_PORT}`
          : `${this.instance}-content.${this.namespace}.svc.cluster.local:${CONTENT_PORT}`;
        this.set(["contentOrigin"], `http://${service}`);
        this.note(
          "ingress_type",
          `no ingress: contentOrigin is this install's own Service, http://${service} (the operator's was ` +
            `http://${this.name}-web-svc.${this.namespace}.svc.cluster.local:24880): clients in the cluster move to it at the switch`,
        );
      }
    }
    if (origin) this.set(["contentOrigin"], origin);
    // Fields for the other kind of exposure: the operator does not use them either.
    const unused =
      type === "ingress"
        ? ["route_host", "route_annotations", "route_tls_secret", "haproxy_timeout"]
        : type === "route"
          ? ["ingress_host", "ingress_class_name", "ingress_tls_secret", "ingress_annotations"]
          : [
              "ingress_host",
              "ingress_class_name",
              "ingress_tls_secret",
              "ingress_annotations",
              "route_host",
              "route_annotations",
              "route_tls_secret",
              "haproxy_timeout",
            ];
    for (const field of unused) {
      if (isSet(s[field]))
        this.note(
          field,
          `set, but ingress_type is ${type}: the operator does not use it either; not converted`,
        );
    }
    this.set(["web", "enabled"], this.webDeployed);
    if (!this.webDeployed && isSet(s.web)) {
      this.note(
        "web",
        "pulp-web is not deployed with ingress_type route or is_nginx_ingress (as by the operator); not converted",
      );
    }
    if (s.ipv6_disabled === true) this.set(["web", "listenIPv6"], false);
    if (text(s.nginx_client_max_body_size))
      this.set(["web", "clientMaxBodySize"], String(s.nginx_client_max_body_size).toLowerCase());
  }

  /** One of api, content, worker, web. */
  private component(c: Component): void {
    if (c === "web" && !this.webDeployed) return;
    const spec = obj(this.spec[c]);
    const key = (...path: string[]) => [c, ...path];
    this.set(key("replicas"), typeof spec.replicas === "number" ? spec.replicas : 1);
    const resources = this.resources(`${c}.resource_requirements`, spec.resource_requirements);
    if (resources) this.set(key("resources"), resources);
    this.pdb(c, spec.pdb);
    for (const [field, probe] of [
      ["livenessProbe", "liveness"],
      ["readinessProbe", "readiness"],
    ] as const) {
      if (!isSet(spec[field])) continue;
      const timing = this.probe(`${c}.${field}`, obj(spec[field]));
      if (timing) this.set(key("probes", probe), timing);
    }
    if (isSet(spec.affinity)) this.set(key("podSpecOverrides", "affinity"), spec.affinity);
    const env = this.env(`${c}.env_vars`, `pulp:${c}.podSpecOverrides`, spec.env_vars);
    if (env.length > 0) this.set(key("podSpecOverrides", "containers"), [{ name: c, env }]);
    if (isSet(spec.service_annotations)) {
      if (c === "web") this.set(["web", "service", "annotations"], spec.service_annotations);
      else {
        this.note(
          `${c}.service_annotations`,
          `the ${c} Service has no annotations option here (pulp-web's has: web.service.annotations); not converted`,
        );
      }
    }
  }

  /** Requests and limits of cpu, memory and ephemeral-storage; anything else is noted. */
  private resources(field: string, value: unknown): Obj | undefined {
    if (!isSet(value)) return undefined;
    const out: Obj = {};
    for (const kind of ["requests", "limits"] as const) {
      const list = obj(obj(value)[kind]);
      const kept: Obj = {};
      for (const [name, quantity] of Object.entries(list)) {
        if (["cpu", "memory", "ephemeral-storage"].includes(name)) kept[name] = quantity;
        else this.note(field, `${kind}.${name}: only cpu, memory and ephemeral-storage here; not converted`);
      }
      if (isSet(kept)) out[kind] = kept;
    }
    if (isSet(obj(value).claims))
      this.note(field, "claims (dynamic resources): no equivalent; not converted");
    return isSet(out) ? out : undefined;
  }

  private pdb(c: Component, value: unknown): void {
    if (!isSet(value)) return;
    const pdb = obj(value);
    const field = `${c}.pdb`;
    for (const extra of ["selector", "unhealthyPodEvictionPolicy"]) {
      if (isSet(pdb[extra]))
        this.note(field, `${extra}: the program's budget selects its own pods; not converted`);
    }
    const whole = (v: unknown) => typeof v === "number" && Number.isInteger(v);
    if (whole(pdb.maxUnavailable) && (pdb.maxUnavailable as number) >= 1) {
      this.set([c, "podDisruptionBudget"], { maxUnavailable: pdb.maxUnavailable });
    } else if (whole(pdb.minAvailable) && pdb.maxUnavailable === undefined) {
      this.set([c, "podDisruptionBudget"], { minAvailable: pdb.minAvailable });
    } else if (pdb.maxUnavailable !== undefined || pdb.minAvailable !== undefined) {
      this.note(
        field,
        `${JSON.stringify({ maxUnavailable: pdb.maxUnavailable, minAvailable: pdb.minAvailable })}: here a budget is a ` +
          "whole maxUnavailable of 1 or more (0 would block every node drain) or a whole minAvailable; the default, maxUnavailable 1, applies",
      );
    }
  }

  private probe(field: string, probe: Obj): Obj | undefined {
    const timing: Obj = {};
    for (const name of ["initialDelaySeconds", "periodSeconds", "timeoutSeconds", "failureThreshold"]) {
      if (typeof probe[name] === "number") timing[name] = probe[name];
    }
    const other = Object.keys(probe).filter((k) => !(k in timing));
    if (other.length > 0) {
      this.note(field, `${other.join(", ")}: the program's own check is kept; only its timing is converted`);
    }
    return isSet(timing) ? timing : undefined;
  }

  /** env_vars, but a literal value whose name looks like a credential: it would sit in plain text. */
  private env(field: string, overrides: string, value: unknown): Obj[] {
    const out: Obj[] = [];
    for (const item of Array.isArray(value) ? value : []) {
      const env = obj(item);
      const name = text(env.name);
      if (!name) continue;
      if (env.value !== undefined && CREDENTIAL_NAME.test(name)) {
        this.note(
          `${field} ${name}`,
          "a literal value whose name looks like a credential is not copied into the stack config (plain text): " +
            `put it in a Secret and add it with valueFrom.secretKeyRef in ${overrides}.containers[0].env`,
        );
        continue;
      }
      out.push(env);
    }
    return out;
  }

  /** node_selector and tolerations: global when every Pulp component has the same, else per component. */
  private placement(): void {
    // The web object of the CRD has a node_selector but no tolerations.
    for (const [field, key, components] of [
      ["node_selector", "nodeSelector", COMPONENTS.filter((c) => c !== "web" || this.webDeployed)],
      ["tolerations", "tolerations", COMPONENTS.filter((c) => c !== "web")],
    ] as const) {
      const given = components.map((c) => obj(this.spec[c])[field]);
      if (!given.some(isSet)) continue;
      const same = given.every((v) => JSON.stringify(v) === JSON.stringify(given[0]));
      if (same) {
        this.set(["scheduling", key], given[0]);
        continue;
      }
      components.forEach((c, i) => {
        if (isSet(given[i])) this.set([c, "podSpecOverrides", key], given[i]);
      });
      this.note(
        field,
        `differs between components: each went to its own podSpecOverrides.${key}, and what the program runs besides ` +
          "(the migration Job, Redis, the database) follows pulp:scheduling only",
      );
    }
  }

  private storage(): void {
    const s = this.spec;
    const s3 = text(s.object_storage_s3_secret);
    if (s3) {
      const view = this.secret(s3, "object_storage_s3_secret", [S3.bucket]);
      const v = view?.values ?? {};
      if (view && !v[S3.bucket])
        this.errors.push(`object_storage_s3_secret: the Secret ${s3} has no ${S3.bucket}`);
      if (v[S3.bucket]) this.set(["storage", "s3", "bucket"], v[S3.bucket]);
      if (v[S3.endpointUrl]) this.set(["storage", "s3", "endpointUrl"], v[S3.endpointUrl]);
      if (v[S3.region]) this.set(["storage", "s3", "region"], v[S3.region]);
      if (v[S3.accessKeyId]) this.set(["storage", "s3", "accessKeyId"], v[S3.accessKeyId]);
      else if (view) {
        this.note(
          "object_storage_s3_secret",
          `the Secret ${s3} has no ${S3.accessKeyId}: the operator's pods reached the bucket with their own ` +
            "identity (sa_annotations, converted to pulp:serviceAccount.annotations, or the node's role); " +
            "without it, give this install's pods an identity (pulp:serviceAccount) or a static key",
        );
      }
      if (v[S3.addressingStyle] && v[S3.addressingStyle] !== "path") {
        this.note(
          "object_storage_s3_secret",
          `${S3.addressingStyle} ${v[S3.addressingStyle]}: the program addresses buckets by path`,
        );
      }
      if (!view || view.keys.includes(S3_SECRET_KEY)) {
        this.secretFrom("s3SecretAccessKey", s3, S3_SECRET_KEY, "object_storage_s3_secret");
      }
      for (const field of ["file_storage_storage_class", "file_storage_size", "file_storage_access_mode"]) {
        if (isSet(s[field])) {
          this.note(
            field,
            "set beside object_storage_s3_secret: the operator refuses two storages; not converted",
          );
        }
      }
      return;
    }
    const azure = text(s.object_storage_azure_secret);
    if (azure) {
      this.azureStorage(azure);
      return;
    }
    const gcs = text(s.object_storage_gcs_secret);
    if (gcs) {
      this.gcsStorage(gcs);
      return;
    }
    // The operator mounts its claim at /var/lib/pulp, MEDIA_ROOT /var/lib/pulp/media, as this program does:
    // the same claim, taken over in place, holds every artifact where this install looks for it.
    const fileStorage = ["file_storage_storage_class", "file_storage_size", "file_storage_access_mode"];
    const own = text(s.pvc);
    const claim = own ?? (fileStorage.some((f) => isSet(s[f])) ? `${this.name}-file-storage` : undefined);
    if (claim) {
      this.set(["storage", "pvc", "existingClaim"], claim);
      const mode = text(s.file_storage_access_mode) ?? "ReadWriteMany";
      if (!own && mode !== "ReadWriteMany") {
        this.note(
          "file_storage_access_mode",
          `${mode}: the program refuses a claim that is not ReadWriteMany (api, content and worker pods on several ` +
            "nodes, more during an upgrade, mount it): copy the artifacts to a ReadWriteMany claim and name it " +
            "in pulp:storage.pvc.existingClaim, or use storage.s3",
        );
      }
      this.note(
        own ? "pvc" : "file_storage_storage_class",
        `the artifacts stay in ${own ? "your" : "the operator's"} claim ${claim}, which this install mounts in place ` +
          "(storage.pvc.existingClaim) and never deletes" +
          (own
            ? ""
            : `. It belongs to the Pulp CR: delete the CR with --cascade=orphan before pulumi up, which refuses an ` +
              "owned claim (docs/migrate-from-pulp-operator.md)"),
      );
      return;
    }
    this.note(
      "file_storage_storage_class",
      "no storage given: the operator kept artifacts in an emptyDir (lost with each pod); here they get a volume " +
        "(storage.pvc, 50Gi by default)",
    );
  }

  /**
   * pulp-operator's gcsSettings (secret.go): the same bucket at its root, reached as the pods' identity (the
   * operator mounts no key), so sa_annotations' Workload Identity carries over.
   */
  private gcsStorage(secret: string): void {
    const why = "object_storage_gcs_secret";
    const view = this.secret(secret, why, [
      GCS.bucket,
      GCS.iamSignBlob,
      GCS.querystringAuth,
      GCS.fileOverwrite,
    ]);
    const v = view?.values ?? {};
    if (view && !v[GCS.bucket]) this.errors.push(`${why}: the Secret ${secret} has no ${GCS.bucket}`);
    if (v[GCS.bucket]) this.set(["storage", "gcs", "bucket"], v[GCS.bucket]);
    if (/^false$/i.test(v[GCS.querystringAuth] ?? "")) {
      this.note(
        why,
        `${GCS.querystringAuth} false: the operator's redirects were unsigned (a public bucket); here they are signed ` +
          "for 60 s, by IAM without a key (roles/iam.serviceAccountTokenCreator on the account itself)",
      );
    }
    if (v[GCS.fileOverwrite] !== undefined && !/^true$/i.test(v[GCS.fileOverwrite])) {
      this.note(
        why,
        `${GCS.fileOverwrite} ${v[GCS.fileOverwrite]}: here files are always overwritten, as Pulp expects`,
      );
    }
    if (!isSet(this.spec.sa_annotations)) {
      this.note(
        why,
        "no sa_annotations: the operator's pods reached the bucket as the node's identity; give this install's pods " +
          "one (pulp:serviceAccount.annotations, GKE Workload Identity) or a key (pulumi config set --secret pulp:gcsCredentials < key.json)",
      );
    }
    for (const field of ["file_storage_storage_class", "file_storage_size", "file_storage_access_mode"]) {
      if (isSet(this.spec[field])) {
        this.note(field, `set beside ${why}: the operator refuses two storages; not converted`);
      }
    }
  }

  /** pulp-operator's azureSettings (secret.go): the same account, container and folder, taken over in place. */
  private azureStorage(secret: string): void {
    const why = "object_storage_azure_secret";
    const view = this.secret(secret, why, [AZURE.accountName, AZURE.container]);
    const v = view?.values ?? {};
    for (const key of [AZURE.accountName, AZURE.container] as const) {
      if (view && !v[key]) this.errors.push(`${why}: the Secret ${secret} has no ${key}`);
    }
    if (v[AZURE.accountName]) this.set(["storage", "azure", "accountName"], v[AZURE.accountName]);
    if (v[AZURE.container]) this.set(["storage", "azure", "container"], v[AZURE.container]);
    // The operator passes the path to django-storages as `location`, which strips its slashes.
    const location = v[AZURE.location]?.replace(/^\/+|\/+$/g, "");
    if (location) this.set(["storage", "azure", "location"], location);
    if (!view || view.keys.includes(AZURE_ACCOUNT_KEY)) {
      this.secretFrom("azureAccountKey", secret, AZURE_ACCOUNT_KEY, why);
    } else if (view.keys.includes(AZURE_CONNECTION_STRING)) {
      this.note(
        why,
        `the Secret ${secret} gives a connection string (${AZURE_CONNECTION_STRING}), not an account key: set ` +
          "pulp:azureAccountKey to its AccountKey field (pulumi config set --secret pulp:azureAccountKey), and, when " +
          "it names a BlobEndpoint other than https://<account>.blob.core.windows.net, storage.azure.endpointUrl to it",
      );
    } else {
      this.errors.push(
        `${why}: the Secret ${secret} has no ${AZURE_ACCOUNT_KEY} or ${AZURE_CONNECTION_STRING}`,
      );
    }
    for (const field of ["file_storage_storage_class", "file_storage_size", "file_storage_access_mode"]) {
      if (isSet(this.spec[field])) {
        this.note(field, `set beside ${why}: the operator refuses two storages; not converted`);
      }
    }
  }

  private database(): void {
    const db = obj(this.spec.database);
    const external = text(db.external_db_secret);
    if (external) {
      const view = this.secret(external, "database.external_db_secret", [EXTERNAL_DB.host]);
      const v = view?.values ?? {};
      if (view && !v[EXTERNAL_DB.host]) {
        this.errors.push(`database.external_db_secret: the Secret ${external} has no ${EXTERNAL_DB.host}`);
      }
      for (const [key, secretKey] of Object.entries(EXTERNAL_DB)) {
        const value = v[secretKey];
        if (!value) continue;
        const port = key === "port" && /^\d+$/.test(value.trim());
        this.set(["database", "external", key], port ? Number(value.trim()) : value);
      }
      this.secretFrom("databasePassword", external, EXTERNAL_DB_PASSWORD, "database.external_db_secret");
      this.note(
        "database.external_db_secret",
        "this install uses the operator's database: its first pulumi up migrates it to the image's pulpcore " +
          "release while the operator's pods run on it, so keep image at the release they run, and take the " +
          "artifacts over first (not done yet), or they are missing",
      );
      return;
    }
    // The operator's own PostgreSQL, used in place: its StatefulSet keeps running, owned by nothing once the
    // CR is deleted with --cascade=orphan, and Pulp reaches it as an external database.
    const managed = managedDbSecret(this.name);
    const view = this.secretViews[managed];
    for (const [key, { key: secretKey, made }] of Object.entries(MANAGED_DB)) {
      const value = view?.values[secretKey] ?? made(this.name);
      const port = key === "port" && /^\d+$/.test(value.trim());
      this.set(["database", "external", key], port ? Number(value.trim()) : value);
    }
    if (text(db.postgres_ssl_mode) && !view)
      this.set(["database", "external", "sslmode"], db.postgres_ssl_mode);
    this.secretFrom("databasePassword", managed, MANAGED_DB_PASSWORD, "database");
    this.note(
      "database",
      `the operator runs PostgreSQL itself (StatefulSet ${this.name}-database): this install uses that database ` +
        `in place, as database.external, and does not manage it. Delete the Pulp CR with --cascade=orphan ` +
        `before pulumi up, or deleting it later deletes the database (docs/migrate-from-pulp-operator.md). ` +
        "To move it into CloudNativePG later: a backup of this install restored into one with database.cloudnativepg",
    );
  }

  private cache(): void {
    if (!isObj(this.spec.cache)) return;
    const cache = this.spec.cache;
    if (cache.enabled === false) return;
    this.set(["redis", "enabled"], true);
    this.set(["cacheEnabled"], true);
    const image = text(cache.redis_image);
    if (image && !imageProblem(image)) this.set(["redis", "image"], image);
    else if (image) {
      this.note(
        "cache.redis_image",
        `${image} is not pinned to a version or digest: the program's default Redis image applies`,
      );
    }
    const resources = this.resources("cache.redis_resource_requirements", cache.redis_resource_requirements);
    if (resources) this.set(["redis", "resources"], resources);
  }

  /** The keys Pulp runs with, from the operator's Secrets, and the few top-level settings. */
  private keys(): void {
    for (const which of Object.keys(OPERATOR_SECRETS) as (keyof typeof OPERATOR_SECRETS)[]) {
      const s = OPERATOR_SECRETS[which];
      this.secretFrom(which, secretName(this.spec, this.name, which), s.key, s.field);
    }
    const disabled = this.settings.TOKEN_AUTH_DISABLED;
    this.set(["tokenAuth"], disabled !== true);
    if (isSet(this.spec.allowed_content_checksums) && this.settings.ALLOWED_CONTENT_CHECKSUMS === undefined) {
      this.set(["allowedContentChecksums"], this.spec.allowed_content_checksums);
    }
    if (isSet(this.spec.image_pull_secrets)) this.set(["imagePullSecrets"], this.spec.image_pull_secrets);
    if (isSet(this.spec.sa_annotations))
      this.set(["serviceAccount", "annotations"], this.spec.sa_annotations);
    const trusted = text(this.spec.mount_trusted_ca_configmap_key);
    if (trusted && this.spec.mount_trusted_ca !== true) {
      this.note(
        "mount_trusted_ca_configmap_key",
        "set, but mount_trusted_ca is not true: the operator does not use it either; not converted",
      );
    } else if (trusted) this.set(["trustedCa", "configMap"], trusted.split(":")[0]);
    else if (this.spec.mount_trusted_ca === true) {
      this.note(
        "mount_trusted_ca",
        "without mount_trusted_ca_configmap_key (OpenShift's injected bundle): name a ConfigMap whose keys are " +
          "PEM, pulumi config set --path 'pulp:trustedCa.configMap' <name>",
      );
    }
    const job = obj(obj(this.spec.migration_job).container);
    const resources = this.resources(
      "migration_job.container.resource_requirements",
      job.resource_requirements,
    );
    if (resources) this.set(["migration", "resources"], resources);
    const env = this.env("migration_job.container.env_vars", "pulp:migration.podSpecOverrides", job.env_vars);
    if (env.length > 0) this.set(["migration", "podSpecOverrides", "containers"], [{ name: "migrate", env }]);
  }

  /** signing_secret and signing_scripts: the key, and a service for each script the operator registers. */
  private signing(): void {
    const secret = text(this.spec.signing_secret);
    const scripts = text(this.spec.signing_scripts);
    if (!secret || !scripts) {
      const [field, other] = secret
        ? ["signing_secret", "signing_scripts"]
        : ["signing_scripts", "signing_secret"];
      if (secret || scripts) {
        this.note(
          field,
          `set without ${other}: the operator registers no signing service then; not converted (to sign here, ` +
            "set pulp:signing and pulp:signingKey, docs/operations.md)",
        );
      }
      return;
    }
    const view = this.secret(scripts, "signing_scripts", ["the names of the scripts it holds"]);
    if (!view) return;
    const services = view.keys.flatMap((file) => {
      const service = OPERATOR_SIGNING[file];
      if (file in OPERATOR_SIGNING && !service) {
        this.note(
          "signing_scripts",
          `${file}: container manifest signing is not offered here; the operator's container-signing-service ` +
            "stays in Pulp as it was registered, with the operator's script path",
        );
      }
      return service ? [service] : [];
    });
    if (services.length === 0) {
      this.note(
        "signing_scripts",
        `the Secret ${scripts} holds no script this program signs with; not converted`,
      );
      return;
    }
    this.set(["signing", "services"], services);
    this.secretFrom("signingKey", secret, "signing_service.gpg", "signing_secret");
    this.note(
      "signing_scripts",
      "the program's scripts replace the operator's: the first `up` updates each service in place (same name, " +
        "so repositories keep it) after a test signature with the key",
    );
  }

  /**
   * ldap.config and ldap.ca: pulp:ldap from the operator's `auth_ldap_*` Secret keys, whose values the
   * operator pastes into settings.py (LDAPSearch(...), a group type's constructor): those are read here,
   * not run, and anything they cannot say is noted or refused.
   */
  private ldap(): void {
    const spec = obj(this.spec.ldap);
    const name = text(spec.config);
    if (!name) {
      if (text(spec.ca))
        this.note("ldap.ca", "set without ldap.config: the operator configures no LDAP then; not converted");
      return;
    }
    const view = this.secret(name, "ldap.config", ["the auth_ldap_* settings"]);
    if (!view) return;
    const values: Record<string, string> = {};
    for (const [k, v] of Object.entries(view.values)) values[k.toLowerCase()] = v.trim();
    const field = (key: string) => `ldap.config ${key}`;
    const refuse = (key: string, why: string) =>
      this.errors.push(`${field(key)}: ${why}; set pulp:ldap by hand (docs/operations.md, "LDAP login")`);
    const ldap: Obj = {};
    const uri = values.auth_ldap_server_uri;
    if (!uri) {
      refuse("auth_ldap_server_uri", "missing");
      return;
    }
    ldap.serverUri = uri;
    if (/^true$/i.test(values.auth_ldap_start_tls ?? "")) ldap.startTls = true;
    const bindDn = values.auth_ldap_bind_dn;
    const passwordKey = view.keys.find((k) => k.toLowerCase() === "auth_ldap_bind_password");
    if (bindDn && passwordKey) {
      ldap.bindDn = bindDn;
      this.secretFrom("ldapBindPassword", name, passwordKey, "ldap.config");
    } else if (bindDn || passwordKey) {
      this.note(
        field("auth_ldap_bind_dn"),
        "a bind DN and its password go together; the search is anonymous here",
      );
    }
    const userSearch = ldapSearch(values.auth_ldap_user_search ?? "");
    if (!userSearch) {
      refuse("auth_ldap_user_search", 'not LDAPSearch("<base DN>", ldap.SCOPE_<scope>, "<filter>")');
      return;
    }
    ldap.userSearch = userSearch;
    const attrs = pythonLiteral(values.auth_ldap_user_attr_map ?? "{}");
    if (isObj(attrs)) {
      const known = Object.entries(attrs).filter(
        ([k, v]) => ["first_name", "last_name", "email"].includes(k) && typeof v === "string",
      );
      if (values.auth_ldap_user_attr_map) ldap.userAttributes = Object.fromEntries(known);
      const dropped = Object.keys(attrs).filter((k) => !known.some(([kk]) => kk === k));
      if (dropped.length > 0)
        this.note(
          field("auth_ldap_user_attr_map"),
          `${dropped.join(", ")}: only first_name, last_name and email are mapped here; not converted`,
        );
    }
    const groupSearch = values.auth_ldap_group_search;
    if (groupSearch) {
      const found = ldapSearch(groupSearch);
      const type = ldapGroupType(values.auth_ldap_group_type ?? "");
      if (!found) {
        refuse("auth_ldap_group_search", 'not LDAPSearch("<base DN>", ldap.SCOPE_<scope>, "<filter>")');
        return;
      }
      if (!type) {
        refuse(
          "auth_ldap_group_type",
          `not one of ${Object.values(LDAP_GROUP_TYPES)
            .map((t) => `${t.type}()`)
            .join(", ")}`,
        );
        return;
      }
      if (type.nameAttr !== "cn") {
        this.note(
          field("auth_ldap_group_type"),
          `name_attr=${type.nameAttr}: groups are named by their cn here; Pulp groups are matched by that name`,
        );
      }
      const flags = pythonLiteral(values.auth_ldap_user_flags_by_group ?? "{}");
      const superuser =
        isObj(flags) && typeof flags.is_superuser === "string" ? flags.is_superuser : undefined;
      if (isObj(flags) && Object.keys(flags).some((k) => k !== "is_superuser")) {
        this.note(
          field("auth_ldap_user_flags_by_group"),
          "only is_superuser is mapped here (groups.superuser); other flags not converted",
        );
      }
      ldap.groups = {
        baseDn: found.baseDn,
        type: type.key,
        ...(found.filter !== LDAP_GROUP_TYPES[type.key].filter ? { filter: found.filter } : {}),
        scope: found.scope,
        // django-auth-ldap mirrors no group unless told; the operator leaves its default.
        mirror: /^true$/i.test(values.auth_ldap_mirror_groups ?? ""),
        ...(values.auth_ldap_require_group ? { require: values.auth_ldap_require_group } : {}),
        ...(values.auth_ldap_deny_group ? { deny: values.auth_ldap_deny_group } : {}),
        ...(superuser ? { superuser } : {}),
      };
    }
    const unread = view.keys
      .map((k) => k.toLowerCase())
      .filter(
        (k) => k.startsWith("auth_ldap_") && !LDAP_CONFIG_KEYS.includes(k) && k !== "auth_ldap_bind_password",
      );
    for (const key of unread) {
      this.note(
        field(key),
        key === "auth_ldap_ca_file"
          ? "the CA reaches libldap through pulp:trustedCa here (LDAPTLS_CACERT); not needed"
          : "not converted: pulp:ldap has no such option (extraSettings may not set AUTH_LDAP_* beside it)",
      );
    }
    this.set(["ldap"], ldap);
    const ca = text(spec.ca);
    if (ca) {
      const caView = this.secret(ca, "ldap.ca", ["ca.crt"]);
      const pem = caView?.values["ca.crt"];
      if (caView && !pem) this.errors.push(`ldap.ca: the Secret ${ca} has no key ca.crt`);
      if (pem) {
        const current = text(obj(this.config.trustedCa).certificates);
        this.set(["trustedCa", "certificates"], current ? `${current.trim()}\n${pem}` : pem);
      }
    }
  }

  /**
   * sso_secret: the operator writes each Keycloak key of that Secret into settings.py, upper-cased
   * (controllers/repo_manager/sso.go); here each becomes a setting read from the same Secret.
   */
  private sso(): void {
    const name = text(this.spec.sso_secret);
    if (!name) return;
    const view = this.secretViews[name];
    const keys = view ? view.keys.filter((k) => SSO_KEYS.includes(k)) : SSO_KEYS.slice(0, SSO_REQUIRED);
    for (const key of keys) this.set(["secretSettings", key.toUpperCase()], { secretName: name, key });
    if (!view) {
      this.note(
        "sso_secret",
        `the Secret ${name} was not given: its seven required keys are mapped; add the optional ones it holds ` +
          `(${SSO_KEYS.slice(SSO_REQUIRED).join(", ")}) to pulp:secretSettings`,
      );
    }
  }

  /** custom_pulp_settings, read first: its CONTENT_ORIGIN and others win over the CR's fields. */
  private customSettings(): void {
    const name = text(this.spec.custom_pulp_settings);
    if (!name) return;
    const data = this.options.configMaps?.[name];
    if (!data) {
      this.errors.push(
        `custom_pulp_settings names the ConfigMap ${name}, which holds settings: convert from the cluster, or add it ` +
          `to the file (kubectl get configmap -n ${this.namespace} ${name} -o yaml)`,
      );
      return;
    }
    for (const [key, source] of Object.entries(data)) {
      const setting = key.toUpperCase();
      const field = `custom_pulp_settings ${setting}`;
      if (PROGRAM_SETTINGS.has(setting)) {
        this.note(field, "set by the program from its own keys; not copied");
        continue;
      }
      if (CREDENTIAL_NAME.test(setting) && !(setting in SETTING_KEYS) && setting !== "TOKEN_AUTH_DISABLED") {
        this.note(
          field,
          "looks like a credential: not copied into the stack config (plain text); set it with pulumi config set " +
            `--secret --path 'pulp:extraSettings.${setting}' (the whole extraSettings becomes secret)`,
        );
        continue;
      }
      const value = pythonLiteral(source);
      if (value === undefined || !settable(value)) {
        this.note(
          field,
          "not a Python literal this converter reads (or None, or empty): copy it by hand, pulumi config set " +
            `--path 'pulp:extraSettings.${setting}' <value>`,
        );
        continue;
      }
      this.settings[setting] = value;
    }
  }

  /** What custom_pulp_settings and the settings fields become, once the rest is known. */
  private pulpSettings(): void {
    const extra: Obj = {};
    for (const [setting, value] of Object.entries(this.settings)) {
      if (setting === "TOKEN_AUTH_DISABLED") continue; // keys(): tokenAuth
      const key = SETTING_KEYS[setting];
      if (key) this.set([key], value);
      else extra[setting] = value;
    }
    if (this.spec.enable_debugging === true && extra.LOGGING === undefined) {
      extra.LOGGING = { dynaconf_merge: true, loggers: { "": { handlers: ["console"], level: "DEBUG" } } };
    }
    for (const [field, setting] of [
      ["hide_guarded_distributions", "HIDE_GUARDED_DISTRIBUTIONS"],
      ["redirect_to_object_storage", "REDIRECT_TO_OBJECT_STORAGE"],
    ] as const) {
      if (this.spec[field] === true && extra[setting] === undefined) extra[setting] = true;
    }
    if (isSet(extra)) this.set(["extraSettings"], extra);
  }

  /** PulpBackups of this CR turn backups on; PulpRestores are noted (their format is the operator's). */
  private backups(): void {
    const ours = (o: KubeObject) => {
      const target = text(obj(o.spec).deployment_name);
      return target === undefined || target === this.name;
    };
    for (const backup of (this.options.backups ?? []).filter(ours)) {
      const spec = obj(backup.spec);
      const label = `PulpBackup ${backup.metadata?.name ?? ""}`.trim();
      this.set(["backup", "enabled"], true);
      if (text(spec.backup_storage_requirements))
        this.set(["backup", "volume", "size"], spec.backup_storage_requirements);
      if (text(spec.backup_storage_class))
        this.set(["backup", "volume", "storageClass"], spec.backup_storage_class);
      this.note(
        label,
        "a one-off backup: here backups run on demand (npm run backup -- now) or on pulp:backup.schedule, " +
          "into the program's own volume; the operator's backups stay where they are",
      );
      this.unmappedNotes("PulpBackup", spec, `${label} `);
    }
    for (const restore of (this.options.restores ?? []).filter(ours)) {
      const label = `PulpRestore ${restore.metadata?.name ?? ""}`.trim();
      const spec = obj(restore.spec);
      const id =
        text(spec.backup_dir)?.replace(/\/+$/, "").split("/").pop() ??
        "<status.backupDirectory of the PulpBackup, without /backups/>";
      const claim = text(spec.backup_pvc) ?? "<status.backupClaim of the PulpBackup>";
      this.note(
        label,
        "moving by backup: in a new stack with a database of its own, not this config (it takes the install " +
          "over in place, where a restore is refused): " +
          `pulumi config set --path pulp:restore.backup ${id}; pulumi config set --path pulp:restore.claim ${claim} ` +
          `(in the new install's namespace; or the directory as a tar over pulp:restore.http); npm run backup -- keys ${id} ` +
          "--archive <a tar of the directory> (docs/migrate-from-pulp-operator.md, Moving by backup)",
      );
    }
  }

  /** One note per set field with no equivalent, and per field the CRD does not have. */
  private fieldNotes(): void {
    this.unmappedNotes("Pulp", this.spec, "");
    for (const c of COMPONENTS) {
      if (c === "web" && !this.webDeployed) continue;
      this.unmappedNotes("Pulp.<component>", obj(this.spec[c]), `${c}.`, c);
    }
    this.unmappedNotes("Pulp.database", obj(this.spec.database), "database.");
    if (isObj(this.spec.cache) && this.spec.cache.enabled !== false) {
      this.unmappedNotes("Pulp.cache", this.spec.cache, "cache.");
    }
  }

  private unmappedNotes(scope: Scope, spec: Obj, prefix: string, component?: string): void {
    for (const [field, value] of Object.entries(spec)) {
      if (!isSet(value) || OPERATOR_DEFAULTS[field] === value) continue;
      const why = UNMAPPED[scope][field];
      if (why !== undefined) {
        this.note(`${prefix}${field}`, component ? why.replace(/<component>/g, component) : why);
      } else if (MAPPED[scope][field] === undefined) {
        this.note(
          `${prefix}${field}`,
          `not a field of pulp-operator 2.0.0's ${scope.startsWith("Pulp.") ? "Pulp" : scope} CRD (another ` +
            "release's, or a typo the API server would have dropped): not converted",
        );
      }
    }
  }
}

/** The CR field names the tables know, for a scope (the coverage test compares them with the CRDs). */
export function knownFields(scope: Scope): string[] {
  return [...Object.keys(MAPPED[scope]), ...Object.keys(UNMAPPED[scope])].sort();
}

/** pulp-operator's sso_secret keys (controllers/repo_manager/sso.go): the first seven required. */
const SSO_KEYS = [
  "social_auth_keycloak_key",
  "social_auth_keycloak_secret",
  "social_auth_keycloak_public_key",
  "keycloak_host",
  "keycloak_protocol",
  "keycloak_port",
  "keycloak_realm",
  "keycloak_admin_role",
  "keycloak_group_token_claim",
  "keycloak_role_token_claim",
  "keycloak_host_loopback",
];
const SSO_REQUIRED = 7;

const SCOPE_NAMES = { SUBTREE: "subtree", ONELEVEL: "onelevel", BASE: "base" } as const;

/** `LDAPSearch("<base>", ldap.SCOPE_<scope>, "<filter>")` as the operator's Secret holds it, read (never run). */
export function ldapSearch(source: string): { baseDn: string; scope: string; filter: string } | undefined {
  const m =
    /^(?:django_auth_ldap\.config\.)?LDAPSearch\(\s*("[^"]*"|'[^']*')\s*,\s*ldap\.SCOPE_(SUBTREE|ONELEVEL|BASE)\s*,\s*("[^"]*"|'[^']*')\s*,?\s*\)$/.exec(
      source.trim(),
    );
  if (!m) return undefined;
  const [baseDn, filter] = [pythonLiteral(m[1]), pythonLiteral(m[3])];
  if (typeof baseDn !== "string" || typeof filter !== "string") return undefined;
  return { baseDn, scope: SCOPE_NAMES[m[2] as keyof typeof SCOPE_NAMES], filter };
}

/** `GroupOfNamesType(name_attr='cn')` and the like: the pulp:ldap group type and the attribute groups are named by. */
export function ldapGroupType(source: string): { key: LdapGroupType; nameAttr: string } | undefined {
  const m = /^(?:django_auth_ldap\.config\.)?(\w+)\(\s*(?:name_attr\s*=\s*("[^"]*"|'[^']*'))?\s*\)$/.exec(
    source.trim(),
  );
  if (!m) return undefined;
  const key = (Object.keys(LDAP_GROUP_TYPES) as LdapGroupType[]).find(
    (k) => LDAP_GROUP_TYPES[k].type === m[1],
  );
  const nameAttr = m[2] ? pythonLiteral(m[2]) : "cn";
  return key && typeof nameAttr === "string" ? { key, nameAttr } : undefined;
}
