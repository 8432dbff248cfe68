#!/usr/bin/env bash
# The CustomResourceDefinitions the embedded cluster installs (CloudNativePG, CDI, Pulumi Kubernetes
# Operator v2), found before anything long starts.
#   testbed/cluster/crds.sh dir     print the directory to read them from, or fail saying how to get them
#   testbed/cluster/crds.sh fetch   download them, pinned, into .state/crds (for a clone that stands alone)
#   testbed/cluster/crds.sh ensure  dir, or fetch when no copy is found (what up:local runs first)
# Order: $PULP_CRD_DIR; this workplace's offline copy ../shared/crds; .state/crds from `fetch`.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STATE=${PULP_STATE_DIR:-$REPO/.state}
FETCHED=$STATE/crds

# Pinned upstream sources: the commits ../shared/crds was copied from (its README). The Go module proxy
# serves none of these commits as module versions, so the files come from the repositories themselves.
CNPG=https://raw.githubusercontent.com/cloudnative-pg/cloudnative-pg/a95a534dbe08/config/crd/bases
PKO=https://raw.githubusercontent.com/pulumi/pulumi-kubernetes-operator/475dbc6c9d34/operator/config/crd/bases
CDI_GO=https://raw.githubusercontent.com/kubevirt/containerized-data-importer/c07cdb6fbd18/pkg/operator/resources/crds_generated.go
FILES=(postgresql.cnpg.io_clusters.yaml postgresql.cnpg.io_poolers.yaml pulumi.com_stacks.yaml
  pulumi.com_programs.yaml auto.pulumi.com_workspaces.yaml auto.pulumi.com_updates.yaml
  cdi.kubevirt.io_datavolumes.yaml cdi.kubevirt.io_storageprofiles.yaml cdi.kubevirt.io_cdiconfigs.yaml)

complete() { local f; for f in "${FILES[@]}"; do [[ -s "$1/$f" ]] || return 1; done; }

dir() {
  local d
  for d in "${PULP_CRD_DIR:-}" "$REPO/../shared/crds" "$FETCHED"; do
    [[ -n "$d" ]] && complete "$d" && { realpath "$d"; return 0; }
  done
  echo "no CRDs: none of \$PULP_CRD_DIR, ../shared/crds, .state/crds holds all of ${FILES[*]}." >&2
  echo "Run: bash testbed/cluster/crds.sh fetch   (downloads them from the pinned upstream commits)" >&2
  return 1
}

fetch() {
  mkdir -p "$FETCHED"
  local f
  for f in postgresql.cnpg.io_clusters.yaml postgresql.cnpg.io_poolers.yaml; do
    curl -fsSL "$CNPG/$f" -o "$FETCHED/$f"
  done
  for f in pulumi.com_stacks.yaml pulumi.com_programs.yaml auto.pulumi.com_workspaces.yaml auto.pulumi.com_updates.yaml; do
    curl -fsSL "$PKO/$f" -o "$FETCHED/$f"
  done
  # CDI ships its CRDs as YAML strings in Go source (the operator creates them): one raw string each.
  local go; go=$(curl -fsSL "$CDI_GO")
  for f in datavolumes storageprofiles cdiconfigs; do
    awk -v key="\"$f\": \`" 'index($0, key) == 1 { on = 1; sub(/^[^`]*`/, ""); }
      on && /^`,?$/ { exit } on { print }' <<<"$go" >"$FETCHED/cdi.kubevirt.io_$f.yaml"
  done
  complete "$FETCHED" || { echo "fetch incomplete: see $FETCHED" >&2; return 1; }
  echo "$FETCHED"
}

ensure() {
  dir 2>/dev/null && return 0
  echo "no local copy of the CRDs; downloading them from the pinned upstream commits into $FETCHED" >&2
  fetch
}

case "${1:-dir}" in
  dir) dir ;;
  fetch) fetch ;;
  ensure) ensure ;;
  *) echo "usage: $0 dir|fetch|ensure" >&2; exit 2 ;;
esac
