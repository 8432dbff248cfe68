// Pure parsers for the string formats Kubernetes and Pulp accept. Each returns a reason a person can act
// on, or undefined when the value is fine.

const QUANTITY = /^(\d+(?:\.\d+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const SUFFIX: Record<string, number> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a Kubernetes quantity ("500m", "2Gi") in base units, or undefined if malformed. */
export function parseQuantity(value: string): number | undefined {
  const match = QUANTITY.exec(value);
  if (!match) return undefined;
  return Number(match[1]) * SUFFIX[match[2] ?? ""];
}

export function quantityProblem(value: string): string | undefined {
  if (parseQuantity(value) !== undefined) return undefined;
  return 'a Kubernetes quantity such as "500m", "2", "512Mi" or "10Gi" (binary suffixes Ki/Mi/Gi/Ti, no sign, no "B")';
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function dnsLabelProblem(value: string, maxLength = 63): string | undefined {
  if (value.length <= maxLength && DNS_LABEL.test(value)) return undefined;
  return `a DNS-1123 label: lower-case letters, digits and '-', starting and ending alphanumeric, at most ${maxLength} characters`;
}

export function dnsSubdomainProblem(value: string): string | undefined {
  if (value.length <= 253 && DNS_SUBDOMAIN.test(value)) return undefined;
  return "a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253 characters";
}

export function labelValueProblem(value: string): string | undefined {
  if (value.length <= 63 && LABEL_VALUE.test(value)) return undefined;
  return "a label value: at most 63 characters of letters, digits, '-', '_' and '.', starting and ending alphanumeric";
}

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/**
 * A label or annotation key, by the API server's rule (IsQualifiedName): an optional DNS-1123 subdomain
 * prefix of at most 253 characters and '/', then a name of at most 63 characters.
 */
export function labelKeyProblem(value: string): string | undefined {
  const slash = value.lastIndexOf("/");
  const prefix = slash === -1 ? undefined : value.slice(0, slash);
  const name = slash === -1 ? value : value.slice(slash + 1);
  const prefixOk = prefix === undefined || dnsSubdomainProblem(prefix) === undefined;
  if (prefixOk && name.length <= 63 && QUALIFIED_NAME.test(name)) return undefined;
  return "a label key: an optional DNS subdomain prefix and '/', then at most 63 characters of letters, digits, '-', '_' and '.', starting and ending alphanumeric (e.g. \"kubernetes.io/os\")";
}

/** Tags that name a moving target: pods of one Deployment can run different code (pulp-operator #1228). */
export const FLOATING_TAGS = ["latest", "stable", "nightly", "main"] as const;

export interface ImageRef {
  repository: string;
  tag?: string;
  digest?: string;
}

const REPOSITORY = /^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;

export function parseImage(value: string): ImageRef | undefined {
  const [nameAndTag, digest, ...rest] = value.split("@");
  if (rest.length > 0 || (digest !== undefined && !DIGEST.test(digest))) return undefined;
  const lastSlash = nameAndTag.lastIndexOf("/");
  const colon = nameAndTag.indexOf(":", lastSlash + 1);
  const repository = colon === -1 ? nameAndTag : nameAndTag.slice(0, colon);
  const tag = colon === -1 ? undefined : nameAndTag.slice(colon + 1);
  if (!REPOSITORY.test(repository) || (tag !== undefined && !TAG.test(tag))) return undefined;
  return { repository, tag, digest };
}

export function imageProblem(value: string): string | undefined {
  const ref = parseImage(value);
  if (!ref)
    return 'an image reference such as "quay.io/pulp/pulp-minimal:3.85.0" (repository:tag or @sha256:digest)';
  if (!ref.tag && !ref.digest) return "an image pinned to a version tag or a digest (no tag means :latest)";
  if (ref.tag && !ref.digest && (FLOATING_TAGS as readonly string[]).includes(ref.tag)) {
    return `a version tag or digest, not the floating tag "${ref.tag}" (nodes can pull different builds of it)`;
  }
  return undefined;
}

const SEMVER = /^(\d+)\.(\d+)\.(\d+)$/;

export type Version = readonly [number, number, number];

export function parseVersion(value: string): Version | undefined {
  const match = SEMVER.exec(value);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

export function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

const ORIGIN =
  /^https?:\/\/([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(:(\d{1,5}))?$/;

export function originProblem(value: string): string | undefined {
  const match = ORIGIN.exec(value);
  const port = match?.[7] === undefined ? undefined : Number(match[7]);
  if (match && (port === undefined || (port >= 1 && port <= 65535))) return undefined;
  return 'scheme://host[:port] with scheme http or https and no path or trailing slash, e.g. "https://pulp.example.com"';
}

export function urlPathProblem(value: string): string | undefined {
  if (/^\/([A-Za-z0-9._~-]+\/)*$/.test(value)) return undefined;
  return 'a URL path that starts and ends with "/", e.g. "/pulp/"';
}
