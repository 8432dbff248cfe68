#!/usr/bin/env bash
# Prints the operator's install manifest: the module's own releases/cnpg-<version>.yaml, with the
# operator image (container image and OPERATOR_IMAGE_NAME) replaced by the local one, pull policy
# IfNotPresent, and the Deployment pinned to the real node (nodeSelector NODE_SELECTOR, default
# pulp-testbed/node-kind=real): the kwok nodes are untainted, and a simulated operator pod would look
# Ready and serve no webhook. Each replacement must hit exactly the expected number of lines, or it fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/versions.env"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
dir="$(go mod download -json "github.com/cloudnative-pg/cloudnative-pg@$CNPG_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
v="${CNPG_VERSION#v}"
src="$dir/releases/cnpg-$v.yaml"
[ -f "$src" ] || { echo "manifest.sh: $src is not in the module" >&2; exit 1; }
python3 - "$src" "$v" "${NODE_SELECTOR-pulp-testbed/node-kind=real}" <<'PY'
import sys
src, v, selector = sys.argv[1:]
text = open(src).read()
upstream, local = f"ghcr.io/cloudnative-pg/cloudnative-pg:{v}", f"localhost/cloudnative-pg:{v}"

def sub(old, new, count):
    global text
    n = text.count(old)
    if n != count:
        sys.exit(f"manifest.sh: expected {count} x {old!r} in {src}, found {n}")
    text = text.replace(old, new)

sub(f"          value: {upstream}\n", f"          value: {local}\n", 1)        # OPERATOR_IMAGE_NAME
sub(f"        image: {upstream}\n        imagePullPolicy: Always\n",
    f"        image: {local}\n        imagePullPolicy: IfNotPresent\n", 1)
if selector:
    k, _, val = selector.partition("=")
    sub("      serviceAccountName: cnpg-manager\n",
        f"      nodeSelector:\n        {k}: \"{val}\"\n      serviceAccountName: cnpg-manager\n", 1)
if "ghcr.io/cloudnative-pg/cloudnative-pg" in text:
    sys.exit("manifest.sh: an upstream operator image reference is left")
sys.stdout.write(text)
PY
