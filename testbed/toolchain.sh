#!/usr/bin/env bash
# Builds the real toolchain from Go modules: the Pulumi CLI and its Node.js language host, the
# Kubernetes provider plugin, etcd, the Kubernetes control plane, the real node's kubelet, kube-proxy,
# pause and CoreDNS, and kwok. Nothing is downloaded as
# a binary and nothing lands in the checkout: binaries go to a cache directory keyed by the version
# set, and each component is skipped when its binary is already there.
#
#   testbed/toolchain.sh            build what is missing, print the bin directory last
#   testbed/toolchain.sh --print    print the bin directory only (build nothing)
#
# Versions below must match package.json (@pulumi/pulumi, @pulumi/kubernetes): test/toolchain
# checks that they do.
set -euo pipefail

PULUMI_VERSION=3.248.0
CLIPBOARD_FORK=v0.0.0-20241001131231-d02d263e614e # pulumi/pkg's own replace of atotto/clipboard
# provider/v4 has no tags. The module proxy reachable here serves one recent pseudo-version only:
# commit f47bc2d6f199 (2026-01-15), the v4.25.0 release line (sdk/v4.25.0 was tagged the next day).
K8S_PROVIDER_VERSION=4.25.0
K8S_PROVIDER_PSEUDO=v4.0.0-20260115033456-f47bc2d6f199
# 1.34.3: the newest release whose staging modules the module proxy here serves in full (1.33.12 lacks six).
KUBERNETES_VERSION=1.34.3
ETCD_VERSION=3.5.21
KWOK_VERSION=0.7.0
COREDNS_VERSION=1.12.4

VERSION_SET="pulumi-$PULUMI_VERSION k8sprov-$K8S_PROVIDER_VERSION kube-$KUBERNETES_VERSION etcd-$ETCD_VERSION kwok-$KWOK_VERSION coredns-$COREDNS_VERSION"
KEY=$(printf '%s' "$VERSION_SET" | sha256sum | cut -c1-12)
CACHE_ROOT=${PULP_TOOLCHAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-toolchain}
ROOT="$CACHE_ROOT/$KEY"
BIN="$ROOT/bin"
WORK="$ROOT/work"

if [[ "${1:-}" == "--print" ]]; then
  echo "$BIN"
  exit 0
fi

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
# The checksum database mirror reachable here does not answer for Pulumi's modules (404); their
# hashes are still recorded in each wrapper's go.sum.
export GONOSUMDB=${GONOSUMDB:-github.com/pulumi}
command -v go >/dev/null || { echo "toolchain: 'go' is not on PATH; install Go >= 1.24 first" >&2; exit 1; }
mkdir -p "$BIN" "$WORK"
echo "$VERSION_SET" >"$ROOT/versions"

log() { printf '[toolchain %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# build NAME BINARY... -- FUNCTION: runs FUNCTION unless every BINARY exists, with timing, and turns
# a failure into one line naming the component and the last lines of its log.
build() {
  local name=$1; shift
  local bins=()
  while [[ $1 != -- ]]; do bins+=("$1"); shift; done
  shift
  local missing=0 b
  for b in "${bins[@]}"; do [[ -x "$BIN/$b" ]] || missing=1; done
  if [[ $missing == 0 ]]; then log "$name: cached"; return 0; fi
  local logf="$WORK/$name.log" start=$SECONDS
  log "$name: building (log: $logf)"
  if ! ( set -euo pipefail; "$@" ) >"$logf" 2>&1; then
    echo "toolchain: building $name failed after $((SECONDS - start))s. Last lines of $logf:" >&2
    tail -n 25 "$logf" >&2
    exit 1
  fi
  log "$name: done in $((SECONDS - start))s"
}

# A wrapper module per component: `go install mod@v` refuses modules with replace lines.
wrapper() { # dir, module go.mod body
  rm -rf "$1"; mkdir -p "$1"
  printf '%s\n' "$2" >"$1/go.mod"
}

build_pulumi() {
  local d="$WORK/pulumi"
  wrapper "$d" "module toolchain/pulumi
go 1.24
replace github.com/atotto/clipboard => github.com/tgummerer/clipboard $CLIPBOARD_FORK"
  cd "$d"
  # Every query names its version: the proxy here refuses `@latest` and version lists (403).
  go get "github.com/pulumi/pulumi/sdk/v3@v$PULUMI_VERSION" "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@v$PULUMI_VERSION"
  local ld="-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION"
  go build -tags osusergo -ldflags "$ld" -o "$BIN/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
}

build_k8s_provider() {
  local mod=github.com/pulumi/pulumi-kubernetes/provider/v4
  local d="$WORK/provider"
  rm -rf "$d"
  # The plugin embeds generated schema files, so build from a writable copy of the module.
  local src
  src=$(cd "$WORK" && go mod download -json "$mod@$K8S_PROVIDER_PSEUDO" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -n "$src" ]] || { echo "module $mod@$K8S_PROVIDER_PSEUDO not found"; return 1; }
  cp -r "$src" "$d"; chmod -R u+w "$d"
  cd "$d"
  # Local-path replaces point into the upstream monorepo; the sdk has real tags.
  go mod edit -dropreplace github.com/pulumi/pulumi-kubernetes/sdk/v4 2>/dev/null || true
  grep -n '=> \.' go.mod && { echo "unexpected local replace left in go.mod"; return 1; }
  local sdk_version
  sdk_version=$(awk '$1 == "github.com/pulumi/pulumi-kubernetes/sdk/v4" {print $2}' go.mod)
  go get "github.com/pulumi/pulumi-kubernetes/sdk/v4@$sdk_version"
  go mod download
  (cd cmd/pulumi-resource-kubernetes && VERSION="$K8S_PROVIDER_VERSION" go run generate.go)
  go build -ldflags "-s -w -X $mod/pkg/version.Version=$K8S_PROVIDER_VERSION" \
    -o "$BIN/pulumi-resource-kubernetes" ./cmd/pulumi-resource-kubernetes
}

build_etcd() {
  local d="$WORK/etcd"
  wrapper "$d" "module toolchain/etcd
go 1.24"
  cd "$d"
  go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
  go build -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3
}

build_kubernetes() {
  local d="$WORK/kubernetes" v=v$KUBERNETES_VERSION staging=v0.${KUBERNETES_VERSION#1.}
  local body="module toolchain/kubernetes
go 1.24
godebug default=go1.24
require k8s.io/kubernetes $v"
  # Replace every staging module the release's own go.mod points into ./staging with its tagged twin.
  local gomod m
  gomod=$(cd "$WORK" && go mod download -json "k8s.io/kubernetes@$v" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  [[ -f "$gomod" ]] || { echo "cannot read the go.mod of k8s.io/kubernetes@$v"; return 1; }
  for m in $(sed -n 's#^\s*k8s.io/\([a-z-]*\) => ./staging/.*#\1#p' "$gomod"); do
    body+=$'\n'"replace k8s.io/$m => k8s.io/$m $staging"
  done
  wrapper "$d" "$body"
  cd "$d"
  local pkgs=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)
  go get "${pkgs[@]/%/@$v}"
  local minor=${KUBERNETES_VERSION#1.}; minor=${minor%%.*}
  local ld="-s -w -X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1"
  ld+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitVersion=$v"
  ld+=" -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  local p
  for p in "${pkgs[@]}"; do go build -ldflags "$ld" -o "$BIN/${p##*/}" "$p"; done
}

# The sandbox image's one binary, from the same release (containerd needs it locally: no registry).
build_pause() {
  local src
  src=$(cd "$WORK" && go mod download -json "k8s.io/kubernetes@v$KUBERNETES_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  gcc -Os -static -DVERSION="v$KUBERNETES_VERSION" -o "$BIN/pause" "$src/build/pause/linux/pause.c"
}

build_coredns() {
  local d="$WORK/coredns"
  wrapper "$d" "module toolchain/coredns
go 1.24"
  cd "$d"
  go get "github.com/coredns/coredns@v$COREDNS_VERSION"
  go build -ldflags "-s -w" -o "$BIN/coredns" github.com/coredns/coredns
}

build_kwok() {
  GOBIN="$BIN" go install "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
}

# kwok's default pod stages as files: a kwok config that adds a stage of its own replaces the compiled-in
# pod stages, so the embedded cluster passes these along with its own.
copy_kwok_stages() {
  local src
  src=$(cd "$WORK" && go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  mkdir -p "$BIN/kwok-stages"
  cp "$src"/kustomize/stage/pod/fast/pod-{ready,delete}.yaml "$BIN/kwok-stages/"
  # The general pod-complete honours a per-pod weight annotation, which lets a test stage fail a Job pod.
  cp "$src"/kustomize/stage/pod/general/pod-complete.yaml "$BIN/kwok-stages/"
}

total=$SECONDS
build pulumi pulumi -- build_pulumi
build kubernetes-provider pulumi-resource-kubernetes -- build_k8s_provider
build etcd etcd -- build_etcd
build kubernetes kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy -- build_kubernetes
build pause pause -- build_pause
build coredns coredns -- build_coredns
build kwok kwok -- build_kwok
build kwok-stages kwok-stages/pod-complete.yaml -- copy_kwok_stages
log "all components ready in $((SECONDS - total))s; $(du -sh "$BIN" | cut -f1) of binaries in $BIN"
echo "$BIN"
