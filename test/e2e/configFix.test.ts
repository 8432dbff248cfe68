// E2E with the real pulumi CLI (the toolchain's binary, a local file backend in a temp dir; no cluster):
// config errors' fix commands, pasted exactly as printed into a shell, fix the problem. The broken values
// are written by the CLI itself (`pulumi config set --path`), and the config is read back as the engine
// hands it to the program (`pulumi config --json` values, decoded as components/config/load.ts does).
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { decode } from "../../components/config/load";
import { parseConfig } from "../../components/config/parse";
import { ConfigError, ConfigProblem } from "../../components/config/problems";
import { REPO, toolchainBin } from "../../testbed/local/environment";

jest.setTimeout(5 * 60 * 1000);

let dir: string;
let env: NodeJS.ProcessEnv;

/** Runs a command line in a shell, as a person pasting it would. */
const sh = (line: string) => {
  const run = spawnSync("bash", ["-c", line], { cwd: dir, env, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`${line}\n${run.stdout}${run.stderr}`);
};

/** The problems of the stack's config as the program would see it. */
function problems(): ConfigProblem[] {
  const json = JSON.parse(
    execFileSync("pulumi", ["config", "--json"], { cwd: dir, env, encoding: "utf8" }),
  ) as Record<string, { value: string }>;
  const raw = Object.fromEntries(
    Object.entries(json)
      .filter(([k]) => k.startsWith("pulp:"))
      .map(([k, v]) => [k.slice("pulp:".length), decode(v.value)]),
  );
  try {
    parseConfig(raw);
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems;
  }
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulp-config-fix-"));
  fs.copyFileSync(path.join(REPO, "Pulumi.yaml"), path.join(dir, "Pulumi.yaml"));
  fs.mkdirSync(path.join(dir, "backend"));
  env = {
    ...process.env,
    PATH: `${toolchainBin()}:${process.env.PATH}`,
    PULUMI_HOME: path.join(dir, "home"),
    PULUMI_BACKEND_URL: `file://${path.join(dir, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "config-fix",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
  };
  sh("pulumi stack init fix");
  sh("pulumi config set pulp:contentOrigin https://pulp.example.com");
  sh("pulumi config set --path 'pulp:database.cloudnativepg.instances' 1");
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const CASES: [string, string[]][] = [
  ["a nested key", ["pulumi config set --path 'pulp:api.replicas' two"]],
  ["a misspelt nested key", ["pulumi config set --path 'pulp:worker.replica' 3"]],
  [
    "an array item",
    [
      "pulumi config set --path 'pulp:dataVolumes[0].name' Bad_Name",
      "pulumi config set --path 'pulp:dataVolumes[0].url' https://example.com/seed.tar",
      "pulumi config set --path 'pulp:dataVolumes[0].size' 0",
    ],
  ],
  ["a key with dots", [`pulumi config set --path 'pulp:extraSettings["A.B"]' true`]],
  [
    "a label key with dots and a bad value",
    [`pulumi config set --path 'pulp:scheduling.nodeSelector["kubernetes.io/os"]' 'not valid!'`],
  ],
  ["a toleration's enum", ["pulumi config set --path 'pulp:scheduling.tolerations[0].operator' Matches"]],
];

test.each(CASES)("%s: every printed fix, pasted into a shell, fixes its problem", (_, breakIt) => {
  expect(problems()).toEqual([]);
  for (const line of breakIt) sh(line);
  const found = problems();
  expect(found.length).toBeGreaterThan(0);
  for (const problem of found) sh(problem.fix);
  expect(
    problems().map((p) => `${p.key}: ${p.message} (after: ${found.map((f) => f.fix).join("; ")})`),
  ).toEqual([]);
});
