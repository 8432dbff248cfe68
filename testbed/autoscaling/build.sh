#!/usr/bin/env bash
# Builds KEDA's operator and metrics adapter (github.com/kedacore/keda/v2: cmd/operator, cmd/adapter) and
# metrics-server (sigs.k8s.io/metrics-server: cmd/metrics-server) from the Go module proxy, each inside its
# own module with its own go.sum (KEDA's go.mod has replace lines), as their Makefiles do (CGO_ENABLED=0),
# into a cache outside the repository: ${AUTOSCALING_CACHE:-~/.cache/pulp-pulumi-autoscaling}/. Idempotent.
# Prints three lines: the keda, keda-adapter and metrics-server binaries' paths. About 11 min cold on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
cache="${AUTOSCALING_CACHE:-$HOME/.cache/pulp-pulumi-autoscaling}"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

# build <module@version> <package> <output>
build() {
  local module="$1" package="$2" out="$3"
  if [ -x "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$module $package" ]; then return 0; fi
  mkdir -p "$(dirname "$out")"
  local dir start
  dir="$(go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -n "$dir" ] && [ -d "$dir" ] || { echo "build.sh: go mod download gave no Dir for $module" >&2; exit 1; }
  start=$(date +%s)
  (cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$out.tmp" "$package")
  mv "$out.tmp" "$out"
  echo "$module $package" > "$out.stamp"
  echo "build.sh: built $out in $(( $(date +%s) - start )) s" >&2
}

keda="$cache/keda-$KEDA_VERSION"
ms="$cache/metrics-server-$METRICS_SERVER_VERSION"
build "github.com/kedacore/keda/v2@$KEDA_VERSION" ./cmd/operator "$keda/keda"
build "github.com/kedacore/keda/v2@$KEDA_VERSION" ./cmd/adapter "$keda/keda-adapter"
build "sigs.k8s.io/metrics-server@$METRICS_SERVER_VERSION" ./cmd/metrics-server "$ms/metrics-server"
echo "$keda/keda"
echo "$keda/keda-adapter"
echo "$ms/metrics-server"
