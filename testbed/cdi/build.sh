#!/usr/bin/env bash
# Builds CDI's binaries from the public Go module kubevirt.io/containerized-data-importer (no binary
# download) into a cache outside the repository: ${CDI_CACHE:-~/.cache/pulp-pulumi-cdi}/<version>/bin/.
# Prints that directory. A binary whose stamp matches (version, commit, this script) is not rebuilt.
#
#   cdi-operator cdi-controller cdi-apiserver cdi-uploadproxy cdi-importer      the images' entrypoints
#   cdi-containerimage-server cdi-image-size-detection cdi-source-update-poller the importer image's
#                                                                               other /usr/bin tools
#   manifest-generator                                                          used by manifest.sh
#   (CDI_BINARIES="cdi-operator ..." builds a subset.)
#
# How upstream builds them: release images with Bazel (rules_go, platform linux_amd64_cgo, glibc of the
# CentOS Stream 9 base); hack/build/build-go.sh with `go build` and ldflags -X pkg/version.{gitVersion,
# gitCommit,gitTreeState,buildDate} (hack/build/version.sh). Here: build-go.sh's ldflags, -trimpath -s -w,
# CGO_ENABLED=0 (static; the images carry no libc for them), GOTOOLCHAIN=local.
#
# Why not inside the module directory, as cnpg's build.sh does: the module zip is not the repository.
# (1) It ships vendor/modules.txt but not vendor/ (module zips never hold vendored code), so -mod=vendor
# cannot work. (2) It lacks staging/src/kubevirt.io/containerized-data-importer-api (a directory with
# its own go.mod is a separate module, left out of the zip), which go.mod's
# `replace kubevirt.io/containerized-data-importer-api => ./staging/...` points at. (3) On amd64,
# pkg/importer/vddk-datasource_amd64.go imports libguestfs.org/libnbd (cgo bindings of the C libnbd, for
# VMware VDDK imports), and the proxy refuses that module ("Go module host not permitted"); a build
# overlay cannot stand in for it, because go refuses overlays of files under GOMODCACHE.
#
# So the build runs in a copy of the module (<version>/src, everything but the 276 MB tests/ folder,
# which no built package imports) with exactly three changes, written to <version>/src.diff:
#   go.mod   the staging replace points at the published module of the same release instead,
#            kubevirt.io/containerized-data-importer-api v1.58.1 (what hack/publish-staging.sh publishes
#            from that directory);
#   go.sum   its two lines, added by `go mod download`, which checks them against sum.golang.org;
#   pkg/importer/vddk-datasource_amd64.go  the module's own vddk-datasource_arm64.go (the stub upstream's
#            arm64 images build: a VDDK import returns an error), build constraint amd64. No built
#            package imports libnbd any more, and nothing needs cgo.
# Every other dependency is downloaded through the proxy with -mod=readonly and checked against the
# module's go.sum (and the module itself against sum.golang.org by `go mod download`): no checksum
# verification is turned off. Binaries that compile pkg/importer (cdi-importer, cdi-source-update-poller)
# say gitTreeState=dirty, the others clean.
#
# Heavy: GOMAXPROCS (default 1), `go build -p` (CDI_GO_P, default 1) and nice (CDI_NICE, default 19)
# keep it from starving the machine. Build seconds per binary go to <version>/build-times.txt.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
mod=kubevirt.io/containerized-data-importer
cache="${CDI_CACHE:-$HOME/.cache/pulp-pulumi-cdi}/$CDI_VERSION"
bin="$cache/bin"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOOS=linux GOARCH=amd64
export GOMAXPROCS="${GOMAXPROCS:-1}" GOFLAGS="-mod=readonly -buildvcs=false -p=${CDI_GO_P:-1}"
all=(cdi-operator cdi-controller cdi-apiserver cdi-uploadproxy cdi-importer
  cdi-containerimage-server cdi-image-size-detection cdi-source-update-poller manifest-generator)
read -r -a want <<<"${CDI_BINARIES:-${all[*]}}"
stamp="$CDI_VERSION $CDI_COMMIT $(sha256sum "$here/build.sh" | cut -c1-16)"

fresh() { [ -x "$bin/$1" ] && [ "$(cat "$bin/$1.stamp" 2>/dev/null)" = "$stamp" ]; }
todo=()
for b in "${want[@]}"; do fresh "$b" || todo+=("$b"); done
if [ ${#todo[@]} -eq 0 ]; then echo "$bin"; exit 0; fi

mkdir -p "$bin"
cd "$cache"   # outside any module: `go mod download` then fetches the module itself
info="$(go mod download -json "$mod@$CDI_VERSION")"
dir="$(printf '%s' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
hash="$(printf '%s' "$info" | sed -n 's/^[[:space:]]*"Hash": "\([0-9a-f]*\)",\{0,1\}$/\1/p' | head -1)"
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "build.sh: go mod download gave no Dir for $mod@$CDI_VERSION:" >&2; printf '%s\n' "$info" >&2; exit 1
fi
if [ -n "$hash" ] && [ "$hash" != "$CDI_COMMIT" ]; then
  echo "build.sh: the proxy says $CDI_VERSION is commit $hash, versions.env pins $CDI_COMMIT" >&2; exit 1
fi

# The source copy, made once per version (stamp: src.stamp).
src="$cache/src"
if [ "$(cat "$cache/src.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$src" "$cache/src.tmp"
  mkdir -p "$cache/src.tmp"
  tar -C "$dir" --exclude=./tests -cf - . | tar -C "$cache/src.tmp" -xf -
  chmod -R u+w "$cache/src.tmp"
  (
    cd "$cache/src.tmp"
    api=kubevirt.io/containerized-data-importer-api
    grep -qx "	$api => ./staging/src/$api" go.mod \
      || { echo "build.sh: go.mod no longer replaces $api with ./staging/src/$api" >&2; exit 1; }
    go mod edit -replace="$api=$api@$CDI_VERSION"
    go mod download "$api@$CDI_VERSION"   # adds its go.sum lines, checked by sum.golang.org
    [ "$(grep -c "^$api $CDI_VERSION" go.sum)" = 2 ] || { echo "build.sh: no go.sum lines for $api $CDI_VERSION" >&2; exit 1; }
    f=pkg/importer/vddk-datasource
    sed -e 's|^//go:build arm64$|//go:build amd64|' -e 's|^// +build arm64$|// +build amd64|' "${f}_arm64.go" > "${f}_amd64.go"
    [ "$(grep -c -x -e '//go:build amd64' -e '// +build amd64' "${f}_amd64.go")" = 2 ] \
      || { echo "build.sh: ${f}_arm64.go no longer has the two arm64 constraint lines" >&2; exit 1; }
  )
  (cd "$cache" && { diff -ru -x tests "$dir" src.tmp > src.diff || true; })
  mv "$cache/src.tmp" "$src"
  echo "$stamp" > "$cache/src.stamp"
fi

pkg() { # binary -> package path in the module
  case "$1" in
    cdi-containerimage-server|cdi-image-size-detection|cdi-source-update-poller|manifest-generator) echo "./tools/$1" ;;
    cdi-*) echo "./cmd/$1" ;;
    *) echo "build.sh: unknown binary $1" >&2; return 1 ;;
  esac
}
cd "$src"
for b in "${todo[@]}"; do
  p="$(pkg "$b")"
  tree=clean
  # (grep without -q reads all of go list's output: with pipefail, an early exit would SIGPIPE go list)
  if go list -deps "$p" | grep -x "$mod/pkg/importer" >/dev/null; then tree=dirty; fi
  v="$mod/pkg/version"
  ldflags="-s -w -X $v.gitVersion=$CDI_VERSION -X $v.gitCommit=$CDI_COMMIT -X $v.gitTreeState=$tree -X $v.buildDate=$CDI_DATE"
  start=$(date +%s)
  nice -n "${CDI_NICE:-19}" go build -trimpath -ldflags "$ldflags" -o "$bin/$b.tmp" "$p"
  secs=$(( $(date +%s) - start ))
  mv "$bin/$b.tmp" "$bin/$b"
  echo "$stamp" > "$bin/$b.stamp"
  echo "$b $secs s gitTreeState=$tree $(date -u +%Y-%m-%dT%H:%M:%SZ) GOMAXPROCS=$GOMAXPROCS $GOFLAGS load=$(cut -d' ' -f1 /proc/loadavg)" >> "$cache/build-times.txt"
  echo "build.sh: built $b in $secs s (gitTreeState=$tree)" >&2
done
echo "$bin"
