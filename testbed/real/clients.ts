// Real clients against a real Pulp on the real node: a `kubectl port-forward` to pulp-web (how a user
// reaches a local cluster from the host), pulp-cli and skopeo from testbed/clients, and plain HTTP.
import { execFileSync, spawnSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as http from "http";
import * as path from "path";
import { kubectlUntil } from "../harness";
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

/** One GET (redirects not followed), with a timeout. */
export function get(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<HttpResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, timeout: timeoutMs }, (res) => {
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
  password: string;
}

/** pulp-cli as a user runs it; throws with its output on a non-zero exit. Returns parsed JSON when it prints JSON. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- pulp-cli prints many shapes of JSON
export function pulpCli(pulp: Pulp, args: string[]): any {
  const r = spawnSync(
    path.join(CLIENTS_BIN, "pulp"),
    [
      "--base-url",
      pulp.baseUrl,
      "--username",
      "admin",
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
  if (r.status !== 0) throw new Error(`pulp ${args.join(" ")} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  const out = r.stdout.trim();
  try {
    return out ? JSON.parse(out) : undefined;
  } catch {
    return out;
  }
}

/** skopeo copy between two references; credentials for the Pulp registry side. */
export function skopeoCopy(from: string, to: string, pulp: Pulp): { ok: boolean; output: string } {
  const r = spawnSync(
    "skopeo",
    [
      "copy",
      "--src-tls-verify=false",
      "--dest-tls-verify=false",
      "--src-creds",
      `admin:${pulp.password}`,
      "--dest-creds",
      `admin:${pulp.password}`,
      from,
      to,
    ],
    { encoding: "utf8", timeout: 10 * 60 * 1000 },
  );
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
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
