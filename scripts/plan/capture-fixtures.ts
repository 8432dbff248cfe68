// npm run plan:fixtures — recreates test/fixtures/preview/ from the real engine on the embedded cluster:
// one install of the dev stack's config, then `pulumi preview --json` for each change a pull request may
// bring (nothing is applied after the install). The plan-summary unit tests read what this writes.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { REPO, runMain } from "../local/environment";
import {
  dropStack,
  freshStack,
  items,
  kubectl,
  mustPulumi,
  pulumi,
  writeStackConfig,
} from "../local/harness";
import { BASE, BASE_SECRETS, CANARIES, CASES, DRIFT_CASE, FIXTURE_NAMESPACE as NS } from "./cases";

const STACK = "fixtures";
const FIXTURES = path.join(REPO, "test/fixtures/preview");

interface Captured {
  name: string;
  why: string;
  exitCode: number;
  seconds: number;
}

/** `pulumi config set --secret` once, then the encrypted value is written back with every config change. */
function secureValues(): Record<string, unknown> {
  for (const [key, value] of Object.entries(CANARIES)) {
    mustPulumi(STACK, ["config", "set", "--secret", `pulp:${key}`, value]);
  }
  const file = yaml.load(fs.readFileSync(path.join(REPO, `Pulumi.${STACK}.yaml`), "utf8")) as {
    config: Record<string, unknown>;
  };
  return Object.fromEntries(Object.keys(CANARIES).map((k) => [k, file.config[`pulp:${k}`]]));
}

/** The stack's generated secret values, as the cluster holds them (base64-decoded). */
function clusterSecretValues(): string[] {
  return items("secrets", NS)
    .filter((s) => s.metadata.labels?.["app.kubernetes.io/managed-by"] === "pulumi")
    .flatMap((s) => Object.values((s.data ?? {}) as Record<string, string>))
    .map((v) => Buffer.from(v, "base64").toString("utf8"))
    .filter((v) => v.length >= 8);
}

function write(name: string, stdout: string): void {
  // Parsed and re-indented: proves the CLI printed JSON, and keeps diffs of re-captures readable.
  fs.writeFileSync(path.join(FIXTURES, `${name}.json`), `${JSON.stringify(JSON.parse(stdout), null, 2)}\n`);
}

async function capture(): Promise<number> {
  const started = Date.now();
  fs.mkdirSync(FIXTURES, { recursive: true });
  freshStack(STACK, BASE);
  const captured: Captured[] = [];
  try {
    const secure = secureValues();
    const pick = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, secure[k]]));
    const base = { ...BASE, ...pick(BASE_SECRETS) };
    writeStackConfig(STACK, base);

    const install = pulumi(STACK, ["preview", "--json"]);
    write("install", install.stdout);
    captured.push({
      name: "install",
      why: "first install",
      exitCode: install.code,
      seconds: install.seconds,
    });
    const up = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    process.stdout.write(`installed in ${up.seconds.toFixed(1)} s\n`);

    for (const c of CASES) {
      writeStackConfig(STACK, { ...base, ...pick(c.secrets ?? []), ...c.changes });
      const run = pulumi(STACK, ["preview", "--json"]);
      write(c.name, run.stdout);
      captured.push({ name: c.name, why: c.why, exitCode: run.code, seconds: run.seconds });
      process.stdout.write(`${c.name}: exit ${run.code}, ${run.seconds.toFixed(1)} s\n`);
    }

    writeStackConfig(STACK, base);
    kubectl(["scale", "deployment", "pulp-api", "-n", NS, `--replicas=${DRIFT_CASE.replicas}`]);
    const drift = pulumi(STACK, ["preview", "--refresh", "--json"]);
    write(DRIFT_CASE.name, drift.stdout);
    captured.push({
      name: DRIFT_CASE.name,
      why: DRIFT_CASE.why,
      exitCode: drift.code,
      seconds: drift.seconds,
    });
    process.stdout.write(`${DRIFT_CASE.name}: exit ${drift.code}, ${drift.seconds.toFixed(1)} s\n`);

    // No fixture may hold a secret: neither the config canaries nor a value the program generated.
    const leaks = [...Object.values(CANARIES), ...clusterSecretValues()];
    for (const file of fs.readdirSync(FIXTURES)) {
      const text = fs.readFileSync(path.join(FIXTURES, file), "utf8");
      const found = leaks.filter((v) => text.includes(v));
      if (found.length > 0)
        throw new Error(`${file} holds ${found.length} secret value(s); not committing it`);
    }
    fs.writeFileSync(path.join(FIXTURES, "cases.json"), `${JSON.stringify(captured, null, 2)}\n`);
    process.stdout.write(
      `captured ${captured.length} previews in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    return 0;
  } finally {
    pulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
    dropStack(STACK, NS);
  }
}

if (require.main === module) runMain(capture);
