// Real clients against a real Pulp on the real node: a `kubectl port-forward` to pulp-web (how a user
// reaches a local cluster from the host), pulp-cli and skopeo from testbed/clients, and plain HTTP.
import { execFileSync, spawn, spawnSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { getJson, kubectlTry, kubectlUntil } from "../harness";
import { REPO } from "../local/environment";

const CLIENTS_BIN = execFileSync("bash", [path.join(REPO, "testbed/clients/install.sh")], {
  encoding: "utf8",
}).trim();

/** A port-forward to a Service, on 127.0.0.1:`localPort`; resolves once it accepts connections. */
export async function portForward(
  namespace: string,
  service: string,
  localPort: number,
  remotePort: number,
): Promise<{ stop: () => void }> {
  const child = await kubectlUntil(
    [
      "-n",
      namespace,
      "port-forward",
      `service/${service}`,
      `${localPort}:${remotePort}`,
      "--address",
      "127.0.0.1",
    ],
    /Forwarding from/,
  );
  return { stop: () => child.kill() };
}

export interface HttpResult {
  status: number;
  body: Buffer;
  headers: http.IncomingHttpHeaders;
  ms: number;
}

/** An HTTP Basic Authorization header's value. */
export const basicAuth = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;

/**
 * One GET (redirects not followed), with a timeout. Never on a kept-alive socket (Node's global agent keeps
 * them since v19): one opened before its pod went (idle, a rollout) would time out on the next write.
 */
export function get(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<HttpResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, timeout: timeoutMs, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks),
          headers: res.headers,
          ms: Date.now() - started,
        }),
      );
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: no answer in ${timeoutMs} ms`)));
    req.on("error", reject);
  });
}

export const sha256 = (data: Buffer | string) => crypto.createHash("sha256").update(data).digest("hex");

export interface Pulp {
  baseUrl: string;
  /** Default admin. */
  username?: string;
  password: string;
  /** Where it runs: a failure that pulp-web answered for (502-504) then says what its pods were doing. */
  namespace?: string;
}

/** An install as its clients reach it: through the Service `<instance>-web`, as admin. */
export function pulpThroughWeb(namespace: string, password: string, instance = "pulp"): Pulp {
  const web = getJson(["service", `${instance}-web`, "-n", namespace]);
  return { baseUrl: `http://${web.spec.clusterIP}:8080`, password, namespace };
}

/** The namespace's pods (restarts, readiness, how each last ended) and the last lines of pulp-web and the api. */
export function podReport(namespace: string): string {
  const pods = kubectlTry(["get", "pods", "-n", namespace, "-o", "wide"]).output;
  const ended = kubectlTry([
    "get",
    "pods",
    "-n",
    namespace,
    "-o",
    "jsonpath={range .items[*]}{.metadata.name}{' '}{.status.containerStatuses[*].lastState.terminated}{'\\n'}{end}",
  ]).output;
  const logs = ["deployment/pulp-web", "deployment/pulp-api"].map((d) => {
    const tail = (previous: boolean) =>
      kubectlTry([
        "logs",
        "-n",
        namespace,
        d,
        "--all-containers",
        "--timestamps",
        "--tail=15",
        ...(previous ? ["--previous"] : []),
      ]).output;
    return `--- ${d}:\n${tail(false)}--- ${d}, previous container:\n${tail(true)}`;
  });
  return [pods, ended, ...logs].join("\n");
}

/** pulp-cli as a user runs it; throws with its output on a non-zero exit. Returns parsed JSON when it prints JSON. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- pulp-cli prints many shapes of JSON
export function pulpCli(pulp: Pulp, args: string[]): any {
  let r = runPulpCli(pulp, args);
  // pulp-cli loads the API description before it sends anything, so a failure there is safe to retry: an
  // api that has just become Ready can fail its first docs/api.json (seen once in CI, under 3.85.34).
  for (let attempt = 2; r.status !== 0 && /in load_api/.test(r.stderr) && attempt <= 4; attempt++) {
    const cause = r.stderr.trim().split("\n").pop();
    console.warn(
      `pulp ${args.join(" ")}: the API description did not load (${cause}); attempt ${attempt} in 5 s`,
    );
    spawnSync("sleep", ["5"]);
    r = runPulpCli(pulp, args);
  }
  if (r.status !== 0) {
    const proxied = pulp.namespace && /50[234] [A-Z]/.test(`${r.stdout}${r.stderr}`);
    const report = proxied ? `\nat that moment in ${pulp.namespace}:\n${podReport(pulp.namespace!)}` : "";
    throw new Error(`pulp ${args.join(" ")} exited ${r.status}:\n${r.stdout}\n${r.stderr}${report}`);
  }
  const out = r.stdout.trim();
  try {
    return out ? JSON.parse(out) : undefined;
  } catch {
    return out;
  }
}

function runPulpCli(pulp: Pulp, args: string[]) {
  return spawnSync(
    path.join(CLIENTS_BIN, "pulp"),
    [
      "--base-url",
      pulp.baseUrl,
      "--username",
      pulp.username ?? "admin",
      "--password",
      pulp.password,
      "--format",
      "json",
      ...args,
    ],
    {
      encoding: "utf8",
      timeout: 10 * 60 * 1000,
      env: { ...process.env, HOME: fs.mkdtempSync("/tmp/pulp-cli-") },
    },
  );
}

/**
 * skopeo copy between two references; the admin's credentials for the Pulp registry side, or a bearer
 * token from `registryToken` (a registry whose token server clients on this host cannot reach).
 */
export function skopeoCopy(
  from: string,
  to: string,
  pulp: Pulp,
  token?: string,
): { ok: boolean; output: string } {
  const auth = (side: "src" | "dest") =>
    token ? [`--${side}-registry-token`, token] : [`--${side}-creds`, `admin:${pulp.password}`];
  const r = spawnSync(
    "skopeo",
    ["copy", "--src-tls-verify=false", "--dest-tls-verify=false", ...auth("src"), ...auth("dest"), from, to],
    { encoding: "utf8", timeout: 10 * 60 * 1000 },
  );
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}

/**
 * What skopeo needs to push to and pull `repository` at `pulp.baseUrl` when the registry's token server is
 * a name clients on this host cannot resolve (pulp-operator's TOKEN_SERVER is a cluster DNS name): when
 * its /v2/ challenges with a bearer realm, a token from /token/ through the same address, asked for as the
 * admin with that host as its service (pulp_container checks the token's audience against the Host a
 * request names, token_verification.py); undefined when it takes the admin's credentials.
 */
export async function registryToken(pulp: Pulp, repository: string): Promise<string | undefined> {
  const challenge = await get(`${pulp.baseUrl}/v2/`);
  if (!/^Bearer /.test(String(challenge.headers["www-authenticate"] ?? ""))) return undefined;
  const host = new URL(pulp.baseUrl).host;
  const query = new URLSearchParams({ service: host, scope: `repository:${repository}:pull,push` });
  const answer = await get(`${pulp.baseUrl}/token/?${query}`, {
    Authorization: basicAuth("admin", pulp.password),
  });
  if (answer.status !== 200) {
    throw new Error(
      `GET /token/ at ${pulp.baseUrl}: ${answer.status} ${answer.body.toString("utf8").slice(0, 300)}`,
    );
  }
  return JSON.parse(answer.body.toString("utf8")).token;
}

/**
 * Pulls `repository:tag` from the registry at `pulp.baseUrl` as a client does, over HTTP, and checks each
 * layer against its digest; returns the layer digests. The registry redirects a blob to CONTENT_ORIGIN,
 * which for pulp-operator's install is a cluster DNS name this host does not resolve: the redirect is
 * followed through `pulp.baseUrl`, with its path and query. `token` as `registryToken` gives it, else the
 * admin's credentials.
 */
export async function pullLayers(
  pulp: Pulp,
  repository: string,
  tag: string,
  token?: string,
): Promise<string[]> {
  const authorization = token ? `Bearer ${token}` : basicAuth("admin", pulp.password);
  const accept =
    "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";
  const manifest = await get(`${pulp.baseUrl}/v2/${repository}/manifests/${tag}`, {
    Authorization: authorization,
    Accept: accept,
  });
  if (manifest.status !== 200) throw new Error(`manifest ${repository}:${tag}: ${manifest.status}`);
  const layers: string[] = JSON.parse(manifest.body.toString("utf8")).layers.map(
    (l: { digest: string }) => l.digest,
  );
  for (const digest of layers) {
    let blob = await get(`${pulp.baseUrl}/v2/${repository}/blobs/${digest}`, {
      Authorization: authorization,
    });
    if ([301, 302, 307].includes(blob.status)) {
      const to = new URL(String(blob.headers.location));
      blob = await get(`${pulp.baseUrl}${to.pathname}${to.search}`);
    }
    if (blob.status !== 200) throw new Error(`blob ${digest} of ${repository}:${tag}: ${blob.status}`);
    const actual = `sha256:${sha256(blob.body)}`;
    if (actual !== digest) throw new Error(`${repository}:${tag}: layer ${digest} pulled as ${actual}`);
  }
  return layers;
}

/**
 * Uploads files of `bytes` random bytes into the file repository `repository` with pulp-cli, one after
 * another, until stopped: Pulp is always in or near an upload task. The first starts after
 * `delaySeconds`. `stop` ends the loop after the upload in flight and resolves with how many completed;
 * it rejects when one failed.
 */
export function uploadContinuously(
  pulp: Pulp,
  repository: string,
  bytes: number,
  delaySeconds = 0,
): { stop: () => Promise<number> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulp-uploads-"));
  const script = `
    i=0
    sleep "$DELAY"
    while [[ ! -e $DIR/stop ]]; do
      head -c "$BYTES" /dev/urandom >"$DIR/file"
      "$PULP" --base-url "$BASE_URL" --username admin --password "$PASSWORD" file content upload \
        --file "$DIR/file" --relative-path "upload-$i.bin" --repository "$REPOSITORY" >/dev/null || exit 1
      i=$((i + 1))
    done
    echo "$i"`;
  const child = spawn("bash", ["-euc", script], {
    env: {
      ...process.env,
      HOME: dir,
      DIR: dir,
      BYTES: String(bytes),
      DELAY: String(delaySeconds),
      PULP: path.join(CLIENTS_BIN, "pulp"),
      BASE_URL: pulp.baseUrl,
      PASSWORD: pulp.password,
      REPOSITORY: repository,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => (stdout += c));
  child.stderr.on("data", (c) => (stderr += c));
  const exited = new Promise<number>((resolve, reject) =>
    child.on("exit", (code) =>
      code === 0
        ? resolve(Number(stdout.trim()))
        : reject(new Error(`uploads stopped with ${code}:\n${stderr}`)),
    ),
  );
  exited.catch(() => undefined); // an early failure is reported by stop(), not as an unhandled rejection
  return {
    stop: () => {
      fs.writeFileSync(path.join(dir, "stop"), "");
      return exited;
    },
  };
}

/**
 * Pulls `image` (`host:port/name:tag`) from Pulp's registry with skopeo into an OCI layout and checks
 * every layer against its digest; returns the manifest's layer digests. Throws when skopeo fails or a
 * layer does not match.
 */
export function pullImage(image: string, pulp: Pulp): string[] {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulled-")), "oci");
  const pulled = skopeoCopy(`docker://${image}`, `oci:${dir}`, pulp);
  if (!pulled.ok) throw new Error(`skopeo copy docker://${image} failed:\n${pulled.output}`);
  const blob = (digest: string) => fs.readFileSync(path.join(dir, "blobs", ...digest.split(":")));
  const index = JSON.parse(fs.readFileSync(path.join(dir, "index.json"), "utf8"));
  const manifest = JSON.parse(blob(index.manifests[0].digest).toString("utf8"));
  return manifest.layers.map(({ digest }: { digest: string }) => {
    const actual = `sha256:${sha256(blob(digest))}`;
    if (actual !== digest) throw new Error(`${image}: layer ${digest} pulled as ${actual}`);
    return digest;
  });
}

/** One GET of Pulp's API as the admin user, parsed; anything but 200 fails with the status and body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Pulp's answers have many shapes
export async function getApiJson(pulp: Pulp, href: string): Promise<any> {
  const answer = await get(`${pulp.baseUrl}${href}`, {
    Authorization: basicAuth(pulp.username ?? "admin", pulp.password),
  });
  if (answer.status !== 200)
    throw new Error(`GET ${href}: ${answer.status} ${answer.body.toString("utf8").slice(0, 300)}`);
  return JSON.parse(answer.body.toString("utf8"));
}

/** One POST of a JSON body as the admin user; the answer, parsed when it is JSON. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Pulp's answers have many shapes
export function postJson(pulp: Pulp, apiPath: string, body: object): Promise<{ status: number; json: any }> {
  const payload = JSON.stringify(body);
  const auth = basicAuth("admin", pulp.password);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${pulp.baseUrl}${apiPath}`,
      {
        method: "POST",
        timeout: 30_000,
        agent: false,
        headers: { Authorization: auth, "Content-Type": "application/json" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown = text;
          try {
            json = JSON.parse(text);
          } catch {
            // not JSON (an error page): kept as text for the assertion that shows it
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`POST ${apiPath}: no answer in 30 s`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/**
 * One file upload as a single request (POST content/file/files/, multipart): Pulp answers 202 once the task
 * that makes the content is dispatched, without waiting for it. Resolves to the task's href; fails when no
 * answer comes in `timeoutSeconds`.
 */
export function dispatchUpload(
  pulp: Pulp,
  relativePath: string,
  data: Buffer,
  timeoutSeconds = 60,
): Promise<string> {
  const boundary = `pulp-${crypto.randomBytes(12).toString("hex")}`;
  const field = (name: string, value: string) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  const body = Buffer.concat([
    field("relative_path", relativePath),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${path.basename(relativePath)}"\r\n` +
        "Content-Type: application/octet-stream\r\n\r\n",
    ),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const auth = basicAuth(pulp.username ?? "admin", pulp.password);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${pulp.baseUrl}/pulp/api/v3/content/file/files/`,
      {
        method: "POST",
        timeout: timeoutSeconds * 1000,
        agent: false,
        headers: {
          Authorization: auth,
          "Content-Type": `multipart/form-data; boundary=${boundary}`,
          "Content-Length": body.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode !== 202)
            return reject(new Error(`upload ${relativePath}: ${res.statusCode} ${text}`));
          resolve(JSON.parse(text).task);
        });
      },
    );
    req.on("timeout", () =>
      req.destroy(new Error(`upload ${relativePath}: no answer in ${timeoutSeconds} s`)),
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Serves `file` from Pulp as a user would with pulp-cli: a file repository `name`, the upload as
 * `relativePath`, a publication, and a distribution at base path `name`.
 */
export function distributeFile(
  pulp: Pulp,
  name: string,
  file: string,
  relativePath: string,
): { repositoryHref: string; contentPath: string } {
  const repository = pulpCli(pulp, ["file", "repository", "create", "--name", name]);
  pulpCli(pulp, [
    "file",
    "content",
    "upload",
    "--file",
    file,
    "--relative-path",
    relativePath,
    "--repository",
    name,
  ]);
  const publication = pulpCli(pulp, ["file", "publication", "create", "--repository", name]);
  pulpCli(pulp, [
    "file",
    "distribution",
    "create",
    "--name",
    name,
    "--base-path",
    name,
    "--publication",
    publication.pulp_href,
  ]);
  return { repositoryHref: repository.pulp_href, contentPath: `/pulp/content/${name}/${relativePath}` };
}
