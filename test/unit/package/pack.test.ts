// unit: the npm package as users install it. `npm pack` (its prepack builds dist/ afresh), the tarball's
// contents, then an install of that tarball into a new project outside the repository, where the package
// must work with node alone: require() exposes Pulp, Pulp builds a whole install under mocks (reading its
// scripts from dist/), each executable prints its usage, the dynamic providers serialize into code whose
// require()s resolve in the user's project, and a TypeScript consumer type-checks against the .d.ts.
//
// Takes about a minute (a build, an npm install), so it is its own jest project: npm run test:package.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { installPackage } from "../../../testbed/package/install";

const REPO = path.resolve(__dirname, "../../..");
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));

let work: string;
let files: string[];
let project: string;

/** Runs `args` with node in the consumer project: exit code and both outputs (a failure is a value). */
function node(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, args, { cwd: project, encoding: "utf8", maxBuffer: 64 << 20 });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "pulp-pack-"));
  ({ files, project } = installPackage(work, "consumer"));
}, 240_000);

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test("the tarball holds the entry, its types, the executables, the scripts, the license and the docs, and nothing else", () => {
  const entry = pkg.exports["."];
  expect(files).toEqual(
    expect.arrayContaining([
      pkg.main,
      pkg.types,
      entry.default.slice(2),
      entry.types.slice(2),
      ...Object.values(pkg.bin as Record<string, string>),
      "LICENSE",
      "CHANGELOG.md",
      "README.md",
      "package.json",
      // The README links into docs/: the installed package keeps them working.
      "docs/install.md",
      "docs/configuration.md",
    ]),
  );
  // Every script a component or tool reads from beside itself, next to its compiled module.
  const scripts = ["components", "tools"].flatMap((dir) =>
    fs
      .readdirSync(path.join(REPO, dir), { recursive: true, encoding: "utf8" })
      .filter((f) => /\.(sh|py)$/.test(f) && !f.includes("__pycache__"))
      .map((f) => `dist/${dir}/${f}`),
  );
  expect(scripts.length).toBeGreaterThanOrEqual(6);
  expect(files).toEqual(expect.arrayContaining(scripts));
  const outside = files.filter(
    (f) =>
      !f.startsWith("dist/") &&
      !f.startsWith("docs/") &&
      !["LICENSE", "CHANGELOG.md", "README.md", "package.json"].includes(f),
  );
  expect(outside).toEqual([]);
  expect(files.filter((f) => /(^|\/)(test|testbed|\.state|node_modules)\//.test(f))).toEqual([]);
  // Not the repository's stack programs, nor TypeScript sources (declarations only).
  expect(files).not.toContain("dist/index.js");
  expect(files).not.toContain("dist/stacks/index.js");
  expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
  expect(fs.readFileSync(path.join(REPO, "LICENSE"), "utf8")).toMatch(/^\s*Apache License\s+Version 2\.0/);
});

test("require('pulp-pulumi') exposes Pulp, and Pulp builds a whole install under mocks", () => {
  fs.writeFileSync(
    path.join(project, "mocked.js"),
    `
const pulumi = require("@pulumi/pulumi");
const types = [];
pulumi.runtime.setMocks(
  {
    newResource(args) {
      types.push(args.type);
      const state = { ...args.inputs };
      if (args.type.startsWith("kubernetes:")) {
        state.metadata = { name: args.name + "-x", ...(args.inputs.metadata || {}) };
      }
      if (args.type.includes("GeneratedSecret")) state.value = "v", state.publicKey = "k";
      return { id: args.name + "-id", state };
    },
    call: (args) => args.inputs,
  },
  "consumer", "test", false, "organization",
);
const lib = require("pulp-pulumi");
const config = lib.parseConfig({ contentOrigin: "https://pulp.example.com", database: { cloudnativepg: {} } });
const pulp = new lib.Pulp("p", { config, secrets: {}, deployed: lib.FIRST_INSTALL, cluster: { inCluster: true } });
// Registrations settle asynchronously (the dynamic providers' serialization takes a second or two):
// done once the Deployments are in and nothing new came for a second, or after 30 s (the test then
// names what is missing).
const started = Date.now();
let seen = -1;
let quietSince = Date.now();
const timer = setInterval(() => {
  if (types.length !== seen) [seen, quietSince] = [types.length, Date.now()];
  const settled = types.includes("kubernetes:apps/v1:Deployment") && Date.now() - quietSince > 1000;
  if (!settled && Date.now() - started < 30000) return;
  clearInterval(timer);
  console.log(JSON.stringify({ exports: Object.keys(lib), pulp: typeof lib.Pulp, types }));
}, 250);
`,
  );
  const res = node(["mocked.js"]);
  // stderr has the program's warnings (the image pinned by tag only).
  expect({ status: res.status, stderr: res.status === 0 ? "" : res.stderr }).toEqual({
    status: 0,
    stderr: "",
  });
  // Its last line; the SDK logs to stdout under mocks before it.
  const out = JSON.parse(res.stdout.trim().split("\n").pop()!);
  expect(out.pulp).toBe("function");
  expect(out.exports).toEqual(
    expect.arrayContaining([
      "Pulp",
      "Backup",
      "RestoreJob",
      "RestoreCheck",
      "parseConfig",
      "loadConfig",
      "StackDeployment",
    ]),
  );
  expect(out.types).toEqual(
    expect.arrayContaining([
      "pulp:index:Pulp",
      "kubernetes:batch/v1:Job",
      "kubernetes:apps/v1:Deployment",
      "kubernetes:core/v1:Service",
      // The generated keys' Stashes: these generic mocks give them their inputs back, no `output`.
      "pulumi:index:Stash",
    ]),
  );
});

test.each(Object.entries(pkg.bin as Record<string, string>))(
  "%s --help prints its usage and exits 0 with node alone",
  (bin, file) => {
    expect(fs.readFileSync(path.join(project, "node_modules", pkg.name, file), "utf8")).toMatch(
      /^#!\/usr\/bin\/env node\n/,
    );
    // Through the link npm made, as a user's shell (or npx) runs it: no ts-node, no checkout.
    const res = node([path.join(project, "node_modules", ".bin", bin), "--help"]);
    expect(res.stderr).toBe("");
    expect(res.stdout).toMatch(/^usage: /);
    expect(res.status).toBe(0);
  },
);

test("the dynamic providers serialize into code whose require()s resolve in the user's project", () => {
  // The engine runs a dynamic provider from its serialized text; a module it captures from node_modules
  // becomes require("pulp-pulumi/dist/...") there, which package.json's exports must allow.
  fs.writeFileSync(
    path.join(project, "serialize.js"),
    `
const pulumi = require("@pulumi/pulumi");
const dist = require.resolve("pulp-pulumi").replace(/components[\\\\/]index\\.js$/, "");
const providers = {
  "secrets/generatedSecret": "generatedSecretProvider",
  "migration/jobGuard": "jobGuardProvider",
  "upgrade/stopTheWorld": "stopTheWorldProvider",
  "cdi/importWatch": "importWatchProvider",
};
(async () => {
  const out = {};
  for (const [mod, name] of Object.entries(providers)) {
    const provider = require(dist + "components/" + mod)[name];
    const { text } = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
    const requires = [...new Set([...text.matchAll(/require\\(["']([^"']+)["']\\)/g)].map((m) => m[1]))];
    out[mod] = requires.map((r) => { try { require.resolve(r); return r; } catch (e) { return r + ": " + e.message; } });
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e.message); process.exit(1); });
`,
  );
  const res = node(["serialize.js"]);
  expect(res.stderr).toBe("");
  const out = JSON.parse(res.stdout.trim().split("\n").pop()!) as Record<string, string[]>;
  expect(Object.keys(out)).toHaveLength(4);
  for (const requires of Object.values(out)) {
    for (const r of requires)
      expect(r).toMatch(/^(crypto|fs|os|path|https?|child_process|pulp-pulumi\/dist\/[\w/]+\.js)$/);
  }
  // Pinned: the serialized providers in users' stack state require this path, and the engine deletes a
  // resource with the provider in its state; moving the module breaks deleting those made before the move.
  expect(Object.values(out).flat()).toContain("pulp-pulumi/dist/components/upgrade/kubeApi.js");
});

test("a TypeScript consumer type-checks against the package's declarations", () => {
  fs.writeFileSync(
    path.join(project, "index.ts"),
    `
import * as pulumi from "@pulumi/pulumi";
import { Backup, BackupArgs, Deployed, FIRST_INSTALL, parseConfig, parseDeliveryConfig, Pulp, PulpArgs, providerCluster, RestoreArgs, StackDeployment } from "pulp-pulumi";

const deployed: Deployed = FIRST_INSTALL;
const args: PulpArgs = {
  config: parseConfig({ contentOrigin: "https://pulp.example.com", database: { cloudnativepg: {} } }),
  secrets: { adminPassword: pulumi.secret("s3cret") },
  deployed,
  cluster: providerCluster(),
};
export const pulp = new Pulp("p", args, { protect: false });
export const namespace: pulumi.Output<string> = pulp.namespace;
export const apiUrl: string = pulp.apiUrl;
export type Parts = [BackupArgs, RestoreArgs, Backup];
export const delivery = new StackDeployment("d", {
  config: parseDeliveryConfig({
    pulumiStack: "organization/pulp/prod",
    projectRepo: "https://git.example.com/infra/pulp-program.git",
    branch: "main",
    backend: { secretName: "pulp-state", key: "url" },
    secretsProvider: { passphrase: { secretName: "pulp-state", key: "passphrase" } },
  }),
});
export const stackNames: string[] = delivery.stackNames;

// The declarations are real types, not any: each of these must be an error.
// @ts-expect-error deployed is required
export const missing = new Pulp("q", { config: args.config, secrets: {}, cluster: providerCluster() });
// @ts-expect-error a secret name Pulp does not know
export const unknownSecret: PulpArgs["secrets"] = { notASecret: pulumi.secret("x") };
// @ts-expect-error apiUrl is a string
export const wrong: number = pulp.apiUrl;
`,
  );
  // A Pulumi TypeScript project's usual settings, with node resolution as npm laid the package out.
  fs.writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: "ES2020",
        module: "commonjs",
        moduleResolution: "node",
        skipLibCheck: true,
        noEmit: true,
        typeRoots: [path.join(REPO, "node_modules", "@types")],
        types: ["node"],
      },
      files: ["index.ts"],
    }),
  );
  const res = node([require.resolve("typescript/bin/tsc"), "-p", "."]);
  expect(res.stdout + res.stderr).toBe("");
  expect(res.status).toBe(0);
});

test("examples/two-instances type-checks against the installed package, as its README has users copy it", () => {
  const dir = path.join(project, "two-instances");
  fs.mkdirSync(dir, { recursive: true });
  for (const file of ["index.ts", "tsconfig.json"]) {
    fs.copyFileSync(path.join(REPO, "examples/two-instances", file), path.join(dir, file));
  }
  // The consumer project's node_modules (one level up) hold the package and its peers.
  const res = spawnSync(
    process.execPath,
    [
      require.resolve("typescript/bin/tsc"),
      "-p",
      ".",
      "--noEmit",
      "--typeRoots",
      path.join(REPO, "node_modules", "@types"),
      "--types",
      "node",
    ],
    {
      cwd: dir,
      encoding: "utf8",
    },
  );
  expect(res.stdout + res.stderr).toBe("");
  expect(res.status).toBe(0);
});
