// npm run up:local — the main job: build what is missing (toolchain, images), start the embedded cluster
// with its real node if it is not running, `pulumi up` the dev stack on it, and leave Pulp answering on
// http://127.0.0.1:8080 (a port-forward to pulp-web, stopped by down:local). A second run changes nothing.
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as path from "path";
import { KUBECONFIG, REPO, runMain, STACK, STATE, toolchainBin } from "./environment";
import { main as pulumi } from "./pulumi";
import { ensureCnpgOperator } from "../real/cnpg";
import { importImages } from "../real/stack";

const PORT = Number(process.env.PULP_LOCAL_PORT ?? 8080);
const NAMESPACE = "pulp-dev";

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: "inherit", cwd: REPO });

function statusCode(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
  });
}

/** A port-forward to pulp-web that outlives this command; the cluster's `down` stops it with the cluster. */
async function forwardWeb(): Promise<void> {
  const url = `http://127.0.0.1:${PORT}/pulp/api/v3/status/`;
  if ((await statusCode(url)) === 200) return;
  const log = fs.openSync(path.join(STATE, "cluster", "port-forward.log"), "a");
  const child = spawn(
    path.join(toolchainBin(), "kubectl"),
    [
      "--kubeconfig",
      KUBECONFIG,
      "-n",
      NAMESPACE,
      "port-forward",
      "service/pulp-web",
      `${PORT}:8080`,
      "--address",
      "127.0.0.1",
    ],
    { detached: true, stdio: ["ignore", log, log] },
  );
  child.unref();
  for (let i = 0; i < 60; i++) {
    if ((await statusCode(url)) === 200) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`Pulp does not answer on ${url}; see ${path.join(STATE, "cluster", "port-forward.log")}`);
}

async function up(): Promise<number> {
  const step = (what: string) => process.stdout.write(`\n==> ${what}\n`);
  // What a fresh clone may lack is found in seconds, not after the toolchain's long first build.
  step("prerequisites: the CRDs the embedded cluster installs");
  execFileSync("bash", [path.join(REPO, "testbed/cluster/crds.sh"), "ensure"], { stdio: "inherit" });
  step("toolchain (built once, then cached)");
  run("bash", [path.join(REPO, "testbed/toolchain.sh")]);
  step("images: Pulp, pulp-web, Redis, PostgreSQL from Debian and PyPI (built once, then cached)");
  run("python3", [path.join(REPO, "testbed/images/build.py"), "build"]);
  step("embedded cluster with its real node");
  run("bash", [path.join(REPO, "testbed/cluster/cluster.sh"), "up"]);
  importImages();
  step("the CloudNativePG operator (built once from its Go module, then cached)");
  ensureCnpgOperator();
  step(`pulumi up (stack ${STACK})`);
  for (const args of [
    ["stack", "select", "--create", STACK],
    ["up", "--yes", "--non-interactive", "--stack", STACK],
    ["stack", "output", "--json", "--stack", STACK],
  ]) {
    const code = await pulumi(args);
    if (code !== 0) return code;
  }
  step(`Pulp on http://127.0.0.1:${PORT}`);
  await forwardWeb();
  process.stdout.write(
    `Pulp answers on http://127.0.0.1:${PORT}/pulp/api/v3/status/ (port-forward to ${NAMESPACE}/pulp-web).\n` +
      `Admin password: kubectl -n ${NAMESPACE} get secret pulp-admin-password -o jsonpath='{.data.password}' | base64 -d\n`,
  );
  return 0;
}

runMain(up);
