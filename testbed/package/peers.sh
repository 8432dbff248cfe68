#!/usr/bin/env bash
# bash testbed/package/peers.sh [jest paths...]: the package against the lowest @pulumi/pulumi and
# @pulumi/kubernetes its peerDependencies allow (package.json's ranges, `^x.y.z` -> x.y.z; override with
# PULUMI_VERSION / KUBERNETES_VERSION to try another). Both are installed into a temporary directory;
# then the package's sources (tsconfig.build.json) are type-checked against them, and unit suites run under
# mocks with every require of @pulumi/pulumi and @pulumi/kubernetes (the test's, the program's and the
# Kubernetes SDK's own) mapped there. A setup file fails the run if the versions loaded are not those.
# Default suites: the whole program's render, the migration, backup and restore components, the stacks/
# program. Needs the npm registry (or a cache that has both versions).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD

lowest() { # the lowest version a `^x.y.z` range of package.json's peerDependencies allows
  # shellcheck disable=SC2016 # JavaScript, not shell, in single quotes
  node -e '
    const range = require("./package.json").peerDependencies[process.argv[1]];
    const m = /^\^(\d+\.\d+\.\d+)$/.exec(range ?? "");
    if (!m) { console.error(`peerDependencies ${process.argv[1]}: ${range} is not a ^x.y.z range`); process.exit(1); }
    console.log(m[1]);
  ' "$1"
}
PULUMI=${PULUMI_VERSION:-$(lowest @pulumi/pulumi)}
KUBERNETES=${KUBERNETES_VERSION:-$(lowest @pulumi/kubernetes)}
SUITES=("$@")
[[ ${#SUITES[@]} -gt 0 ]] || SUITES=(test/unit/components/pulp test/unit/components/migration test/unit/components/backup test/unit/stacks)

DIR=$(mktemp -d "${TMPDIR:-/tmp}/pulp-peers.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
echo "==> @pulumi/pulumi $PULUMI, @pulumi/kubernetes $KUBERNETES into $DIR"
echo '{"name":"peers","version":"1.0.0","private":true}' >"$DIR/package.json"
npm install --prefix "$DIR" --no-audit --no-fund --prefer-offline \
  "@pulumi/pulumi@$PULUMI" "@pulumi/kubernetes@$KUBERNETES" >"$DIR/install.log" 2>&1 ||
  { cat "$DIR/install.log"; exit 1; }
MODULES=$DIR/node_modules

echo "==> type check of the package's sources against them (tsconfig.build.json)"
cat >"$DIR/tsconfig.json" <<EOF
{
  "extends": "$REPO/tsconfig.build.json",
  "compilerOptions": {
    "noEmit": true,
    "baseUrl": "$REPO",
    "paths": {
      "@pulumi/pulumi": ["$MODULES/@pulumi/pulumi"],
      "@pulumi/pulumi/*": ["$MODULES/@pulumi/pulumi/*"],
      "@pulumi/kubernetes": ["$MODULES/@pulumi/kubernetes"],
      "@pulumi/kubernetes/*": ["$MODULES/@pulumi/kubernetes/*"]
    }
  }
}
EOF
typecheck=0
node node_modules/typescript/bin/tsc -p "$DIR/tsconfig.json" || typecheck=$?

echo "==> unit suites under mocks against them: ${SUITES[*]}"
cat >"$DIR/versions.js" <<EOF
// Fails every suite unless the SDKs it loads are the ones under test.
const want = { "@pulumi/pulumi": "$PULUMI", "@pulumi/kubernetes": "$KUBERNETES" };
for (const [name, version] of Object.entries(want)) {
  const got = require(name + "/package.json").version;
  if (got !== version) throw new Error(name + " " + got + " loaded, not " + version);
}
EOF
cat >"$DIR/jest.config.js" <<EOF
const base = require("$REPO/jest.config.js");
const moduleNameMapper = {
  "^@pulumi/pulumi$": "$MODULES/@pulumi/pulumi",
  "^@pulumi/pulumi/(.*)$": "$MODULES/@pulumi/pulumi/\$1",
  "^@pulumi/kubernetes$": "$MODULES/@pulumi/kubernetes",
  "^@pulumi/kubernetes/(.*)$": "$MODULES/@pulumi/kubernetes/\$1",
};
module.exports = {
  ...base,
  rootDir: "$REPO",
  projects: base.projects.map((p) => ({
    ...p,
    rootDir: "$REPO",
    moduleNameMapper,
    setupFiles: ["$DIR/versions.js"],
  })),
};
EOF
units=0
npx jest -c "$DIR/jest.config.js" "${SUITES[@]}" --selectProjects unit || units=$?

echo "==> @pulumi/pulumi $PULUMI, @pulumi/kubernetes $KUBERNETES: type check exit $typecheck, unit suites exit $units"
[[ $typecheck == 0 && $units == 0 ]]
