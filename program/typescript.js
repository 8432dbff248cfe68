// How Pulumi's Node.js runtime loads the stack programs' TypeScript (`nodeargs` in Pulumi.yaml and
// stacks/Pulumi.yaml): sucrase strips the types file by file and keeps every line where it was, so stack
// traces point at the source without source maps; nothing is type-checked here (`npm run lint` runs tsc).
// Each file's output is kept in node_modules/.cache/pulp-program, keyed by sucrase's version, the path and
// the source, so a preview or update transforms only what changed since the last one (neither sucrase nor
// pirates keeps a cache). A cache that cannot be read or written is skipped.
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");
const { addHook } = require("pirates");

const SUCRASE = require("sucrase/package.json").version;
const CACHE = path.join(__dirname, "..", "node_modules", ".cache", "pulp-program");

function transform(code, filePath) {
  const key = crypto.createHash("sha256").update(`${SUCRASE}\0${filePath}\0${code}`).digest("hex");
  const cached = path.join(CACHE, `${key}.js`);
  try {
    return fs.readFileSync(cached, "utf8");
  } catch {
    // not transformed yet
  }
  const { code: out } = require("sucrase").transform(code, {
    transforms: ["typescript", "imports"],
    filePath,
  });
  try {
    fs.mkdirSync(CACHE, { recursive: true });
    fs.writeFileSync(`${cached}.${process.pid}`, out);
    fs.renameSync(`${cached}.${process.pid}`, cached);
  } catch {
    // a read-only checkout: transform every time
  }
  return out;
}

addHook(transform, { exts: [".ts"] });
