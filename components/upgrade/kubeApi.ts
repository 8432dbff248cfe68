// A few Kubernetes API calls for the stop-the-world step, made from a dynamic provider. The program
// resolves the cluster once, as the Kubernetes provider does (upgrade/cluster.ts), and passes it in:
// a kubeconfig (path or content) plus context, or the in-cluster service account (the operator's
// workspace pod). $KUBECONFIG is consulted only for a target that names neither. @kubernetes/client-node would do the same with 72 more packages in every `npm install`,
// including the operator workspace's, which the seeds show running out of memory.

/** Where the cluster is: what the program passes from the `kubernetes:` config. */
export interface KubeTarget {
  /** `kubernetes:kubeconfig`: a path, or the kubeconfig itself. */
  kubeconfig?: string;
  /** `kubernetes:context`. */
  context?: string;
  /** No kubeconfig anywhere: the pod's service account (the operator's workspace), as the provider does. */
  inCluster?: boolean;
}

/** The fields of API objects this program reads. */
export interface KubeObject {
  metadata: { name: string; generation: number; deletionTimestamp?: string };
  spec: { replicas?: number; selector?: { matchLabels?: Record<string, string> } };
  status?: { conditions?: { type: string; status: string }[] };
  items?: KubeObject[];
  message?: string;
}

/** The parts of a kubeconfig file read here (a `~/.kube/config`, not a full schema). */
interface KubeconfigFile {
  "current-context"?: string;
  contexts?: { name: string; context?: { cluster: string; user?: string } }[];
  clusters?: { name: string; cluster?: Record<string, string | boolean | undefined> }[];
  users?: { name: string; user?: KubeconfigUser }[];
}

interface KubeconfigUser {
  token?: string;
  tokenFile?: string;
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  "client-key"?: string;
  "client-key-data"?: string;
  username?: string;
  password?: string;
  as?: string;
  exec?: { apiVersion: string; command: string; args?: string[]; env?: { name: string; value: string }[] };
  "auth-provider"?: unknown;
}

export interface KubeApi {
  /** The parsed JSON answer; `undefined` for 404. Any other non-2xx status throws with the API's message. */
  request(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
    /** Another representation, e.g. metadata only (`as=PartialObjectMetadataList`). */
    accept?: string,
  ): Promise<KubeObject | undefined>;
  /** Where requests go, for messages. */
  server: string;
}

/**
 * Connects to the cluster named by `target`. Everything is required inside: the function is serialized
 * with the dynamic provider that calls it and runs in the provider's own process.
 */
export function kubeApi(target: KubeTarget, { timeoutMs = 30_000 } = {}): KubeApi {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const fs = require("fs") as typeof import("fs");
  const os = require("os") as typeof import("os");
  const nodePath = require("path") as typeof import("path");
  const https = require("https") as typeof import("https");
  const http = require("http") as typeof import("http");
  const { execFileSync } = require("child_process") as typeof import("child_process");
  const yaml = require("js-yaml") as typeof import("js-yaml");
  /* eslint-enable @typescript-eslint/no-require-imports */

  interface Connection {
    server: string;
    ca?: Buffer;
    cert?: Buffer;
    key?: Buffer;
    insecure?: boolean;
    servername?: string;
    headers: Record<string, string>;
  }

  const inCluster = (): Connection => {
    const dir = "/var/run/secrets/kubernetes.io/serviceaccount";
    const host = process.env.KUBERNETES_SERVICE_HOST;
    if (!host || !fs.existsSync(`${dir}/token`)) {
      throw new Error(
        "no Kubernetes cluster to talk to: set kubernetes:kubeconfig or $KUBECONFIG, or run in a pod",
      );
    }
    const h = host.includes(":") ? `[${host}]` : host;
    return {
      server: `https://${h}:${process.env.KUBERNETES_SERVICE_PORT ?? "443"}`,
      ca: fs.readFileSync(`${dir}/ca.crt`),
      // Read once: a workspace update lasts far less than the projected token's hour.
      headers: { Authorization: `Bearer ${fs.readFileSync(`${dir}/token`, "utf8").trim()}` },
    };
  };

  const fromKubeconfig = (text: string, baseDir: string, where: string): Connection => {
    const config = (yaml.load(text) ?? {}) as KubeconfigFile;
    const contextName = target.context ?? config["current-context"];
    const byName = <E extends { name: string }>(list: E[] | undefined, name: string, kind: string): E => {
      const found = (list ?? []).find((e) => e.name === name);
      if (!found) throw new Error(`${where}: no ${kind} named "${name}"`);
      return found;
    };
    if (!contextName) throw new Error(`${where}: no current-context and no kubernetes:context`);
    const context = byName(config.contexts, contextName, "context").context ?? { cluster: "" };
    const cluster = byName(config.clusters, context.cluster, "cluster").cluster ?? {};
    const user: KubeconfigUser = context.user ? (byName(config.users, context.user, "user").user ?? {}) : {};
    const str = (v: string | boolean | undefined) => (typeof v === "string" ? v : undefined);
    const file = (p: string) => fs.readFileSync(nodePath.resolve(baseDir, p));
    const data = (d?: string, p?: string) => (d ? Buffer.from(d, "base64") : p ? file(p) : undefined);

    const conn: Connection = {
      server: (str(cluster.server) ?? "").replace(/\/+$/, ""),
      ca: data(str(cluster["certificate-authority-data"]), str(cluster["certificate-authority"])),
      insecure: cluster["insecure-skip-tls-verify"] === true,
      servername: str(cluster["tls-server-name"]),
      cert: data(user["client-certificate-data"], user["client-certificate"]),
      key: data(user["client-key-data"], user["client-key"]),
      headers: {},
    };
    let token: string | undefined =
      user.token ?? (user.tokenFile ? file(user.tokenFile).toString() : undefined);
    if (user.exec) {
      // A credential plugin (aws eks get-token, gke-gcloud-auth-plugin, kubelogin ...): its JSON on stdout.
      const out = execFileSync(user.exec.command, user.exec.args ?? [], {
        encoding: "utf8",
        env: {
          ...process.env,
          ...Object.fromEntries((user.exec.env ?? []).map((e) => [e.name, e.value])),
          KUBERNETES_EXEC_INFO: JSON.stringify({
            apiVersion: user.exec.apiVersion,
            kind: "ExecCredential",
            spec: { interactive: false },
          }),
        },
      });
      const status = JSON.parse(out).status ?? {};
      token = status.token ?? token;
      if (status.clientCertificateData) conn.cert = Buffer.from(status.clientCertificateData);
      if (status.clientKeyData) conn.key = Buffer.from(status.clientKeyData);
    }
    if (user["auth-provider"]) {
      throw new Error(`${where}: user "${context.user}" uses a legacy auth-provider; use an exec plugin`);
    }
    if (token) conn.headers.Authorization = `Bearer ${token.trim()}`;
    else if (user.username) {
      const basic = Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64");
      conn.headers.Authorization = `Basic ${basic}`;
    }
    if (user.as) conn.headers["Impersonate-User"] = user.as;
    if (!conn.server) throw new Error(`${where}: cluster "${context.cluster}" has no server`);
    return conn;
  };

  const connect = (): Connection => {
    const given = target.kubeconfig;
    // The content (YAML over several lines, or JSON) rather than a path.
    if (given && (given.includes("\n") || given.trimStart().startsWith("{"))) {
      return fromKubeconfig(given, process.cwd(), "kubernetes:kubeconfig");
    }
    if (target.inCluster) return inCluster();
    // Only a target without either (a step recorded by an older release of this program) looks further.
    const file =
      given ??
      process.env.KUBECONFIG?.split(nodePath.delimiter).find((p) => p) ??
      nodePath.join(os.homedir(), ".kube", "config");
    if (fs.existsSync(file))
      return fromKubeconfig(fs.readFileSync(file, "utf8"), nodePath.dirname(file), file);
    if (given || process.env.KUBECONFIG) throw new Error(`kubeconfig ${file} does not exist`);
    return inCluster();
  };

  const conn = connect();
  const request = (
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
    accept = "application/json",
  ) =>
    new Promise<KubeObject | undefined>((resolve, reject) => {
      const url = new URL(conn.server + path);
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const lib = url.protocol === "http:" ? http : https;
      const req = lib.request(
        url,
        {
          method,
          ca: conn.ca,
          cert: conn.cert,
          key: conn.key,
          servername: conn.servername,
          rejectUnauthorized: !conn.insecure,
          timeout: timeoutMs,
          headers: {
            ...conn.headers,
            Accept: accept,
            // With its length: Node sends a DELETE's body unframed otherwise, which the server cannot parse.
            ...(payload === undefined
              ? {}
              : { "Content-Type": contentType, "Content-Length": Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => (text += chunk));
          res.on("end", () => {
            const status = res.statusCode ?? 0;
            if (status === 404) return resolve(undefined);
            let parsed: KubeObject | undefined;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            if (status < 200 || status >= 300) {
              const message = parsed?.message ?? text.slice(0, 300);
              return reject(new Error(`${method} ${path}: HTTP ${status}: ${message}`));
            }
            resolve(parsed);
          });
        },
      );
      req.on("timeout", () =>
        req.destroy(new Error(`${method} ${path}: no answer from ${conn.server} in ${timeoutMs} ms`)),
      );
      req.on("error", reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  return { request, server: conn.server };
}
