#!/usr/bin/env bash
# Installs the real CDI (Containerized Data Importer) on the embedded cluster's real node. Idempotent.
#
#   KUBECONFIG=<admin kubeconfig> CONTAINERD_ADDRESS=<containerd socket> testbed/cdi/install.sh
#
# 1. builds (or reuses) the five image archives (image.sh) and imports them into the node's containerd
#    (namespace k8s.io), skipping images already there with the same digest;
# 2. removes the shared CDI CRDs cluster.sh applied, when that loses nothing (see "CRDs" below);
# 3. applies the operator manifest (manifest.sh) server-side, waits for the cdis CRD, applies the CDI CR
#    (manifest.sh cr);
# 4. waits for the CDI CR to be Available (phase Deployed: the operator's controller, apiserver and
#    uploadproxy Deployments ready), checks the three CRDs are the operator's, waits for the DataVolume
#    webhooks to answer (a server-side dry-run create of an invalid DataVolume comes back denied by
#    datavolume-validate: API server -> cdi-api ClusterIP, so the real node's kube-proxy must be
#    programming Services) and for the aggregated APIService v1beta1.upload.cdi.kubevirt.io to be
#    Available (until then discovery is partial and namespaces cannot finish deleting);
# 5. prints one line with the times.
# Fails (non-zero, naming the step and showing status and logs) when a step does not get there within
# CDI_INSTALL_TIMEOUT s (default 600: the operator then starts three Deployments on a shared 2-core VM).
#
# CRDs: cluster.sh server-side-applies (field manager pulp-cluster) datavolumes, storageprofiles and
# cdiconfigs from the repository's copy (test/fixtures/crds), which is newer than v1.58.1; v1.58.1's
# controller depends on its own (e.g. it writes StorageProfile status with a plain Update, which the
# newer CRD's status subresource would drop). The operator creates missing CRDs from its own code, but only merges into existing ones.
# So a shared CRD with no objects is deleted before the operator starts (nothing is lost, and the
# operator then creates its own); one that holds objects (e.g. stand-in DataVolumes of kwok stacks) is
# kept, and left to the operator's merge. Either way the CRDs are checked once CDI is Deployed, and the
# install fails if one is not v1.58.1's.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
# shellcheck source=../lib/import-archive.sh
. "$here/../lib/import-archive.sh"
: "${KUBECONFIG:?set KUBECONFIG to the embedded cluster admin kubeconfig}"
: "${CONTAINERD_ADDRESS:?set CONTAINERD_ADDRESS to the real node containerd socket}"
export KUBECONFIG
timeout_s="${CDI_INSTALL_TIMEOUT:-600}"
CTR="${CTR:-ctr}"
if [ -z "${KUBECTL:-}" ]; then
  tb="$("$repo/testbed/toolchain.sh" --print 2>/dev/null || true)"
  if [ -n "$tb" ] && [ -x "$tb/kubectl" ]; then KUBECTL="$tb/kubectl"; else KUBECTL=kubectl; fi
fi
k() { "$KUBECTL" "$@"; }
ts() { date -u +%H:%M:%S; }
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
past_timeout() { awk -v a="$1" -v b="$(now)" -v t="$timeout_s" 'BEGIN { exit !(b - a > t) }'; }
log() { echo "[cdi $(ts)] $*" >&2; }
die() { echo "cdi install: $*" >&2; exit 1; }
t0=$(now)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
SHARED_CDI_CRDS=(datavolumes.cdi.kubevirt.io storageprofiles.cdi.kubevirt.io cdiconfigs.cdi.kubevirt.io)

# wait_until WHAT SHOW CMD...: runs CMD every 2 s until it succeeds; after timeout_s prints SHOW's
# output (a function) and fails naming WHAT.
wait_until() {
  local what=$1 show=$2 start
  shift 2
  start=$(now)
  until "$@" >/dev/null 2>&1; do
    if past_timeout "$start"; then
      echo "--- status" >&2
      "$show" 2>&1 | tail -n 80 >&2 || true
      die "$what: not within ${timeout_s}s"
    fi
    sleep 2
  done
}
show_pods() {
  k -n cdi get deployments,pods -o wide
  k -n cdi get events --sort-by=.lastTimestamp | tail -n 15
  local p
  for p in $(k -n cdi get pods -o name); do
    echo "--- $p"; k -n cdi logs "$p" --all-containers --tail=10 | cut -c1-400
  done
}
show_cdis_crd() {
  k get crd cdis.cdi.kubevirt.io -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}'
}
show_cdi() {
  k get cdis.cdi.kubevirt.io cdi -o jsonpath='phase={.status.phase}{"\n"}{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}'
  show_pods
}
show_apiserver() {
  k -n cdi get service,endpointslices -o wide
  echo "--- cdi-apiserver"; k -n cdi logs deploy/cdi-apiserver --tail=20 | cut -c1-400
}
show_apiservice() {
  k get apiservice v1beta1.upload.cdi.kubevirt.io -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}'
  show_apiserver
}

[ -n "$(k get nodes -l pulp-testbed/node-kind=real -o name)" ] \
  || die "no real node (label pulp-testbed/node-kind=real): start the cluster with its real node first"

# 1. images
ti=$(now)
mapfile -t archives < <("$here/image.sh")
[ "${#archives[@]}" = 5 ] || die "image.sh printed ${#archives[@]} archives, expected 5: ${archives[*]}"
for a in "${archives[@]}"; do import_archive "$a"; done
import_s=$(el "$ti")

# 2. the shared CRDs (see "CRDs" above)
crd_owner() { # name -> absent | operator | shared | other
  local json
  json="$(k get crd "$1" --ignore-not-found --show-managed-fields -o json)" || die "kubectl get crd $1 failed"
  [ -n "$json" ] || { echo absent; return 0; }
  python3 -c '
import json, sys
meta = json.load(sys.stdin)["metadata"]
labels = meta.get("labels") or {}
managers = {f.get("manager") for f in meta.get("managedFields") or []}
if any(k.startswith("operator.cdi.kubevirt.io/") for k in labels): print("operator")
elif "pulp-cluster" in managers: print("shared")
else: print("other")' <<<"$json"
}
stale=()
for crd in "${SHARED_CDI_CRDS[@]}"; do
  owner="$(crd_owner "$crd")"
  [ "$owner" = shared ] || continue
  objects="$(k get "$crd" --all-namespaces -o name | wc -l)" || die "kubectl get $crd failed"
  if [ "$objects" = 0 ]; then
    stale+=("$crd")
  else
    log "keeping the shared CRD $crd: it holds $objects objects; the operator merges its own into it (checked below)"
  fi
done
if [ "${#stale[@]}" -gt 0 ]; then
  k delete crd "${stale[@]}" --timeout="${timeout_s}s" >/dev/null \
    || die "deleting the shared CRDs ${stale[*]} (no objects) failed"
  log "deleted the shared CRDs ${stale[*]} (no objects): the operator creates v1.58.1's"
fi

# 3. apply
ta=$(now)
"$here/manifest.sh" > "$tmp/operator.yaml"
"$here/manifest.sh" cr > "$tmp/cr.yaml"
k apply --server-side --force-conflicts --field-manager=pulp-testbed-cdi -f "$tmp/operator.yaml" >/dev/null \
  || die "kubectl apply of the operator manifest failed"
cdis_crd_established() {
  [ "$(k get crd cdis.cdi.kubevirt.io -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" = True ]
}
wait_until "the CRD cdis.cdi.kubevirt.io Established" show_cdis_crd cdis_crd_established
k apply --server-side --force-conflicts --field-manager=pulp-testbed-cdi -f "$tmp/cr.yaml" >/dev/null \
  || die "kubectl apply of the CDI CR failed"
log "operator manifest and CDI CR applied ($(el "$ta")s)"

# 4. waits
cdi_deployed() {
  [ "$(k get cdis.cdi.kubevirt.io cdi -o jsonpath='{.status.phase} {.status.conditions[?(@.type=="Available")].status}')" = "Deployed True" ]
}
wait_until "the CDI CR cdi Available, phase Deployed" show_cdi cdi_deployed
log "CDI Deployed ($(el "$ta")s after apply)"

crd_problems() {
  k get crd "${SHARED_CDI_CRDS[@]}" -o json | python3 -c '
import json, sys
version, problems = sys.argv[1], []
for crd in json.load(sys.stdin)["items"]:
    name, labels = crd["metadata"]["name"], crd["metadata"].get("labels") or {}
    if version not in (labels.get("operator.cdi.kubevirt.io/createVersion"), labels.get("operator.cdi.kubevirt.io/updateVersion")):
        problems.append(f"{name}: not created or updated by the {version} operator (labels {labels})")
    v1beta1 = next((v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"), {})
    if name.startswith("storageprofiles.") and "status" in (v1beta1.get("subresources") or {}):
        problems.append(f"{name}: has the newer status subresource, which drops v1.58.1 status updates")
    if name.startswith("datavolumes."):
        spec = v1beta1.get("schema", {}).get("openAPIV3Schema", {}).get("properties", {}).get("spec", {})
        http = spec.get("properties", {}).get("source", {}).get("properties", {}).get("http", {}).get("properties", {})
        if "checksum" in http:
            problems.append(f"{name}: has the newer source.http.checksum field")
print("\n".join(problems))' "$CDI_VERSION"
}
problems="$(crd_problems)" || die "reading the CDI CRDs failed"
[ -z "$problems" ] || die "the CDI CRDs are not the operator's $CDI_VERSION ones:
$problems
(delete the DataVolumes that keep the shared CRDs, or start a fresh cluster, then run install.sh again)"

cat > "$tmp/probe.yaml" <<'YAML'
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: webhook-probe, namespace: default}
spec: {source: {http: {url: "http://webhook-probe.invalid/probe.tar"}}}
YAML
tw=$(now) last=""
# No storage and no pvc: the CRD schema accepts that, only datavolume-validate refuses it.
webhook_denies() {
  if last="$(k create --dry-run=server -f "$tmp/probe.yaml" 2>&1)"; then
    last="dry-run create passed: the validating webhook did not run"; return 1
  fi
  [[ $last == *"denied the request"*"Missing Data volume PVC"* ]]
}
until webhook_denies; do
  if past_timeout "$tw"; then
    echo "--- status" >&2; show_apiserver 2>&1 | tail -n 40 >&2 || true
    die "the DataVolume webhooks did not answer in ${timeout_s}s; last: $last"
  fi
  sleep 2
done
webhook_s=$(el "$tw")
log "DataVolume webhooks answer (${webhook_s}s after Deployed): $last"

tv=$(now)
apiservice_available() {
  [ "$(k get apiservice v1beta1.upload.cdi.kubevirt.io -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ]
}
wait_until "the APIService v1beta1.upload.cdi.kubevirt.io Available" show_apiservice apiservice_available
log "APIService v1beta1.upload.cdi.kubevirt.io Available ($(el "$tv")s)"
echo "cdi install: CDI $CDI_VERSION ready in $(el "$t0")s (images ${import_s}s, apply -> Deployed -> webhooks -> APIService $(el "$ta")s)"
