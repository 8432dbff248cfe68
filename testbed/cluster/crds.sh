#!/usr/bin/env bash
# The CustomResourceDefinitions the embedded cluster installs and the unit tests validate against
# (CloudNativePG, CDI, Pulumi Kubernetes Operator v2). The repository keeps them in test/fixtures/crds,
# unchanged upstream files (its README), so a clone that stands alone needs no network for either.
#   testbed/cluster/crds.sh dir          print the directory to read them from ($PULP_CRD_DIR overrides)
#   testbed/cluster/crds.sh fetch [DIR]  download them again from the pinned commits below into DIR
#                                        (default test/fixtures/crds: how the copy is refreshed)
#   testbed/cluster/crds.sh ensure       same as dir (what up:local runs first)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FIXTURES=$REPO/test/fixtures/crds

# Pinned upstream sources (test/fixtures/crds/README.md). The Go module proxy serves none of these
# commits as module versions, so the files come from the repositories themselves.
CNPG=https://raw.githubusercontent.com/cloudnative-pg/cloudnative-pg/a95a534dbe0854495b863bbc1b7651f74d310916/config/crd/bases
PKO=https://raw.githubusercontent.com/pulumi/pulumi-kubernetes-operator/475dbc6c9d34ccab38ba1d3b16c924dd8a1c59b1/operator/config/crd/bases
CDI_GO=https://raw.githubusercontent.com/kubevirt/containerized-data-importer/c07cdb6fbd18976c44f65f1e4c0deae03e33e718/pkg/operator/resources/crds_generated.go
FILES=(postgresql.cnpg.io_clusters.yaml postgresql.cnpg.io_poolers.yaml pulumi.com_stacks.yaml
  pulumi.com_programs.yaml auto.pulumi.com_workspaces.yaml auto.pulumi.com_updates.yaml
  cdi.kubevirt.io_datavolumes.yaml cdi.kubevirt.io_storageprofiles.yaml cdi.kubevirt.io_cdiconfigs.yaml)

missing() { local f; for f in "${FILES[@]}"; do [[ -s "$1/$f" ]] || echo "$f"; done; }

dir() {
  local d=${PULP_CRD_DIR:-$FIXTURES} gone
  gone=$(missing "$d" | xargs)
  if [[ -n $gone ]]; then
    echo "no CRDs: ${PULP_CRD_DIR:+\$PULP_CRD_DIR=}$d lacks $gone." >&2
    if [[ -n ${PULP_CRD_DIR:-} ]]; then
      echo "Run: unset PULP_CRD_DIR   (the repository's copy in test/fixtures/crds is used then)" >&2
    else
      echo "Run: git checkout HEAD -- test/fixtures/crds   (or bash testbed/cluster/crds.sh fetch)" >&2
    fi
    return 1
  fi
  realpath "$d"
}

# CDI ships its CRDs as Go raw strings (the operator creates them), one per singular name, indented by
# a tab; a backquote inside one is written ` + "`" + `.
cdi_crd() {
  awk -v key="	\"$1\": \`" 'index($0, key) == 1 { on = 1; sub(/^[^`]*`/, ""); }
    on && /^`,?$/ { exit } on { gsub(/` \+ "`" \+ `/, "`"); print }'
}

fetch() {
  local out=${1:-$FIXTURES} f go
  mkdir -p "$out"
  for f in postgresql.cnpg.io_clusters.yaml postgresql.cnpg.io_poolers.yaml; do
    curl -fsSL "$CNPG/$f" -o "$out/$f"
  done
  for f in pulumi.com_stacks.yaml pulumi.com_programs.yaml auto.pulumi.com_workspaces.yaml auto.pulumi.com_updates.yaml; do
    curl -fsSL "$PKO/$f" -o "$out/$f"
  done
  go=$(curl -fsSL "$CDI_GO")
  for f in datavolume storageprofile cdiconfig; do
    cdi_crd "$f" <<<"$go" >"$out/cdi.kubevirt.io_${f}s.yaml"
  done
  [[ -z $(missing "$out") ]] || { echo "fetch incomplete: $out lacks $(missing "$out" | xargs)" >&2; return 1; }
  echo "$out"
}

case "${1:-dir}" in
  dir | ensure) dir ;;
  fetch) fetch "${2:-}" ;;
  cdi-crd) cdi_crd "$2" ;; # stdin: crds_generated.go; for checking the extraction offline
  *) echo "usage: $0 dir|fetch [DIR]|ensure" >&2; exit 2 ;;
esac
