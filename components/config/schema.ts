// The whole install as one zod schema. Every default lives here, so `parseConfig({})` plus the two
// required keys describes a complete install. Cross-field rules (RWO storage, Redis, the database) are
// in `rules.ts`, where they can name every key involved.
import { z } from "zod";
import type { Output } from "@pulumi/pulumi";
import { caCertificatesProblem, instanceNameProblem, positiveQuantityProblem } from "./validators";
import {
  labelKeyProblem,
  dnsLabelProblem,
  dnsSubdomainProblem,
  imageProblem,
  labelValueProblem,
  originProblem,
  parseQuantity,
  quantityProblem,
  urlPathProblem,
} from "./formats";
import { OPERATOR_BACKUP_ID, OWN_BACKUP_ID } from "../backup/backupIds";
import { parameterNameProblem } from "../database/parameters";
import { poolerParameterNameProblem } from "../database/pooler";
import { timeoutProblem } from "../migration/timeout";
import { WEB_PORT } from "../web/nginx";
import { DEFAULT_REQUEST, PULP_OWN } from "./ephemeral";

/** A string checked by one of the `*Problem` functions of formats.ts. */
function formatted(problem: (value: string) => string | undefined) {
  return z.string().superRefine((value, ctx) => {
    const reason = problem(value);
    if (reason) ctx.addIssue({ code: "custom", message: `must be ${reason}` });
  });
}

/** Whether a value is a Pulumi Output (without loading @pulumi/pulumi: the CLIs read the schema too). */
export function isOutput(value: unknown): value is Output<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { __pulumiOutput?: unknown }).__pulumiOutput === true
  );
}

/** The schema a value given as an Output is checked against once it resolves (inputs.ts). */
export const OUTPUT_CHECKS = new WeakMap<Output<unknown>, z.ZodType<string>>();

/**
 * A string a program may pass as an Output of another resource (a storage class, a DNS name, a Secret's
 * name): it only flows into resource specs, never into what the component decides before it creates
 * anything. A plain string is checked here; an Output with the same schema once it resolves, by
 * checkOutputs (inputs.ts), which knows its key.
 */
function orOutput(schema: z.ZodType<string>) {
  return z
    .custom<string | Output<string>>()
    .superRefine((value, ctx) => {
      if (isOutput(value)) return;
      const result = schema.safeParse(value);
      for (const issue of result.error?.issues ?? [])
        ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
    })
    .transform((value) => {
      if (isOutput(value)) OUTPUT_CHECKS.set(value, schema);
      return value;
    });
}
const storageClassName = orOutput(formatted(dnsSubdomainProblem));

// `pulumi config set --path` stores "2" as a number: a quantity may come as one.
const asText = (v: unknown) => (typeof v === "number" ? String(v) : v);
const quantity = z.preprocess(asText, formatted(quantityProblem));
/** A size: a quantity above zero (the API server refuses a zero-sized volume or import). */
const size = z.preprocess(asText, formatted(positiveQuantityProblem));
/** An optional object key whose Pulumi.yaml default is {}: {} means unset, and stays out of the config. */
const emptyIsUnset = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v && typeof v === "object" && Object.keys(v).length === 0 ? undefined : v), schema);

const wholeNumber = (min: number, max: number) =>
  z
    .number({ error: `must be a whole number from ${min} to ${max}` })
    .int({ error: `must be a whole number from ${min} to ${max}` })
    .min(min, { error: `must be a whole number from ${min} to ${max}` })
    .max(max, { error: `must be a whole number from ${min} to ${max}` });

/** Kubernetes' rules for the names the merge keys match on (so a typo cannot add a second container). */
const dnsLabel = formatted(dnsLabelProblem);
const envName = z.string().regex(/^[-._a-zA-Z][-._a-zA-Z0-9]*$/, {
  error: "must be an environment variable name: letters, digits, '_', '-' and '.', not starting with a digit",
});
const containerOverride = z.looseObject({
  name: dnsLabel,
  env: z.array(z.looseObject({ name: envName })).optional(),
  volumeMounts: z.array(z.looseObject({ mountPath: z.string().min(1), name: dnsLabel })).optional(),
  ports: z.array(z.looseObject({ containerPort: z.number().int().min(1).max(65535) })).optional(),
});

/**
 * The escape hatch (components/common/merge.ts, PodSpecOverrides): any pod spec field, merged over the
 * generated spec. Containers, initContainers, volumes and env merge by name, volumeMounts by mountPath and
 * ports by containerPort: adding one env var keeps the rest. Default `{}`.
 */
export const podSpecOverridesSchema = z
  .looseObject({
    containers: z.array(containerOverride).optional(),
    initContainers: z.array(containerOverride).optional(),
    volumes: z.array(z.looseObject({ name: dnsLabel })).optional(),
  })
  .default({});

/** Label (and annotation) keys and values, by the API server's rules. */
const labelKey = formatted(labelKeyProblem);
const labelValue = formatted(labelValueProblem);

const toleration = z
  .strictObject({
    key: labelKey.optional(),
    operator: z.enum(["Exists", "Equal"]).optional(),
    value: labelValue.optional(),
    effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
    tolerationSeconds: z.number().int().optional(),
  })
  .superRefine((t, ctx) => {
    // The API server's ValidateTolerations rules.
    if (t.operator === "Exists" && t.value)
      ctx.addIssue({ code: "custom", path: ["value"], message: 'must be empty when operator is "Exists"' });
    if (!t.key && t.operator !== "Exists")
      ctx.addIssue({
        code: "custom",
        path: ["operator"],
        message: 'must be "Exists" when key is empty (a toleration of every taint)',
      });
    if (t.tolerationSeconds !== undefined && t.effect !== "NoExecute")
      ctx.addIssue({
        code: "custom",
        path: ["tolerationSeconds"],
        message: 'is only allowed with effect "NoExecute"',
      });
  });

const nodeSelectorTerm = z.looseObject({
  matchExpressions: z
    .array(
      z.looseObject({
        key: labelKey,
        operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]),
        values: z.array(z.string()).optional(),
      }),
    )
    .optional(),
});

/**
 * Where every pod the program creates may run: api, content, worker, web, Redis, the migration Job, and
 * the CloudNativePG Cluster (its `spec.affinity`: nodeSelector, tolerations, and nodeAffinity). A
 * component's podSpecOverrides can change it for that component. Default: no constraint.
 */
export const schedulingSchema = z
  .strictObject({
    nodeSelector: z.record(labelKey, labelValue).default({}),
    tolerations: z.array(toleration).default([]),
    affinity: z
      .looseObject({
        nodeAffinity: z
          .looseObject({
            requiredDuringSchedulingIgnoredDuringExecution: z
              .looseObject({ nodeSelectorTerms: z.array(nodeSelectorTerm).min(1) })
              .optional(),
          })
          .optional(),
      })
      .optional(),
  })
  .prefault({});
export type SchedulingConfig = z.output<typeof schedulingSchema>;

/**
 * Certificate authorities Pulp's api, content and worker processes trust besides the image's own, for
 * remotes served over HTTPS by a private CA. `certificates`: PEM text the program keeps in a ConfigMap (a
 * change rolls the pods). `configMap`: an existing ConfigMap in the namespace whose every key is PEM
 * (read when a pod starts; for bundles another tool injects).
 */
const trustedCaSchema = z
  .strictObject({
    certificates: formatted(caCertificatesProblem).optional(),
    configMap: formatted(dnsSubdomainProblem).optional(),
  })
  .refine((t) => t.certificates === undefined || t.configMap === undefined, {
    error:
      "must set one of certificates (PEM text) and configMap (the name of an existing ConfigMap), not both",
  })
  .default({});

const proxyUrl = z
  .url({ error: "must be a proxy's URL, such as http://proxy.example.com:3128" })
  .refine((v) => /^https?:\/\//.test(v), { error: "must be an http:// or https:// URL of the proxy" });

/**
 * An HTTP(S) proxy for what Pulp's processes reach beyond the cluster through libraries that read the
 * standard variables: object storage and STS (boto3), requests and urllib. pulpcore's downloader (syncs)
 * does not read them (pulpcore/download/factory.py: an aiohttp session without trust_env): a remote's
 * `proxy_url` sends a sync through a proxy. `noProxy` adds to the in-cluster names the program lists.
 */
const proxySchema = z
  .strictObject({
    httpProxy: proxyUrl.optional(),
    httpsProxy: proxyUrl.optional(),
    noProxy: z
      .array(
        z.string().regex(/^[A-Za-z0-9.*:_[\]/-]+$/, {
          error: 'must be a host, a domain (".corp.example.com"), an address or a CIDR, one per entry',
        }),
      )
      .default([]),
  })
  .refine((p) => p.httpProxy !== undefined || p.httpsProxy !== undefined, {
    error: "names no proxy: set httpProxy or httpsProxy (usually both, to the same URL)",
  })
  .optional();
export type ProxyConfig = NonNullable<z.output<typeof proxySchema>>;

/**
 * Pulp's signing services, one key for all of them (pulp:signingKey). `kind` picks the script the program ships
 * and the class pulpcore registers it as: `detached` (core:AsciiArmoredDetachedSigningService, what pulp_rpm
 * signs repository metadata with, and pulp_ansible collections) or `apt` (deb:AptReleaseSigningService,
 * Release.gpg and InRelease). Names are what repositories refer to (`--metadata-signing-service <name>`).
 */
export const SIGNING_KINDS = {
  detached: "core:AsciiArmoredDetachedSigningService",
  apt: "deb:AptReleaseSigningService",
} as const;
export type SigningKind = keyof typeof SIGNING_KINDS;

const signingSchema = z
  .strictObject({
    services: z
      .array(
        z.strictObject({
          name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, {
            error:
              "must be a signing service name: letters, digits, '.', '_' and '-', at most 100 characters",
          }),
          kind: z.enum(Object.keys(SIGNING_KINDS) as [SigningKind, ...SigningKind[]], {
            error: `must be one of ${Object.keys(SIGNING_KINDS).join(", ")}`,
          }),
        }),
      )
      .min(1, { error: "names no service: add one, such as {name: rpm-metadata, kind: detached}" })
      .refine((list) => new Set(list.map((s) => s.name)).size === list.length, {
        error: "names a service twice: each name is one service in Pulp",
      }),
  })
  .optional();
export type SigningConfig = NonNullable<z.output<typeof signingSchema>>;

/** A distinguished name, such as ou=people,dc=example,dc=com (no newline; any other text is passed as is). */
const distinguishedName = z.string().regex(/^[^=\n]+=[^\n]+$/, {
  error: "must be an LDAP distinguished name, such as ou=people,dc=example,dc=com",
});

/**
 * An LDAP search filter in parentheses. django-auth-ldap fills it with Python's `%` (`%(user)s` is the login
 * name, escaped): a literal percent sign must be written `%%`.
 */
const ldapFilter = (placeholder: boolean) =>
  z
    .string()
    .regex(/^\(.*\)$/s, { error: "must be an LDAP filter in parentheses, such as (uid=%(user)s)" })
    .refine((f) => !/%(?!\(user\)s|%)/.test(f.replace(/%%/g, "")), {
      error: "has a % that is not %(user)s: write a literal percent sign as %%",
    })
    .refine((f) => !placeholder || f.includes("%(user)s"), {
      error: "must contain %(user)s, where the login name goes, such as (uid=%(user)s)",
    });

const ldapScope = z.enum(["subtree", "onelevel", "base"], { error: "must be subtree, onelevel or base" });

/** django-auth-ldap's group types (django_auth_ldap.config), by the objectClass they read. */
export const LDAP_GROUP_TYPES = {
  groupOfNames: { type: "GroupOfNamesType", filter: "(objectClass=groupOfNames)" },
  nestedGroupOfNames: { type: "NestedGroupOfNamesType", filter: "(objectClass=groupOfNames)" },
  groupOfUniqueNames: { type: "GroupOfUniqueNamesType", filter: "(objectClass=groupOfUniqueNames)" },
  posixGroup: { type: "PosixGroupType", filter: "(objectClass=posixGroup)" },
  activeDirectory: { type: "ActiveDirectoryGroupType", filter: "(objectClass=group)" },
  nestedActiveDirectory: { type: "NestedActiveDirectoryGroupType", filter: "(objectClass=group)" },
} as const;
export type LdapGroupType = keyof typeof LDAP_GROUP_TYPES;

/**
 * Login against an LDAP directory (django-auth-ldap, in the quay.io/pulp images), beside Pulp's own users.
 * The bind password is the secret pulp:ldapBindPassword. `groups`: the user's directory groups, found under
 * `baseDn`, become Pulp groups at each login (`mirror`), so roles granted to a group in Pulp apply to its
 * members; `require`/`deny` admit or refuse by group, `superuser` makes a group's members Pulp admins.
 */
const ldapSchema = z
  .strictObject({
    serverUri: z.string().regex(/^ldaps?:\/\/[^\s"]+( ldaps?:\/\/[^\s"]+)*$/, {
      error:
        "must be an ldap:// or ldaps:// URL, such as ldaps://ldap.example.com (several: separated by spaces)",
    }),
    startTls: z.boolean().default(false),
    bindDn: distinguishedName.optional(),
    userSearch: z.strictObject({
      baseDn: distinguishedName,
      filter: ldapFilter(true).default("(uid=%(user)s)"),
      scope: ldapScope.default("subtree"),
    }),
    userAttributes: z
      .record(
        z.enum(["first_name", "last_name", "email"], { error: "must be first_name, last_name or email" }),
        z
          .string()
          .regex(/^[A-Za-z][A-Za-z0-9-]*$/, { error: "must be an LDAP attribute name, such as mail" }),
      )
      .default({ first_name: "givenName", last_name: "sn", email: "mail" }),
    groups: z
      .strictObject({
        baseDn: distinguishedName,
        type: z
          .enum(Object.keys(LDAP_GROUP_TYPES) as [LdapGroupType, ...LdapGroupType[]], {
            error: `must be one of ${Object.keys(LDAP_GROUP_TYPES).join(", ")}`,
          })
          .default("groupOfNames"),
        /** Default: the type's objectClass. */
        filter: ldapFilter(false).optional(),
        scope: ldapScope.default("subtree"),
        mirror: z.boolean().default(true),
        require: distinguishedName.optional(),
        deny: distinguishedName.optional(),
        superuser: distinguishedName.optional(),
      })
      .optional(),
  })
  .refine((l) => !(l.startTls && l.serverUri.startsWith("ldaps://")), {
    error: "sets startTls with an ldaps:// URL, which is TLS already: drop startTls, or use ldap:// with it",
  })
  .optional();
export type LdapConfig = NonNullable<z.output<typeof ldapSchema>>;

/**
 * `ephemeral-storage`: the node's disk the container may use (logs, emptyDirs); unset, the program sets it
 * (components/config/ephemeral.ts).
 */
const resourceList = z.strictObject({
  cpu: quantity.optional(),
  memory: quantity.optional(),
  "ephemeral-storage": quantity.optional(),
});

export const resourcesSchema = z
  .strictObject({ requests: resourceList.default({}), limits: resourceList.default({}) })
  .superRefine((value, ctx) => {
    for (const kind of ["cpu", "memory", "ephemeral-storage"] as const) {
      const request = value.requests[kind];
      const limit = value.limits[kind];
      if (request === undefined || limit === undefined) continue;
      if ((parseQuantity(request) ?? 0) > (parseQuantity(limit) ?? Infinity)) {
        ctx.addIssue({
          code: "custom",
          path: ["requests", kind],
          message: `request ${request} is above the limit ${limit}; Kubernetes rejects such a pod. Lower the request or raise limits.${kind}`,
        });
      }
    }
  });

const probe = z.strictObject({
  initialDelaySeconds: wholeNumber(0, 3600).optional(),
  periodSeconds: wholeNumber(1, 300).optional(),
  timeoutSeconds: wholeNumber(1, 60).optional(),
  failureThreshold: wholeNumber(1, 1000).optional(),
});
export type ProbeTuning = z.infer<typeof probe>;

const probes = z
  .strictObject({ startup: probe.default({}), readiness: probe.default({}), liveness: probe.default({}) })
  .default({ startup: {}, readiness: {}, liveness: {} });

/** A PDB that allows no voluntary eviction would block every node drain. */
const disruptionBudget = z.union([
  z.strictObject({
    maxUnavailable: z
      .number()
      .int()
      .min(1, { error: "must be a whole number >= 1: maxUnavailable 0 would block every node drain" }),
  }),
  z.strictObject({ minAvailable: wholeNumber(0, 10000) }),
]);

/**
 * A HorizontalPodAutoscaler for a serving process (api, content, pulp-web): the count follows the pods'
 * CPU use, which the cluster's resource metrics API reports (metrics-server), between min and max.
 */
const cpuAutoscalingSchema = z.strictObject({
  minReplicas: wholeNumber(1, 1000).default(2),
  maxReplicas: wholeNumber(1, 1000),
  /** The average CPU use the autoscaler keeps, in percent of the pods' CPU request. */
  cpuUtilization: wholeNumber(1, 1000).default(70),
});

/**
 * Workers scaled by KEDA on the depth of Pulp's task queue (its tasks table, read by KEDA's PostgreSQL
 * scaler): tasks waiting or running, per worker. With minReplicas 0 the workers go away when the queue
 * has been empty for cooldownSeconds, and one starts when a task is dispatched.
 */
const queueAutoscalingSchema = z.strictObject({
  minReplicas: wholeNumber(0, 1000).default(1),
  maxReplicas: wholeNumber(1, 1000),
  /** Tasks per worker the autoscaler aims for; a worker runs one task at a time. */
  tasksPerWorker: wholeNumber(1, 100).default(1),
  /** How often KEDA reads the queue. */
  pollingIntervalSeconds: wholeNumber(5, 3600).default(15),
  /** How long the queue stays short before workers are removed (to minReplicas, or to zero). */
  cooldownSeconds: wholeNumber(0, 24 * 3600).default(300),
});

/**
 * pulpcore's own OpenTelemetry metrics (OTEL_ENABLED, pulpcore 3.85 to 3.123): the api's and the content
 * app's request durations, and from the workers the depth of the task queue and its oldest unblocked task,
 * exported over OTLP/HTTP (protobuf) to a collector the user runs.
 */
const metricsSchema = z.strictObject({
  /** The collector's OTLP/HTTP endpoint; the exporter posts to <endpoint>/v1/metrics. */
  otlpEndpoint: z.string().refine((v) => /^https?:\/\/[^/\s]+(\/\S*)?$/.test(v) && URL.canParse(v), {
    error: 'must be an http(s) URL such as "http://otel-collector.monitoring.svc:4318"',
  }),
  /** How often each process exports. */
  exportIntervalSeconds: wholeNumber(5, 3600).default(60),
});

export type MetricsConfig = z.output<typeof metricsSchema>;

export type CpuAutoscaling = z.output<typeof cpuAutoscalingSchema>;
export type QueueAutoscaling = z.output<typeof queueAutoscalingSchema>;

function componentSchema<A extends z.ZodType>(
  defaults: {
    replicas: number;
    requests: { cpu: string; memory: string };
    limits: { memory: string };
    terminationGracePeriodSeconds: number;
  },
  autoscaling: A,
) {
  return z
    .strictObject({
      replicas: wholeNumber(0, 1000).default(defaults.replicas),
      /** Unset: `replicas` pods. Set: the autoscaler decides the count, and `replicas` must not be set. */
      autoscaling: emptyIsUnset(autoscaling.optional()),
      // With storage.s3 the program raises the ephemeral-storage defaults (ephemeral.ts ephemeralDefaults).
      resources: resourcesSchema.default({
        requests: { ...defaults.requests, "ephemeral-storage": DEFAULT_REQUEST },
        limits: { ...defaults.limits, "ephemeral-storage": PULP_OWN },
      }),
      terminationGracePeriodSeconds: wholeNumber(1, 7 * 24 * 3600).default(
        defaults.terminationGracePeriodSeconds,
      ),
      podDisruptionBudget: disruptionBudget.default({ maxUnavailable: 1 }),
      probes,
      /** Spread pods over zones and nodes; `ScheduleAnyway` keeps a one-zone cluster schedulable. */
      topologySpread: z.boolean().default(true),
      /** Merged over the generated pod spec: the escape hatch for what this schema does not model. */
      podSpecOverrides: podSpecOverridesSchema,
      /** On the pod template (scraping, sidecar injection); changing them rolls the pods. */
      podAnnotations: z.record(labelKey, z.string()).default({}),
      /**
       * A rollout that makes no progress this long fails `pulumi up` (the old ReplicaSet keeps serving).
       * Long enough for the slowest start-up: startup probe failureThreshold x periodSeconds.
       */
      progressDeadlineSeconds: wholeNumber(10, 24 * 3600).default(600),
    })
    .prefault({});
}

export const apiSchema = componentSchema(
  {
    replicas: 2,
    requests: { cpu: "250m", memory: "512Mi" },
    limits: { memory: "2Gi" },
    terminationGracePeriodSeconds: 60,
  },
  cpuAutoscalingSchema,
);

const workerDefaults = {
  replicas: 2,
  requests: { cpu: "250m", memory: "512Mi" },
  limits: { memory: "2Gi" },
  // A worker finishes its running task on SIGTERM; an hour covers large syncs, and an idle worker exits at once.
  terminationGracePeriodSeconds: 3600,
};

/**
 * pulp-web's Service, the one entry to the API and the content: in the cluster only (ClusterIP, reached
 * through `ingress`), on a port of every node (NodePort), or through the cloud's load balancer
 * (LoadBalancer, configured by its annotations). pulp-operator's `ingress_type` nodeport/loadbalancer.
 */
const webServiceSchema = z.strictObject({
  type: z.enum(["ClusterIP", "NodePort", "LoadBalancer"]).default("ClusterIP"),
  /** The Service's port (a load balancer listens on it); pods listen on 8080 whatever it is. */
  port: wholeNumber(1, 65535).default(WEB_PORT),
  /** The port on every node (NodePort, LoadBalancer); unset, the cluster picks one from its range. */
  nodePort: wholeNumber(1, 65535).optional(),
  annotations: z.record(labelKey, orOutput(z.string())).default({}),
  /** Client networks a LoadBalancer admits (CIDRs); empty: every client. */
  loadBalancerSourceRanges: z
    .array(
      z.string().refine((v) => z.cidrv4().safeParse(v).success || z.cidrv6().safeParse(v).success, {
        error: 'must be a CIDR such as "203.0.113.0/24" or "2001:db8::/32"',
      }),
    )
    .default([]),
});

export type WebService = z.output<typeof webServiceSchema>;
const WEB_SERVICE_DEFAULTS: WebService = webServiceSchema.parse({});

/** pulp-web's Service as configured, or the defaults (a ClusterIP Service on 8080) when unset. */
export function webService(web: { service?: WebService }): WebService {
  return web.service ?? WEB_SERVICE_DEFAULTS;
}

/**
 * pulp-web's copy of content answers, served only while no content app can answer (a stop-the-world
 * upgrade): small public files that clients fetched before (nginx.ts says which are kept).
 */
const contentCacheSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** What each pulp-web pod keeps at most, on its node's disk (an emptyDir). */
    size: size.default("1Gi"),
    /** The largest answer kept: repository metadata and most packages; layers and images pass uncached. */
    maxEntrySize: size.default("32Mi"),
    /** Request headers a content guard of yours reads (HeaderContentGuard, a remote-user header). */
    privateHeaders: z
      .array(
        z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]*$/, {
          error: 'must be an HTTP header name such as "X-Pulp-Entitlement"',
        }),
      )
      .default([]),
  })
  .prefault({});

const webSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    image: formatted(imageProblem).default("quay.io/pulp/pulp-web:3.123.1"),
    replicas: wholeNumber(0, 1000).default(2),
    autoscaling: emptyIsUnset(cpuAutoscalingSchema.optional()),
    resources: resourcesSchema.default({
      // The limit: web.clientMaxBodySize, 1Gi and the content cache (ephemeral.ts ephemeralDefaults).
      requests: { cpu: "50m", memory: "64Mi", "ephemeral-storage": DEFAULT_REQUEST },
      limits: { memory: "256Mi", "ephemeral-storage": "11Gi" },
    }),
    /** nginx's 1m default (10m in some images) breaks pushes and uploads with 413 (pulp-operator #330). */
    clientMaxBodySize: z
      .string()
      .regex(/^\d+[kmg]?$/, { error: 'must be an nginx size such as "10g", "512m" or "0" (no limit)' })
      .default("10g"),
    /** Also listen on IPv6; turn off where the nodes' kernels have IPv6 disabled (nginx would not start). */
    listenIPv6: z.boolean().default(true),
    contentCache: contentCacheSchema,
    podDisruptionBudget: disruptionBudget.default({ maxUnavailable: 1 }),
    probes,
    topologySpread: z.boolean().default(true),
    podSpecOverrides: podSpecOverridesSchema,
    /**
     * As api's: on the pod template (scraping, sidecar injection); changing them rolls pulp-web. Unset, it
     * stays out of the config (and of what backups record).
     */
    podAnnotations: z.record(labelKey, z.string()).optional(),
    // Unset, it stays out of the config (and of what backups record): webService() gives its defaults.
    service: webServiceSchema.optional(),
  })
  .prefault({});

const redisSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    image: formatted(imageProblem).default("docker.io/library/redis:7.4.2-alpine"),
    resources: resourcesSchema.default({
      requests: { cpu: "50m", memory: "64Mi", "ephemeral-storage": DEFAULT_REQUEST },
      limits: { memory: "512Mi", "ephemeral-storage": "1Gi" },
    }),
    podSpecOverrides: podSpecOverridesSchema,
  })
  .prefault({});

const externalDatabase = z.strictObject({
  host: formatted(dnsSubdomainProblem),
  port: wholeNumber(1, 65535).default(5432),
  name: z.string().min(1).default("pulp"),
  user: z.string().min(1).default("pulp"),
  sslmode: z.enum(["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]).default("prefer"),
  /**
   * The server's PostgreSQL major version (`SHOW server_version`), when known: below 14 it is refused in
   * preview. Unset: nothing at preview can tell (the program does not reach the database then).
   */
  version: wholeNumber(9, 99).optional(),
});

/** A server's settings by name (PostgreSQL's, PgBouncer's): values as YAML gives them, kept as strings. */
const serverSettings = (nameProblem: (name: string) => string | undefined) =>
  z.record(
    formatted(nameProblem),
    z.union([z.string(), z.number(), z.boolean()]).transform((value) => String(value)),
  );

/**
 * CloudNativePG's Pooler (PgBouncer) in front of the primary, in session mode: Pulp's api, content apps,
 * workers and migration Job connect to it; backups, restores and the task-queue scaler go to the primary.
 */
const cloudNativePgPooler = z.strictObject({
  instances: wholeNumber(1, 9).default(2),
  /** Leave unset for the operator's default PgBouncer image. */
  imageName: formatted(imageProblem).optional(),
  resources: resourcesSchema.default({
    requests: { cpu: "50m", memory: "32Mi" },
    limits: { memory: "256Mi" },
  }),
  /** PgBouncer settings, over the program's defaults (pooler.ts POOLER_DEFAULTS). */
  parameters: serverSettings(poolerParameterNameProblem).optional(),
});

const cloudNativePg = z.strictObject({
  instances: wholeNumber(1, 9).default(3),
  storageSize: size.default("10Gi"),
  storageClass: storageClassName.optional(),
  /**
   * Leave unset for the operator's default PostgreSQL image. Pulp needs PostgreSQL >= 14: a plain version
   * tag below it ("13", "13.4-1") is refused (rules.ts).
   */
  imageName: formatted(imageProblem).optional(),
  resources: resourcesSchema.default({
    requests: { cpu: "250m", memory: "512Mi" },
    limits: { memory: "2Gi" },
  }),
  /**
   * PostgreSQL settings for every instance (the Cluster's `spec.postgresql.parameters`): `max_connections`,
   * `shared_buffers`, `work_mem`. The ones the operator sets itself (ports, TLS, replication, archiving,
   * logging) are refused. A change to one PostgreSQL applies only at a restart (max_connections,
   * shared_buffers) restarts the instances, replicas first, then the primary (by switchover when there is
   * a replica; with one instance, a short outage that Pulp rides out).
   */
  parameters: serverSettings(parameterNameProblem).optional(), // unset stays out of the config the backups record, as before the key existed
  pooler: cloudNativePgPooler.optional(),
});

const databaseSchema = z.strictObject({
  external: externalDatabase.optional(),
  cloudnativepg: cloudNativePg.optional(),
});

const pvcStorage = z.strictObject({
  size: size.default("50Gi"),
  storageClass: storageClassName.optional(),
  accessMode: z.enum(["ReadWriteMany", "ReadWriteOnce"]).default("ReadWriteMany"),
  /**
   * A claim of your own in the namespace (pulp-operator's `<name>-file-storage`, one a backup tool made),
   * mounted at /var/lib/pulp instead of the claim the program would create: never created, changed or
   * deleted here, so `size`, `storageClass` and `accessMode` are the claim's own. Checked before anything
   * changes: it must exist, serve ReadWriteMany, and have no owner that would delete it with itself.
   */
  existingClaim: formatted(dnsSubdomainProblem).optional(),
});

const s3Storage = z.strictObject({
  bucket: z.string().min(3),
  endpointUrl: z.url({ error: 'must be a URL such as "https://s3.example.com"' }).optional(),
  region: z.string().min(1).optional(),
  /**
   * A static key (its secret is `pulp:s3SecretAccessKey`). Unset: no key at all, and boto3 takes the pods'
   * own identity (pulp:serviceAccount: IRSA, EKS Pod Identity, a web identity) or the node's role.
   */
  accessKeyId: z.string().min(1).optional(),
  /**
   * The node disk each api, content, worker and migration pod may fill in /var/lib/pulp (an emptyDir's
   * sizeLimit): Pulp's WORKING_DIRECTORY, where uploads, downloads being saved and task files wait before they
   * go to the bucket, as large as the artifacts a pod handles at once. Their ephemeral-storage limit is this
   * and 1Gi unless set.
   */
  workingDirectorySize: size.default("20Gi"),
});

/**
 * Azure Blob Storage (django-storages' AzureStorage, which the upstream images carry through pulpcore's
 * `azure` extra). With `pulp:azureAccountKey` the pods use the account's key. Without it they sign in as an
 * Azure workload identity (pulp:serviceAccount), and the content app's redirects carry a user delegation
 * SAS.
 */
const azureStorage = z.strictObject({
  accountName: z.string().regex(/^[a-z0-9]{3,24}$/, {
    error: "must be a storage account name: 3 to 24 lowercase letters and digits",
  }),
  container: z.string().regex(/^(?=.{3,63}$)[a-z0-9]+(-[a-z0-9]+)*$/, {
    error:
      "must be a container name: 3 to 63 lowercase letters, digits and single hyphens, beginning and ending with a letter or digit",
  }),
  /** A folder in the container for Pulp's files (pulp-operator's `azure-container-path`); unset: its root. */
  location: z
    .string()
    .regex(/^[^/\s]+(\/[^/\s]+)*$/, {
      error: 'must be a path without a leading or trailing "/", such as "pulp/prod"',
    })
    .optional(),
  /**
   * The account's blob endpoint: a sovereign cloud's, a private endpoint's name, an emulator's. Unset:
   * https://<accountName>.blob.core.windows.net. Without a key it must name the account as Azure's do
   * (https://<accountName>.blob.<suffix>): django-storages builds it from the suffix then.
   */
  endpointUrl: z
    .url({ error: 'must be a URL such as "https://pulpartifacts.blob.core.windows.net"' })
    .optional(),
  /** As storage.s3's: the node disk each Pulp pod may fill with its working directory. */
  workingDirectorySize: size.default("20Gi"),
});

/**
 * Google Cloud Storage (django-storages' GoogleCloudStorage, which the upstream images carry through
 * pulpcore's `google` extra). Without a key the pods use Google's application default credentials (GKE
 * Workload Identity: pulp:serviceAccount's `iam.gke.io/gcp-service-account` annotation), and the content
 * app's redirects are signed by IAM signBlob. With `pulp:gcsCredentials` (a service account's JSON key) the
 * pods read the key from a mounted file and sign the redirects with it.
 */
const gcsStorage = z.strictObject({
  bucket: z.string().regex(/^(?=.{3,63}$)[a-z0-9][a-z0-9._-]*[a-z0-9]$/, {
    error:
      "must be a bucket name: 3 to 63 lowercase letters, digits, dots, hyphens and underscores, beginning and ending with a letter or digit",
  }),
  /** A folder in the bucket for Pulp's files; unset: its root. */
  location: z
    .string()
    .regex(/^[^/\s]+(\/[^/\s]+)*$/, {
      error: 'must be a path without a leading or trailing "/", such as "pulp/prod"',
    })
    .optional(),
  /** The project the bucket is billed to; unset: the credentials' own. */
  projectId: z
    .string()
    .regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, { error: 'must be a project ID such as "my-project-123"' })
    .optional(),
  /**
   * Without a key: the service account that signs the redirects (IAM signBlob; it needs
   * roles/iam.serviceAccountTokenCreator on itself). Unset: the one the pods' credentials name, as GKE
   * Workload Identity's do.
   */
  signingServiceAccount: z
    .email({ error: 'must be a service account\'s email such as "pulp@my-project.iam.gserviceaccount.com"' })
    .optional(),
  /**
   * The JSON API's endpoint (a Private Service Connect endpoint, an emulator), which the redirects then
   * name too. Unset: https://storage.googleapis.com. Reaches the pods as API_ENDPOINT_OVERRIDE, which
   * google-cloud-storage reads.
   */
  endpointUrl: z.url({ error: 'must be a URL such as "https://storage-pulp.p.googleapis.com"' }).optional(),
  /** As storage.s3's: the node disk each Pulp pod may fill with its working directory. */
  workingDirectorySize: size.default("20Gi"),
});

const storageSchema = z
  .strictObject({
    pvc: pvcStorage.optional(),
    s3: s3Storage.optional(),
    azure: azureStorage.optional(),
    gcs: gcsStorage.optional(),
    /**
     * Where the artifacts were before this config named another place (as the refusal prints it, such as
     * "claim pulp-artifacts" or "s3://pulp-artifacts"): set once every file or object was copied over, it
     * lets the update point Pulp at the new place (storage/storageMove.ts).
     */
    movedFrom: z.string().min(1).optional(),
  })
  .default({ pvc: { size: "50Gi", accessMode: "ReadWriteMany" } });

/**
 * The identity Pulp's own pods (api, content, worker, migration) run as, for object storage without static
 * keys: a ServiceAccount `<instance>-pulp` of their own. `annotations` are what a cloud's webhook reads
 * (EKS IRSA `eks.amazonaws.com/role-arn`, GKE `iam.gke.io/gcp-service-account`, AKS
 * `azure.workload.identity/client-id`). `awsWebIdentity` is what EKS's webhook would add, for a cluster
 * whose token issuer AWS trusts without it: a projected token for the audience, and AWS_ROLE_ARN and
 * AWS_WEB_IDENTITY_TOKEN_FILE, which boto3 exchanges for short-lived keys. `azureWorkloadIdentity` is what
 * AKS's workload identity webhook would add, for a cluster without it: a projected token for Entra ID, and
 * the AZURE_* variables the pods exchange it with.
 */
const serviceAccountSchema = z
  .strictObject({
    annotations: z.record(labelKey, z.string()).default({}),
    awsWebIdentity: z
      .strictObject({
        roleArn: z.string().regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/, {
          error: 'must be an IAM role ARN such as "arn:aws:iam::123456789012:role/pulp"',
        }),
        audience: z.string().min(1).default("sts.amazonaws.com"),
        /** An STS endpoint of your own (a VPC endpoint, a compatible server); default: boto3's. */
        stsEndpointUrl: z
          .url({ error: 'must be a URL such as "https://sts.eu-west-1.amazonaws.com"' })
          .optional(),
      })
      .optional(),
    azureWorkloadIdentity: z
      .strictObject({
        /** The managed identity's or app registration's client ID, which trusts the cluster's issuer. */
        clientId: z.guid({ error: 'must be a client ID such as "4a1c2d3e-0000-4000-8000-00000000abcd"' }),
        tenantId: z.guid({ error: 'must be a tenant ID such as "72f988bf-0000-4000-8000-00000000abcd"' }),
        /** Entra ID's sign-in endpoint: a sovereign cloud's (https://login.microsoftonline.us/), an emulator's. */
        authorityHost: z
          .url({ error: 'must be a URL such as "https://login.microsoftonline.com/"' })
          .default("https://login.microsoftonline.com/"),
        audience: z.string().min(1).default("api://AzureADTokenExchange"),
      })
      .optional(),
  })
  // Unset, and Pulumi.yaml's default {}, leave it out of the config (and of what backups record).
  .optional();

const ingressSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    kind: z.enum(["Ingress", "Route"]).default("Ingress"),
    host: orOutput(formatted(dnsSubdomainProblem)).optional(),
    className: formatted(dnsSubdomainProblem).optional(),
    tlsSecretName: orOutput(formatted(dnsSubdomainProblem)).optional(),
    /**
     * A Route with tlsSecretName: grant OpenShift's router read access to that Secret (a Role and a
     * RoleBinding). False when someone else grants it: the delivery stack does, for its workspace.
     */
    routerAccess: z.boolean().optional(),
    annotations: z.record(labelKey, orOutput(z.string())).default({}),
  })
  .prefault({});

const archiveUrl = z
  .url({ error: "must be an http(s) URL of an uncompressed tar archive" })
  .refine((v) => /^https?:\/\//.test(v), {
    error: "must be an http(s) URL: CDI unpacks archives only from http and upload sources",
  });

const dataVolume = z.strictObject({
  name: formatted((v) => dnsLabelProblem(v, 52)),
  url: archiveUrl,
  size,
  storageClass: storageClassName.optional(),
  /** The storage class binds on first consumer: ask CDI to bind at once so the import can start. */
  waitForFirstConsumer: z.boolean().default(false),
});

/** Where backup archives are kept in object storage (S3 API): written by backups, read by a restore. */
const backupBucket = z.strictObject({
  bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
    error: "must be an S3 bucket name: 3 to 63 lowercase letters, digits, dots and hyphens",
  }),
  /** Default: `<namespace>/<instance>/`. */
  prefix: z
    .string()
    .regex(/^([^/\s]+\/)*$/, { error: 'must be empty or end with "/", such as "pulp/prod/"' })
    .optional(),
  endpointUrl: z.url({ error: 'must be a URL such as "https://s3.example.com"' }).optional(),
  region: z.string().min(1).optional(),
  /** Backups: unset, the backup pod takes the pods' identity (pulp:serviceAccount). A restore needs one. */
  accessKeyId: z.string().min(1).optional(),
});

/**
 * Backups (components/backup): a CronJob that dumps the database, then copies the artifacts and the key
 * Secrets into a volume of its own. Without a schedule it runs only on demand (`npm run backup -- now`).
 */
const backupSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** A cron schedule ("0 3 * * *"); unset: on demand only. */
    schedule: z
      .string()
      .regex(/^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|(\S+\s+){4}\S+)$/, {
        error: 'must be a cron schedule such as "0 3 * * *" (five fields) or "@daily"',
      })
      .optional(),
    /** Complete backups kept in the volume, the newest first; older ones are deleted after each backup. */
    keep: wholeNumber(1, 1000).default(7),
    /**
     * A PostgreSQL image whose pg_dump is at least the server's major version (it runs pg_dump, GNU
     * coreutils and tar). Default: database.cloudnativepg.imageName.
     */
    image: formatted(imageProblem).optional(),
    volume: z
      .strictObject({ size: size.default("100Gi"), storageClass: storageClassName.optional() })
      .prefault({}),
    /**
     * Object storage (S3 API) the backups are kept in as well: after each backup, the archive `npm run
     * backup -- export` writes goes to `s3://<bucket>/<prefix><id>.tar`, and only the newest `keep`
     * archives under the prefix stay. The secret key is `pulp:backupS3SecretAccessKey`.
     */
    s3: backupBucket.optional(),
    resources: resourcesSchema.default({
      requests: { cpu: "100m", memory: "256Mi", "ephemeral-storage": DEFAULT_REQUEST },
      limits: { memory: "1Gi", "ephemeral-storage": "1Gi" },
    }),
  })
  .prefault({});

const backupId = z.string().refine((v) => OWN_BACKUP_ID.test(v) || OPERATOR_BACKUP_ID.test(v), {
  error:
    'must be a backup id such as "20261124T031500Z" (npm run backup -- list shows them), or the directory ' +
    'of a pulp-operator PulpBackup such as "openshift-backup-2026-11-24-031500" (its status.backupDirectory, ' +
    "without /backups/)",
});

/**
 * A restore into a new install (components/backup/restore.ts): the backup `<claim>/<backup>/` is loaded
 * into the empty database and artifact volume before the first migration. Needs the backup's keys in the
 * stack config (`npm run backup -- keys <id>` sets them). The backup is this program's, or a pulp-operator
 * PulpBackup's directory (`openshift-backup-…`, of an install with file storage) in its claim.
 */
const restoreSchema = z.strictObject({
  backup: backupId,
  /** The PVC in the namespace that holds the backup; default: the install's own backups volume. */
  claim: formatted(dnsSubdomainProblem).optional(),
  /**
   * Or the backup comes in over http(s): the archive `npm run backup -- export` writes, unpacked by a CDI
   * DataVolume `<instance>-restore-<id>` that the restore then reads (restorePlan.ts).
   */
  http: z
    .strictObject({
      url: archiveUrl,
      /** Room for the unpacked backup (CDI needs as much again for scratch space while it imports). */
      size,
      storageClass: storageClassName.optional(),
      waitForFirstConsumer: z.boolean().default(false),
    })
    .optional(),
  /**
   * Or the backup comes from the bucket backups go to (pulp:backup.s3 of the install that took it): the
   * archive `<prefix><id>.tar` is fetched with the bucket's credentials (the secret key is
   * `pulp:restoreS3SecretAccessKey`) into a volume `<instance>-restore-<id>` that the restore then reads
   * (restoreFetch.ts). No URL that grants access is written anywhere.
   */
  s3: backupBucket
    .extend({
      /** Room for the unpacked backup. */
      size,
      storageClass: storageClassName.optional(),
    })
    .optional(),
  /**
   * Restore over a live install's data: the same id as `backup`, so the confirmation holds for this one
   * backup only. Every Pulp process stops first (restorePlan.ts).
   */
  overwrite: backupId.optional(),
});

const quotaSchema = z.strictObject({ requestsStorage: size.optional() });

const checksum = z.enum(["md5", "sha1", "sha224", "sha256", "sha384", "sha512"]);

export const configSchema = z.strictObject({
  namespace: formatted(dnsLabelProblem).default("pulp"),
  createNamespace: z.boolean().default(true),
  instanceName: formatted(
    (v) => dnsLabelProblem(v, 30) ?? labelValueProblem(v) ?? instanceNameProblem(v),
  ).default("pulp"),
  image: formatted(imageProblem).default("quay.io/pulp/pulp-minimal:3.123.1"),
  /** Derived from the image tag when it is a version; required for a digest-only image. */
  pulpcoreVersion: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, { error: 'must be a pulpcore version such as "3.85.0"' })
      .optional(),
  ),
  /**
   * The plugin versions the image carries, by app label (`{ansible: "0.30.3", rpm: "3.39.4"}`, the keys of
   * the image's org.pulpproject.versions label and of status/), without "core". The upgrade planner checks
   * plugin migrations only for plugins named here; a change re-runs the migration Job under the same tag.
   * Empty (the default): plugin versions unknown.
   */
  plugins: z
    .record(
      z.string().regex(/^(?!core$)(?!pulp[-_])[a-z][a-z0-9_]*$/, {
        error:
          'plugin keys are app labels such as "rpm" or "ansible" (not "pulp_rpm"; "core" is pulp:pulpcoreVersion)',
      }),
      z.string().regex(/^\d+\.\d+\.\d+$/, { error: 'must be a plugin version such as "3.39.4"' }),
    )
    .default({}),
  contentOrigin: formatted(originProblem),
  apiRoot: formatted(urlPathProblem).default("/pulp/"),
  contentPathPrefix: formatted(urlPathProblem).default("/pulp/content/"),
  allowedContentChecksums: z
    .array(checksum)
    .default(["sha224", "sha256", "sha384", "sha512"])
    .refine((v) => v.includes("sha256"), {
      error: 'must contain "sha256": Pulp stores and verifies every artifact by its sha256',
    }),
  cacheEnabled: z.boolean().default(false),
  workerType: z.enum(["pulpcore", "redis"]).default("pulpcore"),
  tokenAuth: z.boolean().default(false),
  maintenance: z.boolean().default(false),
  idle: z.boolean().default(false),
  api: apiSchema,
  content: componentSchema(
    {
      replicas: 2,
      requests: { cpu: "100m", memory: "256Mi" },
      limits: { memory: "1Gi" },
      // 10 s preStop + gunicorn's 30 s graceful timeout, in which aiohttp finishes open downloads.
      terminationGracePeriodSeconds: 45,
    },
    cpuAutoscalingSchema,
  ),
  worker: componentSchema(workerDefaults, queueAutoscalingSchema),
  web: webSchema,
  redis: redisSchema,
  database: databaseSchema,
  storage: storageSchema,
  ingress: ingressSchema,
  dataVolumes: z.array(dataVolume).default([]),
  backup: backupSchema,
  // Pulumi.yaml declares it with the default {}: no restore.
  restore: emptyIsUnset(restoreSchema.optional()),
  scheduling: schedulingSchema,
  /**
   * Secrets of type kubernetes.io/dockerconfigjson in the namespace, for every pod the program creates
   * (api, content, worker, web, Redis, the migration Job) and the CloudNativePG cluster's pods.
   */
  imagePullSecrets: z.array(formatted(dnsSubdomainProblem)).default([]),
  serviceAccount: emptyIsUnset(serviceAccountSchema),
  trustedCa: trustedCaSchema,
  proxy: emptyIsUnset(proxySchema),
  signing: emptyIsUnset(signingSchema),
  ldap: emptyIsUnset(ldapSchema),
  metrics: emptyIsUnset(metricsSchema.optional()),
  namespaceQuota: quotaSchema.default({}),
  migration: z
    .strictObject({
      resources: resourcesSchema.default({
        requests: { cpu: "250m", memory: "512Mi", "ephemeral-storage": DEFAULT_REQUEST },
        limits: { memory: "2Gi", "ephemeral-storage": PULP_OWN },
      }),
      backoffLimit: wholeNumber(0, 10).default(2),
      /**
       * How long `pulumi up` awaits the restore Job and then the migration Job, each ("90m", "1h30m"). Past
       * it `up` fails, the Job runs on, and the next `up` refuses until it has finished (migration/jobGuard.ts).
       * A migration that rewrites every row (pulpcore 0152 at 3.115.0) or a multi-TB restore takes hours.
       */
      timeout: z.preprocess(asText, formatted(timeoutProblem)).default("6h"),
      /** e.g. `sidecar.istio.io/inject: "false"`: a Job whose pod keeps a sidecar running never completes. */
      podAnnotations: z.record(labelKey, z.string()).default({}),
      podSpecOverrides: podSpecOverridesSchema,
    })
    .prefault({}),
  /**
   * Pulp settings whose values are credentials, each from a key of a Secret in the namespace that the user
   * keeps (`{secretName, key}`): they reach every Pulp process as `PULP_<NAME>` env (dynaconf: `__` nests,
   * as in `STORAGES__default__OPTIONS__sas_token`), never settings.py or the stack config. A pod reads the
   * value when it starts: roll the pods after changing the Secret.
   */
  // Unset when empty, so an install without it renders (and records in its backups) what it did before.
  secretSettings: emptyIsUnset(
    z
      .record(
        z.string().regex(/^[A-Z][A-Z0-9_]*?(__[A-Za-z0-9_]+)*$/, {
          error: "setting names are UPPER_CASE (a nested one: OUTER__inner, as dynaconf reads env)",
        }),
        z.strictObject({
          secretName: formatted(dnsSubdomainProblem),
          key: z.string().regex(/^[-._a-zA-Z0-9]{1,253}$/, {
            error: "must be a key of the Secret: letters, digits, '-', '_' and '.'",
          }),
        }),
      )
      .optional(),
  ),
  /** Rendered into settings.py after everything the program sets; keys are Pulp setting names. */
  extraSettings: z
    .record(z.string().regex(/^[A-Z][A-Z0-9_]*$/, { error: "setting names are UPPER_CASE" }), z.unknown())
    .default({}),
});

export type RawPulpConfig = z.input<typeof configSchema>;
export type ParsedConfig = z.output<typeof configSchema>;
export type ComponentConfig = ParsedConfig["api"];
export type ResourcesConfig = z.output<typeof resourcesSchema>;
