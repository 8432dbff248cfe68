#!/usr/bin/env bash
# Builds the CloudNativePG operator binary `manager` from the public Go module (no binary download),
# the way the project's Makefile does (CGO_ENABLED=0, ldflags for pkg/versions), into a cache outside
# the repository: ${CNPG_CACHE:-~/.cache/pulp-pulumi-cnpg}/<version>/manager. Prints the binary's path.
# The module's go.mod has no replace lines, so it is built inside the module itself with its own go.sum.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
cache="${CNPG_CACHE:-$HOME/.cache/pulp-pulumi-cnpg}/$CNPG_VERSION"
out="$cache/manager"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly
if [ -x "$out" ] && [ -f "$cache/manager.stamp" ] && [ "$(cat "$cache/manager.stamp")" = "$CNPG_VERSION $CNPG_COMMIT" ]; then
  echo "$out"; exit 0
fi
mkdir -p "$cache"
info="$(go mod download -json "github.com/cloudnative-pg/cloudnative-pg@$CNPG_VERSION")"
dir="$(printf '%s' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
hash="$(printf '%s' "$info" | sed -n 's/^[[:space:]]*"Hash": "\([0-9a-f]*\)",\{0,1\}$/\1/p' | head -1)"
[ -n "$dir" ] && [ -d "$dir" ] || { echo "build.sh: go mod download gave no Dir for cloudnative-pg@$CNPG_VERSION" >&2; exit 1; }
if [ -n "$hash" ] && [ "${hash:0:${#CNPG_COMMIT}}" != "$CNPG_COMMIT" ]; then
  echo "build.sh: the proxy says $CNPG_VERSION is commit $hash, versions.env pins $CNPG_COMMIT" >&2; exit 1
fi
start=$(date +%s)
ldflags="-s -w -X github.com/cloudnative-pg/cloudnative-pg/pkg/versions.buildVersion=${CNPG_VERSION#v}"
ldflags+=" -X github.com/cloudnative-pg/cloudnative-pg/pkg/versions.buildCommit=${CNPG_COMMIT}"
ldflags+=" -X github.com/cloudnative-pg/cloudnative-pg/pkg/versions.buildDate=${CNPG_DATE}"
(cd "$dir" && go build -trimpath -o "$out.tmp" -ldflags "$ldflags" ./cmd/manager)
mv "$out.tmp" "$out"
echo "$CNPG_VERSION $CNPG_COMMIT" > "$cache/manager.stamp"
echo "build.sh: built $out in $(( $(date +%s) - start )) s" >&2
echo "$out"
