// Node-local disk (`ephemeral-storage`): what each container the program creates may write, as requests and
// limits, and the sizeLimit of each emptyDir, so that a node under disk pressure does not evict Pulp first
// (a pod without a request is ranked by all it uses) and no pod fills a node's disk.
//
// What counts against a container's limit: its logs (the kubelet keeps at most 5 x 10 MiB by default) and
// its writable layer, which is read-only here (podSecurity.ts `restricted`). Against the pod's limit (the
// sum of its containers', or its largest init container's): that plus every emptyDir. Measured on a real
// node (kubelet stats/summary, restore test, PVC storage): a migration pod 70 KB in all, Redis 20 KB.
import type { ParsedConfig } from "./schema";
import { objectStorage } from "./objectStorage";
import { parseQuantity } from "./formats";
import { ConfigProblem, keyOf, removeCommand, setCommand, valueAt } from "./problems";

const MI = 2 ** 20;
const GI = 2 ** 30;

/** A request and limit for a container the program hard-codes (no config key). */
export interface EphemeralSize {
  request: string;
  limit: string;
}

/**
 * What a Pulp process (api, content, worker, migration) may write besides its working directory: logs,
 * /tmp (Python's tempfile, gunicorn's heartbeat files) and headroom. The default limit with a volume.
 */
export const PULP_OWN = "1Gi";
/** The default request of every configurable container: about what they were measured to use, and room. */
export const DEFAULT_REQUEST = "64Mi";
/**
 * With object storage each Pulp process writes its working directory to the node (storage.s3, storage.azure): the default
 * request covers a sync's usual downloads at once (10 at a time, packages of up to ~100 MB), so that a worker
 * at work is not the first pod a node under disk pressure evicts.
 */
export const S3_PULP_REQUEST = "1Gi";
/** The smallest limit beyond the working directory or request bodies: /tmp, and logs. */
const MINIMUM_OWN = 256 * MI;
/** Room kept out of a scratch emptyDir for the container's logs and small files: at most this much. */
const LOG_ROOM = 512 * MI;

/** Init containers that write nothing but a few files (init-dirs; the CA bundle, ~200 KB). */
export const TINY: EphemeralSize = { request: "16Mi", limit: "64Mi" };
/** One-shot Python containers that stream to and from volumes or buckets: /tmp for the interpreter. */
export const STREAMING: EphemeralSize = { request: "64Mi", limit: "256Mi" };
/** The sizeLimit of an emptyDir that holds a few files (the CA bundle, backup.ts's versions and result). */
export const SMALL_DIR = "16Mi";
/** The restore Job: GNU sort spills a listing of every artifact (~100 bytes each) into /tmp. */
export const RESTORE: EphemeralSize = { request: DEFAULT_REQUEST, limit: "1Gi" };

/** Answers nginx may be writing into the content cache beyond its max_size before its manager trims it. */
const CACHE_WRITES_IN_FLIGHT = 4;

/**
 * The sizeLimit of pulp-web's content cache emptyDir (nginx.ts): what nginx keeps (max_size) and a few
 * answers being written; 0 with the cache off.
 */
export function contentCacheVolumeBytes(cache: ParsedConfig["web"]["contentCache"]): number {
  return cache.enabled ? bytes(cache.size) + CACHE_WRITES_IN_FLIGHT * bytes(cache.maxEntrySize) : 0;
}

/** Bytes as a quantity: whole Gi, Mi or Ki where they divide it. */
export function toQuantity(bytes: number): string {
  const whole = Math.floor(bytes);
  for (const [suffix, unit] of [
    ["Gi", GI],
    ["Mi", MI],
    ["Ki", 1024],
  ] as const) {
    if (whole > 0 && whole % unit === 0) return `${whole / unit}${suffix}`;
  }
  return String(whole);
}

const bytes = (quantity: string | undefined) => (quantity === undefined ? 0 : (parseQuantity(quantity) ?? 0));

/**
 * The sizeLimit of a container's scratch emptyDir (/tmp; nginx's request bodies): its ephemeral-storage
 * limit less the emptyDirs sized elsewhere (`fixed`, such as the working directory) and room for logs
 * (half of what is left, at most 512Mi). Never under 1Mi.
 */
export function scratchSize(limit: string | undefined, fixed: string | undefined = undefined): string {
  const left = bytes(limit) - bytes(fixed);
  const size = Math.floor((left - Math.min(left / 2, LOG_ROOM)) / MI) * MI;
  return toQuantity(Math.max(size, MI));
}

/**
 * nginx's client_max_body_size in bytes ("10g", "512m", "64k", "1024"); 0 means no limit. With nginx's
 * default proxy_request_buffering, each request body is written whole to client_body_temp_path (/tmp) before
 * it goes on to Pulp.
 */
export function nginxSize(value: string): number {
  const match = /^(\d+)([kmg]?)$/.exec(value);
  if (!match) return 0;
  return Number(match[1]) * { "": 1, k: 1024, m: MI, g: GI }[match[2] as "" | "k" | "m" | "g"];
}

/** With no limit on request bodies (clientMaxBodySize "0", and registry pushes), room for one of 10Gi. */
const UNBOUNDED_BODY = 10 * GI;

type Sized = "api" | "content" | "worker" | "migration" | "web" | "redis" | "backup";
const PULP_COMPONENTS = ["api", "content", "worker", "migration"] as const;
const SIZED: readonly Sized[] = [...PULP_COMPONENTS, "web", "redis", "backup"];

/** The ephemeral-storage request and limit each configurable container gets when the config sets none. */
export function ephemeralDefaults(config: ParsedConfig): Record<Sized, EphemeralSize> {
  const workDir = objectStorage(config.storage)?.workingDirectorySize;
  const pulp: EphemeralSize = workDir
    ? { request: S3_PULP_REQUEST, limit: toQuantity(bytes(workDir) + bytes(PULP_OWN)) }
    : { request: DEFAULT_REQUEST, limit: PULP_OWN };
  const body = nginxSize(config.web.clientMaxBodySize) || UNBOUNDED_BODY;
  const plain = { request: DEFAULT_REQUEST, limit: "1Gi" };
  return {
    api: pulp,
    content: pulp,
    worker: pulp,
    // It runs `handle-artifact-checksums`, which reads artifacts through the working directory.
    migration: { ...pulp, request: DEFAULT_REQUEST },
    // One request body of the largest size nginx accepts, and 1Gi: a response nginx buffers to a temp
    // file (proxy_max_temp_file_size, 1024m by default), logs; and the content cache.
    web: {
      request: DEFAULT_REQUEST,
      limit: toQuantity(body + GI + contentCacheVolumeBytes(config.web.contentCache)),
    },
    // A cache only (redis.ts: no RDB, no AOF): logs.
    redis: plain,
    // pg_dump writes into the backup volume; GNU sort spills artifact listings into /tmp.
    backup: plain,
  };
}

const requestPath = (c: Sized) => [c, "resources", "requests", "ephemeral-storage"];
const limitPath = (c: Sized) => [c, "resources", "limits", "ephemeral-storage"];

/**
 * The config with an ephemeral-storage request and limit on every configurable container: the ones the
 * stack config sets, else the defaults (ephemeralDefaults), which also fill resources the config sets
 * without them.
 */
export function withEphemeralStorage(config: ParsedConfig, raw: Record<string, unknown>): ParsedConfig {
  const defaults = ephemeralDefaults(config);
  const out = { ...config };
  for (const c of SIZED) {
    const resources = config[c].resources;
    const request =
      valueAt(raw, requestPath(c)) === undefined ? undefined : resources.requests["ephemeral-storage"];
    const limit =
      valueAt(raw, limitPath(c)) === undefined ? undefined : resources.limits["ephemeral-storage"];
    (out as Record<Sized, unknown>)[c] = {
      ...config[c],
      resources: {
        requests: { ...resources.requests, "ephemeral-storage": request ?? defaults[c].request },
        limits: { ...resources.limits, "ephemeral-storage": limit ?? defaults[c].limit },
      },
    };
  }
  return out;
}

/**
 * Limits the stack config sets that cannot hold what the container writes: a Pulp process's below the
 * working directory it keeps on the node (storage.s3.workingDirectorySize) and room for /tmp and logs, web's
 * below one request body (web.clientMaxBodySize); and a request above the limit the program chose.
 */
export function ephemeralStorageProblems(
  config: ParsedConfig,
  raw: Record<string, unknown>,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const defaults = ephemeralDefaults(config);
  const store = objectStorage(config.storage);
  const workDir = store?.workingDirectorySize;
  for (const c of SIZED) {
    const userLimit =
      valueAt(raw, limitPath(c)) === undefined ? undefined : config[c].resources.limits["ephemeral-storage"];
    const userRequest =
      valueAt(raw, requestPath(c)) === undefined
        ? undefined
        : config[c].resources.requests["ephemeral-storage"];
    const limitKey = keyOf(limitPath(c));
    const pulp = (PULP_COMPONENTS as readonly string[]).includes(c);
    if (userLimit !== undefined && pulp && bytes(userLimit) < bytes(workDir) + MINIMUM_OWN) {
      const why = workDir
        ? `is below storage.${store!.key}.workingDirectorySize (${workDir}) and ${toQuantity(MINIMUM_OWN)} for /tmp and logs: ` +
          "with object storage Pulp keeps uploads, downloads and task files in /var/lib/pulp/tmp on the node, and " +
          "the kubelet evicts the pod once they pass its limit"
        : `leaves less than ${toQuantity(MINIMUM_OWN)} for /tmp and the logs`;
      const smaller = bytes(userLimit) - bytes(PULP_OWN);
      problems.push({
        key: limitKey,
        given: valueAt(raw, limitPath(c)),
        message: `${userLimit} ${why}. Without the key the program sets ${defaults[c].limit}`,
        fix: setCommand(limitKey, defaults[c].limit),
        alternatives: [
          removeCommand(limitKey),
          ...(workDir && smaller >= GI
            ? [
                setCommand(
                  `pulp:storage.${store!.key}.workingDirectorySize`,
                  toQuantity(Math.floor(smaller / GI) * GI),
                ),
              ]
            : []),
        ],
      });
      continue;
    }
    const body = nginxSize(config.web.clientMaxBodySize);
    const cache = contentCacheVolumeBytes(config.web.contentCache);
    if (
      userLimit !== undefined &&
      c === "web" &&
      body + cache > 0 &&
      bytes(userLimit) < body + MINIMUM_OWN + cache
    ) {
      const holds = [
        ...(body > 0 ? [`one request body of web.clientMaxBodySize (${config.web.clientMaxBodySize})`] : []),
        ...(cache > 0
          ? [`the content cache (${toQuantity(cache)}: web.contentCache.size and answers being written)`]
          : []),
      ];
      const why = [
        ...(body > 0 ? ["nginx writes each upload whole to /tmp before passing it to Pulp"] : []),
        ...(cache > 0 ? ["the cache's emptyDir counts against the pod"] : []),
      ];
      problems.push({
        key: limitKey,
        given: valueAt(raw, limitPath(c)),
        message:
          `${userLimit} cannot hold ${[...holds, `${toQuantity(MINIMUM_OWN)} for logs`].join(", ")}: ${why.join("; ")}, ` +
          `and the kubelet would evict the pod once it is full. Without the key the program sets ${defaults.web.limit}`,
        fix: setCommand(limitKey, defaults.web.limit),
        alternatives: [
          removeCommand(limitKey),
          ...(cache > 0 ? [setCommand("pulp:web.contentCache.enabled", false)] : []),
        ],
      });
      continue;
    }
    // Both set: the schema compares them. One set: compare it with the program's choice for the other.
    if ((userRequest === undefined) === (userLimit === undefined)) continue;
    const request = userRequest ?? defaults[c].request;
    const limit = userLimit ?? defaults[c].limit;
    if (bytes(request) <= bytes(limit)) continue;
    const path = userRequest !== undefined ? requestPath(c) : limitPath(c);
    problems.push({
      key: keyOf(path),
      given: valueAt(raw, path),
      message:
        userRequest !== undefined
          ? `request ${request} is above the limit the program sets (${limit}); Kubernetes rejects such a pod. Set the limit too`
          : `limit ${limit} is below the request the program sets (${request}); Kubernetes rejects such a pod. Set the request too`,
      fix:
        userRequest !== undefined
          ? setCommand(keyOf(limitPath(c)), request)
          : setCommand(keyOf(requestPath(c)), limit),
      alternatives: [removeCommand(keyOf(path))],
    });
  }
  return problems;
}
