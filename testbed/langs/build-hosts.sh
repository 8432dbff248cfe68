#!/usr/bin/env bash
# Builds the Pulumi language hosts that the multi-language use of the Pulp component needs and the test
# bed's toolchain (testbed/toolchain.sh) does not build: pulumi-language-nodejs (runs the source-based
# plugin package components/multilang for `pulumi package add`, `get-schema` and every program that uses
# it), pulumi-language-python, -go and -dotnet (`pulumi package gen-sdk` and `package add` ask the host of
# the program's language for its SDK; python and go also run programs) and pulumi-language-yaml (runs a
# YAML program). Not called by CI or by toolchain.sh. HOSTS="nodejs yaml" builds a subset.
# testbed/langs/FINDINGS.md says what was built, what ran and what did not.
#
#   testbed/langs/build-hosts.sh [--pulumi-src <checkout of github.com/pulumi/pulumi>] [--out <dir>]
#
# The nodejs, python and go hosts are nested modules of the pulumi monorepo that are never tagged on their
# own (the module proxy answers 403 for .../pulumi-language-nodejs/v3@v3.248.0), so each is built from a
# checkout of the v3.248.0 tag: its own directory only, with the go.mod's local-path replaces of sdk/v3
# and pkg/v3 swapped for the released v3.248.0 modules. Without --pulumi-src the tag is cloned from GitHub.
# pulumi-language-yaml is a package of the tagged module github.com/pulumi/pulumi-yaml, and
# pulumi-language-dotnet the tagged module github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3.
set -euo pipefail

PULUMI_VERSION=3.248.0 # testbed/toolchain.sh's PULUMI_VERSION and package.json's @pulumi/pulumi
# pulumi-yaml's newest release the module proxy here lists is v1.25.0 (built on sdk v3.206.0): its host
# starts the 3.248 nodejs host with a flag that host no longer has (-root) and the preview fails. v1.37.0
# needs pkg/v3 v3.247.0, which the proxy does not serve, and does not compile against v3.248.0. v1.38.0 on
# its own pkg/sdk v3.254.0 builds and talks to the 3.248 CLI and nodejs host.
YAML_VERSION=1.38.0
YAML_PULUMI_VERSION=3.254.0
# pulumi-dotnet v3.107.3 is the release built on sdk v3.248.0; the proxy serves its host's module.
DOTNET_VERSION=3.107.3
CLIPBOARD_FORK=v0.0.0-20241001131231-d02d263e614e
SRC=""
OUT=${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-langs/pulumi-$PULUMI_VERSION-yaml-$YAML_VERSION
while [[ $# -gt 0 ]]; do
  case $1 in
    --pulumi-src) SRC=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--pulumi-src <dir>] [--out <dir>]" >&2; exit 2 ;;
  esac
done
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-buildvcs=false -mod=mod"
export GONOSUMDB=${GONOSUMDB:-github.com/pulumi}
BIN="$OUT/bin" WORK="$OUT/work"
mkdir -p "$BIN" "$WORK"
log() { printf '[langs %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# A host that lives in the pulumi monorepo: DIR (its path there) and NAME; built from the v$PULUMI_VERSION
# tag's copy of that directory, against the released sdk/v3 and pkg/v3 modules of the same version.
build_monorepo_host() { # name, dir
  local d="$WORK/$1"
  rm -rf "$d"; mkdir -p "$d"
  if [[ -z "$SRC" ]]; then
    SRC="$WORK/pulumi-src"
    [[ -d "$SRC/.git" ]] || git clone --depth 1 --branch "v$PULUMI_VERSION" https://github.com/pulumi/pulumi "$SRC"
  fi
  if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
    local depth; depth=$(awk -F/ '{print NF}' <<<"$2")
    git -C "$SRC" archive "v$PULUMI_VERSION" "$2" | tar -x -C "$d" --strip-components="$depth"
  else
    cp -r "$SRC/$2/." "$d"
  fi
  cd "$d"
  go mod edit -dropreplace github.com/pulumi/pulumi/sdk/v3 -dropreplace github.com/pulumi/pulumi/pkg/v3 \
    -require "github.com/pulumi/pulumi/sdk/v3@v$PULUMI_VERSION" -require "github.com/pulumi/pulumi/pkg/v3@v$PULUMI_VERSION" \
    -replace "github.com/atotto/clipboard=github.com/tgummerer/clipboard@$CLIPBOARD_FORK"
  go mod tidy -e
  go build -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION" \
    -o "$BIN/$1" .
}
build_nodejs() { build_monorepo_host pulumi-language-nodejs sdk/nodejs/cmd/pulumi-language-nodejs; }
build_python() {
  build_monorepo_host pulumi-language-python sdk/python/cmd/pulumi-language-python
  # The host runs Python programs through this script, which it expects beside itself.
  if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$SRC" show "v$PULUMI_VERSION:sdk/python/cmd/pulumi-language-python-exec" >"$BIN/pulumi-language-python-exec"
  else
    cp "$SRC/sdk/python/cmd/pulumi-language-python-exec" "$BIN/"
  fi
  chmod +x "$BIN/pulumi-language-python-exec"
}
build_go() { build_monorepo_host pulumi-language-go sdk/go/pulumi-language-go; }

build_yaml() {
  local d="$WORK/pulumi-language-yaml"
  rm -rf "$d"; mkdir -p "$d"
  printf 'module langs/yaml\ngo 1.24\nreplace github.com/atotto/clipboard => github.com/tgummerer/clipboard %s\n' \
    "$CLIPBOARD_FORK" >"$d/go.mod"
  cd "$d"
  go get "github.com/pulumi/pulumi-yaml@v$YAML_VERSION" "github.com/pulumi/pulumi/sdk/v3@v$YAML_PULUMI_VERSION" \
    "github.com/pulumi/pulumi/pkg/v3@v$YAML_PULUMI_VERSION"
  go build -ldflags "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=v$YAML_VERSION" \
    -o "$BIN/pulumi-language-yaml" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml
}

build_dotnet() {
  local d="$WORK/pulumi-language-dotnet" mod=github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3
  rm -rf "$d"; mkdir -p "$d"
  # The module's own replace lines, which `go install mod@v` would refuse.
  printf '%s\n' "module langs/dotnet" "go 1.24" \
    "replace github.com/Sirupsen/logrus => github.com/sirupsen/logrus v1.8.3" \
    "replace github.com/gogo/protobuf => github.com/gogo/protobuf v1.3.2" \
    "replace github.com/atotto/clipboard => github.com/tgummerer/clipboard $CLIPBOARD_FORK" >"$d/go.mod"
  cd "$d"
  go get "$mod@v$DOTNET_VERSION"
  go build -ldflags "-s -w -X github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3/version.Version=v$DOTNET_VERSION" \
    -o "$BIN/pulumi-language-dotnet" "$mod"
}

status=0
for host in ${HOSTS:-nodejs python go yaml dotnet}; do
  log "pulumi-language-$host: building (log: $WORK/$host.log)"
  start=$SECONDS
  if ( set -euo pipefail; "build_$host" ) >"$WORK/$host.log" 2>&1; then
    log "pulumi-language-$host: done in $((SECONDS - start))s"
  else
    log "pulumi-language-$host: FAILED after $((SECONDS - start))s; last lines:"
    tail -n 20 "$WORK/$host.log" >&2
    status=1
  fi
done
echo "$BIN"
exit $status
