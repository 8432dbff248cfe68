#!/usr/bin/env bash
# Installs KEDA and metrics-server on the embedded cluster's real node. Idempotent.
#
#   KUBECONFIG=<admin kubeconfig> CONTAINERD_ADDRESS=<containerd socket> testbed/autoscaling/install.sh
#
# 1. builds (or reuses) the three binaries and images (build.sh, image.sh) and imports them into the node's
#    containerd (namespace k8s.io);
# 2. applies their modules' own manifests (manifest.sh) with server-side apply;
# 3. waits until the Deployments are Available and both aggregated APIs answer through the API server:
#    external.metrics.k8s.io (KEDA's adapter, which the workers' HorizontalPodAutoscaler reads) and
#    metrics.k8s.io with a reading of the real node (metrics-server, which the CPU autoscalers read);
# 4. prints the times. Fails (non-zero, with the reason) when a step does not get there in
#    AUTOSCALING_INSTALL_TIMEOUT s (default 300).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=../lib/import-archive.sh
. "$here/../lib/import-archive.sh"
: "${KUBECONFIG:?set KUBECONFIG to the embedded cluster admin kubeconfig}"
: "${CONTAINERD_ADDRESS:?set CONTAINERD_ADDRESS to the real node containerd socket}"
export KUBECONFIG
timeout_s="${AUTOSCALING_INSTALL_TIMEOUT:-300}"
CTR="${CTR:-ctr}"
if [ -z "${KUBECTL:-}" ]; then
  tb="$("$repo/testbed/toolchain.sh" --print 2>/dev/null || true)"
  if [ -n "$tb" ] && [ -x "$tb/kubectl" ]; then KUBECTL="$tb/kubectl"; else KUBECTL=kubectl; fi
fi
export KUBECTL
k() { "$KUBECTL" "$@"; }
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "[autoscaling $(date -u +%H:%M:%S)] $*" >&2; }
die() { echo "autoscaling install: $*" >&2; exit 1; }
t0=$(now)
manifest="$(mktemp)"
trap 'rm -f "$manifest"' EXIT

# 1. images
mapfile -t archives < <("$here/image.sh")
[ "${#archives[@]}" -eq 3 ] || die "image.sh made ${#archives[@]} archives, not 3"
for a in "${archives[@]}"; do import_archive "$a"; done

# 2. apply
ta=$(now)
"$here/manifest.sh" > "$manifest"
k apply --server-side --force-conflicts --field-manager=pulp-testbed-autoscaling -f "$manifest" >/dev/null \
  || die "kubectl apply of the KEDA and metrics-server manifests failed"
log "manifests applied ($(el "$ta")s)"

# 3. wait
for d in keda/keda-operator keda/keda-metrics-apiserver kube-system/metrics-server; do
  k -n "${d%/*}" rollout status "deploy/${d#*/}" --timeout="${timeout_s}s" >&2 \
    || { k -n "${d%/*}" logs "deploy/${d#*/}" --tail=30 >&2 || true
         die "$d did not become Available in ${timeout_s}s"; }
done
tw=$(now) last=""
until out="$(k get --raw /apis/external.metrics.k8s.io/v1beta1 2>&1)" && [[ "$out" == *APIResourceList* ]]; do
  last="$out"
  awk -v a="$tw" -v b="$(now)" -v t="$timeout_s" 'BEGIN { exit !(b - a > t) }' \
    && die "external.metrics.k8s.io (KEDA's adapter) did not answer in ${timeout_s}s; last: $last"
  sleep 2
done
until out="$(k get --raw "/apis/metrics.k8s.io/v1beta1/nodes" 2>&1)" && [[ "$out" == *'"usage"'* ]]; do
  last="$out"
  awk -v a="$tw" -v b="$(now)" -v t="$timeout_s" 'BEGIN { exit !(b - a > t) }' \
    && die "metrics.k8s.io (metrics-server) had no node reading in ${timeout_s}s; last: $last"
  sleep 2
done
log "both metrics APIs answer $(el "$tw")s after the Deployments were available"
echo "autoscaling install: KEDA and metrics-server ready in $(el "$t0")s"
