// An HTTP proxy for the real-Pulp tests: proxy.py (testbed/proxy) on the real node's bridge address, where
// pods reach the host, logging every request it forwards. Started and stopped by the test that needs it.
// (tinyproxy 1.11, tried first, held a HEAD request's connection open and then refused the next one.)
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { NODE_ADDRESS as HOST, REPO } from "../local/environment";
import { freePort, listening } from "./hostServer";

export interface HttpProxy {
  /** http://<bridge address>:<port> */
  url: string;
  /** The host:port of every request it has forwarded so far, in order. */
  forwarded(): string[];
  stop(): void;
}

export async function startProxy(): Promise<HttpProxy> {
  const bin = execFileSync("bash", [path.join(REPO, "testbed/proxy/install.sh")], {
    encoding: "utf8",
  }).trim();
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-proxy-")), "access.log");
  const port = await freePort();
  const child = spawn(
    path.join(bin, "proxy"),
    [
      "--hostname",
      HOST,
      "--port",
      String(port),
      "--num-workers",
      "2",
      "--log-level",
      "INFO",
      "--log-file",
      log,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (c) => (output = (output + c).slice(-4000)));
  child.stderr!.on("data", (c) => (output = (output + c).slice(-4000)));
  await listening("proxy.py", port, child, () => output);
  return {
    url: `http://${HOST}:${port}`,
    forwarded: () => {
      const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
      // Access lines: "<client>:<port> - GET <host>:<port>/<path> - 200 OK - ...", "- CONNECT <host>:443 -",
      // and "<host>:<port>None" for a request with no path.
      return [...text.matchAll(/ - [A-Z]+ (?:https?:\/\/)?([\w.:[\]-]+?)(?:None|\/\S*)? - /g)].map(
        (m) => m[1],
      );
    },
    stop: () => void child.kill(),
  };
}
