#!/usr/bin/env bash
# Installs the real CloudNativePG operator on the embedded cluster's real node. Idempotent.
#
#   KUBECONFIG=<admin kubeconfig> CONTAINERD_ADDRESS=<containerd socket> testbed/cnpg/install.sh [ARCHIVE...]
#
# 1. builds (or reuses) the manager binary and the localhost/cloudnative-pg:<version> archive;
# 2. imports it, and any further OCI archives given (e.g. the localhost/postgresql:15 operand image),
#    into the node's containerd (namespace k8s.io), skipping images already there with the same digest;
# 3. applies the module's own manifest (manifest.sh) with server-side apply;
# 4. waits for the operator Deployment to be Available and for its admission webhooks to answer: a
#    server-side dry-run create of a Cluster goes API server -> cnpg-webhook-service (a ClusterIP, so
#    the real node's kube-proxy must be programming Services) -> the operator's :9443;
# 5. prints the times.
# Fails (non-zero, with the reason) when any step does not get there within CNPG_INSTALL_TIMEOUT s.
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
timeout_s="${CNPG_INSTALL_TIMEOUT:-300}"
CTR="${CTR:-ctr}"
if [ -z "${KUBECTL:-}" ]; then
  tb="$("$repo/testbed/toolchain.sh" --print 2>/dev/null || true)"
  if [ -n "$tb" ] && [ -x "$tb/kubectl" ]; then KUBECTL="$tb/kubectl"; else KUBECTL=kubectl; fi
fi
k() { "$KUBECTL" "$@"; }
ts() { date -u +%H:%M:%S; }
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "[cnpg $(ts)] $*" >&2; }
die() { echo "cnpg install: $*" >&2; exit 1; }
t0=$(now)

# 1. operator image
archive="$("$here/image.sh")"

# 2. import
ti=$(now)
import_archive "$archive"
for extra in "$@"; do import_archive "$extra"; done
import_s=$(el "$ti")

# 3. apply
ta=$(now)
"$here/manifest.sh" > "${TMPDIR:-/tmp}/cnpg-manifest.$$.yaml"
trap 'rm -f "${TMPDIR:-/tmp}/cnpg-manifest.$$.yaml" "${TMPDIR:-/tmp}/cnpg-probe.$$.yaml"' EXIT
k apply --server-side --force-conflicts --field-manager=pulp-testbed-cnpg \
  -f "${TMPDIR:-/tmp}/cnpg-manifest.$$.yaml" >/dev/null || die "kubectl apply of the operator manifest failed"
log "manifest applied ($(el "$ta")s)"

# 4. wait: Deployment Available, then the webhooks answer
k -n cnpg-system rollout status deploy/cnpg-controller-manager --timeout="${timeout_s}s" >&2 \
  || { k -n cnpg-system get pods -o wide >&2 || true; k -n cnpg-system logs deploy/cnpg-controller-manager --tail=30 >&2 || true
       die "the operator Deployment did not become Available in ${timeout_s}s"; }
node="$(k -n cnpg-system get pods -l app.kubernetes.io/name=cloudnative-pg -o jsonpath='{.items[0].spec.nodeName}')"
log "operator Deployment available on node $node ($(el "$ta")s after apply)"
cat > "${TMPDIR:-/tmp}/cnpg-probe.$$.yaml" <<YAML
apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata: {name: webhook-probe, namespace: default}
spec: {instances: 1, storage: {size: 1Gi}}
YAML
tw=$(now) last=""
while :; do
  if out="$(k create --dry-run=server -o jsonpath='{.spec.imageName}' -f "${TMPDIR:-/tmp}/cnpg-probe.$$.yaml" 2>&1)"; then
    # the mutating webhook fills in the default imageName: proof that it ran, not just the API server
    [ -n "$out" ] && break
    last="dry-run create passed without the defaulting webhook (no spec.imageName)"
  else
    last="$out"
  fi
  awk -v a="$tw" -v b="$(now)" -v t="$timeout_s" 'BEGIN { exit !(b - a > t) }' \
    && die "the operator's webhooks did not answer in ${timeout_s}s; last: $last"
  sleep 1
done
log "webhooks answer (defaulted imageName $out) $(el "$tw")s after the Deployment was available"
echo "cnpg install: CloudNativePG $CNPG_VERSION ready in $(el "$t0")s (images ${import_s}s, apply -> webhooks $(el "$ta")s)"
