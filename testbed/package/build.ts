// npm run build:dist (and npm pack, as prepack): the npm package's dist/. Compiles tsconfig.build.json into
// a fresh dist/ (nothing left over from a moved or deleted source), copies beside each compiled module the
// scripts the components read from disk next to themselves (fs.readFileSync(path.join(__dirname, ...)):
// the backup, restore, migration and worker-check scripts), and makes each `bin` of package.json an
// executable with a `#!/usr/bin/env node` line, so the tools run from an installed package with node alone.
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

const ROOT = path.resolve(__dirname, "..", "..");
export const DIST = "dist";
/** The source trees the package ships (tsconfig.build.json's include), whose scripts are copied as they are. */
export const ASSET_ROOTS = ["components", "tools"];
/** Files read at run time from beside their module: shell and Python scripts. */
export const ASSET_PATTERN = /\.(sh|py)$/;
export const SHEBANG = "#!/usr/bin/env node\n";

/** Every asset under `dir`, relative to `root` (sorted; bytecode caches skipped). */
export function assetsUnder(root: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "__pycache__" && entry.name !== "node_modules") walk(child);
      } else if (entry.isFile() && ASSET_PATTERN.test(entry.name)) found.push(child);
    }
  };
  walk(dir);
  return found.sort();
}

/** The compiled files package.json's `bin` names, relative to the package root. */
export function binFiles(pkg: { bin?: string | Record<string, string> }): string[] {
  if (!pkg.bin) return [];
  return typeof pkg.bin === "string" ? [pkg.bin] : Object.values(pkg.bin);
}

/** `text` with a `#!/usr/bin/env node` first line (kept when it has one). */
export function withShebang(text: string): string {
  return text.startsWith("#!") ? text : SHEBANG + text;
}

export function build(root = ROOT): { assets: string[]; bins: string[] } {
  const dist = path.join(root, DIST);
  fs.rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
    cwd: root,
    // Diagnostics to stderr: `npm pack --json` runs this as prepack, and its stdout is the JSON.
    stdio: ["ignore", 2, 2],
  });
  const assets = ASSET_ROOTS.flatMap((dir) => assetsUnder(root, dir));
  for (const asset of assets) {
    const target = path.join(dist, asset);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(path.join(root, asset), target);
    fs.chmodSync(target, fs.statSync(path.join(root, asset)).mode & 0o777);
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const bins = binFiles(pkg);
  for (const bin of bins) {
    const file = path.join(root, bin);
    if (!fs.existsSync(file)) {
      throw new Error(`package.json bin ${bin} was not built: tsconfig.build.json must include its source`);
    }
    fs.writeFileSync(file, withShebang(fs.readFileSync(file, "utf8")));
    fs.chmodSync(file, 0o755);
  }
  return { assets, bins };
}

if (require.main === module) {
  const { assets, bins } = build();
  console.error(`${DIST}/: compiled, ${assets.length} scripts copied, ${bins.length} executables`);
}
