#!/usr/bin/env bash
# Prints the install manifest of KEDA (its module's config/minimal: CRDs, RBAC, operator, metrics adapter
# and APIService, no admission webhooks) and of metrics-server (its module's manifests/base), rendered by
# `kubectl kustomize`, with the local images (pull policy IfNotPresent), the Deployments pinned to the real
# node (nodeSelector NODE_SELECTOR, default pulp-testbed/node-kind=real: a simulated kwok pod would serve
# nothing), and metrics-server told to skip the kubelet's serving-certificate check (the test bed's
# kubelets serve self-signed certificates; a cluster with signed kubelet certificates needs no such flag).
# Each replacement must hit exactly the expected number of times, or it fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
: "${KUBECTL:=kubectl}"
export GOTOOLCHAIN=local
dir() { go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$KUBECTL" kustomize "$(dir "github.com/kedacore/keda/v2@$KEDA_VERSION")/config/minimal" > "$work/keda.yaml"
"$KUBECTL" kustomize "$(dir "sigs.k8s.io/metrics-server@$METRICS_SERVER_VERSION")/manifests/base" \
  > "$work/metrics-server.yaml" 2> >(grep -v "'commonLabels' is deprecated" >&2)
python3 - "$work" "${KEDA_VERSION#v}" "${METRICS_SERVER_VERSION#v}" "${NODE_SELECTOR-pulp-testbed/node-kind=real}" <<'PY'
import sys
work, keda_v, ms_v, selector = sys.argv[1:]
keda, ms = open(f"{work}/keda.yaml").read(), open(f"{work}/metrics-server.yaml").read()

def sub(text, old, new, count, what):
    n = text.count(old)
    if n != count:
        sys.exit(f"manifest.sh: expected {count} x {old!r} in {what}, found {n}")
    return text.replace(old, new)

keda = sub(keda, "image: ghcr.io/kedacore/keda:main\n", f"image: localhost/keda:{keda_v}\n", 1, "KEDA")
keda = sub(keda, "image: ghcr.io/kedacore/keda-metrics-apiserver:main\n",
           f"image: localhost/keda-metrics-apiserver:{keda_v}\n", 1, "KEDA")
keda = sub(keda, "imagePullPolicy: Always\n", "imagePullPolicy: IfNotPresent\n", 2, "KEDA")
ms = sub(ms, "image: gcr.io/k8s-staging-metrics-server/metrics-server:master\n",
         f"image: localhost/metrics-server:{ms_v}\n", 1, "metrics-server")
ms = sub(ms, "        - --metric-resolution=15s\n",
         "        - --metric-resolution=15s\n        - --kubelet-insecure-tls\n", 1, "metrics-server")
if selector:
    k, _, v = selector.partition("=")
    keda = sub(keda, "      serviceAccountName: keda-operator\n",
               f"      nodeSelector:\n        {k}: \"{v}\"\n      serviceAccountName: keda-operator\n", 2, "KEDA")
    ms = sub(ms, "      serviceAccountName: metrics-server\n",
             f"      nodeSelector:\n        {k}: \"{v}\"\n      serviceAccountName: metrics-server\n", 1, "metrics-server")
for text, what in ((keda, "KEDA"), (ms, "metrics-server")):
    if "ghcr.io/" in text or "gcr.io/" in text:
        sys.exit(f"manifest.sh: an upstream image reference is left in {what}")
sys.stdout.write(keda.rstrip("\n") + "\n---\n" + ms)
PY
