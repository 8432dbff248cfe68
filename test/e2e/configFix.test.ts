// E2E with the real pulumi CLI and engine (the toolchain's binary, a local file backend in a temp dir; no
// cluster): every printed fix, pasted exactly as printed into a shell, makes the next `pulumi preview` pass
// or reach a different problem, never the same key again. The broken values are written by the CLI itself
// (`pulumi config set --path`, `--secret`), and the program that previews is the project's own config
// loading (components/config/load.ts: loadConfig), served in this process by the Node.js SDK's language
// runtime (as testbed/local/pulumi.ts does: the Go proxy here has no pulumi-language-nodejs). So the config
// reaches it exactly as the engine hands it over: decrypted, with the keys it marks secret, after the
// CLI's own checks of Pulumi.yaml's declared types and required keys. The one difference from index.ts: the
// ConfigError's message goes to the engine as an error diagnostic instead of a throw (a program's throw is
// an unhandled rejection in the SDK, which Jest would take for this test's own failure); the preview
// fails and prints it either way.
import * as pulumi from "@pulumi/pulumi";
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadConfig } from "../../components/config/load";
import { ConfigError, ConfigProblem } from "../../components/config/problems";
import { REPO, toolchainBin } from "../../testbed/local/environment";
import { serveProgram } from "../../testbed/local/pulumi";

jest.setTimeout(10 * 60 * 1000);

let dir: string;
let env: NodeJS.ProcessEnv;
let language: { address: string; stop: () => void };

/** What the program saw in the last preview: its problems ([] when the config loaded), the secret keys. */
let seen: { problems: ConfigProblem[]; secretKeys: string[] } | undefined;

/** Values a person would type at the CLI's prompt for a secret (the fixes of secrets ask for the value). */
const TYPED: Record<string, string> = {
  "pulp:adminPassword": "pasted-admin-password-7Qx",
  "pulp:databasePassword": "pasted-database-password-3Kd",
  "pulp:secretKey": "pasted-django-secret-key-abcdefghijklmnopqrstuvwxyz-0123456789",
  "pulp:restore.http.url": "https://s3.example.com/b/pulp.tar?X-Amz-Credential=AK&X-Amz-Signature=0f1e2d",
  "pulp:dataVolumes[0].url": "https://s3.example.com/b/seed.tar?X-Amz-Credential=AK&X-Amz-Signature=0f1e2d",
};

/** Runs a command line in a shell, as a person pasting it would; `--secret` prompts read `typed`. */
const sh = (line: string, typed = "") => {
  const run = spawnSync("bash", ["-c", line], { cwd: dir, env, encoding: "utf8", input: typed });
  if (run.status !== 0) throw new Error(`${line}\n${run.stdout}${run.stderr}`);
};

/** Pastes a fix; a `--secret` set without a value asks for it, and gets what a person would type. */
function paste(fix: string) {
  const asks = /^pulumi config set --secret (?:--path )?'?([^' ]+)'?$/.exec(fix);
  sh(fix, asks ? TYPED[asks[1]] : "");
}

async function startLanguageServer(): Promise<{ address: string; stop: () => void }> {
  const program = async () => {
    const runtime = pulumi.runtime as unknown as { isConfigSecret: (k: string) => boolean };
    const secretKeys = Object.keys(pulumi.runtime.allConfig()).filter((k) => runtime.isConfigSecret(k));
    try {
      loadConfig();
      seen = { problems: [], secretKeys };
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      seen = { problems: e.problems, secretKeys };
      pulumi.log.error(e.message);
    }
    return {};
  };
  return serveProgram(program);
}

/** A real `pulumi preview` of the stack (async: the program runs in this process's event loop). */
async function preview(): Promise<{
  code: number;
  output: string;
  problems: ConfigProblem[];
  secretKeys: string[];
}> {
  seen = undefined;
  const child = spawn(
    path.join(toolchainBin(), "pulumi"),
    ["preview", "--non-interactive", `--client=${language.address}`, "--exec-kind", "auto.inline"],
    { cwd: dir, env },
  );
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const code = await new Promise<number>((resolve) => child.on("exit", (c) => resolve(c ?? 1)));
  // Set by the program, which ran meanwhile (TypeScript cannot see that).
  const saw = seen as { problems: ConfigProblem[]; secretKeys: string[] } | undefined;
  if (code !== 0 && !saw) throw new Error(`the preview failed before the program ran:\n${output}`);
  return { code, output, problems: saw?.problems ?? [], secretKeys: saw?.secretKeys ?? [] };
}

/**
 * Previews, pastes every printed fix (or the alternative `choose` picks), and again, until the preview
 * passes. Fails when a key comes back after its fix (a loop, or a fix that removed what a feature needs),
 * or when the preview does not pass within `rounds`. Returns the problems of each round.
 */
async function fixUntilPreviewPasses(choose?: (p: ConfigProblem) => string): Promise<ConfigProblem[][]> {
  const rounds: ConfigProblem[][] = [];
  const fixed = new Map<string, string>();
  for (let round = 0; round < 5; round++) {
    const { code, output, problems } = await preview();
    if (code === 0) return rounds;
    expect({ output: problems.length > 0 ? "" : output }).toEqual({ output: "" });
    for (const p of problems) {
      expect({ key: p.key, came_back_after: fixed.get(p.key) }).toEqual({
        key: p.key,
        came_back_after: undefined,
      });
    }
    rounds.push(problems);
    for (const p of problems) {
      const fix = choose?.(p) ?? p.fix;
      fixed.set(p.key, `${fix} (it was: ${p.message})`);
      paste(fix);
    }
  }
  throw new Error(`the preview still fails after 5 rounds of fixes: ${JSON.stringify(rounds)}`);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulp-config-fix-"));
  fs.copyFileSync(path.join(REPO, "Pulumi.yaml"), path.join(dir, "Pulumi.yaml"));
  // The CLI checks that Pulumi.yaml's `main` exists; the program itself is served in process (below).
  fs.writeFileSync(path.join(dir, "index.ts"), "// served by serveProgram\n");
  fs.mkdirSync(path.join(dir, "backend"));
  env = {
    ...process.env,
    PATH: `${toolchainBin()}:${process.env.PATH}`,
    PULUMI_HOME: path.join(dir, "home"),
    PULUMI_BACKEND_URL: `file://${path.join(dir, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "config-fix",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  };
  language = await startLanguageServer();
  sh("pulumi stack init fix");
  sh("pulumi config set pulp:contentOrigin https://pulp.example.com");
  sh("pulumi config set --path 'pulp:database.cloudnativepg.instances' 1");
  base = fs.readFileSync(stackFile(), "utf8");
});

let base: string;
const stackFile = () => path.join(dir, "Pulumi.fix.yaml");
// Each test starts from the valid stack (the file holds the stack's encryption salt too).
beforeEach(() => fs.writeFileSync(stackFile(), base));

afterAll(() => {
  language?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Each case breaks the valid stack with CLI commands, by key type; its fixes must bring it back. */
const CASES: [string, string[]][] = [
  // boolean: the fix sets redis.enabled to a boolean (it stored the string "true", and the problem came back)
  ["a boolean a feature needs", ["pulumi config set pulp:cacheEnabled true"]],
  ["a boolean of the wrong type", ["pulumi config set --path 'pulp:web.enabled' yes"]],
  // number
  ["a number", ["pulumi config set --path 'pulp:api.podDisruptionBudget.minAvailable' 2"]],
  [
    "a number below the preStop delay",
    ["pulumi config set --path 'pulp:api.terminationGracePeriodSeconds' 5"],
  ],
  ["a nested key", ["pulumi config set --path 'pulp:api.replicas' two"]],
  ["a misspelt nested key", ["pulumi config set --path 'pulp:worker.replica' 3"]],
  // string, one that looks like a number (moved by the fix with --type string)
  ["a misspelt string key", ["pulumi config set --path 'pulp:web.clientMaxBodySiz' --type string 0"]],
  [
    "a string naming an old PostgreSQL",
    [
      "pulumi config set --path 'pulp:database.cloudnativepg.imageName' ghcr.io/cloudnative-pg/postgresql:13.14",
    ],
  ],
  // enum
  ["an enum", ["pulumi config set --path 'pulp:storage.pvc.accessMode' RWX"]],
  ["a top-level enum a feature needs", ["pulumi config set pulp:workerType redis"]],
  ["a toleration's enum", ["pulumi config set --path 'pulp:scheduling.tolerations[0].operator' Matches"]],
  // object
  ["an object given a scalar", ["pulumi config set --path 'pulp:database.cloudnativepg' true"]],
  ["a settings object given a scalar", ["pulumi config set --path 'pulp:api.resources' big"]],
  [
    "an enabled feature's key",
    [
      "pulumi config set --path 'pulp:ingress.enabled' true",
      "pulumi config set --path 'pulp:ingress.host' Bad_Host",
    ],
  ],
  // array item
  [
    "an array item",
    [
      "pulumi config set --path 'pulp:dataVolumes[0].name' Bad_Name",
      "pulumi config set --path 'pulp:dataVolumes[0].url' https://example.com/seed.tar",
      "pulumi config set --path 'pulp:dataVolumes[0].size' 0",
    ],
  ],
  // keys with dots
  ["a key with dots", [`pulumi config set --path 'pulp:extraSettings["A.B"]' true`]],
  [
    "a label key with dots and a bad value",
    [`pulumi config set --path 'pulp:scheduling.nodeSelector["kubernetes.io/os"]' 'not valid!'`],
  ],
  // secrets
  ["a weak admin password", ["printf 1234 | pulumi config set --secret pulp:adminPassword"]],
];

test.each(CASES)(
  "%s: every printed fix, pasted, makes the next preview pass or reach another key",
  async (_, breakIt) => {
    expect((await preview()).code).toBe(0);
    for (const line of breakIt) sh(line);
    const rounds = await fixUntilPreviewPasses();
    expect(rounds.length).toBeGreaterThan(0);
  },
);

test("a missing database names both choices, and either command, pasted, leads to a passing preview", async () => {
  for (const choice of ["cloudnativepg", "external"]) {
    sh("pulumi config rm pulp:database");
    const first = await preview();
    expect(first.problems.map((p) => [p.key, p.fix, p.alternatives])).toEqual([
      [
        "pulp:database",
        "pulumi config set --path 'pulp:database.cloudnativepg.instances' 3",
        ["pulumi config set --path 'pulp:database.external.host' db.example.com"],
      ],
    ]);
    expect(first.output).toContain("pulp:database.cloudnativepg");
    expect(first.output).toContain("pulp:database.external");
    const rounds = await fixUntilPreviewPasses((p) =>
      p.key === "pulp:database" && choice === "external" ? p.alternatives![0] : p.fix,
    );
    // The external database then asks for its password (a prompt the paste answers), a different key.
    expect(rounds.map((r) => r.map((p) => p.key))).toEqual(
      choice === "external" ? [["pulp:database"], ["pulp:database.external"]] : [["pulp:database"]],
    );
  }
});

test("a backup's URL in plain config is refused without being shown; pasted as printed, the fix makes it secret", async () => {
  const url = TYPED["pulp:restore.http.url"];
  sh("pulumi config set --path 'pulp:restore.backup' 20261124T031500Z");
  sh("pulumi config set --path 'pulp:restore.http.size' 1Gi");
  sh("pulumi config set --path 'pulp:backup.image' ghcr.io/cloudnative-pg/postgresql:17");
  sh(`pulumi config set --path 'pulp:restore.http.url' '${url}'`);
  const plain = await preview();
  expect(plain.problems.map((p) => [p.key, p.fix])).toEqual([
    ["pulp:restore.http.url", "pulumi config set --secret --path 'pulp:restore.http.url'"],
  ]);
  expect(plain.output).toContain("(a secret value, not shown)");
  expect(plain.output).not.toContain("X-Amz-Signature");
  expect(plain.secretKeys).toEqual([]);
  await fixUntilPreviewPasses();
  // Set with --secret --path, the engine hands the program the whole pulp:restore as a secret key.
  expect(seen!.secretKeys).toEqual(["pulp:restore"]);
  const stored = fs.readFileSync(stackFile(), "utf8");
  expect(stored).not.toContain("X-Amz-Signature");
  expect(stored).toMatch(/url:\s*\n\s*secure: /);
});

test("a data volume URL with a signature in plain config is refused; a public one is not", async () => {
  sh("pulumi config set --path 'pulp:dataVolumes[0].name' seed");
  sh("pulumi config set --path 'pulp:dataVolumes[0].size' 1Gi");
  sh("pulumi config set --path 'pulp:dataVolumes[0].url' https://mirror.example.com/seed.tar");
  expect((await preview()).code).toBe(0);
  sh(`pulumi config set --path 'pulp:dataVolumes[0].url' '${TYPED["pulp:dataVolumes[0].url"]}'`);
  const plain = await preview();
  expect(plain.problems.map((p) => [p.key, p.fix])).toEqual([
    ["pulp:dataVolumes[0].url", "pulumi config set --secret --path 'pulp:dataVolumes[0].url'"],
  ]);
  expect(plain.output).not.toContain("X-Amz-Signature");
  await fixUntilPreviewPasses();
});
