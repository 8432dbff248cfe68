// The npm package as a user installs it: `npm pack` (its prepack builds dist/ afresh) into `work`, then a
// new project there with the tarball and the peers at the versions the repository pins (npm refuses them,
// ERESOLVE, if the package's peer ranges do not allow them), from the npm cache when it has them. Used by
// the package test (test/unit/package) and the real-node package test (test/e2e/real/packageUpgrade).
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

const REPO = path.resolve(__dirname, "..", "..");

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 });

export interface InstalledPackage {
  /** The tarball npm pack wrote, and the files in it. */
  tarball: string;
  files: string[];
  /** The project it is installed in: `work`/`name`. */
  project: string;
}

export function installPackage(work: string, name: string): InstalledPackage {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
  const [packed] = JSON.parse(run(NPM, ["pack", "--json", "--pack-destination", work], REPO));
  const tarball = path.join(work, packed.filename);
  const project = path.join(work, name);
  fs.mkdirSync(project);
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name, version: "1.0.0", private: true }),
  );
  const peers = Object.keys(pkg.peerDependencies).map((p) => `${p}@${pkg.devDependencies[p]}`);
  run(NPM, ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, ...peers], project);
  return { tarball, files: packed.files.map((f: { path: string }) => f.path), project };
}
