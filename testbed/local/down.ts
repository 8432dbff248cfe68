// npm run down:local — destroys the dev stack (what holds data is protected and kept: the command says
// which), forgets the stack and stops the embedded cluster, which takes everything with it.
import { execFileSync } from "child_process";
import * as path from "path";
import { REPO, runMain, STACK } from "./environment";
import { main as pulumi } from "./pulumi";

async function down(): Promise<number> {
  const running = (() => {
    try {
      execFileSync("bash", [path.join(REPO, "testbed/cluster/cluster.sh"), "status"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();
  if (running) {
    await pulumi([
      "destroy",
      "--yes",
      "--skip-preview",
      "--exclude-protected",
      "--non-interactive",
      "--stack",
      STACK,
    ]);
  }
  // --preserve-config: Pulumi.dev.yaml is part of the repository.
  await pulumi([
    "stack",
    "rm",
    "--force",
    "--yes",
    "--preserve-config",
    "--non-interactive",
    "--stack",
    STACK,
  ]);
  execFileSync("bash", [path.join(REPO, "testbed/cluster/cluster.sh"), "down"], { stdio: "inherit" });
  return 0;
}

runMain(down);
