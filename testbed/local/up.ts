// npm run up:local — the main job: build what is missing, start the embedded cluster if it is not
// running, `pulumi up` the dev stack on it, print the outputs. A second run changes nothing.
import { execFileSync } from "child_process";
import * as path from "path";
import { REPO, runMain, STACK } from "./environment";
import { main as pulumi } from "./pulumi";

async function up(): Promise<number> {
  const step = (what: string) => process.stdout.write(`\n==> ${what}\n`);
  // What a fresh clone may lack is found in seconds, not after the toolchain's long first build.
  step("prerequisites: the CRDs the embedded cluster installs");
  execFileSync("bash", [path.join(REPO, "testbed/cluster/crds.sh"), "dir"], { stdio: "inherit" });
  step("toolchain (built once, then cached)");
  execFileSync("bash", [path.join(REPO, "testbed/toolchain.sh")], { stdio: "inherit" });
  step("embedded cluster");
  execFileSync("bash", [path.join(REPO, "testbed/cluster/cluster.sh"), "up"], { stdio: "inherit" });
  step(`pulumi up (stack ${STACK})`);
  for (const args of [
    ["stack", "select", "--create", STACK],
    ["up", "--yes", "--non-interactive", "--stack", STACK],
    ["stack", "output", "--json", "--stack", STACK],
  ]) {
    const code = await pulumi(args);
    if (code !== 0) return code;
  }
  return 0;
}

runMain(up);
