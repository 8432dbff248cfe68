// npm run git:serve [-- --port <n>] [--repo <dir>]
// Serves a git checkout over https smart-HTTP on loopback, for the Pulumi Kubernetes Operator, which
// accepts only https:// and ssh:// repository URLs naming owner/repo (stacks/projectRepo.ts). `git
// http-backend` runs as CGI behind a small TLS server; the CA and the server certificate (127.0.0.1,
// localhost) are made with openssl on first use in .state/git-tls/. The repository is
// https://127.0.0.1:<port>/local/pulp-pulumi.git (the dev delivery stack's projectRepo at the default port):
// it is the checkout itself, so every commit is visible at once. Give the operator the CA with
// SSL_CERT_FILE=<ca.crt> (Go's TLS), a git client with GIT_SSL_CAINFO=<ca.crt>.
// On stdout, once listening: one JSON line {"url", "port", "ca"}; then one line per request on stderr.
import { spawn } from "child_process";
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import { LOCAL_SERVE_PATH, LOCAL_SERVE_PORT } from "../../stacks/projectRepo";
import { ensureTls, Tls } from "../tls/selfSigned";

const REPO = path.resolve(__dirname, "../..");
const STATE = process.env.PULP_STATE_DIR ?? path.join(REPO, ".state");

/** Serves `repo` (a checkout or a bare repository) at LOCAL_SERVE_PATH over https. */
export function serve(repo: string, tls: Tls, port: number): Promise<https.Server> {
  // git http-backend serves $GIT_PROJECT_ROOT/<path>; the link makes <root>/local/pulp-pulumi.git the checkout.
  const root = path.join(STATE, "git-root");
  const link = path.join(root, LOCAL_SERVE_PATH);
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.rmSync(link, { force: true });
  fs.symlinkSync(path.resolve(repo), link);
  const server = https.createServer(
    { cert: fs.readFileSync(tls.cert), key: fs.readFileSync(tls.key) },
    (req, res) => {
      const url = new URL(req.url ?? "/", "https://127.0.0.1");
      const cgi = spawn("git", ["http-backend"], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          GIT_PROJECT_ROOT: root,
          GIT_HTTP_EXPORT_ALL: "1",
          GIT_CONFIG_COUNT: "1",
          GIT_CONFIG_KEY_0: "safe.directory",
          GIT_CONFIG_VALUE_0: "*",
          REQUEST_METHOD: req.method ?? "GET",
          PATH_INFO: decodeURIComponent(url.pathname),
          QUERY_STRING: url.search.replace(/^\?/, ""),
          CONTENT_TYPE: req.headers["content-type"] ?? "",
          ...(req.headers["content-length"] ? { CONTENT_LENGTH: req.headers["content-length"] } : {}),
          ...(req.headers["content-encoding"]
            ? { HTTP_CONTENT_ENCODING: req.headers["content-encoding"] }
            : {}),
          ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
          REMOTE_ADDR: req.socket.remoteAddress ?? "",
          SERVER_PROTOCOL: "HTTP/1.1",
        },
        stdio: ["pipe", "pipe", "pipe"],
      });
      req.pipe(cgi.stdin);
      let head = Buffer.alloc(0);
      let started = false;
      let status = 200;
      cgi.stdout.on("data", (chunk: Buffer) => {
        if (started) return void res.write(chunk);
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf("\r\n\r\n") >= 0 ? head.indexOf("\r\n\r\n") : head.indexOf("\n\n");
        if (end < 0) return;
        const sep = head[end] === 13 ? 4 : 2;
        for (const line of head.subarray(0, end).toString("latin1").split(/\r?\n/)) {
          const i = line.indexOf(":");
          const name = line.slice(0, i).trim();
          const value = line.slice(i + 1).trim();
          if (/^status$/i.test(name)) status = parseInt(value, 10);
          else res.setHeader(name, value);
        }
        res.writeHead(status);
        started = true;
        res.write(head.subarray(end + sep));
      });
      let stderr = "";
      cgi.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      cgi.on("close", (code) => {
        if (!started) res.writeHead(500).end(stderr);
        else res.end();
        process.stderr.write(
          `${req.method} ${req.url} -> ${started ? status : 500}${code ? ` (exit ${code}: ${stderr.trim()})` : ""}\n`,
        );
      });
    },
  );
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

async function main(argv: string[]) {
  let port = LOCAL_SERVE_PORT;
  let repo = REPO;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--port") port = Number(argv[++i]);
    else if (argv[i] === "--repo") repo = argv[++i];
    else
      throw new Error(`unknown argument ${argv[i]}; usage: npm run git:serve -- [--port <n>] [--repo <dir>]`);
  }
  const tls = ensureTls(path.join(STATE, "git-tls"));
  const server = await serve(repo, tls, port).catch((e: NodeJS.ErrnoException) => {
    throw new Error(
      e.code === "EADDRINUSE"
        ? `port 127.0.0.1:${port} is taken: npm run git:serve -- --port <another>, and set delivery:projectRepo to match`
        : e.message,
    );
  });
  const actual = (server.address() as { port: number }).port;
  const url = `https://127.0.0.1:${actual}${LOCAL_SERVE_PATH}`;
  process.stdout.write(`${JSON.stringify({ url, port: actual, ca: tls.ca })}\n`);
  process.stderr.write(
    `serving ${repo} at ${url}\n  check: GIT_SSL_CAINFO=${tls.ca} git ls-remote ${url}\n  operator: SSL_CERT_FILE=${tls.ca}\n`,
  );
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => server.close(() => process.exit(0)));
}

if (require.main === module)
  main(process.argv.slice(2)).catch((e: Error) => {
    process.stderr.write(`git:serve: ${e.message}\n`);
    process.exit(1);
  });
