// What pulp-convert converts: a Pulp CR with the Secrets and the ConfigMap it names and its PulpBackups and
// PulpRestores, from a YAML file of one or more documents or from the cluster (kubectl). From the cluster a
// Secret is read as its key names and the values of its config keys only (a go-template that prints no other
// value): the converter never holds a secret. From a file, only those values are decoded.
import * as yaml from "js-yaml";
import { clusterProblem, getJson, Kube, run, ToolError } from "../kube";
import { KubeObject, references, SecretView } from "./operator";

export interface Input {
  cr: KubeObject;
  secrets: Record<string, SecretView>;
  configMaps: Record<string, Record<string, string>>;
  backups: KubeObject[];
  restores: KubeObject[];
}

type Doc = KubeObject & {
  data?: Record<string, unknown>;
  stringData?: Record<string, unknown>;
  items?: Doc[];
};

const GROUP = "repo-manager.pulpproject.org";
const isKind = (d: Doc, kind: string) => d.kind === kind && (d.apiVersion ?? "").startsWith(`${GROUP}/`);

/** The one Pulp CR wanted: by name, or the only one there is. */
function choose(crs: KubeObject[], name: string | undefined, where: string): KubeObject {
  const names = crs.map((c) => c.metadata?.name ?? "");
  if (name !== undefined) {
    const cr = crs.find((c) => c.metadata?.name === name);
    if (!cr)
      throw new ToolError(
        `no Pulp CR ${name} in ${where}${names.length ? ` (there: ${names.join(", ")})` : ""}`,
      );
    return cr;
  }
  if (crs.length === 1) return crs[0];
  if (crs.length === 0) throw new ToolError(`no Pulp CR (kind Pulp, apiVersion ${GROUP}/v1) in ${where}`);
  throw new ToolError(`${crs.length} Pulp CRs in ${where} (${names.join(", ")}): choose one with --name`);
}

/** Parses the documents of a YAML (or JSON) text; `kind: List` items count as documents. */
export function readDocuments(source: string, where: string): Doc[] {
  let docs: unknown[];
  try {
    docs = yaml.loadAll(source);
  } catch (e) {
    throw new ToolError(`${where} is not YAML: ${(e as Error).message.split("\n")[0]}`);
  }
  const flat = (d: unknown): Doc[] => {
    if (typeof d !== "object" || d === null) return [];
    const doc = d as Doc;
    return doc.kind?.endsWith("List") && Array.isArray(doc.items) ? doc.items.flatMap(flat) : [doc];
  };
  return docs.flatMap(flat);
}

/**
 * The input from a file's documents. `namespace` (-n) names the CR's namespace when its metadata does not;
 * objects of another namespace are not the CR's.
 */
export function fromDocuments(docs: Doc[], where: string, name?: string, namespace?: string): Input {
  const cr = structuredClone(
    choose(
      docs.filter((d) => isKind(d, "Pulp")),
      name,
      where,
    ),
  );
  const own = cr.metadata?.namespace;
  if (own && namespace && own !== namespace) {
    throw new ToolError(`the Pulp CR ${cr.metadata?.name} is in namespace ${own}, not ${namespace} (-n)`);
  }
  cr.metadata = { ...cr.metadata, namespace: own ?? namespace };
  const ns = cr.metadata.namespace;
  const here = (d: Doc) => d.metadata?.namespace === undefined || d.metadata.namespace === ns;
  const refs = references(cr);

  const secrets: Record<string, SecretView> = {};
  for (const ref of refs.secrets) {
    const doc = docs.find((d) => d.kind === "Secret" && d.metadata?.name === ref.name && here(d));
    if (!doc) continue;
    const data = doc.data ?? {};
    const plain = doc.stringData ?? {};
    const values: Record<string, string> = {};
    for (const key of ref.configKeys) {
      if (typeof plain[key] === "string") values[key] = plain[key] as string;
      else if (typeof data[key] === "string")
        values[key] = Buffer.from(data[key] as string, "base64").toString("utf8");
    }
    secrets[ref.name] = { keys: [...new Set([...Object.keys(data), ...Object.keys(plain)])], values };
  }
  const configMaps: Record<string, Record<string, string>> = {};
  for (const ref of refs.configMaps) {
    const doc = docs.find((d) => d.kind === "ConfigMap" && d.metadata?.name === ref.name && here(d));
    if (doc) configMaps[ref.name] = asStrings(doc.data);
  }
  return {
    cr,
    secrets,
    configMaps,
    backups: docs.filter((d) => isKind(d, "PulpBackup") && here(d)),
    restores: docs.filter((d) => isKind(d, "PulpRestore") && here(d)),
  };
}

/** A ConfigMap's data as strings (YAML reads `1440` as a number; kubectl stores the text). */
function asStrings(data: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((data ?? {}) as Record<string, unknown>)) out[k] = String(v);
  return out;
}

/** A list of a kind whose CRD may be missing (PulpBackup, PulpRestore): empty then. */
function optionalList(kube: Kube, kind: string, namespace: string): KubeObject[] {
  const r = run(kube, ["get", kind, "-n", namespace, "-o", "json"]);
  if (r.ok) return JSON.parse(r.stdout).items;
  if (/the server doesn't have a resource type|no matches for kind/i.test(r.stderr)) return [];
  throw new ToolError(
    clusterProblem(kube, r.stderr) ?? `kubectl get ${kind} failed: ${r.stderr.trim().split("\n")[0]}`,
  );
}

/**
 * The go-template that prints a Secret's key names, one a line, and after `=` the base64 value of the
 * keys in `configKeys` only.
 */
export function keysTemplate(configKeys: readonly string[]): string {
  const wanted = configKeys.map((k) => JSON.stringify(k)).join(" ");
  const value = configKeys.length > 0 ? `{{if eq $k ${wanted}}}={{$v}}{{end}}` : "";
  return `{{range $k, $v := .data}}{{$k}}${value}{{"\\n"}}{{end}}`;
}

/** A Secret as its key names and its config keys' values; undefined when it does not exist. */
function secretView(
  kube: Kube,
  namespace: string,
  name: string,
  configKeys: string[],
): SecretView | undefined {
  const r = run(kube, [
    "get",
    "secret",
    name,
    "-n",
    namespace,
    "-o",
    `go-template=${keysTemplate(configKeys)}`,
  ]);
  if (!r.ok) {
    if (/NotFound|not found/.test(r.stderr)) return undefined;
    throw new ToolError(
      clusterProblem(kube, r.stderr) ??
        `kubectl get secret ${name} failed: ${r.stderr.trim().split("\n")[0]}`,
    );
  }
  const view: SecretView = { keys: [], values: {} };
  for (const line of r.stdout.split("\n").filter(Boolean)) {
    const at = line.indexOf("=");
    const key = at < 0 ? line : line.slice(0, at);
    view.keys.push(key);
    if (at >= 0 && configKeys.includes(key))
      view.values[key] = Buffer.from(line.slice(at + 1), "base64").toString("utf8");
  }
  return view;
}

/** The input from the cluster: the Pulp CR of `namespace` (by name, or the only one) and what it names. */
export function fromCluster(kube: Kube, namespace: string, name?: string): Input {
  const kind = `pulps.${GROUP}`;
  const r = run(kube, ["get", kind, "-n", namespace, "-o", "json"]);
  if (!r.ok) {
    if (/the server doesn't have a resource type|no matches for kind/i.test(r.stderr)) {
      throw new ToolError(`no Pulp CRD (${kind}) in this cluster: pulp-operator is not installed here`);
    }
    throw new ToolError(
      clusterProblem(kube, r.stderr) ?? `kubectl get ${kind} failed: ${r.stderr.trim().split("\n")[0]}`,
    );
  }
  const cr = choose(JSON.parse(r.stdout).items as KubeObject[], name, `namespace ${namespace}`);
  const refs = references(cr);
  const secrets: Record<string, SecretView> = {};
  const missing: string[] = [];
  for (const ref of refs.secrets) {
    const view = secretView(kube, namespace, ref.name, ref.configKeys);
    if (view) secrets[ref.name] = view;
    else missing.push(`the Secret ${ref.name} (${ref.why})`);
  }
  const configMaps: Record<string, Record<string, string>> = {};
  for (const ref of refs.configMaps) {
    const cm = getJson(kube, ["configmap", ref.name, "-n", namespace]);
    if (cm) configMaps[ref.name] = asStrings(cm.data);
    else missing.push(`the ConfigMap ${ref.name} (${ref.why})`);
  }
  if (missing.length > 0) {
    throw new ToolError(
      `the Pulp CR ${cr.metadata?.name} names what namespace ${namespace} does not have: ${missing.join(", ")}; ` +
        "the operator creates its Secrets on its first reconcile: convert a CR it has reconciled",
    );
  }
  return {
    cr,
    secrets,
    configMaps,
    backups: optionalList(kube, `pulpbackups.${GROUP}`, namespace),
    restores: optionalList(kube, `pulprestores.${GROUP}`, namespace),
  };
}
