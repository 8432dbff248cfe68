#!/usr/bin/env bash
# Prints CDI's install manifests, made the way upstream makes its release files cdi-operator.yaml and
# cdi-cr.yaml (hack/build/build-manifests.sh + resource-generator.sh): the module's own
# tools/manifest-generator (built by build.sh) renders the operator's resources from code
# (`-resource-type=operator -resource-group=everything` -> operator-everything.yaml.in), then fills the
# templates manifests/templates/release/cdi-operator.yaml.in and cdi-cr.yaml.in. The release settings
# are upstream's defaults (hack/build/config.sh: namespace cdi, CR name cdi, verbosity 1), with the local
# image names instead of quay.io/kubevirt/<name>:<version> and pull policy IfNotPresent (also upstream's
# default).
#
#   testbed/cdi/manifest.sh [operator]   Namespace cdi, the CDI CRD, RBAC, the cdi-operator Deployment
#   testbed/cdi/manifest.sh cr           the CDI custom resource (apply after the CRD is Established)
#
# Changes after rendering, each of which must match exactly once or this fails:
# - operator Deployment: nodeSelector NODE_SELECTOR (default pulp-testbed/node-kind=real; empty drops
#   it) next to upstream's kubernetes.io/os: linux: the kwok nodes are untainted, and a simulated pod
#   would look Ready and do nothing;
# - CDI CR: the same key in spec.infra.nodeSelector (the controller, apiserver and uploadproxy
#   Deployments the operator creates) and spec.workload.nodeSelector (importer pods).
# Checks: each local image name appears exactly once (the operator's image and its CONTROLLER_IMAGE,
# IMPORTER_IMAGE, APISERVER_IMAGE, UPLOAD_PROXY_IMAGE, CLONER_IMAGE, UPLOAD_SERVER_IMAGE env vars), and
# no quay.io reference is left. The cloner and uploadserver images are NOT built (image.sh): clones and
# uploads would fail to pull; imports do not use them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
what="${1:-operator}"
case "$what" in operator|cr) ;; *) echo "usage: $0 [operator|cr]" >&2; exit 2 ;; esac
bin="$(CDI_BINARIES=manifest-generator "$here/build.sh")"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
dir="$(cd / && go mod download -json "kubevirt.io/containerized-data-importer@$CDI_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
tmpl="$dir/manifests/templates/release"
[ -f "$tmpl/cdi-$what.yaml.in" ] || { echo "manifest.sh: $tmpl/cdi-$what.yaml.in is not in the module" >&2; exit 1; }
gen="$(mktemp -d)"
trap 'rm -rf "$gen"' EXIT
v="$CDI_VERSION" r=localhost
args=(-docker-repo="$r" -docker-tag="$v" -operator-version="$v" -deploy-cluster-resources=true
  -operator-image="$r/cdi-operator:$v" -controller-image="$r/cdi-controller:$v" -importer-image="$r/cdi-importer:$v"
  -cloner-image="$r/cdi-cloner:$v" -apiserver-image="$r/cdi-apiserver:$v" -uploadproxy-image="$r/cdi-uploadproxy:$v"
  -uploadserver-image="$r/cdi-uploadserver:$v" -verbosity=1 -pull-policy=IfNotPresent -namespace=cdi)
"$bin/manifest-generator" -resource-type=operator -resource-group=everything "${args[@]}" > "$gen/operator-everything.yaml.in"
"$bin/manifest-generator" -template="$tmpl/cdi-$what.yaml.in" -cr-name=cdi -generated-manifests-path="$gen" "${args[@]}" > "$gen/out.yaml"
python3 - "$gen/out.yaml" "$what" "$v" "${NODE_SELECTOR-pulp-testbed/node-kind=real}" <<'PY'
import sys
src, what, v, selector = sys.argv[1:]
text = open(src).read().rstrip("\n") + "\n"   # upstream drops the template's trailing empty line too

def sub(old, new, count=1):
    global text
    n = text.count(old)
    if n != count:
        sys.exit(f"manifest.sh: expected {count} x {old!r} in the rendered cdi-{what}.yaml, found {n}")
    text = text.replace(old, new)

def count(s, want):
    n = text.count(s)
    if n != want:
        sys.exit(f"manifest.sh: expected {want} x {s!r} in the rendered cdi-{what}.yaml, found {n}")

k, _, val = selector.partition("=")
line = f'{k}: "{val}"' if selector else ""
if what == "operator":
    count(f"        image: localhost/cdi-operator:{v}\n        imagePullPolicy: IfNotPresent\n", 1)
    for env, img in [("CONTROLLER_IMAGE", "cdi-controller"), ("IMPORTER_IMAGE", "cdi-importer"),
                     ("CLONER_IMAGE", "cdi-cloner"), ("APISERVER_IMAGE", "cdi-apiserver"),
                     ("UPLOAD_SERVER_IMAGE", "cdi-uploadserver"), ("UPLOAD_PROXY_IMAGE", "cdi-uploadproxy")]:
        count(f"        - name: {env}\n          value: localhost/{img}:{v}\n", 1)
        count(f"localhost/{img}:{v}", 1)
    count("        - name: PULL_POLICY\n          value: IfNotPresent\n", 1)
    if selector:
        sub("      nodeSelector:\n        kubernetes.io/os: linux\n      securityContext:\n"
            "        runAsNonRoot: true\n      serviceAccountName: cdi-operator\n",
            f"      nodeSelector:\n        kubernetes.io/os: linux\n        {line}\n      securityContext:\n"
            "        runAsNonRoot: true\n      serviceAccountName: cdi-operator\n")
else:
    count("  imagePullPolicy: IfNotPresent\n", 1)
    if selector:
        for part in ("infra", "workload"):
            sub(f"  {part}:\n    nodeSelector:\n      kubernetes.io/os: linux\n",
                f"  {part}:\n    nodeSelector:\n      kubernetes.io/os: linux\n      {line}\n")
if "quay.io" in text:
    sys.exit("manifest.sh: an upstream (quay.io) image reference is left")
sys.stdout.write(text)
PY
