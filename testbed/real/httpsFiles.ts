// A static HTTPS file server on the test bed, for real Pulp to sync from (remotes behind a private CA).
// It runs in a process of its own: the tests wait on pulp-cli with spawnSync, which would starve a server
// in their own event loop.
import { spawn } from "child_process";
import { Tls } from "../tls/selfSigned";

// GET of a file under the root; the request path never leaves it.
const SERVER = `
const [root, host, port, cert, key] = process.argv.slice(1);
const fs = require("fs"), https = require("https"), path = require("path");
https.createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }, (req, res) => {
  const file = path.join(root, path.normalize(decodeURIComponent(req.url.split("?")[0])).replace(/^(\\.\\.[/\\\\])+/, ""));
  fs.readFile(file, (err, body) => {
    console.error(req.method, req.url, err ? 404 : 200);
    if (err) return res.writeHead(404).end();
    res.writeHead(200, { "Content-Length": body.length }).end(body);
  });
}).listen(Number(port), host, () => console.log("listening"));
`;

export async function serveFilesOverHttps(
  root: string,
  host: string,
  port: number,
  tls: Tls,
): Promise<{ url: string; log: () => string; stop: () => void }> {
  const child = spawn(process.execPath, ["-e", SERVER, root, host, String(port), tls.cert, tls.key], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let log = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (log += d));
  const deadline = Date.now() + 10_000;
  while (!out.includes("listening")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      throw new Error(`the HTTPS file server on ${host}:${port} did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `https://${host}:${port}/`, log: () => log, stop: () => child.kill() };
}
